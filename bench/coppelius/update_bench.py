#!/usr/bin/env python3
"""One Coppelius update, timed: our kernels against the same model in PyTorch, on one GPU
in one run (bench/results/coppelius-update-h200.md records a run).

Per update = one context (batch 1, as the seed reads), CUDA events around the whole
update, the median over --steps updates after --warm ones.  Ours is the launch graph's
update submission (coppelius_model.graph, 112 launches small / 304 large) through
coppelius_model.device.Runner with our assembled kernels, two ways:
  ours         each launch a CuPy RawKernel call from Python, back to back on one stream
               (the host's context staging and loss-record read are outside the events)
  ours-graph   the same launches captured once in a CUDA graph and replayed (no Python
               between launches: the nearest CuPy gets to the seed host's one pushbuffer
               submission; the AdamW scalars are those of the captured step)
and PyTorch (bench/coppelius/torch_gpt.py): eager binary32, amp, compile, graphs.  With
--hosts (a folder tests/gpu/build_coppelius_host.py wrote) also
  host         seed 004's own host, `train` from a fresh checkpoint: its 200 updates each one
               submission of the seed's pushbuffer (every launch's QMD scheduling the next);
               the median doorbell-to-semaphore time of the update's ring entry, as the host
               logs it (NATIVE_SUBMIT_TIMES): measured on the CPU, so it also holds the
               doorbell, the GPU front end's fetch and the host's poll, which the CUDA-event
               times of the other rows leave out.
Then the matrix products alone: the update's GEMM launches replayed as one CUDA graph,
and the same shapes through torch.matmul (cuBLAS, binary16 operands and outputs,
reduced-precision reductions off) in a CUDA graph: TFLOP/s of each; and the update's
launches by kind (GEMMs, AdamW, the non-finite check, the rest) and by kernel, each group a
CUDA graph.

    python3 bench/coppelius/update_bench.py --json out.json [--configs small,large]
        [--variants ours,ours-graph,eager,amp,compile,graphs,gemm,breakdown] [--steps 30] [--warm 8]
        [--hosts .device/coppelius-host]

The JSON is rewritten after every measurement (a run cut short keeps what it measured).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
for path in (REPO / "compiler", REPO / "examples" / "coppelius", Path(__file__).resolve().parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from coppelius_model import device, limits, model  # noqa: E402
from coppelius_model.config import CONFIGS  # noqa: E402

TEXT = REPO / "tests" / "data" / "coppelius" / "tinyshakespeare-64k.txt"
ALL = ("ours", "ours-graph", "eager", "amp", "compile", "graphs", "gemm", "breakdown")


def contexts(config, count):
    data = TEXT.read_bytes()
    available = (len(data) - 1) // config.context
    return [model.context_at(data, (k % available) * config.context, config.context) for k in range(count)]


def summarise(times_ms, **extra):
    return dict(median_ms=statistics.median(times_ms), min_ms=min(times_ms), max_ms=max(times_ms),
                steps=len(times_ms), **extra)


def time_ours(config, backend, steps, warm, graph: bool):
    cp = backend.cp
    runner = device.Runner(config, backend)
    runner.load(model.fresh_state(config, seed=0))
    work = contexts(config, steps + warm)
    stream = cp.cuda.Stream(non_blocking=True)
    times, host, losses = [], [], []
    with stream:
        captured = None
        if graph:
            stream.begin_capture()
            runner.launch_update(runner.step + 1)
            captured = stream.end_capture()
        for k, (inputs, targets) in enumerate(work):
            runner.step += 1
            runner.stage(inputs, targets)
            stream.synchronize()
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            began = time.perf_counter()
            start.record(stream)
            if graph:
                captured.launch(stream)
            else:
                runner.launch_update(runner.step)
            stop.record(stream)
            issued = time.perf_counter() - began
            stop.synchronize()
            summary = runner.summary()
            losses.append(summary.loss)
            if k >= warm:
                times.append(cp.cuda.get_elapsed_time(start, stop))
                host.append(issued * 1e3)
    assert all(np.isfinite(losses)), losses
    return summarise(times, launches=len(runner.update_launches), host_issue_ms=statistics.median(host),
                     loss_first=losses[0], loss_last=losses[-1]), runner


def time_torch(config, variant, steps, warm):
    import torch
    import torch_gpt
    torch.manual_seed(0)
    model_, step = torch_gpt.build(config, variant)
    work = contexts(config, steps + warm)
    tokens = torch.tensor(np.stack([i for i, _ in work]).astype(np.int64), device="cuda").unsqueeze(1)
    targets = torch.tensor(np.stack([t for _, t in work]).astype(np.int64), device="cuda").unsqueeze(1)
    began = time.perf_counter()
    losses = [float(step(tokens[0], targets[0]).detach())]
    first_s = time.perf_counter() - began
    times = []
    for k in range(1, steps + warm):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step(tokens[k], targets[k])
        stop.record()
        stop.synchronize()
        losses.append(float(loss.detach()))
        if k >= warm:
            times.append(start.elapsed_time(stop))
    del model_, step
    if variant in ("compile", "graphs"):
        torch._dynamo.reset()
    torch.cuda.empty_cache()
    return summarise(times, first_update_s=first_s, loss_first=losses[0], loss_last=losses[-1])


def time_host(name: str, hosts: Path) -> dict:
    """Seed 004's host: one `train` invocation from a fresh checkpoint; per update, the median of
    its update submissions' doorbell-to-semaphore times (bench/coppelius_host/bench.py's reading)."""
    import importlib.util
    import os
    import subprocess
    spec = importlib.util.spec_from_file_location("coppelius_host_bench",
                                                  REPO / "bench" / "coppelius_host" / "bench.py")
    host_bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(host_bench)
    host = host_bench.HOSTS[name]
    described = json.loads((hosts / "hosts.json").read_text())
    if host not in described:
        raise FileNotFoundError(f"{hosts} has no {host} (build it with tests/gpu/build_coppelius_host.py"
                                f"{' --large' if name == 'large' else ''})")
    steps = described[host]["updates_per_invocation"]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        fresh = host_bench.fresh_checkpoint(name, steps, work / "fresh.ckpt")
        done = subprocess.run(host_bench.train_command(hosts / host, hosts / "text.stream", fresh, work / "out"),
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "NATIVE_SUBMIT_TIMES": str(work / "times.log")})
        if done.returncode:
            raise RuntimeError(f"{host} train exited {done.returncode}: {done.stderr[-1000:]}")
        times = host_bench.update_times(work / "times.log")
    return dict(median_ms=times["doorbell_to_semaphore_ms"], p10_ms=times["p10_ms"], p90_ms=times["p90_ms"],
                steps=times["updates"], how="doorbell to semaphore (CPU clock), NATIVE_SUBMIT_TIMES")


def gemm_shapes(runner):
    out = []
    for launch in runner.update_raw:
        if launch.kernel.startswith("coppelius-gemm-"):
            m, n = launch.words[6] & 0xFFFFFFFF, launch.words[6] >> 32
            k, z = launch.words[7] & 0xFFFFFFFF, launch.words[12] >> 32
            out.append((launch.kernel.removeprefix("coppelius-gemm-"), m, n, k, z))
    return out


def time_subset(runner, backend, keep, repeats=20):
    """Median ms of the update's launches for which keep(kernel) holds, replayed as one CUDA graph."""
    cp = backend.cp
    stream = cp.cuda.Stream(non_blocking=True)
    chosen = [i for i, l in enumerate(runner.update_raw) if keep(l.kernel)]
    with stream:
        stream.begin_capture()
        for index in chosen:
            backend.launch(runner.update_launches[index])
        captured = stream.end_capture()
        captured.launch(stream)
        stream.synchronize()
        times = []
        for _ in range(repeats):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            captured.launch(stream)
            stop.record(stream)
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
    return dict(launches=len(chosen), ms=statistics.median(times))


