"""Probe s37 leftovers, finding 2: a kernel source's first error, in source order, is the one said.

The whole-kernel checks (its last instruction falls through, a branch past the code's end, a
constant bank other than 0) ran before any opcode was looked up, so `bobc asm` of a source whose
last line is an unknown opcode said "no EXIT" of that very line, and one with an unknown opcode
on line 1 said "no EXIT" of line 2.  An unknown opcode at or before the place such a check
refuses is now refused first, at its own file:line:column."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble_kernel


def _refusal(tmp_path, text, launched=False):
    source = tmp_path / "k.sass"
    source.write_text(text)
    with pytest.raises(BobcError) as info:
        assemble_kernel(source, "sm_86", launched=launched)
    return info.value


@pytest.mark.parametrize("text, line, column", [
    ("    MOV R0, R1 ;\n    FROB R0, R1 ;\n", 2, 5),                  # the last line: its opcode, not "no EXIT"
    ("    FROB R0, R1 ;\n    MOV R0, R1 ;\n", 1, 5),                  # line 1, before the fall-through at line 2
    ("  @P0 FROB R0, R1 ;\n", 1, 7),                                 # the opcode's own column
    ("    FROB R0, R1 ;\n    MOV R0, c[0x3][0x0] ;\n    EXIT ;\n", 1, 5),  # before a bank-3 read (launched)
])
def test_an_unknown_opcode_before_a_whole_kernel_refusal_is_said_first(tmp_path, text, line, column):
    error = _refusal(tmp_path, text, launched="c[0x3]" in text)
    assert error.message == "unknown or unsupported opcode FROB", error.render()
    assert (error.span.line, error.span.column) == (line, column)


def test_an_earlier_whole_kernel_refusal_still_comes_first(tmp_path):
    # the bank-3 read on line 1 precedes the unknown opcode on line 2: it is the first error
    error = _refusal(tmp_path, "    MOV R0, c[0x3][0x0] ;\n    FROB R0, R1 ;\n    EXIT ;\n", launched=True)
    assert "constant bank 0x3" in error.message and error.span.line == 1
    # a kernel that ends with EXIT and has an unknown opcode: said by the assembler as before
    error = _refusal(tmp_path, "    FROB R0, R1 ;\n    EXIT ;\n")
    assert error.message == "unknown or unsupported opcode FROB" and error.span.line == 1


def test_an_unknown_opcode_before_a_label_defined_twice_is_said_first(tmp_path):
    # the label's second definition (line 4) follows the unknown opcode (line 1)
    error = _refusal(tmp_path, "    FROB R0, R1 ;\na:\n    NOP ;\na:\n    EXIT ;\n")
    assert error.message == "unknown or unsupported opcode FROB" and error.span.line == 1
    # ... and one after it stays second
    error = _refusal(tmp_path, "a:\n    NOP ;\na:\n    FROB R0, R1 ;\n    EXIT ;\n")
    assert error.message.startswith("label 'a' defined twice") and error.span.line == 3
