#!/usr/bin/env python3
"""Bob's native host against what its users would run instead, side by side on one GPU (issue 10).

One process, one GPU, one data set (../shared/data/bob-reference/case.npz: the
input record and the step-0 checkpoint, written as files in the project's
formats and given to every variant):

  (a) ours, whole invocation: `bob-host train` as a fresh process, start to
      outputs written (subprocess wall time), with BOBC_HOST_TIMING on;
  (b) ours, GPU time: from the host's timing file (one GPU timestamp per
      submission, each submission = one launch + a semaphore release after
      wait-for-idle), per update (AdamW + loss submissions) and per kernel;
  (c) PyTorch eager, whole invocation: bench/gpu/pytorch_bob.py invocation as a
      fresh python process (same inputs, same math, torch.optim.AdamW), and
      per update in process (CUDA events around each update);
  (d) PyTorch, the update captured once in a CUDA Graph and replayed (CUDA
      events around each replay);
  (e) the floor: the same plan with every kernel an empty one
      (bench/gpu/build_floor_host.py), run as the host is; its timing file gives
      the per-submission cost of our submission path with no work in it.
  Extras, when cupy is there: an empty kernel through the CUDA runtime (alone
  and back to back), and the AdamW update's memory traffic (read P, M, V, G;
  write P, M, V) against device memory and against mapped system memory, to
  show what system memory over PCIe costs.

The subprocess runs (a), (c), (e) are interleaved, repetition by repetition,
after one untimed warm-up of each.  Everything is written to --out as
bob-h200.json (summaries, ratios, raw samples) and bob-h200-samples.csv.

    python bench/gpu/bob_bench.py --host .device/bench/bob-host \\
        --floor-host .device/bench/bob-floor-host \\
        --reference .device/bench/bob-reference --repeats 10 --out OUT
"""
from __future__ import annotations

import argparse
import csv
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

REPO = Path(__file__).resolve().parents[2]
try:
    import bobc  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "compiler"))
sys.path.insert(0, str(REPO / "examples/bob"))   # Bob's NumPy model (bob_model)
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from bob_model.model import BobConfig  # noqa: E402
from bob_model import formats  # noqa: E402

UPDATES = 10
SUBMISSIONS = 33
# submission index -> kernel (docs: 0 initial loss, 1..6 (gather, argmax) x 3,
# 7..26 (adamw, loss) x 10, 27..32 (gather, argmax) x 3)
KIND = {0: "loss"}
for _i in range(1, 7):
    KIND[_i] = "gather" if _i % 2 else "argmax"
for _i in range(7, 27):
    KIND[_i] = "adamw" if _i % 2 else "loss"
for _i in range(27, 33):
    KIND[_i] = "gather" if _i % 2 else "argmax"
# Submissions 0..6 are one batch, 7..32 a second (runtime_c/plan_host.c submit():
# all issued, then waited for); a difference of two timestamps is GPU-paced only
# inside a batch, so submission 0 and 7 have no per-kernel time, and update 0
# (ts[8] - ts[6]) spans the host's work between the batches.
MEASURABLE = [i for i in range(1, SUBMISSIONS) if i != 7]
STEADY_UPDATES = list(range(1, UPDATES))


def spread(values, unit) -> dict:
    values = [float(v) for v in values]
    if not values:
        return {"unit": unit, "count": 0}
    return {"unit": unit, "count": len(values), "median": statistics.median(values),
            "min": min(values), "max": max(values), "mean": statistics.fmean(values)}


def ratio(ours: dict, theirs: dict) -> dict:
    """ours / theirs on medians, with the extreme range (min/max, max/min)."""
    if not ours.get("count") or not theirs.get("count"):
        return {"available": False}
    return {"median": ours["median"] / theirs["median"],
            "low": ours["min"] / theirs["max"], "high": ours["max"] / theirs["min"],
            "theirs_over_ours_median": theirs["median"] / ours["median"]}


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# ------------------------------------------------------------------ inputs
def make_inputs(reference: Path, folder: Path) -> dict:
    case = np.load(reference / "case.npz")
    record = formats.InputRecord(case["targets"], case["prompts"])
    (folder / "record.bin").write_bytes(formats.encode_input_record(record))
    state = formats.Checkpoint(case["P"], case["M"], case["V"], int(case["step"]))
    (folder / "start.ckpt").write_bytes(formats.encode_checkpoint(BobConfig().contract, state))
    return {"record": folder / "record.bin", "checkpoint": folder / "start.ckpt"}


