"""The control-code checker holds each outstanding write and read to the threads that issued it (probe s43
hazardlanes).  It kept one pending writer, one late reader and one fixed-latency writer a register, so it refused
ptxas's own code where divergent paths use one register: sm_86's rcp.rn.f64 slow path writes R7 by `MUFU.RCP64H
R7, R5` on one side of a branch while the other side's `DFMA R6, ...` (SB1) may still land; sm_86's sqrt.rn.f32
writes R6 by FFMA on one path and its called slow path reads R6 two cycles later on the other path's threads; and
it counted a compare's source predicate (`FSETP.GEU.OR P1, PT, R6, -126, !P0`) as a rewrite of P0, undoing a
complementary pair (`@!P0 LDG.E R11, [R2.64+0x4]` ... `@P0 MOV R2, R6`).

Independent reasons: ptxas's output is correct on hardware by construction (the kernels below are ptxas's, the
simulator runs them with the checker on); each thread has its own registers and an instruction writes and reads
only those of the threads it issues for (PTX ISA, "Registers"; SIMT execution: threads off a path are inactive),
so two paths' accesses of one register share no thread.  What a wait orders: scoreboards count a warp's
instructions (Jia et al., arXiv:1804.06826, "dependency barriers"), but the divergent paths of a warp run in an
order the hardware does not publish, so a wait orders only what the waiting threads issued before it -- a hazard on
one path (a read before the wait on its own write's scoreboard) is refused whatever the other path waits on."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from bobc.sass import assemble
from bobc.sim.faults import Hazard
from bobc.sim.hazards import Checker
from bobc.sim.sass_frontend import decode

THREADS = 64
A = np.arange(THREADS) % 2 == 0          # one path's threads (even), the other's (odd): every warp holds both
B = ~A


def _issue(target, steps):
    """`steps`: (SASS line with its control codes, the threads issuing it: A, B or True) in issue order."""
    arch = target.replace("sm_", "SM")
    code = decode(assemble("\n".join(line for line, _ in steps) + "\n[B------:R-:W-:-:S05] EXIT\n", target).code, arch)
    checker = Checker("kernel", arch)
    for ins, (_, lanes) in zip(code, steps):
        checker.issue(ins, lanes)


# sm_86's rcp.rn.f64 slow path, reduced: DFMA R6 on SB1 on one path (A), MUFU.RCP64H R7 on the other (B), both
# results read after the paths join, waiting on both scoreboards
RCP_PATHS = [("[B------:R-:W-:-:S05] MOV R4, 0x0", True), ("[B------:R-:W-:-:S05] MOV R5, 0x0", True),
             ("[B------:R-:W-:-:S05] MOV R8, 0x0", True), ("[B------:R-:W-:-:S08] MOV R9, 0x0", True),
             ("[B------:R-:W1:-:S01] DFMA R6, R8, R4, R8", A),
             ("[B------:R-:W-:-:S05] MOV R6, R8", B),
             ("[B------:R-:W0:-:S02] MUFU.RCP64H R7, R5", B),
             ("[B------:R-:W-:-:S05] NOP", True),
             ("[B01----:R-:W-:-:S01] MOV R11, R7", True)]


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_two_paths_write_one_register(target):
    _issue(target, RCP_PATHS)
    # the same threads: the MUFU would overwrite a result still in flight (refused)
    same = [(line, A if lanes is B else lanes) for line, lanes in RCP_PATHS]
    with pytest.raises(Hazard) as caught:
        _issue(target, same)
    assert "overwrites R6" in caught.value.reason or "overwrites R7" in caught.value.reason


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_read_before_its_own_paths_wait_is_refused(target):
    """After the join the DFMA's threads read R7: waiting on the MUFU's SB0 alone leaves the DFMA's SB1 (refused);
    on one path, A reading R7 right after its own DFMA is refused whatever B writes."""
    for steps in (RCP_PATHS[:-1] + [("[B0-----:R-:W-:-:S01] MOV R11, R7", True)],
                  RCP_PATHS[:-1] + [("[B0-----:R-:W-:-:S01] MOV R11, R7", A)],
                  RCP_PATHS[:5] + [("[B------:R-:W-:-:S05] MOV R10, R7", A)]):
        with pytest.raises(Hazard) as caught:
            _issue(target, steps)
        assert "reads R7 before waiting on scoreboard 1" in caught.value.reason
    # the MUFU's threads alone, waiting on SB0: accepted (the DFMA wrote none of theirs)
    _issue(target, RCP_PATHS[:-1] + [("[B0-----:R-:W-:-:S01] MOV R11, R7", B)])


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_another_paths_wait_does_not_complete_a_write(target):
    """Path A loads R4 on SB0; path B waits on SB0 (for its own load); the join reads R4 without waiting: refused --
    B may have run first on the GPU, so its wait says nothing of A's load.  Waiting at the join: accepted."""
    steps = [("[B------:R-:W-:-:S05] MOV R2, 0x0", True), ("[B------:R-:W-:-:S05] MOV R3, 0x0", True),
             ("[B------:R-:W0:-:S01] LDG.E R4, [R2.64]", A),
             ("[B------:R-:W0:-:S01] LDG.E R5, [R2.64]", B),
             ("[B0-----:R-:W-:-:S05] IADD3 R6, R5, 0x1, RZ", B),
             ("[B------:R-:W-:-:S05] IADD3 R7, R4, 0x1, RZ", True)]
    with pytest.raises(Hazard) as caught:
        _issue(target, steps)
    assert "reads R4 before waiting on scoreboard 0" in caught.value.reason
    _issue(target, steps[:-1] + [("[B0-----:R-:W-:-:S05] IADD3 R7, R4, 0x1, RZ", True)])


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_fixed_latency_result_is_timed_for_its_own_threads(target):
    """FFMA R6 on path A, then R6 read 2 cycles later by path B's threads only (ptxas's sqrt.rn.f32: the called slow
    path's `LOP3.LUT P0, RZ, R6, ...`): accepted; by A's threads, or all, refused (an FMA result needs 4 or more)."""
    steps = [("[B------:R-:W-:-:S05] MOV R5, 0x0", True),
             ("[B------:R-:W-:-:S02] FFMA R6, R5, R5, R5", A),
             ("[B------:R-:W-:-:S05] IADD3 R7, R6, 0x1, RZ", B)]
    _issue(target, steps)
    for lanes in (A, True):
        with pytest.raises(Hazard) as caught:
            _issue(target, steps[:-1] + [(steps[-1][0], lanes)])
        assert "reads R6 2 cycles after its producer" in caught.value.reason


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_late_read_holds_only_its_own_threads(target):
    """Path A's STG reads R7 on read scoreboard 0; path B overwrites R7 without waiting: accepted; path A
    overwriting it, or every thread, refused."""
    steps = [("[B------:R-:W-:-:S05] MOV R2, 0x0", True), ("[B------:R-:W-:-:S05] MOV R3, 0x0", True),
             ("[B------:R0:W-:-:S02] STG.E [R2.64], R7", A),
             ("[B------:R-:W-:-:S05] IADD3 R7, R2, 0x1, RZ", B)]
    _issue(target, steps)
    for lanes in (A, True):
        with pytest.raises(Hazard) as caught:
            _issue(target, steps[:-1] + [(steps[-1][0], lanes)])
        assert "read scoreboard 0 not waited" in caught.value.reason


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_compare_reading_the_predicate_keeps_the_complement(target):
    """`@!P0 LDG.E R11, [R2.64]` reads R2 on read scoreboard 0; a compare reading !P0 as its source predicate;
    `@P0 MOV R2, R6` without waiting: accepted (P0 unchanged, the guards still split the threads); an ISETP writing
    P0 between: refused."""
    def steps(middle):
        return [("[B------:R-:W-:-:S05] MOV R2, 0x0", True), ("[B------:R-:W-:-:S05] MOV R3, 0x0", True),
                ("[B------:R-:W-:Y:S13] ISETP.GE.U32.AND P0, PT, R2, 0x4, PT", True),
                ("[B------:R0:W3:-:S01] @!P0 LDG.E R11, [R2.64]", True),
                (f"[B------:R-:W-:Y:S13] {middle}", True),
                ("[B------:R-:W-:-:S05] @P0 MOV R2, R6", True)]
    _issue(target, steps("FSETP.GEU.OR P1, PT, R6, -126, !P0"))
    with pytest.raises(Hazard) as caught:
        _issue(target, steps("ISETP.GE.U32.AND P0, PT, R6, 0x4, PT"))
    assert "read scoreboard 0 not waited" in caught.value.reason


