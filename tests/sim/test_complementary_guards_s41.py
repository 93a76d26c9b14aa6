"""Complementary guards in the control-code checker (probe s41 hazardpred).

Two instructions under @Pn and @!Pn, Pn not rewritten between them, never both execute for a
thread, so neither's variable-latency register access is ordered against the other's.  The
independent reference is ptxas -O3 (CUDA 13) itself: tests/sim/ptx/complementary_guards.ptx has each
pair twice, differing only in the second instruction's guard, and ptxas sets a scoreboard and a wait
between the pair under one predicate and none under complementary predicates (pinned below, both
targets).  The checker used to refuse ptxas's complementary code ("overwrites R7 2 cycles after the
variable-latency instruction ... sets no read scoreboard"); the same pair under one predicate,
unpredicated, or with the predicate rewritten between is still refused.  Values: NumPy."""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from bobc.sass import assemble
from bobc.sim.faults import Hazard
from bobc.sim.hazards import Checker
from bobc.sim.kernel import cubin_kernel, run_kernel
from bobc.sim.sass_frontend import decode

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import kernel  # noqa: E402

TARGETS = ["sm_86", "sm_90"]
PAIRS = ["war_stg", "war_sts", "waw_ldg", "raw_stg"]
NO_SB = 7


def _code(target: str, name: str):
    """ptxas's instructions of `name` (complementary_guards.ptx) for `target`, decoded."""
    arch = target.replace("sm_", "SM")
    return decode(cubin_kernel(kernel("complementary_guards", target), name).code, arch), arch


def _pair(code):
    """The guarded variable-latency instruction and the guarded instruction after it (the pair)."""
    guarded = [i for i in code if i.guard != 7 and i.opcode not in ("BRA", "EXIT")]
    return guarded[-2], guarded[-1]


def _check(code, arch):
    """Issue `code` through the checker in address order, up to its EXIT (straight-line code)."""
    checker = Checker("kernel", arch)
    for ins in code:
        checker.issue(ins)
        if ins.opcode == "EXIT" and ins.guard == 7:
            return


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pair", PAIRS)
def test_ptxas_orders_the_pair_under_one_predicate_only(target, pair):
    """The oracle: ptxas's second instruction waits on a scoreboard the first sets under one predicate,
    and waits on none of it (or the first sets none) under complementary predicates."""
    def waits(name):
        code, _ = _code(target, name)
        first, second = _pair(code)
        assert first.guard == second.guard == 0
        assert (first.guard_negated == second.guard_negated) == name.endswith("_same")
        boards = {b for b in (first.control.read_scoreboard, first.control.write_scoreboard) if b != NO_SB}
        return any(second.control.wait_mask >> b & 1 for b in boards)
    assert waits(f"{pair}_same")
    assert not waits(f"{pair}_comp")


def _expected(pair: str, inp: np.ndarray) -> np.ndarray:
    """NumPy's values of `pair` (the PTX's semantics; p = tid even; identical for _comp and _same but
    for which threads the second instruction runs on)."""
    t = np.arange(32, dtype=np.uint32)
    p = (t & 1) == 0
    alt = (t ^ 5) + 3 * t
    out = np.zeros(64, np.uint32)
    if pair == "war_stg":
        out[:32] = np.where(p, inp[:32], alt)
        out[32:] = np.where(p, inp[:32], 0)
    elif pair == "war_sts":
        out[:32] = np.where(p, inp[:32], alt)
        out[32:] = inp[t & ~np.uint32(1)]                  # the even thread's shared word
    elif pair == "waw_ldg":
        out[:32] = np.where(p, inp[64:96], alt)
    else:                                                  # raw_stg
        out[:32] = t ^ 5
        out[32:] = np.where(p, 0, inp[:32])                # the old %r8 where the load did not run
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pair", PAIRS)
def test_ptxas_complementary_pair_simulates(target, pair):
    """ptxas's code under complementary guards runs with the checker on and gives NumPy's values
    (it raised Hazard before); the one-predicate form gives the same values."""
    inp = (np.arange(96, dtype=np.uint32) * 2654435761 % 1000).astype(np.uint32)
    cubin = kernel("complementary_guards", target)
    for form in ("comp", "same"):
        out = run_kernel(cubin, target, grid=(1,), block=(32,), params=["out", "inp"],
                         buffers={"out": np.zeros(64, np.uint32), "inp": inp.copy()},
                         kernel_name=f"{pair}_{form}")["out"]
        want = _expected(pair, inp)
        if form == "same" and pair == "raw_stg":
            want[32:] = np.where((np.arange(32) & 1) == 0, inp[64:96], 0)   # @p1 load, @p1 store
        elif form == "same" and pair == "war_stg":
            want[:32] = np.where((np.arange(32) & 1) == 0, (np.arange(32, dtype=np.uint32) ^ 5)
                                 + 3 * np.arange(32, dtype=np.uint32), inp[:32])
        elif form == "same":
            continue          # values of the one-predicate forms beyond these two: not the point here
        np.testing.assert_array_equal(out, want, err_msg=f"{pair}_{form} on {target}")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("pair", PAIRS)
