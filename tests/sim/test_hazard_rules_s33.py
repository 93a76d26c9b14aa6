"""Session 33's hazard probe (control codes and the simulator's checker), each finding against
NVIDIA's own code: ptxas's kernels must pass the checker, and the rules the probe found loose must
refuse what ptxas never emits (docs/simulator.md, "The control-code checker")."""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from bobc.nvtools import ptxas
from bobc.sim.faults import Hazard, SimulationFault
from bobc.sim.kernel import Pointer, run_kernel

from .conftest import shared_base

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
PARAMETERS = {"sm_86": 0x160, "sm_90": 0x210}
DESCRIPTOR = {"sm_86": 0x118, "sm_90": 0x208}


def _cubin(ptx: str, target: str, opt: str = "-O3") -> bytes:
    """ptxas `opt` of `ptx` for `target`: the cubin's bytes (ptx_kernels.compile_ptx, any -O),
    compiled in a folder removed after (a mkdtemp folder was left per kernel: probe s36
    parallelsuites finding 5)."""
    tool = ptxas()
    assert tool, "ptxas (nvidia-cuda-nvcc, the test extra) is needed"
    with tempfile.TemporaryDirectory() as named:
        folder = Path(named)
        (folder / "k.ptx").write_text(ptx.replace(".target sm_86", f".target {target}"))
        subprocess.run([tool, "-arch", target, opt, str(folder / "k.ptx"), "-o", str(folder / "k.cubin")],
                       check=True, capture_output=True)
        return (folder / "k.cubin").read_bytes()


def test_compiling_a_kernel_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)      # TMPDIR as the test set it
    assert _cubin(HEAD + "  ret;\n}\n", "sm_86")[:4] == b"\x7fELF"
    assert list(tmp_path.iterdir()) == []


HEAD = """.version 8.0
.target sm_86
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 n)
{
  .reg .b32 %r<40>; .reg .f32 %f<40>; .reg .f64 %d<20>; .reg .b64 %rd<10>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in]; ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x; mul.wide.u32 %rd3, %r2, 4; add.s64 %rd4, %rd2, %rd3; add.s64 %rd5, %rd1, %rd3;
"""


def _run_ptx(body: str, target: str, opt: str = "-O3", n: int = 3, inp=None, block: int = 32):
    inp = np.arange(256, dtype=np.float32) * 0.37 - 20 if inp is None else inp
    out = run_kernel(_cubin(HEAD + body + "\n  ret;\n}\n", target, opt), target, grid=1, block=block,
                     params=[Pointer("out"), Pointer("inp"), np.uint32(n)],
                     buffers={"out": np.zeros(64, np.uint32), "inp": inp})
    return out["out"][:block]


def _run_sass(target: str, body: str, shared: int = 64, **kw):
    text = "[B------:R-:W-:-:S06] MOV R0, 0x1234\n[B------:R-:W-:-:S06] MOV R2, 0x0\n" \
           "[B------:R-:W-:-:S06] MOV R3, 0x3ff00000\n[B------:R-:W-:-:S06] MOV R9, 0x0\n" + body + \
           "\n[B------:R-:W-:-:S05] EXIT\n"
    return run_kernel(text, target, grid=1, block=32, params=[], shared_bytes=shared, **kw)


def _clz(x):
    return np.array([32 - int(v).bit_length() for v in x], dtype=np.uint32)


def _brev(x):
    return np.array([int(f"{int(v):032b}"[::-1], 2) for v in x], dtype=np.uint32)


# 1. POPC / FLO / BREV / MUFU / I2F / F2I return in order through one queue: ptxas leaves the earlier
#    of two without a scoreboard and waits on the later one's.
POPC_CLZ = """  mul.lo.u32 %r4, %r2, %r1;
  popc.b32 %r5, %r4; brev.b32 %r6, %r4; clz.b32 %r7, %r6;
  add.u32 %r3, %r5, %r7;
  st.global.u32 [%rd5], %r3;"""
DIV_POPC = """  mul.lo.u32 %r4, %r2, 0x9e3779b1; add.u32 %r8, %r2, 3;
  popc.b32 %r5, %r4; clz.b32 %r7, %r4;
  div.u32 %r9, %r4, %r8; rem.u32 %r10, %r4, %r8;
  add.u32 %r3, %r5, %r7; add.u32 %r3, %r3, %r9; xor.b32 %r3, %r3, %r10;
  st.global.u32 [%rd5], %r3;"""


