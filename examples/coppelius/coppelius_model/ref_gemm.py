"""The coppelius-gemm kernels in NumPy, registered with the plan-driven reference host
(bobc.reference.host) the way examples/bob/reference_kernels.py registers Bob's: each
function reads its launch's parameter block (the layout of
compiler/bobc/sass/generate/gemm.py PARAMETERS and the kernels' `//@ param` lines) and
works on the plan's buffers as the device kernel of the same name does.

Semantics (for every batch z < batches, every m < M, n < N):

    nn: P[m,n] = sum_k A[z sA + m lda + k] B[z sB + k ldb + n]
    nt: P[m,n] = sum_k A[z sA + m lda + k] B[z sB + n ldb + k]
    tn: P[m,n] = sum_k A[z sA + k lda + m] B[z sB + k ldb + n]
    v = f32(alpha P); v = f32(v + bias[n]) (flag 2); v = f32(v + R[z sD + m ldd + n]) (flag 1)
    D[z sD + m ldd + n] = v (unless flag 8); Dh[z sH + m ldh + n] = half(v) (flag 4)

With flag 16 (split K: batches = S splits, K = one split's length) batch z is split z:
its partial product P_z (A, B moved by z sA, z sB) is written in binary32 to the
workspace W[z M N + m N + n], and P is the whole product over the S splits' k, summed in
binary64 and rounded once like any other (the device adds the binary32 partials in split
order: within the same tolerance); the ticket counters are left as they were (zero).

With flags 16 and 512 (partials only) the launch stores its partials and nothing else, and the
next launch, a layer norm, adds them and runs the epilogue (ref_ops's layer norms with S > 0).
P, summed in binary64 as above, cannot be rebuilt from binary32 partials, so this reference keeps
P itself in W's first 8 M N bytes (W has 4 S M N, S >= 2; store_partials, product_of_partials):
a layout private to these reference kernels, so that the norm's x or dy is the D this launch
would have written (epilogue()).

With flag 32 (nn and tn; not with flag 16; batch 0's B, the launch has one batch)
E[n] = sum_k B[k, n] in binary32, associated exactly as the kernel (and the model's
column-sum kernel coppelius-bias-backward) adds: four row groups k = g mod 4, each summed
from +0 in increasing k, then (s0 + s1) + (s2 + s3) -- column_sums() below, bit for bit.
nt ignores the flag, as its kernel does.

With flag 128 (GELU_GRAD) v = f32(v gelu'(U[z sD + m ldd + n])) before the D and Dh writes
(U binary32 with D's strides); with flag 64 (GELU) D = v and Dh = half(gelu(v)).  Both in
binary32, step for step as the kernels coppelius-gelu-forward / -backward (and the products'
epilogues, which repeat their instructions) compute: gelu_forward() and gelu_derivative()
below, each FFMA rounded once, MUFU.EX2 / MUFU.RCP taken as correctly rounded from binary64
and EX2 flushing results below the least normal to 0, as bobc.sim models them (the
hardware's are approximations within 1-2 ulp: there the fused products are bit for bit the
separate kernels, tests/gpu/test_coppelius_gemm.py, and this emulation within a few ulp).

A and B are binary16, so every product is exact in binary64; the sum is taken in
binary64 and rounded once to binary32 (the device accumulates in binary32, in its own
order: results agree within the tolerance docs/coppelius.md and the tests give).
All of D is computed before anything is written, so R may be D itself.

    from coppelius_model.ref_gemm import KERNELS      # {"coppelius-gemm-nn": fn, ...}
"""
from __future__ import annotations

import struct

import numpy as np

FLAG_ADD_R, FLAG_BIAS, FLAG_HALF, FLAG_NO_D, FLAG_SPLIT, FLAG_COLUMN_SUMS = 1, 2, 4, 8, 16, 32
FLAG_GELU, FLAG_GELU_GRAD = 64, 128
FLAG_PARTIALS = 512
LAYOUTS = {"nn": (False, False), "nt": (False, True), "tn": (True, False)}   # (A transposed, B transposed)


def unpack(parameters: bytes) -> dict:
    """The parameter block's fields by name (words 0-5 pointers, then u32 pairs, alpha f32)."""
    a, b, d, h, r, bias = struct.unpack_from("<6Q", parameters, 0)
    m, n, k, flags, lda, ldb, ldd, ldh, sa, sb, sd, sh = struct.unpack_from("<12I", parameters, 0x30)
    (alpha,) = struct.unpack_from("<f", parameters, 0x60)
    (batches,) = struct.unpack_from("<I", parameters, 0x64)
    workspace, tickets, sums, pre = struct.unpack_from("<4Q", parameters, 0x68)
    return dict(A=a, B=b, D=d, Dh=h, R=r, bias=bias, M=m, N=n, K=k, flags=flags, lda=lda, ldb=ldb,
                ldd=ldd, ldh=ldh, sA=sa, sB=sb, sD=sd, sH=sh, alpha=np.float32(alpha), batches=batches,
                W=workspace, tickets=tickets, E=sums, U=pre)


