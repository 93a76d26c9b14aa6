#!/usr/bin/env python3
"""Launch three of the product kernels at the large configuration's shapes, for a profiler
(ncu) to read their counters: qkv (nn), dg (nt), dWfc (tn), each 3 times on the same data
(the committed 64 x 64, 4-warp form, generated into a temporary folder).

    ncu --cache-control none -k regex:gemm -c 9 --section SpeedOfLight ... \
        python3 bench/gpu/coppelius_gemm_profile.py

bench/results/coppelius-gemm-h200-ncu.txt has the commands and what they found.  With
`--section SourceCounters -o prof`, ncu samples where each instruction waits;
bench/gpu/ncu_source_stalls.py reads its source page (coppelius-gemm-h200-loop-variants.txt)."""
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("gemm_bench", HERE / "coppelius_gemm_bench.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
gemm = bench.gemm
PICK = ("qkv = x Wqkv", "dg = dx Wfcproj^T", "dWfc = x^T du")


def main() -> int:
    import cupy as cp
    target = bench.TARGETS[f"sm_{cp.cuda.Device().compute_capability}"]
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        functions = {}
        for name, (path, symbol, shared) in bench.cubins(target, gemm.TILE_M, 4, Path(folder)).items():
            module = cp.RawModule(path=str(path))
            function = module.get_function(symbol)
            function.max_dynamic_shared_size_bytes = shared
            functions[name] = (module, function, shared)
        keep = []
        for what, layout, m, n, k, z, count in bench.SHAPES:
            if what not in PICK:
                continue
            a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
            b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
            a = cp.asarray(rng.standard_normal((a_rows, a_cols)).astype(np.float16))
            b = cp.asarray(rng.standard_normal((b_rows, b_cols)).astype(np.float16))
            d = cp.zeros((m, n), dtype=cp.float32)
            keep += [a, b, d]
            _, function, shared = functions[layout]
            grid, block = gemm.split_parameters(layout, 1, 0, 0, A=a.data.ptr, B=b.data.ptr, D=d.data.ptr,
                                                M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n)
            words = tuple(np.frombuffer(block, dtype=np.uint64))
            for _ in range(3):
                function(grid, (gemm.THREADS,), words, shared_mem=shared)
            cp.cuda.Device().synchronize()
            print(what, grid, "launched 3 times", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