@TARGETS
def test_ptxas_popc_beside_clz_passes_the_checker(target):
    x = np.arange(32, dtype=np.uint32) * 3
    want = np.array([bin(int(v)).count("1") for v in x], dtype=np.uint32) + _clz(_brev(x))
    assert (_run_ptx(POPC_CLZ, target) == want).all()


@TARGETS
def test_ptxas_division_beside_popc_and_clz_passes_the_checker(target):
    t = np.arange(32, dtype=np.uint64)
    x = (t * 0x9E3779B1 & 0xFFFFFFFF).astype(np.uint32)
    d = (t + 3).astype(np.uint32)
    want = np.array([bin(int(v)).count("1") for v in x], dtype=np.uint32) + _clz(x) + x // d
    assert (_run_ptx(DIV_POPC, target) == want ^ (x % d)).all()


@TARGETS
def test_waiting_on_a_later_multifunction_result_still_needs_an_earlier_scored_wait(target):
    """The queue completes only what was issued before the waited producer: a POPC issued after the
    FLO whose scoreboard is waited is still in flight."""
    with pytest.raises(Hazard) as caught:
        _run_sass(target, """[B------:R-:W0:-:S08] FLO.U32 R5, R0
[B------:R-:W-:-:S08] POPC R4, R0
[B0-----:R-:W-:-:S05] IADD3 R7, R4, 0x1f, -R5""")
    assert "reads R4" in caught.value.reason and "sets no scoreboard" in caught.value.reason


# 2. A stall of 0 is the interlocked encoding: ptxas -O0 writes it on every instruction and sets no
#    scoreboard at all.
FP = """  ld.global.f32 %f1, [%rd4]; ld.global.f32 %f2, [%rd4+128];
  fma.rn.f32 %f3, %f1, %f2, %f1; mul.f32 %f4, %f3, 0f3C23D70A;
  ex2.approx.f32 %f5, %f4; rsqrt.approx.f32 %f6, %f5; sin.approx.f32 %f7, %f6;
  cvt.rzi.s32.f32 %r3, %f7; cvt.rn.f32.s32 %f14, %r3; add.f32 %f15, %f14, %f7;
  cvt.f64.f32 %d1, %f15; add.f64 %d2, %d1, 0d3FF0000000000000; cvt.rn.f32.f64 %f16, %d2;
  st.global.f32 [%rd5], %f16;"""


@TARGETS
def test_ptxas_O0_code_runs_through_the_checker_as_O3_code_does(target):
    slow, fast = _run_ptx(FP, target, "-O0"), _run_ptx(FP, target, "-O3")
    assert (slow == fast).all() and slow.view(np.float32).std() > 0


@TARGETS
def test_a_stall_of_zero_covers_a_fixed_latency_read_and_a_stall_of_one_does_not(target):
    _run_sass(target, "[B------:R-:W-:Y:S00] IADD3 R4, R0, 0x1, RZ\n[B------:R-:W-:-:S04] IADD3 R5, R4, 0x1, RZ")
    _run_sass(target, "[B------:R-:W-:Y:S00] S2R R4, SR_TID.X\n[B------:R-:W-:-:S04] IADD3 R5, R4, 0x1, RZ")
    with pytest.raises(Hazard):
        _run_sass(target, "[B------:R-:W-:-:S01] IADD3 R4, R0, 0x1, RZ\n[B------:R-:W-:-:S04] IADD3 R5, R4, 0x1, RZ")


# 3. LDC.64 indexed by its own destination (ptxas -O0's parameter loads) reads both words first.
@TARGETS
def test_ldc64_indexed_by_its_destination_reads_both_words_before_writing(target):
    p = PARAMETERS[target]
    sass = f"""
[B------:R-:W-:-:S04] MOV R2, 0x8
[B------:R-:W0:-:S01] LDC.64 R2, c[0x0][R2+{p:#x}]
[B------:R-:W1:-:S01] LDC.64 R4, c[0x0][{p:#x}]
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][{DESCRIPTOR[target]:#x}]
[B01----:R-:W-:-:S05] STG.E.64 {'desc[UR4]' if target == 'sm_90' else ''}[R4.64], R2
[B------:R-:W-:-:S05] EXIT
"""
    out = run_kernel(sass, target, grid=1, block=32, params=[Pointer("out"), np.uint32(0x11111111),
                                                               np.uint32(0x22222222)],
                     buffers={"out": np.zeros(2, np.uint32)})
    assert list(out["out"]) == [0x11111111, 0x22222222]


