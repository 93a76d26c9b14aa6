"""The u32 halves of a bank 0 word at their edge bits, and which side a one-sided fact is on
(session 43 mutants9 of bobc.nvidia.golden: the high half read from bit 31, the low half as bits
0..30, and "only in a"/"only in b" swapped each survived test_bank0_halves and the alignment tests).

Hand arithmetic: a little-endian 8-byte word's low u32 is bits 0..31 and its high u32 bits 32..63,
so a change in bit 31 alone is in the low half and one in bit 32 alone in the high half.  A fact
absent from a (its value None) is "only in b" (a launch kind shows its value in hex)."""
from __future__ import annotations

from bobc.nvidia.golden import Difference, _half_of_argument

TWO = "argument 2: M, N (u32) (scalar)"


def test_bit_31_is_the_low_half_and_bit_32_the_high():
    assert _half_of_argument(TWO, 0, 1 << 31) == f"{TWO}: its low u32"
    assert _half_of_argument(TWO, 0, 1 << 32) == f"{TWO}: its high u32"
    assert _half_of_argument(TWO, 0, 3 << 31) == f"{TWO}: both u32 halves"


def test_a_fact_on_one_side_names_that_side():
    assert Difference("launch[+3]", "launch", "", None, 5, "").text() == "launch[+3]: only in b: 0x5"
    assert Difference("launch[3]", "launch", "", 5, None, "").text() == "launch[3]: only in a: 0x5"


def test_bit_104_of_an_instruction_is_its_encoding_not_its_control_code():
    """Volta-and-later SASS words: the control code is the high word's bits 41..63 (instruction
    bits 105..127: stall, yield, barriers, wait mask, reuse -- bobc.sass.syntax.Control), so a
    change of the high word's bit 40 (instruction bit 104) with the same text is an encoding change
    the disassembly does not show; golden.py mutant G37 (a 40-bit mask) survived, saying such a change
    beside a control change as the control change alone."""
    from bobc.nvidia import decode
    from bobc.nvidia.golden import _code_meaning

    hi = 0x000FE20000000F00
    a = decode.Line("region[0].code[0x0000]", [0x7, hi], "[B------:R-:W-:-:S01] NOP ;", "k", "code")
    b = decode.Line("region[0].code[0x0000]", [0x7, hi | 1 << 40], "[B------:R-:W-:-:S01] NOP ;", "k", "code")
    assert _code_meaning(a, b) == "instruction NOP ; (its text unchanged)"
    # with its control code changed too (bit 41: the stall's low bit), both are said
    c = decode.Line("region[0].code[0x0000]", [0x7, (hi ^ 1 << 41) | 1 << 40], "[B------:R-:W-:-:S00] NOP ;", "k",
                    "code")
    said = _code_meaning(a, c)
    assert said.startswith("control code ") and said.endswith("; instruction NOP ; (its text unchanged)"), said
