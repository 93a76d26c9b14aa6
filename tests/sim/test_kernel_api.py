"""bobc.sim.kernel.run_kernel on kernels ptxas compiled from PTX (tests/sim/ptx, ptx_kernels.py),
each against an independent NumPy computation of the PTX's documented semantics, on both targets:
multi-block grids in x/y/z with shared memory and barriers, binary16 pairs and conversions, binary64,
MUFU, shuffles in every mode, votes, integer bit operations, global and shared atomics, cp.async,
ldmatrix (plain and transposed) and mma.sync.m16n8k16 (a 64x64x64 GEMM tile, in seconds)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import compile_ptx, gemm_ptx, kernel  # noqa: E402

from bobc.errors import UsageError  # noqa: E402
from bobc.sim.faults import OutOfBounds, SimulationFault  # noqa: E402
from bobc.sim.kernel import Pointer, buffer_addresses, parameter_block, run_kernel  # noqa: E402

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _sequential_f32_sum(rows: np.ndarray) -> np.ndarray:
    total = np.zeros(rows.shape[0], dtype=np.float32)
    for column in rows.T:
        total = (total + column).astype(np.float32)
    return total


@TARGETS
def test_blocks_in_three_dimensions_share_memory_between_barriers(target):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(12 * 96).astype(np.float32)
    out = run_kernel(kernel("block_reduce", target), target, grid=(3, 2, 2), block=(48, 2, 1),
                     params=["out", "in"], buffers={"out": np.zeros(12, np.float32), "in": x})
    blocks = x.reshape(12, 96)
    expected = _sequential_f32_sum((blocks + blocks[:, ::-1]).astype(np.float32))
    assert np.array_equal(out["out"], expected)


def _halves(words):
    return (words & 0xFFFF).astype(np.uint16).view(np.float16), (words >> 16).astype(np.uint16).view(np.float16)


def _pack(low, high):
    return low.astype(np.float16).view(np.uint16).astype(np.uint32) | \
        (high.astype(np.float16).view(np.uint16).astype(np.uint32) << 16)


@TARGETS
def test_binary16_pairs_round_to_nearest_even_like_numpy(target):
    rng = np.random.default_rng(2)
    a = _pack(*(rng.standard_normal(64) * 3 for _ in range(2)))
    b = _pack(*(rng.standard_normal(64) * 3 for _ in range(2)))
    out = run_kernel(kernel("half_math", target), target, grid=1, block=64, params=["out", "fout", "a", "b"],
                     buffers={"out": np.zeros((64, 4), np.uint32), "fout": np.zeros((64, 2), np.float32),
                              "a": a, "b": b})
    f64 = np.float64
    (al, ah), (bl, bh) = _halves(a), _halves(b)
    s = [(x.astype(f64) + y).astype(np.float16) for x, y in ((al, bl), (ah, bh))]      # add.rn.f16x2
    p = [(x.astype(f64) * y).astype(np.float16) for x, y in ((s[0], bl), (s[1], bh))]   # mul.rn.f16x2
    r = [(x.astype(f64) * y + z).astype(np.float16) for x, y, z in ((p[0], al, s[0]), (p[1], ah, s[1]))]
    f1, f2 = r[0].astype(np.float32), r[1].astype(np.float32)
    f3 = (f1 * np.float32(1.5) + f2).astype(np.float32)         # ptxas may fuse: compare both roundings
    f3_fused = (f1.astype(f64) * 1.5 + f2).astype(np.float32)
    got = out["out"]
    assert np.array_equal(got[:, 0], _pack(r[0], r[1]))
    assert np.array_equal(got[:, 3], _pack(s[0], s[1]))
    f3_got = out["fout"][:, 1]
    assert np.array_equal(f3_got, f3) or np.array_equal(f3_got, f3_fused)
    assert np.array_equal(out["fout"][:, 0], f1)
    assert np.array_equal(got[:, 1], _pack(f1, f3_got))                 # cvt.rn.f16x2.f32: {hi a, lo b}
    assert np.array_equal(got[:, 2], _pack(f3_got, r[0]))                 # mov.b32 {lo, hi}


@TARGETS
def test_binary64_arithmetic_and_conversions_match_numpy(target):
    n = 100
    rng = np.random.default_rng(3)
    x = rng.standard_normal(2 * n) * 4
    f = rng.standard_normal(n).astype(np.float32)
    out = run_kernel(kernel("double_math", target), target, grid=2, block=64, params=["out", "in", "fin", np.uint32(n)],
                     buffers={"out": np.zeros(2 * n), "in": x, "fin": f})["out"]
    from fractions import Fraction
    fma = np.vectorize(lambda a, b, c: float(Fraction(a) * Fraction(b) + Fraction(c)))
    a, b = x[:n], x[n:]
    r = fma(a, b, 0.5) + a * 3.0
    r = r - b * b
    r = np.where(a < b, r, r + 1.0)
    r = fma(f.astype(np.float64), a, r)
    r = r + np.arange(n)
    second = (r * 0.125).astype(np.float32).astype(np.float64) + np.trunc(b * 4.0)
    assert np.array_equal(out[:n], r)
    assert np.array_equal(out[n:], second)


@TARGETS
def test_mufu_within_the_documented_ulps_and_fmnmx(target):
    x = np.linspace(-6, 6, 64).astype(np.float32)
    out = run_kernel(kernel("mufu", target), target, grid=1, block=64, params=["out", "in"],
                     buffers={"out": np.zeros((64, 8), np.float32), "in": x})["out"].astype(np.float64)
    y = np.abs(x).astype(np.float64) + np.float32(0.1)
    y = y.astype(np.float32).astype(np.float64)
    expected = [np.exp2(x), 1 / np.sqrt(y), 1 / y, np.tanh(x), np.log2(y), np.sqrt(y)]
    for column, reference in enumerate(expected):
        np.testing.assert_allclose(out[:, column], reference, rtol=3e-7 * 4, atol=1e-30)
    assert np.array_equal(out[:, 6], np.maximum(x, out[:, 0]))
    assert np.array_equal(out[:, 7], np.minimum(x, out[:, 1]))


def _prmt(a, b, selector):
    source = (int(b) << 32) | int(a)
    out = 0
    for k in range(4):
        nibble = (selector >> (4 * k)) & 0xF
        byte = (source >> (8 * (nibble & 7))) & 0xFF
        out |= byte << (8 * k)
    return out


@TARGETS
def test_shuffles_votes_bit_operations_and_atomics(target):
    blocks, threads = 2, 64
    rng = np.random.default_rng(4)
    x = rng.integers(-2**31, 2**31, size=blocks * threads, dtype=np.int64).astype(np.int32)
    out = run_kernel(kernel("warp_ops", target), target, grid=blocks, block=threads,
                     params=["out", "in", "fsum", "hist"],
                     buffers={"out": np.zeros((blocks * threads, 16), np.uint32), "in": x,
                              "fsum": np.zeros(1, np.float32), "hist": np.zeros(8, np.uint32)})
    got = out["out"]
    u = x.view(np.uint32)
    for w in range(blocks * threads // 32):
        lanes = np.arange(32)
        v = u[32 * w:32 * w + 32]
        g = got[32 * w:32 * w + 32]
        assert np.array_equal(g[:, 0], np.full(32, v[5]))                                  # idx
        assert np.array_equal(g[:, 1], np.where(lanes >= 3, v[lanes - 3], v))            # up
        assert np.array_equal(g[:, 2], np.where(lanes + 2 <= 31, v[np.minimum(lanes + 2, 31)], v))   # down
        assert np.array_equal(g[:, 3], v[lanes ^ 9])                                       # bfly
        seg_down = np.where((lanes % 8) + 1 <= 7, v[np.minimum(lanes + 1, 31)], v)
        assert np.array_equal(g[:, 4], seg_down)                                           # 8-lane segments
        ballot = sum(int(b) << i for i, b in enumerate(v & 1))
        assert np.array_equal(g[:, 5], np.full(32, ballot, dtype=np.uint32))
    s = x.astype(np.int64)
    idx = np.array([u[32 * (i // 32) + 5] for i in range(len(u))]).view(np.int32).astype(np.int64)
    assert np.array_equal(got[:, 6].view(np.int32), np.minimum(s, idx))
    lanes = np.arange(len(u)) % 32
    up = np.array([u[i - 3] if lanes[i] >= 3 else u[i] for i in range(len(u))])
    assert np.array_equal(got[:, 7], np.maximum(u, up))
    assert np.array_equal(got[:, 8], (np.abs(s) & 0xFFFFFFFF).astype(np.uint32))
    assert np.array_equal(got[:, 9], [bin(int(v)).count("1") for v in u])
    assert np.array_equal(got[:, 10], [32 - int(v).bit_length() for v in u])
    assert np.array_equal(got[:, 11], [_prmt(a, b, 0x7351) for a, b in zip(u, idx.astype(np.uint32))])
    # atomics: the shared histogram's returned old values are a permutation of 0..count-1 per bin
    for block in range(blocks):
        bins = u[block * threads:(block + 1) * threads] & 7
        olds = got[block * threads:(block + 1) * threads, 12]
        for b in range(8):
            assert sorted(olds[bins == b]) == list(range(int((bins == b).sum())))
    assert np.array_equal(out["hist"], np.bincount(u & 7, minlength=8).astype(np.uint32))
    terms = (np.abs(s) & 0xFFFFFFFF).astype(np.uint32).view(np.int32).astype(np.float32) * np.float32(0.1)
    np.testing.assert_allclose(out["fsum"][0], terms.astype(np.float64).sum(), rtol=1e-6)


@TARGETS
def test_a_64x64x64_tensor_core_gemm_tile_matches_float64(target):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    out = run_kernel(compile_ptx(gemm_ptx(), target), target, grid=1, block=128, params=["c", "a", "b"],
                     buffers={"c": np.zeros((64, 64), np.float32), "a": a, "b": b})["c"]
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # each mma rounds its binary32 accumulator once per k-step of 16: 4 roundings
    np.testing.assert_allclose(out, exact, rtol=0, atol=4 * np.abs(exact).max() * 2**-24 * 4)


def test_hmma_rounds_each_k_step_once_in_binary32():
    """One m16n8k16 on values whose float64 sum is exact: the result is the sum rounded once."""
    a = np.full((64, 64), 1.0, np.float16)
    b = np.full((64, 64), 2.0 ** -12, np.float16)
    out = run_kernel(compile_ptx(gemm_ptx(), "sm_86"), "sm_86", grid=1, block=128, params=["c", "a", "b"],
                     buffers={"c": np.zeros((64, 64), np.float32), "a": a, "b": b})["c"]
    assert np.all(out == np.float32(64 * 2.0 ** -12))


def test_a_pointer_past_its_buffer_is_reported():
    x = np.zeros(12 * 96 - 1, np.float32)             # one element short
    with pytest.raises(OutOfBounds) as caught:
        run_kernel(kernel("block_reduce", "sm_86"), "sm_86", grid=(3, 2, 2), block=(48, 2, 1),
                   params=["out", "in"], buffers={"out": np.zeros(12, np.float32), "in": x})
    assert "in" in caught.value.message and "past the end" in caught.value.message


def test_parameter_block_layout_follows_natural_alignment():
    buffers = {"a": np.zeros(4, np.float32), "b": np.zeros(3, np.uint8)}
    addresses = buffer_addresses(buffers)
    block = parameter_block([np.int32(7), Pointer("b", 2), np.float32(1.5), "a"], addresses)
    assert len(block) == 32
    assert int.from_bytes(block[0:4], "little") == 7 and block[4:8] == bytes(4)
    assert int.from_bytes(block[8:16], "little") == addresses["b"] + 2
    assert np.frombuffer(block[16:20], np.float32)[0] == 1.5
    assert int.from_bytes(block[24:32], "little") == addresses["a"]
    assert addresses["a"] >= 1 << 32 and addresses["b"] - addresses["a"] >= 1 << 16


def test_parameters_of_unstated_width_are_refused():
    with pytest.raises(UsageError, match="np.int32"):
        parameter_block([3], {})
    with pytest.raises(UsageError, match="not among the buffers"):
        parameter_block(["nowhere"], {})


def test_sass_text_runs_through_the_assembler():
    text = """
        S2R R0, SR_TID.X
        ULDC.64 UR4, c[0x0][memory_descriptor]
        LDC.64 R2, c[0x0][param+0x0]
        IMAD.WIDE.U32 R2, R0, 0x4, R2
        STG.E [R2.64], R0
        EXIT
    """
    for target in ("sm_86", "sm_90"):
        out = run_kernel(text, target, grid=1, block=40, params=["out"],
                         buffers={"out": np.zeros(40, np.uint32)}, check_hazards=False)
        assert np.array_equal(out["out"], np.arange(40))


CP_ASYNC = """
.version 8.0
.target sm_86
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<4>;
  .shared .align 16 .b8 buf[2048];
  mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 4; mov.u32 %r3, buf; add.u32 %r3, %r3, %r2;
  ld.param.u64 %rd1, [in]; cvt.u64.u32 %rd2, %r2; add.s64 %rd3, %rd1, %rd2;
  cp.async.cg.shared.global [%r3], [%rd3], 16;
  cp.async.commit_group;
  add.u32 %r4, %r3, 1024; add.s64 %rd4, %rd3, 1024;
  cp.async.cg.shared.global [%r4], [%rd4], 16;
  cp.async.commit_group;
  WAIT
  bar.sync 0;
  ld.shared.f32 %f1, [%r3]; ld.shared.f32 %f2, [%r4];
  ld.param.u64 %rd5, [out]; mul.wide.u32 %rd6, %r1, 8; add.s64 %rd7, %rd5, %rd6;
  st.global.v2.f32 [%rd7], {%f1, %f2};
  ret;
}
"""


@TARGETS
@pytest.mark.parametrize("wait, first, second", [("cp.async.wait_group 0;", True, True),
                                                 ("cp.async.wait_group 1;", True, False),
                                                 ("", False, False)])
def test_cp_async_lands_when_its_group_is_waited_for(target, wait, first, second):
    """cp.async.wait_group N completes all but the newest N groups; a kernel that reads bytes of a
    group not yet waited for is refused (the GPU may have landed them or not), naming the read."""
    x = np.arange(1, 1 + 64 * 4 * 2, dtype=np.float32)
    run = lambda: run_kernel(compile_ptx(CP_ASYNC.replace("WAIT", wait), target), target, grid=1, block=64,
                             params=["out", "in"], buffers={"out": np.zeros((64, 2), np.float32), "in": x})["out"]
    if not (first and second):
        with pytest.raises(SimulationFault, match=r"LDS.*at 0x[0-9a-f]+ \(4 bytes\) reaches bytes an LDGSTS copy "
                                                  r"has not yet landed"):
            run()
        return
    out = run()
    t = np.arange(64)
    assert np.array_equal(out[:, 0], x[4 * t]) and np.array_equal(out[:, 1], x[256 + 4 * t])


def test_cs2r_srz_zeroes_a_register_pair():
    text = """
        S2R R0, SR_TID.X
        MOV R4, 0x7
        MOV R5, R0
        CS2R R4, SRZ
        MOV R6, R0
        ULDC.64 UR4, c[0x0][memory_descriptor]
        LDC.64 R2, c[0x0][param+0x0]
        IMAD.WIDE.U32 R2, R0, 0x10, R2
        STG.E.128 [R2.64], R4
        EXIT
    """
    for target in ("sm_86", "sm_90"):
        out = run_kernel(text, target, grid=1, block=32, params=["out"],
                         buffers={"out": np.ones((32, 4), np.uint32)}, check_hazards=False)["out"]
        assert np.array_equal(out[:, :2], np.zeros((32, 2))) and np.array_equal(out[:, 2], np.arange(32))


def test_p2r_packs_the_predicates_under_its_mask():
    text = """
        S2R R0, SR_TID.X
        ISETP.GE.AND P0, PT, R0, 0x3, PT
        ISETP.GE.AND P2, PT, R0, 0x9, PT
        MOV R4, 0xff00
        P2R R4, PR, R4, 0x7
        ULDC.64 UR4, c[0x0][memory_descriptor]
        LDC.64 R2, c[0x0][param+0x0]
        IMAD.WIDE.U32 R2, R0, 0x4, R2
        STG.E [R2.64], R4
        EXIT
    """
    t = np.arange(32)
    for target in ("sm_86", "sm_90"):
        out = run_kernel(text, target, grid=1, block=32, params=["out"], buffers={"out": np.zeros(32, np.uint32)},
                         check_hazards=False)["out"]
        assert np.array_equal(out, 0xFF00 | (t >= 3) | ((t >= 9).astype(np.uint32) << 2))


EXITED_WARP_HMMA = """
.kernel exited_warp_hmma
.registers 32
    S2R R0, SR_TID.X
    SHF.R.U32.HI R1, RZ, 0x5, R0
    ISETP.NE.U32.AND P0, PT, R1, RZ, PT
    @P0 MOV R8, 0x7c017c01
    @P0 MOV R9, 0x7c017c01
    @P0 MOV R10, 0x7c017c01
    @P0 MOV R11, 0x7c017c01
    @P0 MOV R12, 0x7c017c01
    @P0 MOV R13, 0x7c017c01
    @P0 EXIT
    MOV R8, 0x3c003c00
    MOV R9, 0x3c003c00
    MOV R10, 0x3c003c00
    MOV R11, 0x3c003c00
    MOV R12, 0x3c003c00
    MOV R13, 0x3c003c00
    HMMA.16816.F32 R16, R8, R12, RZ
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ULDC.64 UR6, c[0x0][param+0x0]
    SHF.L.U32 R2, R0, 0x4, RZ
    IADD3 R2, P1, R2, UR6, RZ
    IADD3.X R3, RZ, UR7, RZ, P1, !PT
    STG.E.128 [R2.64], R16
    EXIT
