"""Time differently built Coppelius hosts against each other on one GPU, and check that they
compute the same bytes.  For experiments on how bobc builds a host (the QMD's membar, how
launches are ordered), where bench.py's --host-variant changes only the host's environment.

Setup, here: `tests/gpu/prepare.sh --large` and, for each build to compare, a tree with the
change, built with `BOBC_CACHE_DIR=off python tests/gpu/build_coppelius_host.py
/work/main/.device/NAME --large`.  On the GPU, from the repository root:

    python3 bench/coppelius_host/compare_builds.py OUTDIR BASE NAME... [--unchecked NAME...]

Each host trains the seed's run from the same fresh checkpoint, `--repeats` times,
alternating; the update's median time through the pushbuffer and the outputs' digests are
printed and written to OUTDIR/compare.txt.  Every build must leave BASE's outputs, except
those named after --unchecked (a build that is wrong on purpose, to measure a bound).

Session 6 (the grid's membar, GPU scope against system scope): no gain,
bench/results/coppelius-host-h200-membar-experiment.txt.  Session 7 (launches chained
through their QMDs instead of WAIT_FOR_IDLE): bench/results/coppelius-host-h200-launch-chain.txt.
"""
import argparse
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path.cwd()
sys.path[:0] = [str(REPO / "compiler"), str(REPO / "examples/coppelius")]

_spec = importlib.util.spec_from_file_location("coppelius_host_bench", Path(__file__).with_name("bench.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("builds", nargs="+", help="folders under .device/; the first is the base")
    parser.add_argument("--unchecked", nargs="*", default=[], help="builds whose outputs may differ")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--configs", default="small,large")
    parser.add_argument("--keep-times", action="store_true",
                        help="keep each run's NATIVE_SUBMIT_TIMES log as OUTDIR/times/CONFIG-BUILD-REP.log")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp())
    described = json.loads((REPO / ".device" / args.builds[0] / "hosts.json").read_text())
    lines, failed = [], False

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    for config in args.configs.split(","):
        name = bench.HOSTS[config]
        steps = described[name]["updates_per_invocation"]
        fresh = bench.fresh_checkpoint(config, steps, scratch / f"fresh-{config}.ckpt")
        base_digests = None
        for rep in range(args.repeats):
            for build in args.builds + args.unchecked:
                work = scratch / f"{config}-{build}-{rep}"
                command = bench.train_command(REPO / ".device" / build / name,
                                              REPO / ".device" / args.builds[0] / "text.stream", fresh, work)
                times = work / "times.log"
                start = time.perf_counter()
                try:
                    done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                                          env={**os.environ, "NATIVE_SUBMIT_TIMES": str(times)})
                    code, stderr = done.returncode, done.stderr
                except subprocess.TimeoutExpired:
                    code, stderr = "timeout", ""
                elapsed = time.perf_counter() - start
                digests = (tuple(hashlib.sha256((work / f).read_bytes()).hexdigest()[:12] for f in bench.OUTPUTS)
                           if code == 0 else None)
                if build == args.builds[0] and base_digests is None:
                    base_digests = digests
                same = digests == base_digests and digests is not None
                if build not in args.unchecked and not same:
                    failed = True
                timing = "no timing"
                if args.keep_times and times.exists():
                    (args.out / "times").mkdir(exist_ok=True)
                    (args.out / "times" / f"{config}-{build}-{rep}.log").write_bytes(times.read_bytes())
                if times.exists() and times.stat().st_size:
                    update = bench.update_times(times)
                    timing = (f"update median {update['doorbell_to_semaphore_ms']:.3f} ms "
                              f"p10 {update['p10_ms']:.3f} p90 {update['p90_ms']:.3f}")
                say(f"{config} {build} rep {rep}: exit {code} {elapsed:.3f} s; {timing}; outputs {digests}"
                    f"{'' if same else ' DIFFER from ' + args.builds[0]}")
                if code != 0:
                    print(stderr[-2000:], flush=True)
    say(f"every checked build left {args.builds[0]}'s outputs: {not failed}")
    (args.out / "compare.txt").write_text("\n".join(lines) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
