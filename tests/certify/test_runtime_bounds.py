"""Host buffers the C runtime cannot map are refused at check time (probe s31 limits finding 4): a
buffer of 0 bytes (runtime_c/nv_shim.c rt_gpu_alloc_at refuses it on the GPU, an internal error)
and one below the GPU address space the runtime creates (runtime_c/nv_rm.h RT_VASPACE_BASE), each
located where its value was written.  The bounds bobc.certify.limits shares with runtime_c are
held equal to runtime_c's #defines here.  And a fault's huge natural is shown cut, as plan-language
errors show one (finding 6)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.certify import limits

REPO = Path(__file__).resolve().parents[2]
NATIVE_HOST = "LinReg/Build/NativeHost.bob"


def define(file: str, name: str) -> int:
    text = (REPO / "runtime_c" / file).read_text(encoding="utf-8")
    found = re.search(rf"^#define\s+{name}\s+(0x[0-9A-Fa-f]+|\d+)(?:ull|ul|u)?\b", text, re.MULTILINE)
    assert found, f"runtime_c/{file} no longer defines {name}"
    return int(found.group(1), 0)


@pytest.mark.parametrize("ours", sorted(limits.RUNTIME_C_BOUNDS))
def test_the_bounds_shared_with_runtime_c_are_runtime_cs(ours):
    file, theirs = limits.RUNTIME_C_BOUNDS[ours]
    assert getattr(limits, ours) == define(file, theirs), f"{ours} differs from runtime_c/{file} {theirs}"


def test_rt_gpu_alloc_at_still_refuses_an_empty_buffer():
    """BUFFER_LEAST_BYTES is 1 because the runtime refuses size 0: if it ever maps one, the bound goes."""
    text = (REPO / "runtime_c" / "nv_shim.c").read_text(encoding="utf-8")
    body = text[text.index("int rt_gpu_alloc_at("):]
    body = body[:body.index("\n}\n")]
    assert "size == 0" in body and limits.BUFFER_LEAST_BYTES == 1


def variant(tmp_path: Path, old: str, new: str) -> Path:
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    path = tmp_path / NATIVE_HOST
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def check(plan: Path, tmp_path: Path):
    return subprocess.run([sys.executable, "-m", "bobc", "check", str(plan)], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": str(tmp_path / "cache"),
                               "PYTHONPATH": str(REPO / "compiler")}, cwd=REPO)


def faults(done) -> list[str]:
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    return [line for line in done.stderr.splitlines() if line.startswith("  - ")]


def test_a_buffer_of_no_bytes_is_refused_where_its_size_was_written(tmp_path):
    plan = variant(tmp_path,
                   '            (lrBuffer b"arena" lrVideo lrArenaBase lrArenaBytes',
                   '            (lrBuffer b"arena" lrVideo lrArenaBase lrArenaBytes (lrBuffer b"empty" lrVideo '
                   '0x2000000000 0')
    text = plan.read_text(encoding="utf-8")
    end = "              (constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersEnd)))))))"
    assert text.count(end) == 1
    plan.write_text(text.replace(end, end + ")"), encoding="utf-8")
    [fault] = faults(check(plan, tmp_path))
    assert f"{NATIVE_HOST}:" in fault
    assert fault.endswith("host buffer empty has 0 bytes: the runtime maps no empty buffer (rt_gpu_alloc_at "
                          "refuses it, so the host would stop with an internal error on the GPU); give it at "
                          "least 1 byte, or remove it (docs/limits.md)"), fault


def test_a_buffer_at_gpu_address_0_is_refused_at_its_address(tmp_path):
    plan = variant(tmp_path, "def lrArenaBase : Nat = 0x1100000000", "def lrArenaBase : Nat = 0")
    [fault] = faults(check(plan, tmp_path))
    line = next(number for number, text in enumerate(plan.read_text().splitlines(), 1)
                if text.startswith("def lrArenaBase"))
    assert f"{NATIVE_HOST}:{line}:5: host buffer arena at GPU address 0x0 lies below the GPU address space " \
           "the runtime creates, which begins at 0x1000 (runtime_c's RT_VASPACE_BASE)" in fault, fault
    assert "place it at 0x1000 or above" in fault


def test_a_huge_grid_is_shown_cut_in_the_fault(tmp_path):
    plan = variant(tmp_path, "(lrWord64 (naturalAdd lrProgramBase place)) 1 1 1 1 1 lrParameterBytes",
                   "(lrWord64 (naturalAdd lrProgramBase place)) (nat-power 2 262143) 1 1 1 1 lrParameterBytes")
    done = check(plan, tmp_path)
    lines = faults(done)
    assert lines and all("grid x is 80566285874288023680...(78,913 digits): outside 1..2,147,483,647" in line
                         for line in lines), lines[0][:500]
    assert len(done.stderr) < 10_000


def test_shown_cuts_past_40_digits_only():
    assert limits.shown(10 ** 39) == f"{10 ** 39:,}"
    assert limits.shown(10 ** 40) == "10000000000000000000...(41 digits)"
    assert limits.shown_hex(1 << 156) == "0x1" + "0" * 39
    assert limits.shown_hex(1 << 164) == "0x10000000000000000000...(42 hex digits)"