# 4. sm_86 global accesses use the descriptor register the word encodes (bits 32..37 for LDG).
LOOP = """  mov.f32 %f1, 0f00000000; mov.u32 %r3, 0; mov.f32 %f5, 0f3F800000;
L:
  mad.lo.u32 %r4, %r3, 32, %r2;
  mul.wide.u32 %rd6, %r4, 4; add.s64 %rd7, %rd2, %rd6;
  ld.global.f32 %f2, [%rd7];
  fma.rn.f32 %f1, %f2, %f2, %f1;
  setp.gt.f32 %p2, %f2, 0f3F000000;
  @%p2 mul.f32 %f5, %f5, %f2;
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p1, %r3, %r1;
  @%p1 bra L;
  add.f32 %f6, %f1, %f5;
  st.global.f32 [%rd5], %f6;"""


def _loop_reference(n=3):
    inp = np.arange(256, dtype=np.float32) * np.float32(0.37) - np.float32(20)
    f1, f5 = np.zeros(32, np.float32), np.ones(32, np.float32)
    for i in range(n):
        f2 = inp[i * 32:(i + 1) * 32]
        f1 = (f2.astype(np.float64) * f2 + f1).astype(np.float32)
        f5 = np.where(f2 > 0.5, f5 * f2, f5)
    return f1 + f5


@pytest.mark.parametrize("opt", ["-O3", "-O0"])
@TARGETS
def test_ptxas_loop_kernel_runs_with_its_own_descriptor_register(target, opt):
    """ptxas's sm_86 -O3 code loads the descriptor into UR6 (UR4 is its scratch); its -O0 code copies
    it through registers and R2UR.  On sm_90 the -O3 code also materialises 1.0 with
    `HFMA2.MMA R4, -RZ, RZ, 1.875, 0` (the high half printed first)."""
    got = _run_ptx(LOOP, target, opt).view(np.float32)
    assert np.allclose(got, _loop_reference(), rtol=1e-6)


def test_an_sm86_access_through_an_encoded_register_without_the_descriptor_is_refused():
    sass = """
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118]
[B------:R-:W-:-:S02] UMOV UR6, 0x0
[B------:R-:W-:-:S02] UMOV UR7, 0x0
[B------:R-:W-:-:S04] MOV R2, c[0x0][0x160]
[B------:R-:W-:-:S06] MOV R3, c[0x0][0x164]
[B------:R-:W0:-:S02] LDG.E R8, desc[UR6][R2.64]
[B0-----:R-:W-:-:S05] EXIT
"""
    with pytest.raises(SimulationFault) as caught:
        run_kernel(sass, "sm_86", grid=1, block=32, params=[Pointer("out")], buffers={"out": np.zeros(1, np.uint32)})
    assert "through UR6, which holds no memory descriptor" in caught.value.message


# 5. A block that is not a whole warp: a register-indexed constant read checks only its threads.
@TARGETS
def test_a_register_indexed_constant_read_in_a_one_thread_block_checks_only_that_thread(target):
    p = PARAMETERS[target]
    sass = f"""
[B------:R-:W-:-:S04] MOV R2, 0xc
[B------:R-:W0:-:S01] LDC R2, c[0x0][R2+{p:#x}]
[B------:R-:W1:-:S01] LDC.64 R4, c[0x0][{p:#x}]
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][{DESCRIPTOR[target]:#x}]
[B01----:R-:W-:-:S05] STG.E {'desc[UR4]' if target == 'sm_90' else ''}[R4.64], R2
[B------:R-:W-:-:S05] EXIT
"""
    out = run_kernel(sass, target, grid=1, block=1, params=[Pointer("out"), np.uint32(0), np.uint32(0x22222222)],
                     buffers={"out": np.zeros(1, np.uint32)})
    assert out["out"][0] == 0x22222222


# 6. FP64 timing per target.
DOUBLE = """  ld.global.f32 %f1, [%rd4]; cvt.f64.f32 %d1, %f1;
  fma.rn.f64 %d2, %d1, %d1, 0d3FE0000000000000; mul.f64 %d3, %d2, %d1; add.f64 %d4, %d3, %d2;
  setp.geu.f64 %p1, %d4, %d1; selp.f64 %d5, %d4, %d3, %p1; mul.f64 %d6, %d5, 0d3FC0000000000000;
  cvt.rn.f32.f64 %f2, %d6; st.global.f32 [%rd5], %f2;"""


