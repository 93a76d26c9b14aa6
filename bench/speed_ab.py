"""Two bobc trees timed against each other on what a plan author waits for (probe s29 speed):

- `edit-build`: `bobc build` of a copy of Coppelius (DirectArtifact, --entry coppeliusHost)
  right after a comment line is appended to its Coppelius/Model.bob, the cache warm (each tree
  its own cache folder, filled by one untimed build first);
- `check-off`: `bobc check` of Bob with BOBC_CACHE_DIR=off.

Each run is a fresh process (`python -m bobc ...` with PYTHONPATH=TREE/compiler, run in TREE),
wall time spawn to exit and CPU time (user + system of it and its children); the trees
alternate run by run, so both see the same load (this machine's 2 cores are shared: compare
CPU; the load average is recorded).

    python bench/speed_ab.py BEFORE_TREE AFTER_TREE [--runs 5] [--target sm_90] [--out bench/results]

writes OUT/speed-<UTC>.{md,json}.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOB = "examples/bob/Bob/Build/NativeHost.bob"


def timed(command: list[str], tree: Path, env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"speed_ab: {' '.join(command)} in {tree} failed ({result.returncode}):\n{result.stderr}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def summary(samples: list[tuple[float, float]]) -> dict:
    # the summary from the samples as recorded (to the millisecond), so it follows from them: a median
    # of the unrounded ones could round the other way (bench/refusal_bench.py, 01fa117; probe s37 leftovers 7)
    wall, cpu = [round(s[0], 3) for s in samples], [round(s[1], 3) for s in samples]
    return {"wall_median_s": round(statistics.median(wall), 3), "wall_s": wall,
            "cpu_median_s": round(statistics.median(cpu), 3), "cpu_min_s": min(cpu), "cpu_s": cpu}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    commits = {name: subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True,
                                    text=True).stdout.strip() for name, tree in trees.items()}
    scratch = Path(tempfile.mkdtemp(prefix="speed-ab-"))
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "BOBC_CACHE_DIR")}
    samples: dict = {case: {name: [] for name in trees} for case in ("edit-build", "check-off")}
    loads = [os.getloadavg()[0]]
    try:
        setups = {}
        for name, tree in trees.items():
            copy = scratch / name / "coppelius"
            shutil.copytree(tree / "examples" / "coppelius", copy)
            env = {**base, "PYTHONPATH": str(tree / "compiler"), "BOBC_CACHE_DIR": str(scratch / name / "cache")}
            build = [sys.executable, "-m", "bobc", "build", str(copy / "Coppelius" / "Build" / "DirectArtifact.bob"),
                     "--entry", "coppeliusHost", "--target", args.target, "-o", str(scratch / name / "host")]
            check = [sys.executable, "-m", "bobc", "check", BOB, "--target", args.target]
            timed(build, tree, env)                         # fills the cache (and the bytecode)
            timed(check, tree, {**env, "BOBC_CACHE_DIR": "off"})
            setups[name] = (copy / "Coppelius" / "Model.bob", build, check, env)
        for k in range(args.runs):
            for name, tree in trees.items():
                model, build, check, env = setups[name]
                model.write_text(model.read_text(encoding="utf-8") + f"\n-- edit {k}\n", encoding="utf-8")
                samples["edit-build"][name].append(timed(build, tree, env))
                samples["check-off"][name].append(timed(check, tree, {**env, "BOBC_CACHE_DIR": "off"}))
            loads.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    result = {"command": shlex.join(["python", "bench/speed_ab.py", *(argv if argv is not None else sys.argv[1:])]),
              "date": stamp, "target": args.target, "runs": args.runs, "trees": {n: str(t) for n, t in trees.items()},
              "commits": commits, "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                                              "python": platform.python_version()},
              "load_average": [round(x, 2) for x in loads],
              "results": {case: {name: summary(s) for name, s in by_tree.items()} for case, by_tree in samples.items()}}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"speed-{stamp}.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [f"# bobc timed against itself: {commits['before']} (before) and {commits['after']} (after)", "",
             f"    {result['command']}", "",
             f"{args.runs} fresh processes each, the trees alternating; target {args.target}; load average "
             f"{min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} cores.", "",
             "| case | tree | CPU median (min) | wall median | CPU samples | wall samples |", "|---|---|---|---|---|---|"]
    for case, by_tree in result["results"].items():
        for name, s in by_tree.items():
            lines.append(f"| {case} | {name} ({commits[name]}) | {s['cpu_median_s']:.3f} s ({s['cpu_min_s']:.3f}) | "
                         f"{s['wall_median_s']:.3f} s | {', '.join(f'{c:.2f}' for c in s['cpu_s'])} | "
                         f"{', '.join(f'{w:.2f}' for w in s['wall_s'])} |")
    (args.out / f"speed-{stamp}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
