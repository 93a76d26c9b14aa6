"""bench/gpu/ncu_source_stalls.py sums Nsight Compute's per-instruction stall samples over every
launch of a kernel and lists the instructions that hold a given share of them."""
from __future__ import annotations

import csv
import importlib.util
import io
import subprocess
import sys

from tests.conftest import REPO

TOOL = REPO / "bench" / "gpu" / "ncu_source_stalls.py"
HEAD = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
        "stall_barrier", "stall_long_sb", "stall_short_sb", "stall_long_sb (Not Issued)"]


def launch(name: str, rows: list[tuple[str, int, int, int, int]]) -> list[list[str]]:
    """A launch's block of ncu's source page: (source, samples, barrier, long_sb, short_sb) rows;
    the Not Issued columns carry numbers the tool must not count."""
    block = [["Kernel Name", name], HEAD]
    for k, (source, samples, barrier, long_sb, short_sb) in enumerate(rows):
        block.append([f"0x{16 * k:x}", source, str(samples), "999", str(barrier), str(long_sb), str(short_sb), "999"])
    return block


def write(tmp_path, blocks) -> str:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL)
    for block in blocks:
        writer.writerows(block)
    path = tmp_path / "source.csv"
    path.write_text(out.getvalue())
    return str(path)


def tool():
    spec = importlib.util.spec_from_file_location("ncu_source_stalls", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_samples_are_summed_over_a_kernels_launches_and_kept_apart_per_kernel(tmp_path):
    loop = [("LDSM R40, [R92]", 10, 10, 0, 0), ("IADD3 R92, R83, R86, RZ", 30, 0, 25, 5), ("BRA 0x0", 0, 0, 0, 0)]
    other = [("EXIT", 4, 0, 0, 4)]
    path = write(tmp_path, [launch("gemm", loop), launch("other", other), launch("gemm", loop)])
    with open(path, newline="") as f:
        found = tool().kernels(list(csv.reader(f)))
    assert list(found) == ["gemm", "other"]
    gemm = found["gemm"]
    assert [i["samples"] for i in gemm] == [20, 60, 0]
    assert dict(gemm[1]["reasons"]) == {"barrier": 0, "long_sb": 50, "short_sb": 10}
    assert found["other"][0]["samples"] == 4


def test_the_report_lists_instructions_over_the_threshold_with_their_largest_reasons(tmp_path):
    loop = [("LDSM R40, [R92]", 10, 10, 0, 0), ("IADD3 R92, R83, R86, RZ", 89, 0, 80, 9), ("BRA 0x0", 1, 0, 0, 1)]
    path = write(tmp_path, [launch("gemm", loop)])
    done = subprocess.run([sys.executable, str(TOOL), path, "--at-least", "5"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "== gemm: 100 samples, 3 instructions"
    assert lines[1].split() == ["long_sb=80.0%", "barrier=10.0%", "short_sb=10.0%"]
    listed = lines[2:]
    assert len(listed) == 2                                  # the BRA's 1 % is under 5 %
    assert listed[0].split()[:3] == ["0", "10.0%", "LDSM"]
    assert listed[1].split()[:3] == ["1", "89.0%", "IADD3"] and listed[1].endswith("long_sb:80 short_sb:9")


def test_a_file_without_a_kernel_is_refused_by_name(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    done = subprocess.run([sys.executable, str(TOOL), str(path)], capture_output=True, text=True)
    assert done.returncode == 1 and "empty.csv: no kernel in it" in done.stderr