# ptxas's own divergent code (both sides of a branch on the thread's parity, or on its data) that the checker
# refused: run with the checker on, results not compared (ptxas's code is correct on hardware; the checker is judged)
OPS = {"rcp64": "rcp.rn.f64 %fd3, %fd1;",
       "add64": "add.f64 %fd3, %fd1, %fd2;",
       "mul64": "mul.f64 %fd3, %fd1, %fd2; mul.f64 %fd3, %fd3, %fd1;",
       "div64": "div.rn.f64 %fd3, %fd1, %fd2;",
       "sqrt32": "sqrt.rn.f32 %f5, %f1; mov.b32 %r10, %f5; mov.b64 %fd3, {%r10, %r3};",
       "ex2": "ex2.approx.f32 %f5, %f1; mov.b32 %r10, %f5; mov.b64 %fd3, {%r2, %r10};",
       "popc": "popc.b32 %r12, %r2; mov.b64 %fd3, {%r12, %r3};",
       "brev": "brev.b32 %r12, %r3; mov.b64 %fd3, {%r2, %r12};",
       "ldg": "ld.global.u32 %r12, [%rd6+4]; mov.b64 %fd3, {%r12, %r2};"}
CONDITIONS = {"parity": "and.b32 %r12, %r1, 1; setp.eq.u32 %p1, %r12, 0;",
              "data": "setp.lt.u32 %p1, %r3, 0x40000000;"}
REFUSED = [("add64", "rcp64", "parity"), ("brev", "rcp64", "parity"), ("div64", "mul64", "parity"),
           ("div64", "popc", "parity"), ("ldg", "mul64", "parity"), ("ldg", "mul64", "data"),
           ("brev", "sqrt32", "parity"), ("ex2", "ldg", "data")]


@pytest.mark.parametrize(("first", "second", "condition"), REFUSED)
def test_ptxas_divergent_code_is_accepted(first, second, condition, tmp_path, needs_ptxas):
    from bobc.nvtools import ptxas
    from bobc.sim.kernel import run_kernel
    from tests.sass.test_f64_division_s43 import kernel, operands
    name = f"paths_{first}_{second}_{condition}"
    body = f"{CONDITIONS[condition]} @%p1 bra $L1; {OPS[first]} bra.uni $L2; $L1: {OPS[second]} $L2: "
    ptx, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.cubin"
    ptx.write_text(kernel(name, "sm_86", body))
    subprocess.run([ptxas(), "-arch=sm_86", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    words = operands(2048, 7)[:, :1024]
    n = words.shape[1]
    run_kernel(cubin.read_bytes(), "sm_86", grid=n // 64, block=64, params=["out", "in", np.uint32(n)],
               buffers={"out": np.zeros(2 * n, np.uint32), "in": words.astype(np.uint32).reshape(-1)},
               kernel_name=name)