def rel(a, b) -> float:
    a, b = np.asarray(a, np.float64).reshape(-1), np.asarray(b, np.float64).reshape(-1)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-30)))


# -------------------------------------------------------------- our host
def run_host(host: Path, inputs: dict, folder: Path, tag: str) -> dict:
    outs = {k: folder / f"{tag}.{k}" for k in ("ckpt", "pred", "result", "timing")}
    for path in outs.values():
        if path.exists():
            path.unlink()
    command = [str(host), "train", "--input", str(inputs["record"]), "--checkpoint",
               str(inputs["checkpoint"]), "--checkpoint-out", str(outs["ckpt"]),
               "--predictions", str(outs["pred"]), "--result", str(outs["result"])]
    env = dict(os.environ, BOBC_HOST_TIMING=str(outs["timing"]))
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    wall = time.perf_counter() - start
    entry = {"wall_s": wall, "returncode": done.returncode, "command": shlex.join(command)}
    if done.returncode:
        entry["stderr"] = done.stderr[-2000:]
        return entry
    rows = [line.split() for line in outs["timing"].read_text().splitlines() if line.strip()]
    entry["timestamps_ns"] = [int(r[2]) for r in rows]
    entry["payloads"] = [int(r[1]) for r in rows]
    entry["outputs"] = outs
    return entry


def host_gpu_times(timestamps) -> dict:
    """Per-update (k = 1..9) and per-submission GPU times in us from one timing file."""
    ts = timestamps
    updates = {k: (ts[8 + 2 * k] - ts[6 + 2 * k]) / 1e3 for k in range(UPDATES)}
    kernels = {i: (ts[i] - ts[i - 1]) / 1e3 for i in MEASURABLE}
    return {"updates_us": updates, "submissions_us": kernels,
            "batch2_span_us": (ts[32] - ts[7]) / 1e3, "updates_span_us": (ts[26] - ts[6]) / 1e3}


def check_host_outputs(entry, expected) -> dict:
    config = BobConfig()
    outs = entry["outputs"]
    state = formats.decode_checkpoint(outs["ckpt"].read_bytes(), config.contract)
    tokens, valid = formats.decode_predictions(outs["pred"].read_bytes())
    initial, training, rows = formats.decode_result(outs["result"].read_bytes())
    return {"tokens_equal": tokens.tolist() == expected["tokens"].tolist(),
            "initial_loss_rel": rel(initial, expected["initial_loss"]),
            "training_loss_rel": rel(training, expected["training_loss"]),
            "P_rel": rel(state.P, expected["P"]), "step": int(state.step),
            "mean_loss_before": float(np.mean(initial)), "mean_loss_after": float(np.mean(training))}


def gpu(entries):
    times = [host_gpu_times(e["timestamps_ns"]) for e in entries]
    per_update = [t["updates_us"][k] for t in times for k in STEADY_UPDATES]
    update0 = [t["updates_us"][0] for t in times]
    by_kind = {}
    for t in times:
        for i, us in t["submissions_us"].items():
            by_kind.setdefault(KIND[i], []).append(us)
    per_submission = {i: spread([t["submissions_us"][i] for t in times], "us")
                      for i in MEASURABLE}
    return {"per_update_us": spread(per_update, "us"),
            "update0_including_host_gap_us": spread(update0, "us"),
            "per_kernel_us": {k: spread(v, "us") for k, v in sorted(by_kind.items())},
            "per_submission_us": per_submission,
            "ten_updates_span_us": spread([t["updates_span_us"] for t in times], "us"),
            "samples_per_update_us": per_update,
            "raw_timestamps_ns": [e["timestamps_ns"] for e in entries]}