def time_breakdown(runner, backend):
    """The update's time by kind of launch (each group alone as a CUDA graph; groups run on
    whatever the arena holds, so only their times mean anything)."""
    groups = {"gemm": lambda k: k.startswith("coppelius-gemm-"),
              "adamw-half": lambda k: k == "coppelius-adamw-half",
              "nonfinite-check": lambda k: k == "coppelius-nonfinite-check",
              "rest": lambda k: not k.startswith("coppelius-gemm-") and k not in ("coppelius-adamw-half",
                                                                                 "coppelius-nonfinite-check")}
    out = {name: time_subset(runner, backend, keep) for name, keep in groups.items()}
    # and by kernel: each kernel's launches alone (one after the other in the graph), so ms /
    # launches is what one such launch costs back to back, its own time and the gap before it
    out["by_kernel"] = {kernel: time_subset(runner, backend, lambda k, kernel=kernel: k == kernel)
                        for kernel in sorted({launch.kernel for launch in runner.update_raw})}
    return out


def time_gemms(runner, backend, repeats=20):
    """The update's GEMM launches alone (ours, one CUDA graph) and the same shapes in cuBLAS."""
    import torch
    shapes = gemm_shapes(runner)
    flops = sum(2.0 * m * n * k * z for _, m, n, k, z in shapes)
    ours = time_subset(runner, backend, lambda kernel: kernel.startswith("coppelius-gemm-"), repeats)["ms"]
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    operands = []
    for form, m, n, k, z in shapes:
        a = torch.randn((z, k, m) if form == "tn" else (z, m, k), device="cuda", dtype=torch.float16)
        b = torch.randn((z, n, k) if form == "nt" else (z, k, n), device="cuda", dtype=torch.float16)
        a = a.transpose(1, 2) if form == "tn" else a
        b = b.transpose(1, 2) if form == "nt" else b
        operands.append((a, b, torch.empty((z, m, n), device="cuda", dtype=torch.float16)))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for a, b, out in operands:
            torch.matmul(a, b, out=out)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for a, b, out in operands:
            torch.matmul(a, b, out=out)
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    cublas = statistics.median(times)
    return dict(launches=len(shapes), gflop=flops / 1e9, ours_ms=ours, ours_tflops=flops / ours / 1e9,
                cublas_ms=cublas, cublas_tflops=flops / cublas / 1e9)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="small,large")
    parser.add_argument("--variants", default=",".join(ALL))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warm", type=int, default=8)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--hosts", type=Path, help="seed 004's hosts (tests/gpu/build_coppelius_host.py): "
                                                   "adds the host variant")
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    if args.hosts and "host" not in variants:
        variants.insert(0, "host")
    import cupy as cp
    import torch
    result = dict(device=torch.cuda.get_device_name(), torch=torch.__version__, cupy=cp.__version__,
                  command=" ".join(sys.argv), steps=args.steps, warm=args.warm, configs={})
    save = lambda: args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    with tempfile.TemporaryDirectory() as folder:
        backend = device.CupyBackend(Path(folder))
        for name in args.configs.split(","):
            config = CONFIGS[name]
            row = result["configs"][name] = dict(parameters=config.parameter_count,
                                                 limit_ms=limits.limit(config, limits.gpu_of(result["device"]))["seconds"] * 1e3)
            runner = None
            for variant in variants:
                began = time.perf_counter()
                try:
                    if variant == "host":
                        if args.hosts is None:
                            raise ValueError("the host variant needs --hosts")
                        row[variant] = time_host(name, args.hosts)
                    elif variant in ("ours", "ours-graph"):
                        row[variant], runner = time_ours(config, backend, args.steps, args.warm, variant == "ours-graph")
                    elif variant in ("gemm", "breakdown"):
                        if runner is None:
                            runner = device.Runner(config, backend)
                            runner.load(model.fresh_state(config, seed=0))
                        row[variant] = (time_gemms if variant == "gemm" else time_breakdown)(runner, backend)
                    else:
                        row[variant] = time_torch(config, variant, args.steps, args.warm)
                except Exception as error:   # a variant that fails is recorded, the others still run
                    row[variant] = dict(error=f"{type(error).__name__}: {error}"[:2000])
                row[variant]["wall_s"] = time.perf_counter() - began
                print(f"{name:6s} {variant:11s} {json.dumps(row[variant])}", flush=True)
                save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