"""


@TARGETS
def test_an_exited_warps_registers_do_not_disturb_another_warps_mma(target):
    """Warp 1 leaves signalling-NaN halves in its fragment registers and exits; warp 0's
    HMMA of ones over k = 16 gives 16 in every accumulator, with no warning about warp 1's bits
    (an attention kernel's idle warps exit before the others' product phase)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = run_kernel(EXITED_WARP_HMMA, target, grid=1, block=64, params=["out"],
                         buffers={"out": np.zeros((64, 4), np.float32)})["out"]
    assert np.array_equal(out[:32], np.full((32, 4), 16.0, np.float32))
    assert not out[32:].any()


MBARRIER_WAIT = """
    S2R R0, SR_TID.X
    S2UR UR4, SR_CgaCtaId
    UMOV UR5, 0x400
    ULEA UR5, UR4, UR5, 0x18
    UMOV UR6, 0x1ffffe
    UMOV UR7, 0x7ffff800
    [B------:R0:W1:-:S01] SYNCS.EXCH.64 URZ, [UR5+0x0], UR6
    ISETP.EQ.U32.AND P1, PT, R0, RZ, PT
    MOV R2, 0x400
    MOV R3, RZ
    ARRIVE
wait:
    [B------:R-:W4:-:S03] SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2+URZ], R3
    @!P0 BRA wait
    EXIT
"""


@pytest.mark.parametrize("arrives", [True, False], ids=["thread 0 arrives", "nobody arrives"])
def test_a_wait_on_an_mbarrier_nothing_will_complete_is_named_a_hang(arrives):
    """An mbarrier expecting one arrival: with thread 0's arrive the wait ends; without it every
    thread spins on a phase nothing completes (a hang on the GPU), refused by name long before the
    simulator's instruction limit."""
    arrive = "[B------:R-:W-:-:S01] @P1 SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x0], RZ" if arrives else ""
    run = lambda: run_kernel(MBARRIER_WAIT.replace("ARRIVE", arrive), "sm_90", grid=1, block=64, params=[],
                             buffers={}, shared_bytes=0x408)
    if arrives:
        run()
        return
    with pytest.raises(SimulationFault, match=r"waits on the mbarrier at shared 0x400 for a phase nothing "
                                              r"completes.*a hang on the GPU"):
        run()