# ----------------------------------------------------- PyTorch invocation
def run_torch_invocation(inputs: dict, folder: Path, reference: Path, tag: str) -> dict:
    out = folder / f"torch-{tag}"
    command = [sys.executable, str(REPO / "bench/gpu/pytorch_bob.py"), "invocation",
               "--input", str(inputs["record"]), "--checkpoint", str(inputs["checkpoint"]),
               "--out", str(out), "--check", str(reference / "expected-1.npz")]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - start
    entry = {"wall_s": wall, "returncode": done.returncode, "command": shlex.join(command)}
    if done.returncode:
        entry["stderr"] = done.stderr[-3000:]
        return entry
    try:
        result = json.loads(done.stdout)["results"][0]
        entry["self_reported_process_s"] = result["process_start_to_outputs_written_s"]
        entry["check"] = result.get("check")
        entry["mean_loss_before"] = result.get("mean_loss_before")
        entry["mean_loss_after"] = result.get("mean_loss_after")
    except (ValueError, KeyError, IndexError):
        entry["stdout_tail"] = done.stdout[-2000:]
    return entry


# ------------------------------------------------ PyTorch eager and graph
def torch_per_update(reference: Path, repeats: int, bulk: int) -> dict:
    import torch
    import pytorch_bob as pb

    device = torch.device("cuda")
    case = np.load(reference / "case.npz")
    targets = torch.tensor(case["targets"].astype(np.int64), device=device)
    report = {"torch": torch.__version__, "device": torch.cuda.get_device_name(device)}

    def update_invocation_style(W, optimizer):
        optimizer.step()
        pb.loss_and_gradients(W, targets)

    # eager
    eager_samples, eager_alone, eager_bulk = [], [], []
    for _ in range(repeats):
        W, optimizer = pb.make_learner(case["P"], case["M"], case["V"], 0, device)
        pb.loss_and_gradients(W, targets)
        for _ in range(3):
            update_invocation_style(W, optimizer)
        torch.cuda.synchronize()
        events = [torch.cuda.Event(enable_timing=True) for _ in range(UPDATES + 1)]
        events[0].record()
        for k in range(UPDATES):
            update_invocation_style(W, optimizer)
            events[k + 1].record()
        events[-1].synchronize()
        eager_samples += [events[k].elapsed_time(events[k + 1]) * 1e3 for k in range(UPDATES)]
        for _ in range(UPDATES):
            start = time.perf_counter()
            update_invocation_style(W, optimizer)
            torch.cuda.synchronize()
            eager_alone.append((time.perf_counter() - start) * 1e6)
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(bulk):
            update_invocation_style(W, optimizer)
        end.record()
        end.synchronize()
        eager_bulk.append(begin.elapsed_time(end) * 1e3 / bulk)
    report["eager"] = {"per_update_gpu_us": spread(eager_samples, "us"),
                       "per_update_waited_alone_wall_us": spread(eager_alone, "us"),
                       f"per_update_back_to_back_{bulk}_us": spread(eager_bulk, "us"),
                       "samples_us": eager_samples}
    log(f"eager per update {report['eager']['per_update_gpu_us']['median']:.1f} us (events)")

    # graph
    graph_samples, graph_alone, graph_bulk = [], [], []
    for _ in range(repeats):
        W, optimizer = pb.make_learner(case["P"], case["M"], case["V"], 0, device, capturable=True)
        captured = pb.capture_update(W, optimizer, targets)
        for _ in range(3):
            captured.replay()
        torch.cuda.synchronize()
        events = [torch.cuda.Event(enable_timing=True) for _ in range(UPDATES + 1)]
        events[0].record()
        for k in range(UPDATES):
            captured.replay()
            events[k + 1].record()
        events[-1].synchronize()
        graph_samples += [events[k].elapsed_time(events[k + 1]) * 1e3 for k in range(UPDATES)]
        for _ in range(UPDATES):
            start = time.perf_counter()
            captured.replay()
            torch.cuda.synchronize()
            graph_alone.append((time.perf_counter() - start) * 1e6)
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(bulk):
            captured.replay()
        end.record()
        end.synchronize()
        graph_bulk.append(begin.elapsed_time(end) * 1e3 / bulk)
        del captured
    report["graph"] = {"per_update_gpu_us": spread(graph_samples, "us"),
                       "per_replay_waited_alone_wall_us": spread(graph_alone, "us"),
                       f"per_update_back_to_back_{bulk}_us": spread(graph_bulk, "us"),
                       "samples_us": graph_samples}
    log(f"graph per update {report['graph']['per_update_gpu_us']['median']:.1f} us (events)")
    try:
        from torch.profiler import ProfilerActivity, profile
        W, optimizer = pb.make_learner(case["P"], case["M"], case["V"], 0, device)
        pb.loss_and_gradients(W, targets)
        update_invocation_style(W, optimizer)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            update_invocation_style(W, optimizer)
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type.name == "CUDA"]
        report["eager_kernels_per_update"] = len(kernels)
        report["eager_kernel_names"] = sorted({e.name[:80] for e in kernels})
    except Exception as failure:  # the profiler is a nicety
        report["eager_kernels_per_update"] = f"not measured: {failure!r}"[:300]
    return report