# The separate kernels' constants (binary32; compiler/bobc/sass/generate/gemm.py GELU_*).
GELU_KA2 = np.frombuffer(struct.pack("<I", 0x3dd2d3e8), np.float32)[0]
GELU_K2 = np.float32(2.3022081851959228516)
GELU_6KA = np.frombuffer(struct.pack("<I", 0x3e5b33b6), np.float32)[0]
GELU_2K = np.float32(1.5957691669464111328)


def _mul(a, b):
    return (a.astype(np.float32) * b.astype(np.float32)).astype(np.float32)


def _fma(a, b, c):
    """a b + c rounded once to binary32 (the binary64 product of two binary32 is exact)."""
    return (a.astype(np.float64) * np.float64(b) + np.float64(c)).astype(np.float32)


def _exp_terms(u, square):
    """(s, r): e = 2^min(u (K2 + KA2 u^2), 64), r = 1 / (1 + e), s = e r, as the kernels."""
    with np.errstate(all="ignore"):
        x = np.fmin(_mul(u, _fma(square, GELU_KA2, GELU_K2)), np.float32(64))
        e = np.exp2(x.astype(np.float64)).astype(np.float32)
        e = np.where(np.abs(e) < np.finfo(np.float32).tiny, np.float32(0), e)
        r = (1.0 / (e + np.float32(1)).astype(np.float32).astype(np.float64)).astype(np.float32)
        return _mul(e, r), r


def gelu_forward(u: np.ndarray) -> np.ndarray:
    """half(gelu(u)) of binary32 u, coppelius-gelu-forward's steps: gelu = u s."""
    u = u.astype(np.float32)
    s, _ = _exp_terms(u, _mul(u, u))
    with np.errstate(all="ignore"):
        return _mul(u, s).astype(np.float16)


def gelu_derivative(u: np.ndarray) -> np.ndarray:
    """gelu'(u) in binary32, coppelius-gelu-backward's steps: s + (u r s)(2K + 6KA u^2)."""
    u = u.astype(np.float32)
    square = _mul(u, u)
    p = _fma(square, GELU_6KA, GELU_2K)
    s, r = _exp_terms(u, square)
    with np.errstate(all="ignore"):
        return _fma(_mul(_mul(u, r), s), p, s)


