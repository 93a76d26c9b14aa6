"""What a user without a GPU waits for: `bobc run --reference` and `bobc sim` on Bob, and seed
004's host (Coppelius, small, sm_90) through one simulated update -- wall time, CPU time and peak
memory of each, as a fresh process (probe s38 simspeed).

    .venv/bin/python bench/sim_speed.py [--skip-coppelius] [--profile DIR]

Each Bob command runs as the README's quick start writes it (the fixture record from
examples/bob/build_fixture.py), timed by /usr/bin/time -v where it exists (else wall time and
the children's rusage).  Coppelius: bench/coppelius_host/sim_variant.py's build (BOBC_CACHE_DIR=off)
then one simulated train invocation of one update, timed apart; --profile DIR also writes the
simulation's cProfile statistics there (prof, and top.txt by own time).  Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOB = REPO / "examples/bob/Bob/Build/NativeHost.bob"

COPPELIUS = """
import cProfile, importlib.util, resource, sys, time
from pathlib import Path
repo, folder, profile = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
spec = importlib.util.spec_from_file_location("sim_variant", repo / "bench/coppelius_host/sim_variant.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
start = time.perf_counter(); cpu = time.process_time()
host, text, fresh = m.prepared(folder / "prepared")
print("build", time.perf_counter() - start, time.process_time() - cpu, flush=True)
start = time.perf_counter(); cpu = time.process_time()
profiler = cProfile.Profile() if profile else None
if profiler: profiler.enable()
m.simulate(host, text, fresh, folder / "runs", say=lambda *_: None)
if profiler:
    profiler.disable(); profiler.dump_stats(profile)
print("simulate", time.perf_counter() - start, time.process_time() - cpu, flush=True)
print("maxrss_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO / "compiler"), os.environ.get("PYTHONPATH")) if p))


def timed(command: list[str], cwd: Path, extra: dict | None = None) -> dict:
    """Wall seconds, user + system CPU seconds and peak RSS (MiB) of one fresh process."""
    environment = dict(env(), **(extra or {}))
    gnu_time = shutil.which("time") if Path("/usr/bin/time").exists() else None
    start = time.perf_counter()
    if gnu_time:
        done = subprocess.run(["/usr/bin/time", "-v", *command], cwd=cwd, env=environment, capture_output=True, text=True)
        wall = time.perf_counter() - start
        fields = {}
        for line in done.stderr.splitlines():
            key, _, value = line.strip().partition(": ")
            fields[key] = value
        cpu = float(fields.get("User time (seconds)", "nan")) + float(fields.get("System time (seconds)", "nan"))
        rss = int(fields.get("Maximum resident set size (kbytes)", "0")) / 1024
    else:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        rss = after.ru_maxrss / 1024
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return {"wall": wall, "cpu": cpu, "rss_mib": rss, "stdout": done.stdout}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-coppelius", action="store_true")
    parser.add_argument("--profile", type=Path, help="write the Coppelius simulation's cProfile statistics here")
    args = parser.parse_args()
    python = sys.executable
    rows = []
    with tempfile.TemporaryDirectory(prefix="sim-speed-") as folder:
        folder = Path(folder)
        subprocess.run([python, str(REPO / "examples/bob/build_fixture.py"), str(REPO / "examples/bob/corpus.txt"),
                        "--prompts-file", str(REPO / "examples/bob/prompts.txt"), "-o", str(folder / "record.bin")],
                       check=True, env=env())
        outputs = ["--checkpoint-out", "ckpt.bin", "--predictions", "pred.bin", "--result", "result.bin"]
        r = timed([python, "-m", "bobc", "run", str(BOB), "train", "--reference", "--input", "record.bin", *outputs], folder)
        rows.append(("Bob `bobc run ... train --reference`", r))
        for target in ("sm_90", "sm_86"):
            r = timed([python, "-m", "bobc", "sim", str(BOB), "train", "--target", target, "--input", "record.bin",
                       *outputs], folder)
            rows.append((f"Bob `bobc sim ... train --target {target}`", r))
        if not args.skip_coppelius:
            profile = ""
            if args.profile:
                args.profile.mkdir(parents=True, exist_ok=True)
                profile = str(args.profile.resolve() / "prof")
            r = timed([python, "-c", COPPELIUS, str(REPO), str(folder / "coppelius"), profile], REPO,
                      {"BOBC_CACHE_DIR": "off"})
            said = dict(line.split(" ", 1) for line in r["stdout"].splitlines() if " " in line)
            build, simulate = (said[k].split() for k in ("build", "simulate"))
            rows.append(("Coppelius small (seed 004 host, sm_90): build, one process", r))
            rows.append(("  of which the build", {"wall": float(build[0]), "cpu": float(build[1]), "rss_mib": None}))
            rows.append(("  of which one simulated update", {"wall": float(simulate[0]), "cpu": float(simulate[1]),
                                                              "rss_mib": None}))
            if profile:
                import pstats
                with open(args.profile / "top.txt", "w") as out:
                    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(30)
    print(f"{platform.platform()}, {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| what | wall s | CPU s | peak RSS MiB |")
    print("|---|---|---|---|")
    for what, r in rows:
        rss = "" if r["rss_mib"] is None else f"{r['rss_mib']:.0f}"
        print(f"| {what} | {r['wall']:.1f} | {r['cpu']:.1f} | {rss} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
