#!/usr/bin/env python3
"""`make bench`: the benchmarks this machine can run, and the list of those it can't.

CPU side (here): the NumPy reference runner's invocation (in process, and as a
fresh process from start to outputs written), the checkpoint envelope's encode
and decode, the fresh-initialization generator, and bench/eval_bench.py when it
exists.  Results go to out/bench/cpu-<UTC time>.json (and out/bench/eval.json)
with the command, the machine and the date; `--out bench/results` publishes them.

GPU side (issue 10, on the H200): the native host and the PyTorch comparisons
(bench/gpu/pytorch_bob.py).  Without --gpu they are listed as skipped, with
the command that runs them; with --gpu (on a machine with an NVIDIA GPU) the
PyTorch ones run, and with --host PATH the native host's fresh-process
invocation is timed and its outputs compared with the reference runner's.

    python bench/run.py [--repeats N] [--out DIR] [--quick] [--gpu] [--host ./bob-host]
"""
from __future__ import annotations

import argparse
import datetime as _dt
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
try:
    import bobc  # noqa: F401
except ImportError:                                    # a checkout without `pip install -e .`
    sys.path.insert(0, str(REPO / "compiler"))
sys.path.insert(0, str(REPO / "examples/bob"))   # Bob's NumPy model (bob_model)

import numpy as np

from bob_model.model import BobConfig, run_invocation
from bob_model.fixture import DEFAULT_PROMPTS, build_record, read_prompts_file
from bob_model.formats import (decode_checkpoint, encode_checkpoint, encode_input_record,
                                    fresh_parameters)
from bobc.reference.publish import publish

CORPUS = REPO / "examples/bob/corpus.txt"
PROMPTS = REPO / "examples/bob/prompts.txt"

GPU_COMMAND = "bench/gpu/run_device.sh [OUT]"
GPU_README = "bench/results/bob-h200.md"
GPU_BENCHMARKS = [
    ("native host: one `train` invocation, fresh process to outputs written",
     "./bob-host train --input R --checkpoint-out C --predictions P --result F (timed by the caller)"),
    ("native host: per-update GPU time (AdamW + loss launches)",
     f"{GPU_COMMAND} (BOBC_HOST_TIMING)"),
    ("native host: empty-kernel floor (same plan, every kernel empty), per submission",
     f"{GPU_COMMAND} (bench/gpu/build_floor_host.py)"),
    ("PyTorch: one `train` invocation as a script, fresh process",
     "python bench/gpu/pytorch_bob.py invocation --case ../shared/data/bob-reference/case.npz"),
    ("PyTorch: per-update time, eager", "python bench/gpu/pytorch_bob.py eager"),
    ("PyTorch: per-update time, CUDA graph replay", "python bench/gpu/pytorch_bob.py graph"),
]


def timed(fn, repeats: int) -> dict:
    """Wall-clock seconds of `repeats` calls after one warm-up call."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return {"unit": "s", "repeats": repeats, "min": min(samples),
            "median": statistics.median(samples), "mean": statistics.fmean(samples)}


def example_record():
    prompts = read_prompts_file(PROMPTS) if PROMPTS.is_file() else list(DEFAULT_PROMPTS)
    return build_record(CORPUS.read_bytes(), prompts)


FRESH_PROCESS = """
import sys, time
from bob_model.model import BobConfig
from bob_model.runner import invoke_files
from bobc.reference.runner import OutputPaths
folder = sys.argv[1]
invoke_files(BobConfig(), "train", folder + "/record.bin", None,
             OutputPaths(folder + "/out.ckpt", folder + "/pred.bin", folder + "/result.bin"))
"""


def fresh_process(record_bytes: bytes, repeats: int) -> dict:
    """`python` started, record read, invocation run, three files published."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "record.bin").write_bytes(record_bytes)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (str(REPO / "compiler"), str(REPO / "examples/bob"), os.environ.get("PYTHONPATH")) if p))

        def once():
            subprocess.run([sys.executable, "-c", FRESH_PROCESS, folder], check=True, env=env)
        return timed(once, repeats)