@TARGETS
def test_ptxas_binary64_code_passes_the_checker(target):
    x = (np.arange(32, dtype=np.float32) * np.float32(0.37) - np.float32(20)).astype(np.float64)
    d2 = x * x + 0.5
    d3 = d2 * x
    d4 = d3 + d2
    want = (np.where(d4 >= x, d4, d3) * 0.125).astype(np.float32)
    assert np.array_equal(_run_ptx(DOUBLE, target).view(np.float32), want)


def test_sm86_binary64_results_need_a_scoreboard():
    with pytest.raises(Hazard) as caught:
        _run_sass("sm_86", "[B------:R-:W-:-:S11] DFMA R4, R2, R2, R2\n[B------:R-:W-:-:S11] NOP\n"
                           "[B------:R-:W-:-:S06] DMUL R6, R2, R4")
    assert "FP64 unit is variable latency" in caught.value.reason
    _run_sass("sm_86", "[B------:R-:W0:-:S02] DFMA R4, R2, R2, R2\n[B0-----:R-:W-:-:S06] DMUL R6, R2, R4")
    # ptxas's in-order pair: an unscored DSETP, completed by waiting on a later DFMA's scoreboard
    _run_sass("sm_86", "[B------:R-:W-:-:S04] DSETP.GEU.AND P0, PT, R2, R2, PT\n"
                       "[B------:R-:W0:-:S04] DFMA R4, R2, R2, R2\n[B0-----:R-:W-:-:S02] FSEL R10, R2, R3, !P0")


def test_sm90_binary64_readers_wait_ptxas_minimum():
    with pytest.raises(Hazard) as caught:
        _run_sass("sm_90", "[B------:R-:W-:-:S06] DFMA R4, R2, R2, R2\n[B------:R-:W-:-:S06] DMUL R6, R2, R4")
    assert "an FP64 result needs 8" in caught.value.reason
    _run_sass("sm_90", "[B------:R-:W-:-:S08] DFMA R4, R2, R2, R2\n[B------:R-:W-:-:S06] DMUL R6, R2, R4")
    with pytest.raises(Hazard) as caught:
        _run_sass("sm_90", "[B------:R-:W-:-:S04] DSETP.GEU.AND P0, PT, R2, R2, PT\n"
                           "[B------:R-:W-:-:S04] FSEL R10, R2, R3, P0")
    assert "reads P0 4 cycles" in caught.value.reason and "needs 6" in caught.value.reason
    _run_sass("sm_90", "[B------:R-:W-:-:S06] DSETP.GEU.AND P0, PT, R2, R2, PT\n[B------:R-:W-:-:S04] FSEL R10, R2, R3, P0")


# 7. Uniform-datapath results: 4 cycles to a uniform reader, 6 to a vector one (UMOV / ULDC: 2).
@TARGETS
def test_uniform_datapath_chains_wait_per_consumer_kind(target):
    with pytest.raises(Hazard) as caught:
        _run_sass(target, "[B------:R-:W-:-:S02] UIADD3 UR5, URZ, 0x4, URZ\n"
                          "[B------:R-:W-:-:S02] ULOP3.LUT UR6, UR5, 0x1, URZ, 0xc0, !UPT")
    assert "needs 4" in caught.value.reason
    _run_sass(target, "[B------:R-:W-:-:S04] UIADD3 UR5, URZ, 0x4, URZ\n"
                      "[B------:R-:W-:-:S02] ULOP3.LUT UR6, UR5, 0x1, URZ, 0xc0, !UPT")
    with pytest.raises(Hazard) as caught:
        _run_sass(target, "[B------:R-:W-:-:S05] UIADD3 UR5, URZ, 0x4, URZ\n[B------:R-:W-:-:S02] IMAD.U32 R4, RZ, RZ, UR5")
    assert "needs 6" in caught.value.reason
    _run_sass(target, "[B------:R-:W-:-:S06] UIADD3 UR5, URZ, 0x4, URZ\n[B------:R-:W-:-:S02] IMAD.U32 R4, RZ, RZ, UR5")
    _run_sass(target, "[B------:R-:W-:-:S02] UMOV UR5, 0x4\n[B------:R-:W-:-:S02] UIADD3 UR6, UR5, 0x1, URZ")


