#!/usr/bin/env python3
"""How close the update's two memory-bound kernels come to the GPU's bandwidth: coppelius-adamw-half
(16 bytes read and 14 written an element) and coppelius-nonfinite-check (4 read), at the large
configuration's parameter count, against CUDA C kernels that move the same bytes in other shapes
(elements a thread, block size, a grid that strides over the data): which shape the memory wants.

    python3 bench/gpu/adamw_bench.py [--json OUT] [--repeats 20]     # device machine, CuPy

Each row: the median of `repeats` launches timed by CUDA events, and the bytes it moves over that time.
The CUDA C kernels do AdamW's arithmetic (so their time is what its memory traffic costs, not a copy's);
they are references, not products: their results are not compared with ours.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import cupy as cp

REPO = Path(__file__).resolve().parents[2]
for folder in (REPO / "compiler", REPO / "examples" / "coppelius"):
    sys.path.insert(0, str(folder))

SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"

CUDA = r'''
#include <cuda_fp16.h>
struct S { float alpha, eps, decay, b1, omb1, b2, omb2; };
#define SARGS float a0, float a1, float a2, float a3, float a4, float a5, float a6
#define SVAL S{a0, a1, a2, a3, a4, a5, a6}
__device__ __forceinline__ void step(float& p, float g, float& m, float& v, const S s) {
    p *= s.decay; m = s.b1 * m + g * s.omb1; v = s.b2 * v + (g * g) * s.omb2;
    p = p - s.alpha * (m * (1.0f / (sqrtf(v) + s.eps)));
}
template <int VEC>
__device__ __forceinline__ void chunk(float* P, const float* G, float* M, float* V, __half* H, size_t i, const S s) {
    float4 p[VEC], g[VEC], m[VEC], v[VEC];
    #pragma unroll
    for (int k = 0; k < VEC; k++) {
        p[k] = ((float4*)P)[i + k * blockDim.x]; g[k] = ((const float4*)G)[i + k * blockDim.x];
        m[k] = ((float4*)M)[i + k * blockDim.x]; v[k] = ((float4*)V)[i + k * blockDim.x];
    }
    #pragma unroll
    for (int k = 0; k < VEC; k++) {
        step(p[k].x, g[k].x, m[k].x, v[k].x, s); step(p[k].y, g[k].y, m[k].y, v[k].y, s);
        step(p[k].z, g[k].z, m[k].z, v[k].z, s); step(p[k].w, g[k].w, m[k].w, v[k].w, s);
        ((float4*)P)[i + k * blockDim.x] = p[k]; ((float4*)M)[i + k * blockDim.x] = m[k];
        ((float4*)V)[i + k * blockDim.x] = v[k];
        __half2 a = __floats2half2_rn(p[k].x, p[k].y), b = __floats2half2_rn(p[k].z, p[k].w);
        uint2 h; h.x = *(unsigned*)&a; h.y = *(unsigned*)&b; ((uint2*)H)[i + k * blockDim.x] = h;
    }
}
// one chunk of VEC float4s a thread per block (ours: VEC 1, block 256)
template <int VEC>
__device__ void blocked(float* P, const float* G, float* M, float* V, __half* H, const S s) {
    size_t i = (size_t)blockIdx.x * blockDim.x * VEC + threadIdx.x;
    chunk<VEC>(P, G, M, V, H, i, s);
}
// a grid that strides: each block takes chunks blockIdx.x, + gridDim.x, ...
template <int VEC>
__device__ void strided(float* P, const float* G, float* M, float* V, __half* H, size_t chunks, const S s) {
    for (size_t c = blockIdx.x; c < chunks; c += gridDim.x)
        chunk<VEC>(P, G, M, V, H, c * blockDim.x * VEC + threadIdx.x, s);
}
extern "C" {
__global__ void blocked1(float* P, const float* G, float* M, float* V, __half* H, SARGS) { S s = SVAL; blocked<1>(P, G, M, V, H, s); }
__global__ void blocked2(float* P, const float* G, float* M, float* V, __half* H, SARGS) { S s = SVAL; blocked<2>(P, G, M, V, H, s); }
__global__ void blocked4(float* P, const float* G, float* M, float* V, __half* H, SARGS) { S s = SVAL; blocked<4>(P, G, M, V, H, s); }
__global__ void strided1(float* P, const float* G, float* M, float* V, __half* H, size_t n, SARGS) { S s = SVAL; strided<1>(P, G, M, V, H, n, s); }
__global__ void strided2(float* P, const float* G, float* M, float* V, __half* H, size_t n, SARGS) { S s = SVAL; strided<2>(P, G, M, V, H, n, s); }
__global__ void check1(const float4* G, unsigned* flag) {
    float4 g = G[(size_t)blockIdx.x * blockDim.x + threadIdx.x];
    if (!isfinite(g.x) || !isfinite(g.y) || !isfinite(g.z) || !isfinite(g.w)) *flag = 1;
}
__global__ void check4(const float4* G, unsigned* flag) {
    size_t i = (size_t)blockIdx.x * blockDim.x * 4 + threadIdx.x;
    float4 g[4];
    #pragma unroll
    for (int k = 0; k < 4; k++) g[k] = G[i + k * blockDim.x];
    bool bad = false;
    #pragma unroll
    for (int k = 0; k < 4; k++) bad |= !isfinite(g[k].x) || !isfinite(g[k].y) || !isfinite(g[k].z) || !isfinite(g[k].w);
    if (bad) *flag = 1;
}
}
'''


def timed(run, repeats):
    times = []
    for _ in range(repeats + 2):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) * 1000)
    return float(np.median(times[2:]))


def ours(name, grid, block, words, target):
    """A Coppelius kernel assembled by bobc for `target`, launched with parameter words `words`."""
    import tempfile
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    assembled = assemble_kernel(SOURCES / f"{name}.sass", target)
    raw = b"".join(words)
    path = Path(tempfile.mkdtemp()) / f"{name}.cubin"
    path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, len(raw), block))
    module = cp.RawModule(path=str(path))
    function = module.get_function(assembled.kernel_name)
    args = tuple(np.frombuffer(raw, dtype=np.uint64))
    return lambda: function((grid,), (block,), args), module


def main() -> None:
    import struct
    from bobc.targets import target_named
    from coppelius_model.config import named
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--config", default="large")
    args = parser.parse_args()
    n = named(args.config).parameter_count
    n -= n % 4096
    target = target_named("sm_90")
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    P, G, M, V = (cp.full(n, 0.01, cp.float32) for _ in range(4))
    H = cp.zeros(n, cp.float16)
    counters = cp.zeros(4, cp.uint32)
    scalars = [1e-4, 1e-5, 1 - 1e-4, 0.9, 0.1, 0.95, 0.05]
    q = lambda *values: struct.pack("<" + "".join("Q" if isinstance(v, int) else "f" for v in values), *values)  # noqa: E731
    adamw_bytes, check_bytes = 30 * n, 4 * n
    rows = []

    def record(what, us, moved):
        rows.append(dict(kernel=what, us=us, tb_per_s=moved / us / 1e6))
        print(f"{what:48s} {us:9.1f} us  {moved / us / 1e6:5.2f} TB/s", flush=True)

    words = [q(P.data.ptr, G.data.ptr, M.data.ptr, V.data.ptr, H.data.ptr, counters.data.ptr),
             struct.pack("<7f", *scalars), struct.pack("<I", n), struct.pack("<If", 0, 1.0)]
    run, keep = ours("coppelius-adamw-half", n // 1024, 256, words, target)
    record("coppelius-adamw-half (ours, 4 a thread, 256)", timed(run, args.repeats), adamw_bytes)
    run, keep2 = ours("coppelius-nonfinite-check", n // 1024, 256,
                      [q(G.data.ptr, counters.data.ptr), struct.pack("<II", n, 0)], target)
    record("coppelius-nonfinite-check (ours)", timed(run, args.repeats), check_bytes)

    module = cp.RawModule(code=CUDA, options=("-std=c++17",), name_expressions=None)
    pointers = (P, G, M, V, H)
    floats = tuple(np.float32(x) for x in scalars)
    for name, vec, block in (("blocked1", 1, 256), ("blocked1", 1, 512), ("blocked1", 1, 128),
                             ("blocked2", 2, 256), ("blocked4", 4, 256), ("blocked2", 2, 512)):
        chunks = n // (4 * vec * block)
        function = module.get_function(name)
        record(f"cuda {name} block {block} ({4 * vec} a thread)",
               timed(lambda: function((chunks,), (block,), (*pointers, *floats)), args.repeats), adamw_bytes)
    for name, vec, block, per_sm in (("strided1", 1, 256, 8), ("strided1", 1, 256, 4), ("strided2", 2, 256, 4),
                                     ("strided2", 2, 256, 2), ("strided1", 1, 512, 4)):
        chunks = n // (4 * vec * block)
        function = module.get_function(name)
        record(f"cuda {name} block {block} grid {per_sm}/SM ({4 * vec} a thread)",
               timed(lambda: function((sms * per_sm,), (block,), (*pointers, np.uint64(chunks), *floats)),
                     args.repeats), adamw_bytes)
    for name, per, block in (("check1", 4, 256), ("check4", 16, 256), ("check4", 16, 512)):
        function = module.get_function(name)
        record(f"cuda {name} block {block} ({per} a thread)",
               timed(lambda: function((n // (per * block),), (block,), (G, counters)), args.repeats), check_bytes)
    copy_from, copy_to = cp.zeros(n, cp.float32), cp.zeros(n, cp.float32)
    record("cupy copy (4 read, 4 written)", timed(lambda: cp.copyto(copy_to, copy_from), args.repeats), 8 * n)
    if args.json:
        Path(args.json).write_text(json.dumps(dict(n=n, rows=rows, device=cp.cuda.runtime.getDeviceProperties(0)
                                                   ["name"].decode()), indent=1) + "\n")
    del keep, keep2


if __name__ == "__main__":
    main()