def cpu_benchmarks(repeats: int) -> list[dict]:
    config = BobConfig()
    record = example_record()
    trained = run_invocation(config, "train", record, None).checkpoint
    envelope = encode_checkpoint(config.contract, trained)
    results = []

    def add(name, fn, n=repeats, note=""):
        entry = {"name": name, **timed(fn, n)}
        if note:
            entry["note"] = note
        results.append(entry)
        print(f"  {name:<58} median {entry['median'] * 1e3:9.3f} ms  (min {entry['min'] * 1e3:.3f})")

    add("reference: train invocation, fresh state (in process)",
        lambda: run_invocation(config, "train", record, None),
        note="10 AdamW updates + 11 loss/gradient evaluations + 6 predictions, NumPy")
    add("reference: train invocation, resumed (in process)",
        lambda: run_invocation(config, "train", record, trained))
    add("reference: predict invocation (in process)",
        lambda: run_invocation(config, "predict", record, trained))
    add("formats: checkpoint encode (786 KB, CRC-32)",
        lambda: encode_checkpoint(config.contract, trained))
    add("formats: checkpoint decode and check",
        lambda: decode_checkpoint(envelope, config.contract))
    add("formats: fresh initialization generator (65536 values)",
        lambda: fresh_parameters(b"bob-seed-v1"))
    entry = {"name": "reference: train invocation, fresh process to outputs written",
             **fresh_process(encode_input_record(record), max(3, repeats // 10)),
             "note": "python start, imports, record read, invocation, three atomic publishes"}
    results.append(entry)
    print(f"  {entry['name']:<58} median {entry['median'] * 1e3:9.3f} ms")
    return results


def eval_bench(out_folder: Path) -> dict:
    """bench/eval_bench.py, run as its own process, writing its JSON into `out_folder`."""
    script = REPO / "bench/eval_bench.py"
    start = time.perf_counter()
    print("  eval_bench.py: running (about a minute) ...", flush=True)
    done = subprocess.run([sys.executable, str(script), "--out", str(out_folder / "eval.json")],
                          capture_output=True, text=True, cwd=REPO)
    entry = {"command": f"{sys.executable} bench/eval_bench.py", "returncode": done.returncode,
             "seconds": time.perf_counter() - start}
    try:
        entry["result"] = json.loads(done.stdout)
    except ValueError:
        entry["stdout_tail"] = done.stdout[-4000:]
    if done.returncode:
        entry["stderr_tail"] = done.stderr[-4000:]
    print(f"  eval_bench.py: exit {done.returncode} in {entry['seconds']:.2f} s")
    return entry


def machine() -> dict:
    return {"platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor(), "cpu_count": os.cpu_count(),
            "python": platform.python_version(), "numpy": np.__version__,
            "gpu_device_present": os.path.exists("/dev/nvidiactl")}


def gpu_present() -> bool:
    return os.path.exists("/dev/nvidiactl")


def native_host(host: Path, record, repeats: int) -> dict:
    """The built host: fresh process to outputs written, and its outputs against
    the reference runner's (same record, fresh state)."""
    from bob_model.formats import decode_predictions, decode_result

    config = BobConfig()
    expected = run_invocation(config, "train", record, None)
    with tempfile.TemporaryDirectory() as folder:
        f = Path(folder)
        (f / "record.bin").write_bytes(encode_input_record(record))
        command = [str(host), "train", "--input", str(f / "record.bin"), "--checkpoint-out",
                   str(f / "out.ckpt"), "--predictions", str(f / "pred.bin"),
                   "--result", str(f / "result.bin")]
        entry = {"name": "native host: train invocation, fresh process to outputs written",
                 "command": shlex.join(command)}
        try:
            entry.update(timed(lambda: subprocess.run(command, check=True, capture_output=True),
                               repeats))
        except (OSError, subprocess.CalledProcessError) as failure:
            entry["error"] = str(failure) + "\n" + (getattr(failure, "stderr", b"") or b"").decode(
                errors="replace")[-4000:]
            print(f"  native host failed: {failure}")
            return entry
        tokens, valid = decode_predictions((f / "pred.bin").read_bytes())
        initial, training, rows = decode_result((f / "result.bin").read_bytes())
        state = decode_checkpoint((f / "out.ckpt").read_bytes(), config.contract)

    def rel(a, b):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-30)))
    entry["against_reference"] = {
        "tokens_equal": tokens.tolist() == expected.last.tokens.tolist(),
        "valid_equal": valid.tolist() == expected.last.valid.tolist(),
        "initial_loss_rel": rel(initial, expected.initial_loss),
        "training_loss_rel": rel(training, expected.training_loss),
        "logit_rows_rel": rel(rows, expected.last.logit_rows),
        "P_rel": rel(state.P, expected.checkpoint.P), "step": state.step}
    print(f"  {entry['name']:<58} median {entry['median'] * 1e3:9.3f} ms")
    return entry