def test_the_pair_without_ptxas_complement_is_refused(target, pair):
    """ptxas's complementary code, its second instruction's guard made the first's (ptxas's own
    one-predicate form waits there: the first test) or dropped: refused; as ptxas wrote it: accepted."""
    code, arch = _code(target, f"{pair}_comp")
    _check(code, arch)
    first, second = _pair(code)
    at = code.index(second)
    for guard, negated in ((second.guard, first.guard_negated), (7, False)):
        mutant = list(code)
        mutant[at] = dataclasses.replace(second, guard=guard, guard_negated=negated)
        with pytest.raises(Hazard) as caught:
            _check(mutant, arch)
        assert caught.value.pc in (first.pc, second.pc) or caught.value.pc > second.pc


def _run(target, body):
    """Hand SASS (after R0, R2, R3 and P0 are set) through the checker in order."""
    text = ("[B------:R-:W-:-:S05] MOV R0, 0x4\n[B------:R-:W-:-:S05] MOV R2, 0x100\n"
            "[B------:R-:W-:-:S05] MOV R3, RZ\n"
            "[B------:R-:W-:-:S11] ISETP.NE.AND P0, PT, R0, 0x4, PT\n[B------:R-:W-:-:S05] NOP\n" + body + "\n[B------:R-:W-:-:S05] EXIT\n")
    arch = target.replace("sm_", "SM")
    checker = Checker("kernel", arch)
    for ins in decode(assemble(text, target).code, arch):
        checker.issue(ins)


@pytest.mark.parametrize("target", TARGETS)
def test_a_predicate_rewritten_between_breaks_the_complement(target):
    """@!P0 LDG R7 in flight, then @P0 overwriting R7 without a wait: accepted (the threads differ);
    with P0 rewritten between (an ISETP, or any instruction naming P0) the two guards need not
    split the threads any more: refused."""
    def body(middle):
        return f"""
[B------:R-:W2:-:S01] @!P0 LDG.E R7, [R2.64]
[B------:R-:W-:-:S11] {middle}
[B------:R-:W-:-:S05] NOP
[B------:R-:W-:-:S05] @P0 IADD3 R7, R0, 0x1, RZ
[B--2---:R-:W-:-:S05] IADD3 R5, R7, 0x1, RZ"""
    _run(target, body("NOP"))
    for middle in ("ISETP.NE.AND P0, PT, R0, 0x5, PT", "SEL R6, R0, R2, P0"):
        with pytest.raises(Hazard) as caught:
            _run(target, body(middle))
        assert "overwrites R7 while the variable-latency write" in caught.value.reason


@pytest.mark.parametrize("target", TARGETS)
def test_an_unpredicated_read_beside_a_guarded_one_still_limits_the_write(target):
    """STG reads R7 on every thread, @!P0 STG reads it again a cycle later: @P0's overwrite 2 cycles
    after the first read (no read scoreboard) is refused -- the later, guarded read does not hide the
    earlier one; with only the guarded read it is accepted."""
    both = """
[B------:R-:W-:-:S01] STG.E [R2.64], R7
[B------:R-:W-:-:S01] @!P0 STG.E [R2.64+0x4], R7
[B------:R-:W-:-:S05] @P0 IADD3 R7, R0, 0x1, RZ"""
    with pytest.raises(Hazard) as caught:
        _run(target, both)
    assert "overwrites R7" in caught.value.reason and "sets no read scoreboard" in caught.value.reason
    _run(target, both.replace("S01] STG.E [R2.64], R7", "S01] NOP"))


@pytest.mark.parametrize("target", TARGETS)
def test_a_read_scoreboard_not_waited_under_complementary_guards(target):
    """@!P0 STS with read scoreboard 0, @P0 overwriting its data register without waiting: accepted;
    the same under @!P0 (one predicate): refused, as ptxas's war_sts_same waits there."""
    body = """
[B------:R0:W-:-:S02] @!P0 STS [R0], R7
[B------:R-:W-:-:S05] @{} IADD3 R7, R0, 0x1, RZ"""
    _run(target, body.format("P0"))
    with pytest.raises(Hazard) as caught:
        _run(target, body.format("!P0"))
    assert "read scoreboard 0 not waited" in caught.value.reason
