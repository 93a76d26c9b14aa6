"""bobc's cost as a plan doubles in size: `bobc check` / `bobc build --emit-images` of LinReg
made far larger (bench/scale_plans.py), each a fresh process with the cache off, CPU time
(user + system) and peak memory of the process, and the ratio from one size to the next
(linear work doubles: ~2; pairs: ~4).

    python bench/scale_bench.py [--tree DIR] [--label NAME] [--only SCENARIO] [--sizes a,b,c]

`--tree DIR`: the bobc tree whose compiler/ runs (default this one), so a tree before a change
and one after it run the same plans.  Scenarios:

- regions: N regions, each its own kernel source beside the plan, 2N launches (the kernel
  search, the //@ block check);
- residents: N global residents (the overlap check, the resident holding each pointer);
- disjoint-launches: N launches on disjoint bytes in one submission, built to images (the
  launch order).

The plans declare their device hazard 0 rather than evaluate the library's certificate (its own
cost is the evaluator's, docs/limits.md), except disjoint-launches, whose certificate is linear.
Prints the JSON result; committed as bench/results/scale-LABEL.json with its command."""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import scale_plans  # noqa: E402

SCENARIOS = {
    "regions": (lambda out, n: scale_plans.with_regions(out, n, n, device_hazard=False), ["check"],
                (500, 1000, 2000)),
    "residents": (lambda out, n: scale_plans.with_residents(out, n), ["check"], (4000, 8000, 16000)),
    "disjoint-launches": (lambda out, n: scale_plans.with_disjoint_launches(out, n), ["build", "--emit-images"],
                          (1000, 2000, 4000)),
}


def measure(tree: Path, plan: Path, command: list[str], scratch: Path) -> dict:
    argv = [sys.executable, "-m", "bobc", command[0], str(plan), *command[1:]]
    if "--emit-images" in command:
        argv.append(str(scratch / "images"))
    env = {**os.environ, "PYTHONPATH": str(tree / "compiler"), "BOBC_CACHE_DIR": "off", "TMPDIR": str(scratch)}
    began = time.perf_counter()
    with open(scratch / "stdout", "w+b") as out, open(scratch / "stderr", "w+b") as err:
        child = subprocess.Popen(argv, env=env, cwd=plan.parents[2], stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)      # this child's own CPU time and peak memory
        wall = time.perf_counter() - began
        out.seek(0)
        err.seek(0)
        said = (out.read() + err.read()).decode(errors="replace").strip().splitlines()
    return {"exit": os.waitstatus_to_exitcode(status), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "wall_seconds": round(wall, 2), "peak_mb": round(usage.ru_maxrss / 1024, 1),
            "last_line": said[-1][:300] if said else ""}


def run(tree: Path, scenario: str, sizes, scratch: Path) -> list[dict]:
    make, command, _ = SCENARIOS[scenario]
    rows = []
    for n in sizes:
        plan = make(scratch / f"{scenario}-{n}", n)
        row = {"size": n, **measure(tree, plan, command, scratch)}
        if rows and rows[-1]["cpu_seconds"]:
            row["cpu_ratio"] = round(row["cpu_seconds"] / rows[-1]["cpu_seconds"], 2)
            row["peak_ratio"] = round(row["peak_mb"] / rows[-1]["peak_mb"], 2)
        rows.append(row)
        print(scenario, json.dumps(row), file=sys.stderr, flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("--label", default="")
    parser.add_argument("--only", choices=sorted(SCENARIOS))
    parser.add_argument("--sizes", help="comma-separated sizes for --only's scenario")
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", str(args.tree), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    result = {"command": " ".join(["python", "bench/scale_bench.py", *sys.argv[1:]]), "tree_commit": commit,
              "label": args.label, "scenarios": {}}
    with tempfile.TemporaryDirectory(prefix="bobc-scale-") as scratch:
        for scenario, (_, command, sizes) in SCENARIOS.items():
            if args.only and scenario != args.only:
                continue
            chosen = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else sizes
            result["scenarios"][scenario] = {"command": ["bobc", *command],
                                             "rows": run(args.tree.resolve(), scenario, chosen, Path(scratch))}
    result.update({"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
                   "load_average": os.getloadavg()[0]})
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
