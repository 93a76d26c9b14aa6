"""The written-before-read analysis (compiler/bobc/sass/defined.py) on hand-built control flow:
cases session 39's mutation testing (notes/s39/probe-mutants.md) found no test held.  The rule
(docs/kernel-contracts.md rule 4): a read is refused when NO path from the entry writes the
register first, so registers written on two different paths into a join are both written; a
CALL returns to the instruction after it; BRA.DIV falls through when the warp is converged; an
indirect branch (JMX, BRX, JMP) leaves the paths unknown, so nothing is refused."""
from __future__ import annotations

from bobc.sass.defined import Step, undefined_reads


def step(opcode, reads=(), writes=(), target=None, guard=None, modifiers=()):
    return Step(opcode, tuple(modifiers), guard, frozenset(("R", r) for r in reads),
                frozenset(("R", w) for w in writes), target)


P0 = ("P", 0, False)


def test_registers_written_on_either_path_into_a_join_are_both_written():
    steps = [step("BRA", target=3, guard=P0), step("MOV", writes=[1]), step("BRA", target=4),
             step("MOV", writes=[2]), step("IADD3", reads=[1, 2], writes=[3]), step("EXIT")]
    assert undefined_reads(steps) == []
    # and a register neither path writes is refused at the join
    steps[4] = step("IADD3", reads=[1, 2, 9], writes=[3])
    assert [(u.index, u.registers) for u in undefined_reads(steps)] == [(4, (("R", 9),))]


def test_a_call_returns_to_the_instruction_after_it():
    steps = [step("CALL", target=3), step("IADD3", reads=[1], writes=[2]), step("EXIT"),
             step("MOV", writes=[1]), step("RET")]
    assert undefined_reads(steps) == []


def test_a_call_to_an_unknown_target_still_goes_on_after_it():
    steps = [step("CALL"), step("IADD3", reads=[9], writes=[2]), step("EXIT")]
    assert [(u.index, u.registers) for u in undefined_reads(steps)] == [(1, (("R", 9),))]


def test_an_unguarded_bra_div_also_falls_through():
    steps = [step("BRA", target=2, modifiers=("DIV",)), step("MOV", writes=[1]),
             step("IADD3", reads=[1], writes=[2]), step("EXIT")]
    assert undefined_reads(steps) == []
    # a plain unguarded BRA does not: the MOV is skipped on every path
    steps[0] = step("BRA", target=2)
    assert [(u.index, u.registers) for u in undefined_reads(steps)] == [(2, (("R", 1),))]


def test_an_indirect_branch_refuses_nothing():
    steps = [step("JMX", reads=[]), step("IADD3", reads=[9], writes=[2]), step("EXIT")]
    assert undefined_reads(steps) == []
