"""How long `bobc build` and `bobc check` of Bob take, as a user runs them (issue 21).

Each run is a fresh process (`python -m bobc ...`, this checkout's compiler/ first on PYTHONPATH),
timed from spawn to exit, so
Python's start-up, the imports and the gcc/link steps all count.  The first build
runs against an empty cache folder (XDG_CACHE_HOME pointed at a new temporary folder):
that is a user's first build after installing; the timed runs that follow use that
same folder, as every later build does.  Python writes and reuses its bytecode
(__pycache__), as an installed bobc does: PYTHONDONTWRITEBYTECODE is dropped from the
environment unless --no-bytecode is given (one untimed run first writes it).  The
machine's load average is recorded with the figures, since this machine's 2 cores
are shared.

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
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLAN = "examples/bob/Bob/Build/NativeHost.bob"
TARGET = "sm_90"


def commands(output: Path, plan: str = PLAN) -> dict[str, list[str]]:
    bobc = [sys.executable, "-m", "bobc"]
    return {"build": [*bobc, "build", plan, "--target", TARGET, "-o", str(output)],
            "check": [*bobc, "check", plan, "--target", TARGET]}


def edited_builds(scratch: Path, output: Path, env: dict, count: int) -> dict:
    """`bobc build` of a copy of Bob right after one of its modules changed (a comment line
    appended to Bob/Model.bob before each run): what a user editing a plan waits for."""
    import shutil

    copy = scratch / "edited"
    shutil.copytree(REPO / "examples" / "bob" / "Bob", copy / "Bob")
    model = copy / "Bob" / "Model.bob"
    command = commands(output, str(copy / "Bob" / "Build" / "NativeHost.bob"))["build"]
    CPU_SECONDS.clear()
    samples = []
    for k in range(count):
        model.write_text(model.read_text(encoding="utf-8") + f"\n-- edit {k}\n", encoding="utf-8")
        samples.append(timed(command, env))
    return summary(samples, list(CPU_SECONDS))


CPU_SECONDS: list[float] = []      # user + system time of each timed run and its children (gcc)


def timed(command: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"build_bench: {' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    CPU_SECONDS.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


def summary(samples: list[float], cpu: list[float]) -> dict:
    # the summary from the samples as recorded (to 0.1 ms), so it follows from them: a median of the
    # unrounded ones could round the other way (bench/refusal_bench.py, 01fa117; probe s37 leftovers 7)
    wall, cpu = [round(s, 4) for s in samples], [round(c, 4) for c in cpu]
    return {"median_s": round(statistics.median(wall), 4), "min_s": min(wall), "max_s": max(wall),
            "samples_s": wall, "cpu_median_s": round(statistics.median(cpu), 4), "cpu_samples_s": cpu}


def runs(command: list[str], env: dict, count: int) -> dict:
    CPU_SECONDS.clear()
    samples = [timed(command, env) for _ in range(count)]
    return summary(samples, list(CPU_SECONDS))


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
    parser.add_argument("--no-bytecode", action="store_true",
                        help="run bobc with PYTHONDONTWRITEBYTECODE=1 (every import compiles its source)")
    parser.add_argument("--note", default="", help="a sentence for the report (e.g. which bobc this is)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bobc-build-bench-") as scratch:
        # this checkout's bobc, on this checkout's Bob (not whichever bobc is installed)
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch) / "cache"), "PYTHONPATH": os.pathsep.join(
            p for p in (str(REPO / "compiler"), os.environ.get("PYTHONPATH")) if p)}
        env.pop("BOBC_CACHE_DIR", None)
        if args.no_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            timed(commands(Path(scratch) / "bob-host")["check"], {**env, "BOBC_CACHE_DIR": "off"})
        output = Path(scratch) / "bob-host"
        cmds = commands(output)
        load_before = os.getloadavg()
        first_build = timed(cmds["build"], env)
        results = {name: runs(command, env, args.runs) for name, command in cmds.items()}
        results["build after an edit"] = edited_builds(Path(scratch), output, env, args.runs)
        load_after = os.getloadavg()
        profiles = profile(args.profile, env, output) if args.profile else []
        package = subprocess.run([sys.executable, "-c", "import bobc; print(bobc.__file__)"], env=env,
                                 capture_output=True, text=True).stdout.strip()

    checkout = Path(package).resolve().parents[2]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True,
                            text=True).stdout.strip() or f"not a git checkout: {checkout}"
    now = datetime.datetime.now(datetime.timezone.utc)
    report = {
        "date": now.isoformat(timespec="seconds"), "commit": commit,
        "command": shlex.join(["python", "bench/build_bench.py", *sys.argv[1:]]),
        "bytecode": "not written (PYTHONDONTWRITEBYTECODE=1)" if args.no_bytecode else "written and reused",
        "bobc": package, "note": args.note, "runs": args.runs, "plan": PLAN, "target": TARGET,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in load_after]},
        "first_build_empty_cache_s": round(first_build, 4),
        "build": results["build"], "check": results["check"],
        "build_after_an_edit": results["build after an edit"], "profiles": profiles,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"build-{now.strftime('%Y%m%dT%H%M%SZ')}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    lines = [f"# `bobc build` / `bobc check` of Bob ({now:%Y-%m-%d %H:%M} UTC, commit {commit})", "",
             f"Command: `{report['command']}` (bobc from `{package}`; fresh processes, {args.runs} runs each, "
             f"target {TARGET}; "
             f"{report['machine']['cpus']} CPUs, load average {load_before[0]:.2f} before, "
             f"{load_after[0]:.2f} after; Python bytecode {report['bytecode']}).", "",
             "| what | median | min | max | CPU time (user + system, median) |", "|---|---|---|---|---|"]
    for name in ("build", "check", "build after an edit"):
        r = results[name]
        lines.append(f"| bobc {name} | {r['median_s']:.3f} s | {r['min_s']:.3f} s | {r['max_s']:.3f} s "
                     f"| {r['cpu_median_s']:.3f} s |")
    lines += ["", f"First build with an empty cache folder: {first_build:.3f} s.  \"build after an edit\": a "
              "copy of Bob whose Bob/Model.bob gains a comment line before each run (its parse, type "
              "check and extraction are redone; the kernels, the runtime objects and the other modules' "
              "trees come from the cache).  CPU time counts the process and the children it waited for "
              "(gcc); on a shared machine it moves less with the load than the wall time does."]
    if args.note:
        lines += ["", args.note]
    if profiles:
        lines += ["", "Profiles: " + ", ".join(f"`{p}`" for p in profiles)]
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