def gelu_backward(u: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """half(dy gelu'(u)), the product rounded to binary32 first, as the kernel."""
    with np.errstate(all="ignore"):
        return _mul(gelu_derivative(u), dy).astype(np.float16)


def column_sums(b: np.ndarray) -> np.ndarray:
    """binary32 sums of a binary16 K x N matrix's columns in the kernels' order: s_g over rows
    g, g + 4, .. (increasing, from +0), then (s0 + s1) + (s2 + s3)."""
    values = b.astype(np.float32)
    groups = []
    for g in range(4):
        s = np.zeros(values.shape[1], np.float32)
        for row in values[g::4]:
            s = (s + row).astype(np.float32)
        groups.append(s)
    return ((groups[0] + groups[1]).astype(np.float32) + (groups[2] + groups[3]).astype(np.float32)).astype(np.float32)


def _strided(flat: np.ndarray, offset: int, rows: int, cols: int, ld: int) -> np.ndarray:
    """rows x cols at flat[offset + r*ld + c] (a view when possible)."""
    return np.lib.stride_tricks.as_strided(flat[offset:], shape=(rows, cols),
                                           strides=(ld * flat.itemsize, flat.itemsize), writeable=True)


def _extent(batches: int, batch_stride: int, rows: int, ld: int, cols: int) -> int:
    """Elements from the pointer to one past the last one touched."""
    return (batches - 1) * batch_stride + (rows - 1) * ld + cols


def gemm(layout: str, p: dict, read, write) -> None:
    """One launch's work on any memory: read(address, dtype, count) -> array,
    write(address, array) (the reference host's Memory, or plain arrays in tests)."""
    a_t, b_t = LAYOUTS[layout]
    m, n, k, z = p["M"], p["N"], p["K"], p["batches"]
    flags = p["flags"]
    a_rows, a_cols = (k, m) if a_t else (m, k)
    b_rows, b_cols = (n, k) if b_t else (k, n)
    a_flat = read(p["A"], "<f2", _extent(z, p["sA"], a_rows, p["lda"], a_cols))
    b_flat = read(p["B"], "<f2", _extent(z, p["sB"], b_rows, p["ldb"], b_cols))
    exact = []
    for batch in range(z):
        a = _strided(a_flat, batch * p["sA"], a_rows, a_cols, p["lda"]).astype(np.float64)
        b = _strided(b_flat, batch * p["sB"], b_rows, b_cols, p["ldb"]).astype(np.float64)
        exact.append((a.T if a_t else a) @ (b.T if b_t else b))
    if flags & FLAG_COLUMN_SUMS and not flags & FLAG_SPLIT and not b_t:
        write(p["E"], column_sums(_strided(b_flat, 0, b_rows, b_cols, p["ldb"])))
    if flags & FLAG_SPLIT and flags & FLAG_PARTIALS:
        write(p["W"], sum(exact[1:], exact[0]).astype(np.float64))
        return
    if flags & FLAG_SPLIT:
        write(p["W"], np.stack([partial.astype(np.float32) for partial in exact]))
        exact, z = [sum(exact[1:], exact[0])], 1
    products = [product.astype(np.float32) for product in exact]
    bias = read(p["bias"], "<f4", n).astype(np.float32) if flags & FLAG_BIAS else None
    d_count = _extent(z, p["sD"], m, p["ldd"], n)
    results = []
    for batch, product in enumerate(products):
        v = (p["alpha"] * product).astype(np.float32)
        if bias is not None:
            v = (v + bias[None, :]).astype(np.float32)
        if flags & FLAG_ADD_R:
            r_flat = read(p["R"], "<f4", d_count)
            v = (v + _strided(r_flat, batch * p["sD"], m, n, p["ldd"])).astype(np.float32)
        if flags & FLAG_GELU_GRAD:
            u_flat = read(p["U"], "<f4", d_count)
            with np.errstate(all="ignore"):
                v = _mul(gelu_derivative(_strided(u_flat, batch * p["sD"], m, n, p["ldd"])), v)
        results.append(v)
    if not flags & FLAG_NO_D:
        d_flat = read(p["D"], "<f4", d_count).copy()
        for batch, v in enumerate(results):
            _strided(d_flat, batch * p["sD"], m, n, p["ldd"])[:] = v
        write(p["D"], d_flat)
    if flags & FLAG_HALF:
        h_flat = read(p["Dh"], "<f2", _extent(z, p["sH"], m, p["ldh"], n)).copy()
        for batch, v in enumerate(results):
            _strided(h_flat, batch * p["sH"], m, n, p["ldh"])[:] = (gelu_forward(v) if flags & FLAG_GELU
                                                                     else v.astype(np.float16))
        write(p["Dh"], h_flat)


def product_of_partials(read, address: int, rows: int, cols: int) -> np.ndarray:
    """The binary64 product a partials-only launch (flag 512) left in W (module docstring)."""
    return read(address, "<f8", rows * cols).reshape(rows, cols)


def epilogue(product: np.ndarray, alpha, bias=None, addend=None) -> np.ndarray:
    """v = f32(alpha f32(P)) (+ bias, + addend, each rounded to binary32): gemm()'s steps, for a
    layer norm that finishes a partials-only product."""
    v = (np.float32(alpha) * product.astype(np.float32)).astype(np.float32)
    if bias is not None:
        v = (v + bias[None, :]).astype(np.float32)
    if addend is not None:
        v = (v + addend).astype(np.float32)
    return v


def error_bound(magnitude: np.ndarray, k: int, value: np.ndarray) -> np.ndarray:
    """How far a device result may be from the binary64 truth, elementwise.

    `magnitude` = sum_k |A[m,k]| |B[k,n]| (times |alpha|), `value` the true v.  The products
    of binary16 inputs are exact in binary32; adding K of them in binary32 errs by at most
    (K - 1) u sum|a b| with u = 2^-24 for round-to-nearest (Higham, recursive summation);
    the tensor cores align and truncate inside each 16-term step instead of rounding
    (Fasi et al., 2021, "Numerical behavior of NVIDIA tensor cores"), which at most doubles
    u: so 2 K 2^-24 = K 2^-23 of the magnitude.  The epilogue rounds up to three times
    more (alpha, bias, R): 3 ulp of the value, plus the smallest normal binary32 for
    values near zero.
    """
    return k * 2.0 ** -23 * magnitude + 3 * 2.0 ** -23 * np.abs(value) + 2.0 ** -126


def _kernel(layout: str):
    def run(memory, launch):
        p = unpack(launch.parameters)
        gemm(layout, p, lambda address, dtype, count: memory.array(address, dtype, count).copy(),
             lambda address, values: memory.write(address, values.tobytes()))
    run.__name__ = f"gemm_{layout}"
    run.__doc__ = f"coppelius-gemm-{layout} (module docstring)."
    return run


KERNELS = {f"coppelius-gemm-{layout}": _kernel(layout) for layout in LAYOUTS}
