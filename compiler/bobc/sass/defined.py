"""Registers read that no path from the kernel's entry writes: a may-analysis over the control flow.

At a kernel's entry no register holds anything the code may rely on (a launch sets the constant
banks and the special registers, not R, UR, P or UP; ptxas's code loads even the stack pointer, `MOV
R1, c[0x0][0x28]`, and the global memory descriptor, `ULDC.64 UR4, c[0x0][memory_descriptor]`).
An instruction that reads a register (R, UR, P, UP; every register of a .64 / .128 operand's block;
RZ, URZ, PT, UPT excluded) that no path from the entry to it writes reads whatever the register
held -- on the GPU an undefined value, an undefined memory descriptor for a global access -- and is
refused (docs/kernel-contracts.md, rule 4).

Why "no path" and not "every path": a read that some path reaches unwritten is not wrong when that
path never runs, and which paths run depends on values.  ptxas's own -O3 code has such reads
(`@!UP1 UTMALDG.2D [UR8], [UR4]` with UR10..UR11 written under a predicate computed from the same
test; `@P2 PLOP3.LUT P0, PT, P2, ...` with P2 set on one side of a branch on a correlated value),
and so do the repository's kernels (a softmax's `@P1 LDG.E.128 R12` with R12..R15 set to -inf under
another predicate exactly when P1 is false: docs/kernel-contracts.md).  A read that no path writes before
it is wrong on every path that reaches it, whatever the values (tests/sass/test_written_before_read_s38.py
holds ptxas's corpora and every shipped kernel to the rule).

The paths (over-approximated, so "no path" is never said of a register some real path writes):
BRA (guarded or `.DIV`: both ways), EXIT and KILL (guarded: fall through), CALL (to its
target and on to the next instruction; a RET to every CALL's next instruction), everything else
to the next instruction; a guarded write counts as a write.  A program with an indirect branch
(BRX, JMX, JMP) is not analysed; an instruction never reached from the entry, or guarded by !PT,
is not held to the rule.  Registers are 32-bit wholes: a write of any part (a byte insert) is a
write.
"""
from __future__ import annotations

from dataclasses import dataclass

from .encoder import ZERO_REGISTER as ZERO     # RZ, URZ, PT, UPT: declared once, with the encoder

INDIRECT = {"BRX", "JMX", "JMP"}


def expand(refs) -> frozenset:
    """(bank, first, count) -> single registers, the zero registers left out."""
    out = set()
    for bank, first, count in refs:
        if first == ZERO[bank]:
            continue
        for i in range(count):
            if first + i != ZERO[bank]:
                out.add((bank, first + i))
    return frozenset(out)


@dataclass(frozen=True)
class Step:
    """What the analysis needs of one instruction."""
    opcode: str
    modifiers: tuple
    guard: tuple | None          # (bank, index, negated); None: unguarded (or PT)
    reads: frozenset             # registers read, the guard's own predicate included
    writes: frozenset
    target: int | None           # a BRA / CALL target's instruction index
    descriptor: int | None = None   # a global access's memory descriptor pair (URn, URn+1)


@dataclass
class Undefined:
    """A read of `registers` at instruction `index` that no path from the entry writes first."""
    index: int
    registers: tuple


def _successors(steps: list[Step], i: int) -> list[int]:
    s = steps[i]
    unguarded = s.guard is None
    if s.opcode == "BRA":
        out = [s.target] if s.target is not None else []
        return out + ([i + 1] if not unguarded or "DIV" in s.modifiers else [])
    if s.opcode in ("EXIT", "KILL"):
        return [] if unguarded else [i + 1]
    if s.opcode == "RET":
        back = [k + 1 for k, c in enumerate(steps) if c.opcode == "CALL"]
        return back + ([] if unguarded else [i + 1])
    if s.opcode == "CALL":
        return ([s.target] if s.target is not None else []) + [i + 1]
    return [i + 1]


def written_before(steps: list[Step]) -> dict[int, frozenset]:
    """For each instruction reachable from the entry (instruction 0): the registers some path from
    the entry to it writes."""
    n = len(steps)
    before: dict[int, frozenset] = {0: frozenset()} if n else {}
    work = [0] if n else []
    while work:
        i = work.pop()
        out = before[i] | steps[i].writes
        for j in _successors(steps, i):
            if j >= n or (j in before and out <= before[j]):
                continue
            before[j] = before.get(j, frozenset()) | out
            work.append(j)
    return before


def undefined_reads(steps: list[Step]) -> list[Undefined]:
    """Every read, in address order, of a register no path from the entry writes before it."""
    if any(s.opcode in INDIRECT for s in steps):
        return []
    out = []
    for i, written in sorted(written_before(steps).items()):
        step = steps[i]
        if step.guard is not None and step.guard[1] == 7 and step.guard[2]:
            continue                    # @!PT: never runs
        missing = tuple(sorted(step.reads - written))
        if missing:
            out.append(Undefined(i, missing))
    return out


def register_names(registers) -> str:
    """('UR', 4), ('UR', 5), ('R', 7) -> 'R7, UR4..UR5' (runs of one bank as ranges)."""
    runs: list[list] = []
    for bank, index in sorted(registers, key=lambda r: (("R", "UR", "P", "UP").index(r[0]), r[1])):
        if runs and runs[-1][0] == bank and runs[-1][2] == index - 1:
            runs[-1][2] = index
        else:
            runs.append([bank, index, index])
    return ", ".join(f"{b}{f}" if f == l else f"{b}{f}..{b}{l}" for b, f, l in runs)


@dataclass
class Refusal:
    message: str
    span: object
    hint: str


def refusals(assembled, target) -> list[Refusal]:
    """Each instruction of `assembled` (bobc.sass.Assembled) that reads a register no path from the
    kernel's entry writes before it, as a refusal at its source line: the registers, the
    instruction and what to write (for a global access's memory descriptor, the ULDC.64)."""
    out = []
    for found in undefined_reads(assembled.flow):
        inst = assembled.instructions[found.index]
        step = assembled.flow[found.index]
        why = "which no path from the kernel's entry writes before it"
        registers = set(found.registers)
        descriptor = step.descriptor
        pair = {("UR", descriptor), ("UR", descriptor + 1)} if descriptor is not None else set()
        if registers & pair:
            others = registers - pair
            message = (f"{inst.text} accesses global memory through the descriptor in UR{descriptor}..UR{descriptor + 1}, "
                       f"{why}" + (f" (and reads {register_names(others)})" if others else "")
                       + ": on the GPU it would use an undefined memory descriptor")
            hint = (f"load the descriptor first: ULDC.64 UR{descriptor}, c[0x0][memory_descriptor] "
                    f"(c[0x0][{target.memory_descriptor:#x}] on {target.name}) before the kernel's first global "
                    f"access, as ptxas does")
        else:
            names = register_names(registers)
            message = f"{inst.text} reads {names}, {why}: on the GPU it would read an undefined value"
            hint = f"write {names} before this instruction (or read the register that holds the value meant)"
        out.append(Refusal(message, inst.span, hint))
    return out
