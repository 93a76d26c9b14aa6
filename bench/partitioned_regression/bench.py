"""Steps per second of seed 003's two native peers against the same partitioned training in
PyTorch with torch.distributed (gloo over TCP, two processes), in one run on one GPU machine.

    python bench/partitioned_regression/bench.py [--repeats 5] [--out DIR]

Our peers: two hosts built for this GPU (tests/gpu/build_partitioned_regression_hosts.py; or
PR_BENCH_HOSTS, a folder it wrote with --steps for both sizes below), each its own process and
channel, over 127.0.0.1.  A run of S steps includes process start, the device session's
bring-up and the connection; timing a short run (SHORT steps) and a long one (LONG steps) and
dividing the difference in steps by the difference in wall time leaves the steps alone.
PyTorch: pytorch_pair.py, 4096 rows, its loop timed between barriers after a warm-up.  Each is
repeated; the result is the median, with the spread (min and max) of each and of the ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "compiler"), str(REPO / "examples/partitioned_regression"), str(REPO / "tests/gpu"),
                str(Path(__file__).resolve().parent)]

from partitioned_regression import formats as F  # noqa: E402
from partitioned_regression import reference as R  # noqa: E402

import build_partitioned_regression_hosts as B  # noqa: E402
import pytorch_pair  # noqa: E402

SHORT, LONG = 512, 8192


def our_hosts(folder: Path) -> dict[int, list[Path]]:
    """worker 0 and 1 of a SHORT and of a LONG run, built for this GPU."""
    from test_partitioned_regression import gpu_identity
    uuid, minor = gpu_identity()
    hosts = {}
    for steps in (SHORT, LONG):
        out = folder / f"steps-{steps}"
        out.mkdir(parents=True, exist_ok=True)
        plan = out / "Pair.bob"
        plan.write_text(B.plan_text(uuid, minor, steps=steps), encoding="utf-8")
        hosts[steps] = []
        for k in range(2):
            path = out / f"worker{k}"
            if not path.exists():
                subprocess.run([sys.executable, "-m", "bobc", "build", str(plan), "--entry", f"worker{k}", "--target",
                                "sm_90", "-I", str(B.EXAMPLE), "-o", str(path)], cwd=REPO, check=True,
                               env=B.bobc_environment())
            hosts[steps].append(path)
    return hosts


def run_ours(workers: list[Path], folder: Path, records: list[Path]) -> float:
    checkpoint = [folder / n for n in ("manifest", "w0", "a0", "w1", "a1")]
    started = time.perf_counter()
    processes = []
    for k, host in enumerate(workers):
        processes.append(subprocess.Popen([str(host), *map(str, checkpoint), str(folder / f"readback{k}"), str(records[k])],
                                          stderr=subprocess.PIPE))
        if k == 0:
            time.sleep(0.2)               # worker 0 listens first (the same pause in every run)
    for process in processes:
        _, err = process.communicate(timeout=600)
        if process.returncode != 0:
            raise SystemExit(f"a peer failed (exit {process.returncode}): {err.decode(errors='replace')}")
    return time.perf_counter() - started


def spread(values):
    """The median and spread of `values`, with the values themselves: the summary follows from what
    is recorded (probe s37 leftovers finding 7: only the three numbers were kept)."""
    values = list(values)
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "samples": values}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "out/bench/partitioned_regression")
    arguments = parser.parse_args()
    arguments.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pr-bench-"))
    hosts = our_hosts(Path(os.environ.get("PR_BENCH_HOSTS", work / "hosts")))
    data = R.generate()
    records = []
    for k in range(2):
        records.append(work / f"record{k}.bin")
        records[-1].write_bytes(F.record(data, k, pytorch_pair.COORDINATES[k]))

    ours, theirs, runs = [], [], []
    for repeat in range(arguments.repeats):
        (work / f"s{repeat}").mkdir()
        (work / f"l{repeat}").mkdir()
        short = run_ours(hosts[SHORT], work / f"s{repeat}", records)
        long = run_ours(hosts[LONG], work / f"l{repeat}", records)
        ours.append((LONG - SHORT) / (long - short))
        runs.append({"short_s": short, "long_s": long})
        result = pytorch_pair.run(4096, port=29531 + repeat)
        theirs.append(result["steps_per_second"])
        print(f"repeat {repeat}: ours {ours[-1]:.0f} steps/s (runs {short:.3f} s / {long:.3f} s), "
              f"PyTorch {theirs[-1]:.0f} steps/s (reference bits: {result['equals_reference']})", flush=True)
    # our LONG run's weights against the NumPy reference: the speed is of the right arithmetic
    expected = R.train(data, pytorch_pair.COORDINATES, LONG)
    last = work / f"l{arguments.repeats - 1}"
    same = all(R.bits(F.shard_value((last / name).read_bytes())[2]) == R.bits(expected[k].weight)
               for k, name in enumerate(("w0", "w1")))
    ratios = [a / b for a, b in zip(ours, theirs)]
    summary = {"rows": len(data.targets), "short_steps": SHORT, "long_steps": LONG, "repeats": arguments.repeats,
               "ours_steps_per_second": spread(ours), "pytorch_steps_per_second": spread(theirs),
               "ours_runs": runs, "ratio": spread(ratios), "ours_equal_reference": same,
               "ours_us_per_step": 1e6 / statistics.median(ours), "pytorch_us_per_step": 1e6 / statistics.median(theirs)}
    print(json.dumps(summary, indent=1))
    (arguments.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main()