def pytorch(repeats: int) -> list[dict]:
    """bench/gpu/pytorch_bob.py: the invocation as a fresh process, then eager and graph."""
    script = REPO / "bench/gpu/pytorch_bob.py"
    case = REPO.parent / "shared/data/bob-reference/case.npz"
    results = []
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, str(script), "invocation", "--case", str(case),
                   "--out", folder]
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True)
            runs.append(time.perf_counter() - start)
            if done.returncode:
                return [{"name": "PyTorch", "error": done.stderr[-4000:]}]
        results.append({"name": "PyTorch: train invocation, fresh process to outputs written",
                        "command": shlex.join(command), "unit": "s", "repeats": repeats,
                        "min": min(runs), "median": statistics.median(runs),
                        "script_report": json.loads(done.stdout)["results"][0]})
        print(f"  {results[-1]['name']:<58} median {results[-1]['median']:9.3f} s")
        command = [sys.executable, str(script), "all"]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            results.append({"name": "PyTorch: eager and graph", "error": done.stderr[-4000:]})
        else:
            results.append({"name": "PyTorch: eager and graph", "command": shlex.join(command),
                            "results": json.loads(done.stdout)["results"]})
            for r in results[-1]["results"]:
                print(f"  PyTorch {r['mode']}: " + ", ".join(
                    f"{k} {v['median'] if isinstance(v, dict) else v:.1f} us"
                    for k, v in r.items() if k != "mode"))
    return results


def git_commit() -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=REPO, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30, help="timed calls per benchmark")
    parser.add_argument("--quick", action="store_true", help="3 repeats (a smoke run)")
    parser.add_argument("--out", default=str(REPO / "out/bench"),
                        help="results folder (default out/bench, outside version control; the "
                             "published results in bench/results/ change only when asked with --out)")
    parser.add_argument("--gpu", action="store_true",
                        help="also run the PyTorch comparisons (needs torch and a GPU)")
    parser.add_argument("--host", help="a built native host to time (needs a GPU)")
    parser.add_argument("--skip-eval", action="store_true", help="do not run bench/eval_bench.py")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else max(1, args.repeats)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)

    print("CPU benchmarks:")
    report = {
        "command": shlex.join([sys.executable, *sys.argv]),
        "date": now.isoformat(),
        "commit": git_commit(),
        "machine": machine(),
        "benchmarks": cpu_benchmarks(repeats),
        "eval_bench": None if args.skip_eval else eval_bench(Path(args.out)),
        "gpu_benchmarks": [],
    }
    skipped = list(GPU_BENCHMARKS)
    if args.host or args.gpu:
        if not gpu_present():
            print("no NVIDIA GPU here (/dev/nvidiactl absent): --gpu and --host are ignored")
        else:
            print("GPU benchmarks:")
            if args.host:
                report["gpu_benchmarks"].append(
                    native_host(Path(args.host), example_record(), max(3, repeats // 10)))
                skipped = [s for s in skipped if not s[0].startswith("native host: one")]
            if args.gpu:
                report["gpu_benchmarks"] += pytorch(max(3, repeats // 10))
                skipped = [s for s in skipped if not s[0].startswith("PyTorch")]
    report["skipped"] = [{"name": name, "needs": "an NVIDIA GPU (issue 10, H200)", "run": how}
                         for name, how in skipped]
    if skipped:
        print("Skipped here (need a GPU):")
    for name, how in skipped:
        print(f"  {name}\n      {how}")
    report["gpu_command"] = GPU_COMMAND
    if not gpu_present():
        print(f"No NVIDIA GPU here (/dev/nvidiactl absent).  The GPU part (all of the above, side "
              f"by side on one GPU) runs on a GPU machine, from the repository root, with:\n"
              f"    {GPU_COMMAND}\n"
              f"(it builds the host and the empty-kernel floor host into .device/bench when bobc is "
              f"installed; results and how they were made: {GPU_README})")
    out = Path(args.out) / f"{'gpu' if report['gpu_benchmarks'] else 'cpu'}-" \
        f"{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    publish(out, (json.dumps(report, indent=2) + "\n").encode())
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
