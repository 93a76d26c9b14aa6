#!/usr/bin/env python3
"""The coppelius-gemm kernels timed at the large configuration's shapes, beside cuBLAS.

Every matrix product of one Coppelius update at the large configuration (12 x 768,
context 256, heads 12 of 64, MLP 3072, vocabulary 256): each shape is run by our kernel
(assembled by bobc for the GPU's target, wrapped in a cubin, loaded with CuPy) and by
torch.matmul on binary16 operands (cuBLAS: binary16 in, binary32 accumulation, binary16
out), on device arrays.  A run of launches is captured in a CUDA graph and replayed
between CUDA events (so Python's launch cost is not measured); per launch = elapsed /
launches, the median of REPEATS replays.  TFLOP/s = 2 M N K batches / time.

    python3 bench/gpu/coppelius_gemm_bench.py [--launches 200] [--json out.json] [--sweep]
                                              [--tile-m 64 128] [--warps 4 8]

Prints one line per shape and the totals per update (each shape times its count).  A
product that gemm.split_count splits (S > 1, the S column) runs S blocks per output tile
(flag 16: partials in a workspace, the tile's last block adds them).  --sweep also times
every valid split count of each one-batch shape (to choose split_count's rule).

--tile-m picks the generator's tile heights to time (default 64, the committed kernels;
64 128 times both in one run), --warps the warps a block (default: each height's own, 4 for
64 and 8 for 128; 8 with 64: warps of 32 x 16, two a scheduler): every combination of the
two that gemm.TILINGS serves is timed (the others are named and skipped), labelled
HEIGHTxWARPS (64x4, 64x8, 128x8).  Each is generated into a temporary folder
(gemm.generate(..., tile_m, warps)), launched with its tiling's block, grid and shared memory.
Every tiling gets the same inputs and the same splits of K (gemm.split_count's, the 64-row
rule), so D must be bit for bit the same: the line ends with each tiling's D digest
(SHA-256 of D after one launch, first 12 hex digits) and the run says whether they agree
(exit 1 if not).  JSON rows carry by_tiling: label -> time, digest, sweep.
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


def cubins(target, tile_m: int, warps: int, folder: Path) -> dict[str, tuple[Path, str, int]]:
    """The three kernels of tile height tile_m and `warps` warps, generated and assembled for
    `target`, written as cubins in `folder`: layout -> (cubin path, kernel symbol, shared bytes a block)."""
    tiling = gemm.tiling(tile_m, warps)
    sources = folder / f"tile-{tile_m}x{warps}"
    gemm.write_all(sources, PREFIX, tile_m=tile_m, warps=warps)
    out = {}
    for name, variant in gemm.VARIANTS.items():
        assembled = assemble_kernel(sources / f"{variant.identity(PREFIX)}.sass", target)
        path = sources / f"{variant.identity(PREFIX)}.cubin"
        path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, gemm.PARAMETER_BYTES,
                                     tiling.threads))
        out[name] = (path, assembled.kernel_name, gemm.shared_bytes(variant, tile_m))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=200)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--sweep", action="store_true", help="also time every split count of one-batch shapes")
    parser.add_argument("--tile-m", type=int, nargs="+", choices=gemm.TILE_HEIGHTS, default=[gemm.TILE_M],
                        help="the kernels' tile heights to time, in this order (default 64)")
    parser.add_argument("--warps", type=int, nargs="+", choices=gemm.WARP_COUNTS,
                        help="warps a block to time with each height, in this order (default: the height's own)")
    args = parser.parse_args()
    wanted = [(t, w) for t in dict.fromkeys(args.tile_m)
              for w in (dict.fromkeys(args.warps) if args.warps else [gemm.tiling(t).warps])]
    skipped = [f"{t}x{w}" for t, w in wanted if (t, w) not in gemm.TILINGS]
    tilings = [(t, w) for t, w in wanted if (t, w) in gemm.TILINGS]
    if skipped:
        print(f"not generated, skipped: {', '.join(skipped)} (served: "
              f"{', '.join(f'{t}x{w}' for t, w in gemm.TILINGS)})")
    if not tilings:
        parser.error("none of the asked tilings is served by the generator")
    tiles = [f"{t}x{w}" for t, w in tilings]
    import cupy as cp
    try:
        import torch
    except ImportError:
        torch = None
    target = TARGETS[f"sm_{cp.cuda.Device().compute_capability}"]
    functions = {}                      # (label, layout) -> (module, function, shared bytes)
    with tempfile.TemporaryDirectory() as folder:
        for label, (tile_m, warps) in zip(tiles, tilings):
            for name, (path, symbol, shared) in cubins(target, tile_m, warps, Path(folder)).items():
                module = cp.RawModule(path=str(path))
                function = module.get_function(symbol)
                function.max_dynamic_shared_size_bytes = shared        # above 48 KiB needs the opt-in
                functions[label, name] = (module, function, shared)
    rng = np.random.default_rng(0)
    rows, keep = [], []
    print(f"{'product':24} {'layout':6} {'M':>5} {'N':>5} {'K':>5} {'z':>3} {'S':>2}  "
          + "".join(f"{f'ours {t} us':>14} {'TFLOP/s':>8}  " for t in tiles)
          + f"{'cuBLAS us':>9} {'TFLOP/s':>8}  D digests")
    for what, layout, m, n, k, z, count in SHAPES:
        a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
        b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
        a = cp.asarray(rng.standard_normal((z, a_rows, a_cols)).astype(np.float16))
        b = cp.asarray(rng.standard_normal((z, b_rows, b_cols)).astype(np.float16))
        d = cp.zeros((z, m, n), dtype=cp.float32)
        fields = dict(A=a.data.ptr, B=b.data.ptr, D=d.data.ptr, M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n,
                      sA=a_rows * a_cols, sB=b_rows * b_cols, sD=m * n, batches=z)
        if z == 1:
            fields = {key: value for key, value in fields.items() if key not in ("sA", "sB", "sD", "batches")}

        def launcher(label, splits):
            """A launch of the tiling `label`'s kernel in `splits` splits (its workspace and tickets kept)."""
            tile_m, warps = tilings[tiles.index(label)]
            _, function, shared = functions[label, layout]
            workspace = cp.zeros(max(1, gemm.split_workspace_bytes(m, n, splits) // 4), dtype=cp.float32)
            tickets = cp.zeros(gemm.split_ticket_bytes(m, n, tile_m) // 4, dtype=cp.uint32)
            grid, block = gemm.split_parameters(layout, splits, workspace.data.ptr, tickets.data.ptr,
                                                tile_m=tile_m, **fields)
            words = tuple(np.frombuffer(block, dtype=np.uint64))
            keep.append((workspace, tickets))
            threads = gemm.tiling(tile_m, warps).threads
            return lambda: function(grid, (threads,), words, shared_mem=shared)

        def digest(run) -> str:
            """SHA-256 of D after one launch into a D of NaN."""
            d.fill(np.nan)
            run()
            cp.cuda.runtime.deviceSynchronize()
            return hashlib.sha256(d.get().tobytes()).hexdigest()[:12]

        splits = gemm.split_count(m, n, k, z)      # the same splits of K for every tiling: the same D
        ours, digests, sweep = {}, {}, {}
        for label in tiles:
            run = launcher(label, splits)
            digests[label] = digest(run)
            ours[label] = graph_time(cp, run, args.launches)
            if args.sweep and z == 1:
                sweep[label] = {s: ours[label] if s == splits else graph_time(cp, launcher(label, s), args.launches)
                                for s in range(1, gemm.SPLIT_MAX + 1) if k % (s * gemm.TILE_K) == 0}
                print(f"  sweep {what} (tiling {label}): "
                      + ", ".join(f"S={s} {t * 1e6:.2f} us" for s, t in sweep[label].items()))
        flops = 2.0 * m * n * k * z
        theirs = None
        if torch is not None:
            ta = torch.as_tensor(a, device="cuda")
            tb = torch.as_tensor(b, device="cuda")
            theirs = torch_time(torch, ta, tb, layout, z, args.launches)
        rows.append(dict(what=what, layout=layout, M=m, N=n, K=k, batches=z, count=count, splits=splits,
                         ours_s=ours[tiles[0]], cublas_s=theirs, flops=flops, sweep_s=sweep.get(tiles[0], {}),
                         by_tiling={t: dict(ours_s=ours[t], d_sha256=digests[t], sweep_s=sweep.get(t, {}))
                                    for t in tiles}))
        print(f"{what:24} {layout:6} {m:5} {n:5} {k:5} {z:3} {splits:2}  "
              + "".join(f"{ours[t] * 1e6:14.2f} {flops / ours[t] / 1e12:8.1f}  " for t in tiles)
              + (f"{theirs * 1e6:9.2f} {flops / theirs / 1e12:8.1f}" if theirs else "     (no torch)    ")
              + "  " + " ".join(f"{t}:{digests[t]}" for t in tiles))
    total_flops = sum(r["flops"] * r["count"] for r in rows)
    line = f"per update: {len(rows)} shapes, {total_flops / 1e9:.2f} GFLOP"
    for t in tiles:
        total_ours = sum(r["by_tiling"][t]["ours_s"] * r["count"] for r in rows)
        line += f"; ours ({t}) {total_ours * 1e3:.3f} ms ({total_flops / total_ours / 1e12:.1f} TFLOP/s)"
    if torch is not None:
        total_theirs = sum(r["cublas_s"] * r["count"] for r in rows)
        line += f"; cuBLAS {total_theirs * 1e3:.3f} ms ({total_flops / total_theirs / 1e12:.1f} TFLOP/s)"
    print(line)
    differ = [r["what"] for r in rows if len({r["by_tiling"][t]["d_sha256"] for t in tiles}) > 1]
    if len(tiles) > 1:
        print(f"D digests of tilings {', '.join(tiles)}: "
              + (f"DIFFER for {', '.join(differ)}" if differ else f"agree on all {len(rows)} shapes"))
    if args.json:
        args.json.write_text(json.dumps(dict(device=cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                                             target=target.name, tilings=tiles, rows=rows), indent=1))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
