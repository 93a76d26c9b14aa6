"""Flag 256 of the product kernels (bobc.sass.generate.gemm: the AdamW step in the epilogue),
executed by the simulator on both targets: a weight-gradient product that updates the master
weights at D, their moments at R and U and the half copy leaves exactly the bytes that the same
product writing its gradient D, followed by coppelius-adamw-half over that gradient, leaves -- the
epilogue takes the AdamW kernel's instructions, operands and association -- and with the overflow
flag of its step record set it stores nothing.

The two sides share no code: the composition is the committed AdamW kernel's own SASS and the
product's plain path, so a step out of order, a wrong operand or a misplaced pointer in the fused
epilogue shows as differing bytes."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from bobc.sass.generate import gemm, gemm_sm90

from .test_kernels_gemm_sim import PREFIX, SOURCES
from .test_kernels_gemm_sm90_sim import with_tensor_maps

# alpha_t, epsilon_t, decay, beta1, 1 - beta1, beta2, 1 - beta2: a step's binary32 scalars (epsilon
# times a loss scale of 1024, a step size of about 1e-3 with its bias corrections)
SCALARS = tuple(float(np.float32(x)) for x in (1.3e-3, 1e-8 * 1024, 1 - 1e-3 * 0.1, 0.9, 0.1, 0.95, 0.05))


def record(overflow: int = 0) -> np.ndarray:
    """The AdamW step record (gemm.ADAM_STEP_RECORD): the seven scalars, then the overflow flag."""
    return np.frombuffer(struct.pack("<7fI", *SCALARS, overflow), np.uint32).copy()


def adamw_block(P: int, G: int, M: int, V: int, H: int, flag: int, count: int) -> bytes:
    """coppelius-adamw-half's parameter block (its `//@ param` lines): six addresses, then from byte
    48 alpha_t, epsilon_t, decay, beta1, 1 - beta1, beta2, 1 - beta2, the count, t and the
    gradient multiplier 1."""
    return (struct.pack("<6Q", P, G, M, V, H, flag) + struct.pack("<7f", *SCALARS)
            + struct.pack("<IIf", count, 3, 1.0))


# (layout, kernel): the HMMA kernels on sm_86 and sm_90, the TMA / warpgroup kernels on sm_90
KERNELS = [("tn", "sm_86", "hmma"), ("tn", "sm_90", "hmma"), ("tn", "sm_90", "wgmma")]


def _source(layout: str, kind: str):
    variant = gemm.VARIANTS[layout]
    if kind == "wgmma":
        return (SOURCES / f"{variant.identity(PREFIX)}.sm_90.sass").read_text(), gemm_sm90.shared_bytes()
    return (SOURCES / f"{variant.identity(PREFIX)}.sass").read_text(), gemm.shared_bytes(variant)


def _inputs(layout: str, m: int, n: int, k: int, batches: int, seed: int, overflow: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    count = batches * m * n
    a = (rng.standard_normal(batches * m * k) * 0.5).astype(np.float16)
    b = (rng.standard_normal(batches * n * k) * 0.5).astype(np.float16)
    return {"a": a, "b": b,
            "p": rng.standard_normal(count).astype(np.float32),
            "m1": (rng.standard_normal(count) * 0.1).astype(np.float32),
            "m2": np.abs(rng.standard_normal(count) * 0.01).astype(np.float32),
            "h": np.full(count, np.float16(7.0)),
            "d": np.full(count, np.nan, np.float32),
            "e": np.full(n, np.nan, np.float32),
            "record": record(overflow),
            "maps": np.zeros(256, np.uint8),
            "w": np.full(4 * m * n, np.nan, np.float32),
            "tickets": np.zeros(gemm.split_ticket_bytes(m, n) // 4, np.uint32)}


def _product(layout, arch, kind, buffers, m, n, k, batches, flags, splits=1, adamw=True):
    """One product launch over `buffers`: the gradient to d, or (flag 256) the AdamW step over p,
    m1, m2 (at D, R, U) with the step record."""
    from bobc.sim.kernel import buffer_addresses, run_kernel
    at = buffer_addresses(buffers)
    lda = m if layout == "tn" else k
    ldb = n
    fields = dict(A=at["a"], B=at["b"], Dh=at["h"], M=m, N=n, K=k, lda=lda, ldb=ldb, ldd=n, ldh=n,
                  sA=m * k, sB=n * k, sD=m * n, sH=m * n, batches=batches, flags=flags, E=at["e"])
    if adamw:
        fields.update(D=at["p"], R=at["m1"], U=at["m2"], step=at["record"])
    else:
        fields.update(D=at["d"])
    grid, block = gemm.split_parameters(layout, splits, at["w"], at["tickets"], **fields)
    text, shared = _source(layout, kind)
    if kind == "wgmma":
        block = with_tensor_maps(layout, block, buffers)
    return run_kernel(text, arch, grid=grid, block=(gemm.THREADS, 1, 1), params=block, buffers=buffers,
                      shared_bytes=shared)


def _composition(layout, arch, kind, m, n, k, batches, flags, splits, seed):
    """The product writing its gradient D (flags without 256 and 4), then coppelius-adamw-half over D."""
    from bobc.sim.kernel import buffer_addresses, run_kernel
    buffers = _inputs(layout, m, n, k, batches, seed)
    plain = flags & ~(gemm.FLAG_ADAM_STEP | gemm.FLAG_HALF)
    out = _product(layout, arch, kind, buffers, m, n, k, batches, plain, splits, adamw=False)
    buffers = dict(buffers, d=out["d"], e=out["e"], flag=np.zeros(2, np.uint32))
    at = buffer_addresses(buffers)
    count = batches * m * n
    block = adamw_block(at["p"], at["d"], at["m1"], at["m2"], at["h"], at["flag"], count)
    text = (SOURCES / "coppelius-adamw-half.sass").read_text()
    return run_kernel(text, arch, grid=(-(-count // 1024), 1, 1), block=(256, 1, 1), params=block, buffers=buffers)


CASES = [(layout, arch, kind, flags, batches, splits)
         for layout, arch, kind in KERNELS
         for flags, batches, splits in ((256 | 4, 1, 1), (256 | 4 | 32, 1, 1), (256, 2, 1), (256 | 4, 1, 2))]


@pytest.mark.parametrize("layout,arch,kind,flags,batches,splits", CASES,
                         ids=[f"{l}.{a}.{k}.f{f}.z{z}.s{s}" for l, a, k, f, z, s in CASES])
def test_adamw_epilogue_is_the_product_then_the_adamw_kernel(layout, arch, kind, flags, batches, splits):
    """M = 64, N = 128 (two tiles), K = 192 (six 32-k slices; two splits of three); with the half
    copy (flag 4), the column sums of B (flag 32: E as the plain product writes it), two batches
    (P, M1, M2 and Dh moved by sD, sH) and split K (the last split's epilogue)."""
    m, n, k = 64, 128, 192
    buffers = _inputs(layout, m, n, k, batches, seed=41 + flags + batches + splits)
    fused = _product(layout, arch, kind, buffers, m, n, k, batches, flags, splits)
    expected = _composition(layout, arch, kind, m, n, k, batches, flags, splits, seed=41 + flags + batches + splits)
    for name in ("p", "m1", "m2", "h"):
        if name == "h" and not flags & gemm.FLAG_HALF:
            np.testing.assert_array_equal(fused["h"], buffers["h"])
            continue
        np.testing.assert_array_equal(fused[name].view(np.uint8), expected[name].view(np.uint8), err_msg=name)
    assert np.isnan(fused["d"]).all(), "flag 256 never writes a gradient"
    if flags & gemm.FLAG_COLUMN_SUMS:
        np.testing.assert_array_equal(fused["e"].view(np.uint8), expected["e"].view(np.uint8))
    assert not np.array_equal(fused["p"], buffers["p"]), "the step moved P"


@pytest.mark.parametrize("layout,arch,kind", KERNELS, ids=[f"{l}.{a}.{k}" for l, a, k in KERNELS])
def test_a_skipped_step_stores_nothing(layout, arch, kind):
    """The step record's overflow flag set (as the plan copies it from the non-finite check): the
    weights, M1, M2 and Dh keep every byte."""
    m, n, k = 64, 128, 64
    buffers = _inputs(layout, m, n, k, 1, seed=7, overflow=1)
    fused = _product(layout, arch, kind, buffers, m, n, k, 1, 256 | 4)
    for name in ("p", "m1", "m2", "h", "d"):
        np.testing.assert_array_equal(fused[name].view(np.uint8), buffers[name].view(np.uint8), err_msg=name)


def test_the_flag_is_refused_with_what_it_replaces():
    """Flag 256 needs its step record, refuses R, bias, no D and GELU, naming them, and is served by
    tn alone."""
    base = dict(A=0, B=0, D=0x1000, M=64, N=64, K=32, lda=64, ldb=64, ldd=64)
    with pytest.raises(ValueError, match="go together"):
        gemm.pack_parameters(**base, flags=256)
    with pytest.raises(ValueError, match="go together"):
        gemm.pack_parameters(**base, flags=4, step=0x4000)
    with pytest.raises(ValueError, match=r"1 \(add R\), 8 \(no D\), 128 \(gelu'\)"):
        gemm.pack_parameters(**base, flags=256 | 8 | 1 | 128, step=0x4000)
    for layout in ("nn", "nt"):
        with pytest.raises(ValueError, match=f"tn, not {layout}"):
            gemm.split_parameters(layout, 1, 0, 0, **base, flags=256, step=0x4000)
    block = gemm.pack_parameters(**base, flags=256, step=0x4000)
    assert len(block) == gemm.ADAM_STEP_PARAMETER_BYTES == 8 * 20, "within sm_86's 512-byte bank 0 (0x160 + 20 words)"
    assert block[0x88:0x98] == bytes(16), "sm_90's tensor-map words are left to the backend"
    assert struct.unpack_from("<Q", block, 0x98)[0] == 0x4000