# ----------------------------------------------------------- cupy extras
def cupy_extras(repeats: int) -> dict:
    import cupy as cp

    report = {"cupy": cp.__version__}
    empty = cp.RawKernel(r'extern "C" __global__ void empty() {}', "empty")
    empty((1,), (1,), ())
    cp.cuda.Device().synchronize()
    alone = []
    for _ in range(200):
        start = time.perf_counter()
        empty((1,), (1,), ())
        cp.cuda.Device().synchronize()
        alone.append((time.perf_counter() - start) * 1e6)
    bulk = []
    for _ in range(repeats):
        begin, end = cp.cuda.Event(), cp.cuda.Event()
        begin.record()
        for _ in range(1000):
            empty((1,), (1,), ())
        end.record()
        end.synchronize()
        bulk.append(cp.cuda.get_elapsed_time(begin, end) * 1e3 / 1000)
    report["empty_kernel_waited_alone_wall_us"] = spread(alone, "us")
    report["empty_kernel_back_to_back_gpu_us"] = spread(bulk, "us")

    # AdamW's memory traffic: read P, M, V, G, write P, M, V (65536 binary32 each)
    adamw = cp.RawKernel(r'''
extern "C" __global__ void adamw(float* p, float* m, float* v, const float* g, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float gi = g[i];
        float mi = 0.9f * m[i] + 0.1f * gi;
        float vi = 0.999f * v[i] + 0.001f * gi * gi;
        p[i] = p[i] * 0.999f - 0.1f * mi / (sqrtf(vi) + 1e-8f);
        m[i] = mi; v[i] = vi;
    }
}''', "adamw")
    n = 65536
    nbytes = 4 * n * 4

    def time_on(ptr):
        args = (cp.uint64(ptr), cp.uint64(ptr + 4 * n), cp.uint64(ptr + 8 * n),
                cp.uint64(ptr + 12 * n), cp.int32(n))
        # RawKernel takes pointers as ndarrays or ints; pass as uint64 scalars
        for _ in range(5):
            adamw((n // 256,), (256,), args)
        cp.cuda.Device().synchronize()
        samples = []
        for _ in range(repeats):
            begin, end = cp.cuda.Event(), cp.cuda.Event()
            begin.record()
            for _ in range(100):
                adamw((n // 256,), (256,), args)
            end.record()
            end.synchronize()
            samples.append(cp.cuda.get_elapsed_time(begin, end) * 1e3 / 100)
        return spread(samples, "us")

    device_buffer = cp.zeros(4 * n, cp.float32)
    report["adamw_traffic_device_memory_us"] = time_on(device_buffer.data.ptr)
    runtime = cp.cuda.runtime
    host_ptr = runtime.hostAlloc(nbytes, 2)          # cudaHostAllocMapped
    try:
        ctypes_zero(host_ptr, nbytes)
        get = getattr(runtime, "hostGetDevicePointer", None)
        device_ptr = get(host_ptr, 0) if get else host_ptr      # unified addressing: same VA
        report["adamw_traffic_mapped_system_memory_us"] = time_on(device_ptr)
    finally:
        runtime.freeHost(host_ptr)
    report["adamw_traffic_note"] = ("one launch of an elementwise AdamW over 65536 binary32 "
                                    "(1 MiB read, 768 KiB written), GPU time back to back; the "
                                    "same kernel on device memory and on mapped (zero-copy) "
                                    "system memory, as Bob's arena is")
    return report


def ctypes_zero(ptr, nbytes):
    import ctypes
    ctypes.memset(ptr, 0, nbytes)


# ------------------------------------------------------- variant hosts
def run_variants(args, host: Path, reference: Path, expected) -> dict:
    """Experimental hosts (same plan, other buffer placement), interleaved with ours."""
    variants = dict(v.split("=", 1) for v in args.variant)
    results = {}
    with tempfile.TemporaryDirectory(prefix="bob-variants-") as tmp:
        folder = Path(tmp)
        inputs = make_inputs(reference, folder)
        alive = {}
        for name, path in variants.items():
            first = run_host(Path(path).resolve(), inputs, folder, f"{name}-first")
            entry = {"host": path, "first_wall_s": first["wall_s"],
                     "first_returncode": first["returncode"]}
            if first["returncode"]:
                entry["stderr"] = first.get("stderr")
                log(f"variant {name} failed: exit {first['returncode']}: {first.get('stderr')}")
            else:
                entry["check_against_pytorch_case"] = check_host_outputs(first, expected)
                alive[name] = Path(path).resolve()
                log(f"variant {name}: {entry['check_against_pytorch_case']}")
            results[name] = entry
        if not alive:
            return results
        runs = {name: [] for name in ["ours", *alive]}
        for r in range(args.repeats):
            runs["ours"].append(run_host(host, inputs, folder, f"vo{r}"))
            for name, path in alive.items():
                runs[name].append(run_host(path, inputs, folder, f"{name}{r}"))
        for name, entries in runs.items():
            ok = [e for e in entries if not e["returncode"]]
            results.setdefault(name, {})
            results[name]["wall_s"] = spread([e["wall_s"] for e in ok], "s")
            results[name]["failures"] = len(entries) - len(ok)
            if ok:
                results[name]["gpu"] = gpu(ok)
                log(f"variant {name}: per update {results[name]['gpu']['per_update_us']['median']:.1f} us, "
                    f"kernels { {k: round(v['median'], 1) for k, v in results[name]['gpu']['per_kernel_us'].items()} }"
                    f", wall {results[name]['wall_s']['median'] * 1e3:.1f} ms")
    return results


# ------------------------------------------------------------------ main
def nvidia_smi() -> dict:
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,"
                               "pcie.link.gen.current,pcie.link.width.current,clocks.max.sm",
                               "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        return {"query": done.stdout.strip(), "returncode": done.returncode}
    except (OSError, subprocess.SubprocessError) as failure:
        return {"error": str(failure)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", required=True)
    parser.add_argument("--floor-host", required=True)
    parser.add_argument("--reference", default=str(REPO.parent / "shared/data/bob-reference"))
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--bulk", type=int, default=1000, help="back-to-back updates per sample")
    parser.add_argument("--torch-invocation-budget-s", type=float, default=120.0,
                        help="stop starting PyTorch invocations after this long (at least 3 run)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=HOST",
                        help="an experimental host (bench/gpu/build_memory_variant.py), timed "
                             "after everything else, interleaved with ours again")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    reference = Path(args.reference)
    host, floor = Path(args.host).resolve(), Path(args.floor_host).resolve()
    expected = np.load(reference / "expected-1.npz")
    report = {"command": shlex.join([sys.executable, *sys.argv]),
              "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
              "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count(),
                          "python": platform.python_version(), "numpy": np.__version__,
                          "nvidia_smi": nvidia_smi()},
              "repeats": args.repeats}

    def save():
        (out / "bob-h200.json").write_text(json.dumps(report, indent=2, default=str) + "\n")

    with tempfile.TemporaryDirectory(prefix="bob-bench-") as tmp:
        folder = Path(tmp)
        inputs = make_inputs(reference, folder)

        # warm-ups (untimed in the summaries, kept as "first")
        log("warm-up: host, floor host, PyTorch invocation")
        first = {"ours": run_host(host, inputs, folder, "warm"),
                 "floor": run_host(floor, inputs, folder, "warm-floor")}
        if first["ours"]["returncode"]:
            report["error"] = {"ours": first["ours"]}
            save()
            log(f"host failed: {first['ours'].get('stderr')}")
            return 1
        report["ours_check_against_pytorch_case"] = check_host_outputs(first["ours"], expected)
        log(f"host check {report['ours_check_against_pytorch_case']}")
        first["torch"] = run_torch_invocation(inputs, folder, reference, "warm")
        report["first_runs_wall_s"] = {k: v["wall_s"] for k, v in first.items()}
        report["first_runs_returncodes"] = {k: v["returncode"] for k, v in first.items()}
        if first["torch"]["returncode"]:
            report["torch_invocation_error"] = first["torch"].get("stderr")
        else:
            report["torch_check_against_pytorch_case"] = first["torch"].get("check")
        log(f"first runs: {report['first_runs_wall_s']}")
        save()

        runs = {"ours": [], "floor": [], "torch": []}
        torch_started = time.perf_counter()
        for r in range(args.repeats):
            runs["ours"].append(run_host(host, inputs, folder, f"r{r}"))
            runs["floor"].append(run_host(floor, inputs, folder, f"f{r}"))
            if not first["torch"]["returncode"] and (
                    r < 3 or time.perf_counter() - torch_started < args.torch_invocation_budget_s):
                runs["torch"].append(run_torch_invocation(inputs, folder, reference, f"r{r}"))
            log(f"repetition {r}: ours {runs['ours'][-1]['wall_s'] * 1e3:.1f} ms, floor "
                f"{runs['floor'][-1]['wall_s'] * 1e3:.1f} ms"
                + (f", torch {runs['torch'][-1]['wall_s']:.2f} s" if len(runs["torch"]) == r + 1
                   else ""))
        failures = {k: [e for e in v if e["returncode"]] for k, v in runs.items()}
        report["failures"] = {k: [e.get("stderr") for e in v] for k, v in failures.items() if v}
        ok = {k: [e for e in v if not e["returncode"]] for k, v in runs.items()}

        invocation = {
            "ours_wall_s": spread([e["wall_s"] for e in ok["ours"]], "s"),
            "floor_host_wall_s": spread([e["wall_s"] for e in ok["floor"]], "s"),
            "pytorch_eager_wall_s": spread([e["wall_s"] for e in ok["torch"]], "s"),
            "pytorch_eager_self_reported_process_s": spread(
                [e["self_reported_process_s"] for e in ok["torch"] if "self_reported_process_s" in e],
                "s"),
        }
        invocation["samples"] = {
            "ours_wall_s": [e["wall_s"] for e in ok["ours"]],
            "floor_host_wall_s": [e["wall_s"] for e in ok["floor"]],
            "pytorch_eager_wall_s": [e["wall_s"] for e in ok["torch"]]}
        report["invocation"] = invocation

        report["ours_gpu"] = gpu(ok["ours"])
        report["floor_gpu"] = gpu(ok["floor"])
        log(f"ours per update {report['ours_gpu']['per_update_us']}")
        log(f"floor per update {report['floor_gpu']['per_update_us']}")
        report["torch_invocations"] = [{k: v for k, v in e.items() if k != "outputs"}
                                       for e in runs["torch"]]
        save()

    try:
        report["pytorch_per_update"] = torch_per_update(reference, args.repeats, args.bulk)
    except Exception as failure:
        import traceback
        report["pytorch_per_update"] = {"error": traceback.format_exc()[-3000:]}
        log(f"torch per-update failed: {failure!r}")
    save()
    try:
        report["cupy_extras"] = cupy_extras(args.repeats)
    except Exception:
        import traceback
        report["cupy_extras"] = {"error": traceback.format_exc()[-3000:]}
    save()

    if args.variant:
        report["variants"] = run_variants(args, host, reference, expected)
        save()

    # ratios (ours / theirs), all measured in this run
    torch_pu = report.get("pytorch_per_update", {})
    ratios = {}
    ratios["invocation_ours_over_pytorch_eager"] = ratio(invocation["ours_wall_s"],
                                                         invocation["pytorch_eager_wall_s"])
    if "graph" in torch_pu:
        ratios["per_update_ours_over_cuda_graph"] = ratio(report["ours_gpu"]["per_update_us"],
                                                          torch_pu["graph"]["per_update_gpu_us"])
        ratios["per_update_ours_over_eager"] = ratio(report["ours_gpu"]["per_update_us"],
                                                     torch_pu["eager"]["per_update_gpu_us"])
    ratios["per_update_ours_over_empty_kernel_floor"] = ratio(report["ours_gpu"]["per_update_us"],
                                                              report["floor_gpu"]["per_update_us"])
    targets = {"invocation_at_least_20x_faster_than_eager":
               ratios["invocation_ours_over_pytorch_eager"].get("median", float("inf")) <= 1 / 20,
               "per_update_no_slower_than_cuda_graph":
               ratios.get("per_update_ours_over_cuda_graph", {}).get("median", float("inf")) <= 1.0,
               "per_update_within_2x_of_floor":
               ratios["per_update_ours_over_empty_kernel_floor"].get("median", float("inf")) <= 2.0}
    report["ratios"] = ratios
    report["targets_met"] = targets
    save()
    write_csv(report, out / "bob-h200-samples.csv")
    log(f"ratios {json.dumps(ratios, indent=1)}")
    log(f"targets {targets}")
    return 0


def write_csv(report, path: Path):
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["measure", "variant", "index", "value", "unit"])
        inv = report.get("invocation", {})
        for variant, gpu_key in (("ours", "ours_gpu"), ("floor", "floor_gpu")):
            for i, us in enumerate(report.get(gpu_key, {}).get("samples_per_update_us", [])):
                w.writerow(["per_update", variant, i, f"{us:.3f}", "us"])
        for variant, entry in report.get("variants", {}).items():
            if variant != "ours":
                for i, us in enumerate(entry.get("gpu", {}).get("samples_per_update_us", [])):
                    w.writerow(["per_update", f"experiment:{variant}", i, f"{us:.3f}", "us"])
        torch_pu = report.get("pytorch_per_update", {})
        for variant in ("eager", "graph"):
            for i, us in enumerate(torch_pu.get(variant, {}).get("samples_us", [])):
                w.writerow(["per_update", variant, i, f"{us:.3f}", "us"])
        for variant, gpu_key in (("ours", "ours_gpu"), ("floor", "floor_gpu")):
            for r, ts in enumerate(report.get(gpu_key, {}).get("raw_timestamps_ns", [])):
                for i in MEASURABLE:
                    w.writerow([f"submission_{KIND[i]}", variant, f"{r}:{i}",
                                f"{(ts[i] - ts[i - 1]) / 1e3:.3f}", "us"])
        for variant, key in (("ours", "ours_wall_s"), ("floor", "floor_host_wall_s"),
                             ("pytorch_eager", "pytorch_eager_wall_s")):
            for i, s in enumerate(inv.get("samples", {}).get(key, [])):
                w.writerow(["invocation", variant, i, f"{s:.6f}", "s"])


if __name__ == "__main__":
    sys.exit(main())
