#!/usr/bin/env python3
"""sm_90's own product kernels (bobc.sass.generate.gemm_sm90) against today's HMMA kernels and cuBLAS.

The large configuration's product shapes (the probe's: bench/gpu/sm90_product_probe.py), each timed
as `launches` back-to-back launches in one CUDA graph (coppelius_gemm_bench.graph_time), for the
generator's ring of 2, 4 and 8 stages; every timed kernel's D is checked against a binary32 product.

    PYTHONPATH=$PWD/compiler:/tmp/site python3 bench/gpu/sm90_gemm_bench.py [--launches 50] [--json out.json] [--bound]

--bound adds builds of the 4-stage kernel that are wrong on purpose (their D is not checked), to say
what bounds it: "noB" copies no B tiles (each stage's barrier expects A's bytes alone, the MMAs read
whatever the ring holds), "noA" no A tiles, "nomma" issues no HGMMA (the copies and the ring alone).

--profile launches only the 4-stage kernels, each shape 3 times, untimed, for Nsight Compute:
    ncu --cache-control none -k regex:gemm -c 24 --section SourceCounters --section WarpStateStats \
        -o prof python3 bench/gpu/sm90_gemm_bench.py --profile
    ncu --import prof.ncu-rep --page source --csv --print-source sass > source.csv
    python3 bench/gpu/ncu_source_stalls.py source.csv
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))
sys.path.insert(0, str(REPO / "bench" / "gpu"))

from coppelius_gemm_bench import graph_time, torch_time  # noqa: E402

SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"
PREFIX = "coppelius-gemm"
# (what, layout, M, N, K, products of that shape an update)
SHAPES = [
    ("qkv = x Wqkv", "nn", 256, 2304, 768, 12),
    ("h = o Wproj", "nn", 256, 768, 768, 12),
    ("u = b Wfc", "nn", 256, 3072, 768, 12),
    ("x' = g Wfcproj", "nn", 256, 768, 3072, 12),
    ("dx = dqkv Wqkv^T", "nt", 256, 768, 2304, 12),
    ("dg = dx' Wfcproj^T", "nt", 256, 3072, 768, 12),
    ("dWqkv = a^T dqkv", "tn", 768, 2304, 256, 12),
    ("dWfcproj = g^T dx'", "tn", 3072, 768, 256, 12),
]
STAGE_CHOICES = (2, 4, 8)
BOUNDS = ("noB", "noA", "nomma")


def without(source: str, bound: str) -> str:
    """The generated 4-stage source less one part (--bound; wrong on purpose)."""
    from bobc.sass.generate import gemm_sm90
    if bound == "nomma":
        lines = [line for line in source.splitlines() if "HGMMA" not in line]
    else:
        operand = bound[2]
        lines = [line for line in source.splitlines() if not ("UTMALDG" in line and f"{operand}'s 64 x 64 tile" in line)]
        stage = f"MOV R{gemm_sm90.TX}, {gemm_sm90.STAGE_BYTES:#x}"
        lines = [line.replace(stage, f"MOV R{gemm_sm90.TX}, {gemm_sm90.TILE_BYTES:#x}") for line in lines]
    if lines == source.splitlines():
        raise SystemExit(f"--bound {bound}: the generator's source no longer has what it removes")
    return "\n".join(lines) + "\n"


def build(cp, target, folder: Path, bounds=()):
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.sass.generate import gemm, gemm_sm90
    kernels = {}
    for name, variant in gemm.VARIANTS.items():
        assembled = assemble_kernel(SOURCES / f"{variant.identity(PREFIX)}.sass", target)
        path = folder / f"hmma-{name}.cubin"
        path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, gemm.PARAMETER_BYTES, gemm.THREADS))
        module = cp.RawModule(path=str(path))
        function = module.get_function(assembled.kernel_name)
        kernels["hmma", name] = (module, function, gemm.shared_bytes(variant), gemm.THREADS)
        for stages in (*STAGE_CHOICES, *bounds):
            text = gemm_sm90.generate(variant, PREFIX, stages if stages in STAGE_CHOICES else 4)
            source = folder / f"sm90-{name}-{stages}.sass"
            source.write_text(text if stages in STAGE_CHOICES else without(text, stages))
            assembled = assemble_kernel(source, target)
            path = folder / f"sm90-{name}-{stages}.cubin"
            path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, gemm.PARAMETER_BYTES + 16,
                                         gemm_sm90.BLOCK_THREADS))
            module = cp.RawModule(path=str(path))
            function = module.get_function(assembled.kernel_name)
            shared = gemm_sm90.shared_bytes(stages if stages in STAGE_CHOICES else 4)
            function.max_dynamic_shared_size_bytes = shared
            kernels[f"sm90/{stages}", name] = (module, function, shared, gemm_sm90.BLOCK_THREADS)
    return kernels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=50)
    parser.add_argument("--json")
    parser.add_argument("--bound", action="store_true", help="add the wrong-on-purpose builds (see above)")
    parser.add_argument("--profile", action="store_true", help="launch the 4-stage kernels only (see above)")
    args = parser.parse_args()
    bounds = BOUNDS if args.bound else ()
    import cupy as cp
    import torch
    from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
    from bobc.sass.generate import gemm
    from bobc.targets import TARGETS
    target = TARGETS[f"sm_{cp.cuda.Device().compute_capability}"]
    kernels = build(cp, target, Path(tempfile.mkdtemp()), bounds)
    kinds = ("hmma", *(f"sm90/{s}" for s in (*STAGE_CHOICES, *bounds)))
    rows, totals = [], {}
    for what, layout, m, n, k, count in SHAPES:
        rng = np.random.default_rng(m + n + k)
        a_shape = (k, m) if layout == "tn" else (m, k)
        b_shape = (n, k) if layout == "nt" else (k, n)
        a = cp.asarray(rng.standard_normal(a_shape).astype(np.float16))
        b = cp.asarray((rng.standard_normal(b_shape) * 0.05).astype(np.float16))
        a32, b32 = a.astype(cp.float32), b.astype(cp.float32)
        reference = cp.asnumpy((a32.T if layout == "tn" else a32) @ (b32.T if layout == "nt" else b32))
        d = cp.zeros((m, n), dtype=cp.float32)
        fields = dict(A=int(a.data.ptr), B=int(b.data.ptr), D=int(d.data.ptr), M=m, N=n, K=k,
                      lda=a_shape[1], ldb=b_shape[1], ldd=n)
        words = gemm.pack_parameters(**fields)
        a_dims = (m, k) if layout == "tn" else (k, m)
        b_dims = (k, n) if layout == "nt" else (n, k)
        maps = cp.asarray(np.frombuffer(b"".join(
            encode_tiled(TiledTensor("float16", address, (*dims, 1), (2 * ld, 0), (64, 64, 1), swizzle="128b"))
            for address, dims, ld in ((fields["A"], a_dims, fields["lda"]), (fields["B"], b_dims, fields["ldb"]))),
            dtype=np.uint8))
        sm90_words = words + np.array([maps.data.ptr, maps.data.ptr + 128], dtype=np.uint64).tobytes()
        row = {"what": what, "layout": layout, "M": m, "N": n, "K": k, "count": count}
        if args.profile:
            _, function, shared, threads = kernels["sm90/4", layout]
            for _ in range(3):
                function(gemm.grid(m, n), (threads,), tuple(np.frombuffer(sm90_words, dtype=np.uint64)),
                         shared_mem=shared)
            cp.cuda.Device().synchronize()
            continue
        for kind in kinds:
            _, function, shared, threads = kernels[kind, layout]
            block = words if kind == "hmma" else sm90_words
            params = tuple(np.frombuffer(block, dtype=np.uint64))

            def run(function=function, params=params, shared=shared, threads=threads):
                function(gemm.grid(m, n), (threads,), params, shared_mem=shared)
            d.fill(np.nan)
            run()
            cp.cuda.Device().synchronize()
            error = float(np.max(np.abs(cp.asnumpy(d) - reference)))
            ok = (error <= 2e-3 * float(np.max(np.abs(reference))) + 1e-3) if kind.split("/")[-1] not in BOUNDS else None
            seconds = graph_time(cp, run, args.launches)
            row[kind] = {"us": seconds * 1e6, "max_error": error, "ok": ok}
            totals[kind] = totals.get(kind, 0.0) + seconds * 1e6 * count
        ta, tb = torch.as_tensor(a, device="cuda"), torch.as_tensor(b, device="cuda")
        row["cublas"] = {"us": torch_time(torch, ta, tb, layout, 1, args.launches) * 1e6}
        totals["cublas"] = totals.get("cublas", 0.0) + row["cublas"]["us"] * count
        rows.append(row)
        print(f"{what:22s} {layout} {m}x{n}x{k}: " + "  ".join(
            f"{kind} {row[kind]['us']:6.2f} us{' WRONG' if row[kind].get('ok', True) is False else ''}"
            for kind in (*kinds, "cublas")), flush=True)
        del maps
    if args.profile:
        return 0
    print("these products of an update (ms): " + "  ".join(f"{k} {v / 1e3:.3f}" for k, v in totals.items()))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "totals_us": totals}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
