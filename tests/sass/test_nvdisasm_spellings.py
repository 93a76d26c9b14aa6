"""nvdisasm spellings ptxas's listings carry (probe s28 asm finding 6): `c[0x0] [0x170]` (a space
between the brackets, printed for the packed-half opcodes' constants) reads as c[0x0][0x170], with
a leading '-' too; the forms it appears in (HADD2/HMUL2/HFMA2/HMNMX2 with a constant) are not in
the tables, so they are refused as that, not as syntax or as a '-' on the wrong operand.
`DEPBAR {5,4,3,2,1,0}` (a wait on a set of scoreboards) is refused as an operand this assembler
does not read."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.syntax import Const, parse_instruction


def _error(text: str, arch: str = "sm_86", column: int = 1) -> BobcError:
    with pytest.raises(BobcError) as info:
        assemble(f"NOP\n{text}\nEXIT\n", arch, source_name="k.sass")
    assert (info.value.span.path, info.value.span.line, info.value.span.column) == ("k.sass", 2, column)
    return info.value


def test_a_constant_with_a_space_between_its_brackets_reads_as_one():
    spaced = parse_instruction("HADD2.FTZ R26, R7, -c[0x0] [0x170]").operands[2]
    assert spaced == Const(0, 0x170, neg=True)
    assert parse_instruction("HMNMX2 R7, R14, c[0x0]  [0x170], PT").operands[2] == Const(0, 0x170)
    for arch in ("sm_86", "sm_90"):
        both = assemble("FADD R1, R2, c[0x0] [0x170]\nFADD R1, R2, c[0x0][0x170]\nEXIT\n", arch).instructions
        control = ((1 << 17) - 1) << 105     # the scheduler's fields may differ between the two
        assert both[0].word & ~control == both[1].word & ~control


@pytest.mark.parametrize("text,key", [
    ("HADD2.FTZ R26, R7, -c[0x0] [0x170]", "HADD2.FTZ R,R,C"),
])
def test_packed_half_constant_forms_are_refused_as_missing_forms(text, key):
    """ptxas sm_86 (probe s28 asm, random kernels p/fz) prints these; the tables have no such form."""
    e = _error(text)
    assert e.message.startswith(f"no sm_86 encoding for '{key}'")
    assert "cannot read" not in e.message and "modifier" not in e.message


@pytest.mark.parametrize("text", ["HMUL2 R21, R28, c[0x0] [0x170]", "HFMA2 R23, R14, R29, c[0x0] [0x170]",
                                  "HMNMX2.FTZ R7, R14, c[0x0] [0x170], PT"])
def test_packed_half_constant_forms_learned_since(text, needs_nvdisasm):
    """Once missing too (above); tools/ptx_corpus/param_shapes.ptx made ptxas write the first two; HMNMX2.FTZ's
    constant form is derived since session 46's user_forms_s46.ptx gave ptxas's HMNMX2.FTZ R,R,R,P (its .FTZ bit
    moved onto HMNMX2 R,R,C,P: sm_86.json's derived_from): they assemble as printed, and nvdisasm reads the word
    back as the text."""
    from bobc.sass.oracle import disassemble
    from bobc.targets import TARGETS
    word = assemble(f"{text}\nEXIT\n", "sm_86").code[:16]
    assert [d.text for d in disassemble(word, TARGETS["sm_86"].nvdisasm_arch).lines] == [text]


def test_depbar_with_a_set_of_scoreboards_is_named():
    e = _error("[B------:R-:W-:-:S01] DEPBAR {5,4,3,2,1,0}", "sm_90", column=30)     # at the set
    assert e.message.startswith("cannot read operand '{5,4,3,2,1,0}' of DEPBAR: a set of scoreboards in braces")
    assert "known sm_90 forms of DEPBAR: DEPBAR.LE S,I" in e.message