# 8. An overwrite of a register a variable-latency instruction reads, with no read scoreboard.
@TARGETS
def test_an_early_overwrite_of_an_unscored_load_address_is_refused(target):
    at = shared_base(target)            # past sm_90's system KiB (docs/targets.md)
    with pytest.raises(Hazard) as caught:
        _run_sass(target, f"[B------:R-:W0:-:S02] LDS R4, [R9+{at:#x}]\n[B------:R-:W-:-:S04] MOV R9, 0x8\n"
                          "[B0-----:R-:W-:-:S04] IADD3 R5, R4, R9, RZ", shared=at + 64)
    assert "overwrites R9 2 cycles after" in caught.value.reason and "read scoreboard" in caught.value.reason
    _run_sass(target, f"[B------:R1:W0:-:S02] LDS R4, [R9+{at:#x}]\n[B-1----:R-:W-:-:S04] MOV R9, 0x8\n"
                      "[B0-----:R-:W-:-:S04] IADD3 R5, R4, R9, RZ", shared=at + 64)


def test_an_early_overwrite_of_an_unscored_conversion_source_is_refused():
    with pytest.raises(Hazard) as caught:
        _run_sass("sm_86", "[B------:R-:W1:-:S02] F2I.TRUNC.NTZ R4, R2\n[B------:R-:W-:-:S04] MOV R2, 0x8\n"
                           "[B-1----:R-:W-:-:S04] IADD3 R5, R4, R2, RZ")
    assert "overwrites R2" in caught.value.reason


# 9. LDGDEPBAR counts its group on the scoreboard DEPBAR waits on.
def _depbar(wsb: str):
    sass = f"""
[B------:R-:W0:-:S01] S2R R0, SR_TID.X
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118]
[B------:R-:W1:-:S01] LDC.64 R2, c[0x0][0x168]
[B------:R-:W2:-:S01] LDC.64 R8, c[0x0][0x160]
[B01----:R-:W-:-:S05] IMAD.SHL.U32 R5, R0, 0x10, RZ
[B------:R-:W-:-:S06] IMAD.WIDE.U32 R2, R0, 0x10, R2
[B------:R-:W-:-:S02] LDGSTS.E.128 [R5], [R2.64]
[B------:R-:{wsb}:-:S04] LDGDEPBAR
[B------:R-:W-:Y:S04] DEPBAR.LE SB0, 0x0
[B------:R-:W-:-:S06] BAR.SYNC.DEFER_BLOCKING 0x0
[B------:R-:W3:-:S01] LDS R6, [R5]
[B--2---:R-:W-:-:S06] IMAD.WIDE.U32 R8, R0, 0x4, R8
[B---3--:R-:W-:-:S05] STG.E [R8.64], R6
[B------:R-:W-:-:S05] EXIT
"""
    return run_kernel(sass, "sm_86", grid=1, block=32, params=[Pointer("out"), Pointer("inp")], shared_bytes=512,
                      buffers={"out": np.zeros(32, np.uint32), "inp": np.arange(128, dtype=np.uint32) + 100})


def test_ldgdepbar_without_a_scoreboard_is_refused():
    assert list(_depbar("W0")["out"][:4]) == [100, 104, 108, 112]
    with pytest.raises(Hazard) as caught:
        _depbar("W-")
    assert "(LDGDEPBAR)" in str(caught.value) and "sets no write scoreboard" in caught.value.reason


def test_depbar_does_not_complete_a_group_counted_on_another_scoreboard():
    with pytest.raises(SimulationFault) as caught:
        _depbar("W1")
    assert "has not yet landed" in caught.value.message


@TARGETS
def test_ptxas_O0_cp_async_gemm_runs(target):
    """ptxas -O0 commits cp.async groups with `LDGDEPBAR` on no scoreboard and a stall of 0 (the
    interlock waits for the copies), then DEPBAR.LE SB0, N: the checker accepts it and the group
    lands at the commit."""
    from .ptx_kernels import gemm_ptx
    m = n = k = 64
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    out = run_kernel(_cubin(gemm_ptx(m, n, k), target, "-O0"), target, grid=1, block=32 * (m // 16),
                     params=[Pointer("c"), Pointer("a"), Pointer("b")], shared_bytes=2 * m * k + 2 * k * n,
                     buffers={"c": np.zeros(m * n, np.float32), "a": a.ravel(), "b": b.ravel()})
    assert np.allclose(out["c"].reshape(m, n), a.astype(np.float32) @ b.astype(np.float32), atol=1e-4)
