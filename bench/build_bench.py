"""How long `bobc build` and `bobc check` of Bob take, as a user runs them (issue 21).

Each run is a fresh process (`python -m bobc ...`), timed from spawn to exit, so
Python's start-up, the imports and the gcc/link steps all count.  The first build
runs against an empty cache folder (XDG_CACHE_HOME pointed at a new temporary folder):
that is a user's first build after installing; the timed runs that follow use that
same folder, as every later build does.  The machine's load average is recorded with
the figures, since this machine's 2 cores are shared.

    python bench/build_bench.py                  # 5 runs each, writes bench/results/build-<UTC>.{md,json}
    python bench/build_bench.py --profile after  # also cProfile one build and one check:
                                                 # bench/results/profiles/{build,check}-after.{prof,txt}
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLAN = "examples/bob/Bob/Build/NativeHost.bob"
TARGET = "sm_90"


def commands(output: Path) -> dict[str, list[str]]:
    bobc = [sys.executable, "-m", "bobc"]
    return {"build": [*bobc, "build", PLAN, "--target", TARGET, "-o", str(output)],
            "check": [*bobc, "check", PLAN, "--target", TARGET]}


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"build_bench: {' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    return elapsed


def summary(samples: list[float]) -> dict:
    return {"median_s": round(statistics.median(samples), 4), "min_s": round(min(samples), 4),
            "max_s": round(max(samples), 4), "samples_s": [round(s, 4) for s in samples]}


def profile(label: str, env: dict, output: Path) -> list[str]:
    """cProfile one build and one check; the .prof and a text listing of each under profiles/."""
    folder = REPO / "bench" / "results" / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, command in commands(output).items():
        prof = folder / f"{name}-{label}.prof"
        profiled = [sys.executable, "-m", "cProfile", "-o", str(prof), *command[1:]]
        timed(profiled, env)
        text = folder / f"{name}-{label}.txt"
        listing = subprocess.run(
            [sys.executable, "-c",
             "import pstats, sys; p = pstats.Stats(sys.argv[1], stream=sys.stdout); p.strip_dirs(); "
             "p.sort_stats('cumulative').print_stats(40); p.sort_stats('tottime').print_stats(25)", str(prof)],
            capture_output=True, text=True, check=True).stdout
        text.write_text(f"command: {' '.join(profiled)}\n(run from the repository root; "
                        f"made by bench/build_bench.py --profile {label}; load average "
                        f"{os.getloadavg()[0]:.2f})\n\n{listing}", encoding="utf-8")
        written += [str(prof.relative_to(REPO)), str(text.relative_to(REPO))]
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=str(REPO / "bench" / "results"))
    parser.add_argument("--profile", metavar="LABEL", help="also profile one build and one check")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bobc-build-bench-") as scratch:
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch) / "cache")}
        output = Path(scratch) / "bob-host"
        cmds = commands(output)
        load_before = os.getloadavg()
        first_build = timed(cmds["build"], env)
        results = {name: summary([timed(command, env) for _ in range(args.runs)])
                   for name, command in cmds.items()}
        load_after = os.getloadavg()
        profiles = profile(args.profile, env, output) if args.profile else []

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc)
    report = {
        "date": now.isoformat(timespec="seconds"), "commit": commit,
        "command": "python bench/build_bench.py" + (f" --profile {args.profile}" if args.profile else ""),
        "runs": args.runs, "plan": PLAN, "target": TARGET,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in load_after]},
        "first_build_empty_cache_s": round(first_build, 4),
        "build": results["build"], "check": results["check"], "profiles": profiles,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"build-{now.strftime('%Y%m%dT%H%M%SZ')}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    lines = [f"# `bobc build` / `bobc check` of Bob ({now:%Y-%m-%d %H:%M} UTC, commit {commit})", "",
             f"Command: `{report['command']}` (fresh processes, {args.runs} runs each, target {TARGET}; "
             f"{report['machine']['cpus']} CPUs, load average {load_before[0]:.2f} before, "
             f"{load_after[0]:.2f} after).", "",
             "| what | median | min | max |", "|---|---|---|---|"]
    for name in ("build", "check"):
        r = results[name]
        lines.append(f"| bobc {name} | {r['median_s']:.3f} s | {r['min_s']:.3f} s | {r['max_s']:.3f} s |")
    lines += ["", f"First build with an empty cache folder: {first_build:.3f} s."]
    if profiles:
        lines += ["", "Profiles: " + ", ".join(f"`{p}`" for p in profiles)]
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
