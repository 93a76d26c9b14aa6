"""How long the pairwise footprint check of Coppelius's largest submission takes.

docs/kernel-contracts.md promises that the encoder's conflict test (`Footprint.conflicts`,
sorted and merged intervals, a bisection per interval) checks every pair of the large
configuration's 244-launch update in well under a second.  This times exactly that: the
footprints of tests/coppelius/test_contract_extents.py's plan (the specification's launches
and residents), every pair of the update's launches, `--repeats` times in this process.

    python bench/footprint_bench.py [--repeats N]

Prints the JSON result (committed as bench/results/footprint-conflicts.json with its command).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "compiler"), str(REPO / "examples" / "coppelius")]

from tests.coppelius.test_contract_extents import contracts, spec_plan  # noqa: E402
from bobc.certify.footprints import launch_footprints  # noqa: E402
from coppelius_model import graph  # noqa: E402
from coppelius_model.config import LARGE  # noqa: E402


def largest_submission(config) -> tuple[int, int]:
    """[first, end) of the piece with the most launches, in the plan's launch order."""
    start, biggest = 0, (0, 0)
    for piece in graph.pieces(config):
        if len(piece.launches) > biggest[1] - biggest[0]:
            biggest = (start, start + len(piece.launches))
        start += len(piece.launches)
    return biggest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    plan = spec_plan(LARGE)
    first, end = largest_submission(LARGE)
    chosen = launch_footprints(plan, contracts(plan))[first:end]
    seconds, conflicts = [], 0
    for _ in range(args.repeats):
        began = time.perf_counter()
        conflicts = sum(a.conflicts(b) for i, a in enumerate(chosen) for b in chosen[:i])
        seconds.append(time.perf_counter() - began)
    print(json.dumps({
        "command": shlex.join(["python", "bench/footprint_bench.py", *sys.argv[1:]]),
        "launches": len(chosen), "pairs": len(chosen) * (len(chosen) - 1) // 2, "conflicts": conflicts,
        "seconds": {"median": statistics.median(seconds), "min": min(seconds), "max": max(seconds)},
        "repeats": args.repeats, "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "load_average": os.getloadavg()[0],
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
