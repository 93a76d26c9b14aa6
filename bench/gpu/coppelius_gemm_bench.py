#!/usr/bin/env python3
"""The coppelius-gemm kernels timed at the large configuration's shapes, beside cuBLAS.

Every matrix product of one Coppelius update at the large configuration (12 x 768,
context 256, heads 12 of 64, MLP 3072, vocabulary 256): each shape is run by our kernel
(assembled by bobc for the GPU's target, wrapped in a cubin, loaded with CuPy) and by
torch.matmul on binary16 operands (cuBLAS: binary16 in, binary32 accumulation, binary16
out), on device arrays.  A run of launches is captured in a CUDA graph and replayed
between CUDA events (so Python's launch cost is not measured); per launch = elapsed /
launches, the median of REPEATS replays.  TFLOP/s = 2 M N K batches / time.

    python3 bench/gpu/coppelius_gemm_bench.py [--launches 200] [--json out.json] [--sweep] [--sources DIR]

Prints one line per shape and the totals per update (each shape times its count).  A
product that gemm.split_count splits (S > 1, the S column) runs S blocks per output tile
(flag 16: partials in a workspace, the tile's last block adds them).  --sweep also times
every valid split count of each one-batch shape (to choose split_count's rule).  Each
shape's D (same inputs every run: a seeded generator) is printed as a SHA-256 prefix, so
that two builds of the kernels (--sources: another folder of generated sources, with the
generator of the same tree on PYTHONPATH) can be held to bit-identical results.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
try:
    import bobc  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "compiler"))

from bobc.sass import assemble_kernel  # noqa: E402
from bobc.sass.cubin import write_cubin  # noqa: E402
from bobc.sass.generate import gemm  # noqa: E402
from bobc.targets import TARGETS  # noqa: E402

PREFIX = "coppelius-gemm"   # the model's name for its product kernels (examples/coppelius)
SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"
LAYERS, D, HEADS, DH, T, V = 12, 768, 12, 64, 256, 256
# (what, layout, M, N, K, batches, count per update)
SHAPES = [
    ("qkv = x Wqkv", "nn", T, 3 * D, D, 1, LAYERS),
    ("scores = q k^T", "nt", T, T, DH, HEADS, LAYERS),
    ("o = p v", "nn", T, DH, T, HEADS, LAYERS),
    ("h = o Wproj", "nn", T, D, D, 1, LAYERS),
    ("u = x Wfc", "nn", T, 4 * D, D, 1, LAYERS),
    ("x = g Wfcproj", "nn", T, D, 4 * D, 1, LAYERS),
    ("logits = x Whead", "nn", T, V, D, 1, 1),
    ("dx = dlogits Whead^T", "nt", T, D, V, 1, 1),
    ("dWhead = x^T dlogits", "tn", D, V, T, 1, 1),
    ("dg = dx Wfcproj^T", "nt", T, 4 * D, D, 1, LAYERS),
    ("dWfcproj = g^T dx", "tn", 4 * D, D, T, 1, LAYERS),
    ("dx = du Wfc^T", "nt", T, D, 4 * D, 1, LAYERS),
    ("dWfc = x^T du", "tn", D, 4 * D, T, 1, LAYERS),
    ("do = dh Wproj^T", "nt", T, D, D, 1, LAYERS),
    ("dWproj = o^T dh", "tn", D, D, T, 1, LAYERS),
    ("dp = do v^T", "nt", T, T, DH, HEADS, LAYERS),
    ("dv = p^T do", "tn", T, DH, T, HEADS, LAYERS),
    ("dq = ds k", "nn", T, DH, T, HEADS, LAYERS),
    ("dk = ds^T q", "tn", T, DH, T, HEADS, LAYERS),
    ("dx = dqkv Wqkv^T", "nt", T, D, 3 * D, 1, LAYERS),
    ("dWqkv = x^T dqkv", "tn", D, 3 * D, T, 1, LAYERS),
]
REPEATS = 5


def graph_time(cp, run, launches: int) -> float:
    """Seconds per launch of `run()` captured `launches` times in a CUDA graph."""
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        run()
        stream.synchronize()
        stream.begin_capture()
        for _ in range(launches):
            run()
        graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()
        times = []
        for _ in range(REPEATS):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            graph.launch(stream)
            stop.record(stream)
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3 / launches)
    return statistics.median(times)


def torch_time(torch, a, b, layout: str, batches: int, launches: int) -> float:
    """cuBLAS through torch.matmul on the same shapes (binary16 operands), CUDA-graph timed."""
    op_a = (lambda x: x.transpose(-1, -2)) if layout == "tn" else (lambda x: x)
    op_b = (lambda x: x.transpose(-1, -2)) if layout == "nt" else (lambda x: x)
    out = torch.matmul(op_a(a), op_b(b))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            torch.matmul(op_a(a), op_b(b), out=out)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(launches):
            torch.matmul(op_a(a), op_b(b), out=out)
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / launches)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=200)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--sweep", action="store_true", help="also time every split count of one-batch shapes")
    parser.add_argument("--sources", type=Path, default=SOURCES, help="the folder of the generated kernel sources")
    args = parser.parse_args()
    import cupy as cp
    try:
        import torch
    except ImportError:
        torch = None
    target = TARGETS[f"sm_{cp.cuda.Device().compute_capability}"]
    functions = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, variant in gemm.VARIANTS.items():
            assembled = assemble_kernel(args.sources / f"{variant.identity(PREFIX)}.sass", target)
            path = Path(folder) / f"{variant.identity(PREFIX)}.cubin"
            path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, gemm.PARAMETER_BYTES,
                                         gemm.THREADS))
            module = cp.RawModule(path=str(path))
            function = module.get_function(assembled.kernel_name)
            function.max_dynamic_shared_size_bytes = gemm.shared_bytes(variant)   # past 48 KiB CUDA asks
            functions[name] = (module, function, gemm.shared_bytes(variant))
    rng = np.random.default_rng(0)
    rows, keep = [], []
    print(f"{'product':24} {'layout':6} {'M':>5} {'N':>5} {'K':>5} {'z':>3} {'S':>2}  {'ours us':>8} {'TFLOP/s':>8}  "
          f"{'cuBLAS us':>9} {'TFLOP/s':>8}")
    for what, layout, m, n, k, z, count in SHAPES:
        a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
        b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
        a = cp.asarray(rng.standard_normal((z, a_rows, a_cols)).astype(np.float16))
        b = cp.asarray(rng.standard_normal((z, b_rows, b_cols)).astype(np.float16))
        d = cp.zeros((z, m, n), dtype=cp.float32)
        _, function, shared = functions[layout]
        fields = dict(A=a.data.ptr, B=b.data.ptr, D=d.data.ptr, M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n,
                      sA=a_rows * a_cols, sB=b_rows * b_cols, sD=m * n, batches=z)
        if z == 1:
            fields = {key: value for key, value in fields.items() if key not in ("sA", "sB", "sD", "batches")}

        def timed(splits):
            workspace = cp.zeros(max(1, gemm.split_workspace_bytes(m, n, splits) // 4), dtype=cp.float32)
            tickets = cp.zeros(gemm.split_ticket_bytes(m, n) // 4, dtype=cp.uint32)
            grid, block = gemm.split_parameters(layout, splits, workspace.data.ptr, tickets.data.ptr, **fields)
            words = tuple(np.frombuffer(block, dtype=np.uint64))
            keep.append((workspace, tickets))
            return graph_time(cp, lambda: function(grid, (gemm.THREADS,), words, shared_mem=shared), args.launches)

        splits = gemm.split_count(m, n, k, z)
        ours = timed(splits)
        cp.cuda.Device().synchronize()
        digest = hashlib.sha256(d.get().tobytes()).hexdigest()[:12]
        sweep = {}
        if args.sweep and z == 1:
            for s in range(1, gemm.SPLIT_MAX + 1):
                if k % (s * gemm.TILE_K) == 0:
                    sweep[s] = ours if s == splits else timed(s)
            print(f"  sweep {what}: " + ", ".join(f"S={s} {t * 1e6:.2f} us" for s, t in sweep.items()))
        flops = 2.0 * m * n * k * z
        theirs = None
        if torch is not None:
            ta = torch.as_tensor(a, device="cuda")
            tb = torch.as_tensor(b, device="cuda")
            theirs = torch_time(torch, ta, tb, layout, z, args.launches)
        rows.append(dict(what=what, layout=layout, M=m, N=n, K=k, batches=z, count=count, splits=splits,
                         ours_s=ours, cublas_s=theirs, flops=flops, sweep_s=sweep, digest=digest))
        print(f"{what:24} {layout:6} {m:5} {n:5} {k:5} {z:3} {splits:2}  {ours * 1e6:8.2f} {flops / ours / 1e12:8.1f}  "
              + (f"{theirs * 1e6:9.2f} {flops / theirs / 1e12:8.1f}" if theirs else "     (no torch)")
              + f"  D {digest}")
    total_ours = sum(r["ours_s"] * r["count"] for r in rows)
    total_flops = sum(r["flops"] * r["count"] for r in rows)
    line = f"per update: {len(rows)} shapes, {total_flops / 1e9:.2f} GFLOP; ours {total_ours * 1e3:.3f} ms " \
           f"({total_flops / total_ours / 1e12:.1f} TFLOP/s)"
    if torch is not None:
        total_theirs = sum(r["cublas_s"] * r["count"] for r in rows)
        line += f"; cuBLAS {total_theirs * 1e3:.3f} ms ({total_flops / total_theirs / 1e12:.1f} TFLOP/s)"
    print(line)
    if args.json:
        args.json.write_text(json.dumps(dict(device=cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                                             target=target.name, rows=rows), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
