"""How long the functional simulator takes to run Bob's whole invocation (issue 22: < 60 s).

    .venv/bin/python bench/sim_bench.py [--repeats N] [--targets sm_86,sm_90] [--coppelius] [--out DIR]

`--targets ""` times no Bob target (with --coppelius: seed 004's host alone).

For each target: `bobc sim NativeHost.bob train` over the fixture record
(examples/bob/build_fixture.py from the bundled corpus and prompts), as a
fresh process from start to the three outputs published (plan compiled,
images built, every launch simulated with the control-code checker on), N
times; and, in process, the simulation alone.  Writes
bench/results/sim-<UTC time>.json and .md with the command, the commit, the
machine, min/median/max, and whether the target (< 60 s for sm_86) is met
(--out DIR: elsewhere).
--coppelius also times seed 004's host (Coppelius, small, sm_90: TMA copies and warpgroup MMAs)
through one train invocation of one update from a fresh checkpoint, the host built beforehand:
what tests/coppelius/test_host_simulated.py runs.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
TARGET_SECONDS = 60.0


def checkout_env() -> dict:
    """The environment of a child: this checkout's bobc first, as in_process and the recorded commit
    are (not whichever bobc is installed)."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(REPO / "compiler"), os.environ.get("PYTHONPATH")) if p))


def fixture(folder: Path) -> Path:
    record = folder / "record.bin"
    subprocess.run([sys.executable, str(REPO / "examples/bob/build_fixture.py"), str(REPO / "examples/bob/corpus.txt"),
                    "--prompts-file", str(REPO / "examples/bob/prompts.txt"), "-o", str(record)], check=True,
                   env=checkout_env())
    return record


def fresh_process(target: str, record: Path, folder: Path) -> float:
    command = [sys.executable, "-m", "bobc", "sim", str(PLAN), "train", "--target", target, "--input", str(record),
               "--checkpoint-out", str(folder / f"{target}.ckpt"), "--predictions", str(folder / f"{target}.pred"),
               "--result", str(folder / f"{target}.result")]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=checkout_env())
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"bobc sim failed ({done.returncode}): {done.stderr}")
    return elapsed


def in_process(target: str, record: Path) -> float:
    sys.path.insert(0, str(REPO / "compiler"))
    from bobc import pipeline
    from bobc.sim.host_adapter import host_plan
    from bobc.sim.invocation import simulate
    from bobc.targets import TARGETS

    built = pipeline.compile_plan(PLAN, TARGETS[target])
    host = host_plan(built.plan, built.images, TARGETS[target], built.program.search_path)
    start = time.perf_counter()
    simulate(host, built.images, "train", record.read_bytes())
    return time.perf_counter() - start


def coppelius_update(folder: Path, repeats: int) -> list[float]:
    """Seed 004's host (small, sm_90), one simulated train invocation of one update, `repeats`
    times after one build (bench/coppelius_host/sim_variant.py's): the seconds of each simulation."""
    spec = importlib.util.spec_from_file_location("sim_variant", REPO / "bench/coppelius_host/sim_variant.py")
    sim_variant = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim_variant)
    host, text, fresh = sim_variant.prepared(folder)
    samples = []
    for k in range(repeats):
        start = time.perf_counter()
        sim_variant.simulate(host, text, fresh, folder / f"runs-{k}", say=lambda *_: None)
        samples.append(time.perf_counter() - start)
    return samples


def summary(samples: list[float]) -> dict:
    return {"min": min(samples), "median": statistics.median(samples), "max": max(samples), "samples": samples}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--targets", default="sm_86,sm_90", help="Bob's targets; empty for none")
    parser.add_argument("--coppelius", action="store_true", help="also seed 004's host, one update (sm_90)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results", help="folder for sim-<UTC>.json and .md")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="sim-bench-") as folder:
        folder = Path(folder)
        if args.coppelius:
            update = coppelius_update(folder / "coppelius", args.repeats)
            results["coppelius-sm_90"] = {"simulation_only_train": summary(update)}
            print(f"coppelius sm_90: one update simulated: median {statistics.median(update):.2f} s")
        targets = [target for target in args.targets.split(",") if target]
        record = fixture(folder) if targets else None
        for target in targets:
            fresh = [fresh_process(target, record, folder) for _ in range(args.repeats)]
            alone = [in_process(target, record) for _ in range(args.repeats)]
            results[target] = {"fresh_process_train": summary(fresh), "simulation_only_train": summary(alone)}
            print(f"{target}: bobc sim train, fresh process: median {statistics.median(fresh):.2f} s "
                  f"[{min(fresh):.2f}, {max(fresh):.2f}]; simulation alone: median {statistics.median(alone):.2f} s")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=REPO).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc)
    import numpy
    report = {"command": shlex.join(["python", "bench/sim_bench.py", *sys.argv[1:]]), "commit": commit,
              "date": now.isoformat(timespec="seconds"),
              "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                          "numpy": numpy.__version__, "load_average": os.getloadavg()},
              "target_seconds": TARGET_SECONDS, "results": results}
    met = (results["sm_86"]["fresh_process_train"]["max"] < TARGET_SECONDS) if "sm_86" in results else None
    report["target_met"] = met
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"sim-{now:%Y-%m-%d-%H%M}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    what = " and ".join(["Bob's whole `train` invocation"] * any(t.startswith("sm_") for t in results)
                        + ["seed 004's host, one update"] * ("coppelius-sm_90" in results))
    lines = [f"# Simulator: {what} ({now:%Y-%m-%d %H:%M} UTC, commit {commit})", "",
             f"Command: `{report['command']}` on {platform.platform()}, {os.cpu_count()} CPUs, load average "
             f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} (the machine is shared).", "",
             "| target | bobc sim train, fresh process to outputs (median [min, max]) | simulation alone | < 60 s? |",
             "|---|---|---|---|"]
    for target, r in results.items():
        a = r["simulation_only_train"]
        if "fresh_process_train" not in r:
            lines.append(f"| {target} (one update) | - | {a['median']:.2f} s [{a['min']:.2f}, {a['max']:.2f}] | - |")
            continue
        f = r["fresh_process_train"]
        lines.append(f"| {target} | {f['median']:.2f} s [{f['min']:.2f}, {f['max']:.2f}] | {a['median']:.2f} s "
                     f"[{a['min']:.2f}, {a['max']:.2f}] | {'yes' if f['max'] < TARGET_SECONDS else 'no'} |")
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {stem}.json and .md" + ("" if met is None else
                                          f"; sm_86 under {TARGET_SECONDS:.0f} s: {'yes' if met else 'no'}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
