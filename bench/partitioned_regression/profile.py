"""Where a step of seed 003's pair goes: the pair's steps per second under several runtime
settings, and worker 0 alone (against echo_peer.py, worker 1 on the CPU), each with the native
host's per-phase profile (NATIVE_PROFILE=1, runtime_c/native_device.h).

    python bench/partitioned_regression/profile.py [--config NAME[:VAR=VALUE,...]]... \
        [--short 256 --long 2048] [--out DIR]

A configuration is a name and environment variables for both peers (e.g.
`shared:NATIVE_GPU_SHARE_GROUP=1`); a name starting with "alone" runs worker 0 against
echo_peer.py.  Default: `pair` and `alone`.

For every configuration a SHORT and a LONG run are timed and the steps per second are
(LONG - SHORT) / (wall time difference), as bench.py measures them; both workers' weights are
checked against the NumPy reference.  Writes DIR/profile.json and each run's stderr
(DIR/logs/*.txt: the profile lines, and BOBC_GPU_TRACE's bring-up with --trace).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO / "compiler"), str(REPO / "examples/partitioned_regression"), str(REPO / "tests/gpu"), str(HERE)]

from partitioned_regression import formats as F  # noqa: E402
from partitioned_regression import reference as R  # noqa: E402

import build_partitioned_regression_hosts as B  # noqa: E402
import pytorch_pair  # noqa: E402


def build(folder: Path, steps_list) -> dict[int, list[Path]]:
    from test_partitioned_regression import gpu_identity
    uuid, minor = gpu_identity()
    hosts = {}
    for steps in steps_list:
        out = folder / f"steps-{steps}"
        out.mkdir(parents=True, exist_ok=True)
        (out / "Pair.bob").write_text(B.plan_text(uuid, minor, steps=steps), encoding="utf-8")
        jobs = []
        for k in range(2):
            if jobs:                      # the first build fills bobc's cache (the interpreter) alone
                jobs[-1].wait()
            jobs.append(subprocess.Popen([sys.executable, "-m", "bobc", "build", str(out / "Pair.bob"), "--entry",
                                          f"worker{k}", "--target", "sm_90", "-I", str(B.EXAMPLE), "-o",
                                          str(out / f"worker{k}")], cwd=REPO, env=B.bobc_environment()))
        for job in jobs:
            if job.wait() != 0:
                raise SystemExit("bobc build failed")
        hosts[steps] = [out / "worker0", out / "worker1"]
    return hosts


def run(workers, folder: Path, records, environment: dict, logs: Path, name: str, echo_steps: int = 0) -> float:
    """One run of the pair (or of worker 0 against the echo peer): its wall time."""
    folder.mkdir(parents=True, exist_ok=True)
    checkpoint = [folder / n for n in ("manifest", "w0", "a0", "w1", "a1")]
    env = {**os.environ, **environment}
    started = time.perf_counter()
    processes = []
    count = 1 if echo_steps else 2
    for k in range(count):
        log = open(logs / f"{name}-worker{k}.txt", "w")
        processes.append(subprocess.Popen([str(workers[k]), *map(str, checkpoint), str(folder / f"readback{k}"),
                                           str(records[k])], stderr=log, env=env))
        if k == 0:
            time.sleep(0.2)
    if echo_steps:
        processes.append(subprocess.Popen([sys.executable, str(HERE / "echo_peer.py"), "--port", str(B.PORT),
                                           "--steps", str(echo_steps)]))
    try:
        failed = [p.returncode for p in processes if p.wait(timeout=60) != 0]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
    if failed:
        raise RuntimeError(f"{name}: a process failed (exits {failed}); see {logs}")
    return time.perf_counter() - started


def profiled_us_per_step(log: Path, steps: int) -> float:
    """Worker 0's step from its own profile: every timed event and every gap between two of
    them, except the once-only ones (n 1: the start-up before the first and the finish before
    the last exchange), over the steps.  Independent of process start-up (echo_peer.py's
    Python start varies by more than a short run's steps take)."""
    total = 0.0
    for line in log.read_text().splitlines():
        if line.startswith("native: profile: "):
            fields = line.split()
            count, milliseconds = int(fields[fields.index("n") + 1]), float(fields[fields.index("total") + 1])
            if count > 1:
                total += milliseconds
    return total * 1e3 / steps


def weights_equal(folder: Path, expected, workers) -> bool:
    try:
        return all(R.bits(F.shard_value((folder / f"w{k}").read_bytes())[2]) == R.bits(expected[k].weight)
                   for k in workers)
    except (OSError, AssertionError):
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", action="append", default=[])
    parser.add_argument("--short", type=int, default=256)
    parser.add_argument("--long", type=int, default=2048)
    parser.add_argument("--trace", action="store_true", help="BOBC_GPU_TRACE=1 on the short runs")
    parser.add_argument("--out", type=Path, default=REPO / "out/bench/partitioned_regression/profile")
    arguments = parser.parse_args()
    logs = arguments.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pr-profile-"))
    started = time.perf_counter()
    hosts = build(work / "hosts", (arguments.short, arguments.long))
    print(f"hosts built in {time.perf_counter() - started:.1f} s", flush=True)
    data = R.generate()
    records = []
    for k in range(2):
        records.append(work / f"record{k}.bin")
        records[-1].write_bytes(F.record(data, k, pytorch_pair.COORDINATES[k]))
    expected = R.train(data, pytorch_pair.COORDINATES, arguments.long)
    results = []
    for configuration in arguments.config or ["pair", "alone"]:
        name, _, settings = configuration.partition(":")
        environment = {"NATIVE_PROFILE": "1", "NATIVE_PEER_TIMEOUT_MS": "5000"}
        environment.update(item.split("=", 1) for item in settings.split(",") if item)
        echo = name.startswith("alone")
        short_env = {**environment, **({"BOBC_GPU_TRACE": "1"} if arguments.trace else {})}
        try:
            short = run(hosts[arguments.short], work / f"{name}-short", records, short_env, logs, f"{name}-short",
                        arguments.short if echo else 0)
            long = run(hosts[arguments.long], work / f"{name}-long", records, environment, logs, f"{name}-long",
                       arguments.long if echo else 0)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            results.append({"name": name, "environment": environment, "error": str(error)})
            print(f"{name}: FAILED: {error}", flush=True)
            continue
        rate = (arguments.long - arguments.short) / (long - short)
        same = weights_equal(work / f"{name}-long", expected, (0,) if echo else (0, 1))
        profiled = profiled_us_per_step(logs / f"{name}-long-worker0.txt", arguments.long)
        results.append({"name": name, "environment": environment, "steps_per_second": rate,
                        "us_per_step": 1e6 / rate, "profiled_us_per_step": profiled, "short_s": short, "long_s": long,
                        "equal_reference": same})
        print(f"{name}: {rate:.0f} steps/s, {1e6 / rate:.1f} us a step (runs {short:.3f} s / {long:.3f} s); "
              f"worker 0's profile: {profiled:.1f} us a step; reference bits {same}", flush=True)
    (arguments.out / "profile.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
