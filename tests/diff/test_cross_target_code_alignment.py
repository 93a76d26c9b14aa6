"""A cross-target `bobc diff` aligns a kernel's code with its parameter and memory-descriptor
offsets normalised (probe s32 cascade finding 5): sm_90's inserted ACQBULK is one line and the
parameter loads that only moved with the target's bank 0 layout pair with themselves, instead of
every instruction being paired with the one after it (false control-code changes)."""
from __future__ import annotations

from bobc.nvidia import decode
from bobc.nvidia.golden import _aligned_code, _bank0_places

CONTROL = "[B------:R-:W-:-:S01]"


def _lines(texts_and_words):
    return [decode.Line(f"region[3].code[{16 * k:#06x}]", [lo, hi], f"{CONTROL} {text}", "k", "code")
            for k, (text, lo, hi) in enumerate(texts_and_words)]


SM86 = {"target": "sm_86", "parameter_base": 0x160}
SM90 = {"target": "sm_90", "parameter_base": 0x210}


def test_the_bank0_places_are_the_targets_and_none_for_one_target():
    assert _bank0_places(SM86, SM90) == ((0x160, 512, 0x118), (0x210, 1024, 0x208))
    assert _bank0_places(SM86, dict(SM86)) is None
    assert _bank0_places(SM86, {"target": "sm_89"}) is None


def test_an_inserted_prologue_and_moved_parameter_offsets_are_said_as_such():
    a = _lines([("ULDC.64 UR4, c[0x0][0x118]", 0x4600, 1), ("LDC.64 R0, c[0x0][0x168]", 0x5a00, 2),
                ("LDC.64 R16, c[0x0][0x160]", 0x5800, 3), ("IMAD R1, R2, R3, R4", 7, 7),
                ("EXIT", 8, 8)])
    b = _lines([("ACQBULK", 0x782e, 0), ("ULDC.64 UR4, c[0x0][0x208]", 0x8200, 1),
                ("LDC.64 R0, c[0x0][0x218]", 0x8600, 2), ("LDC.64 R16, c[0x0][0x210]", 0x8400, 3),
                ("IMAD R1, R2, R3, R4", 7, 7), ("EXIT", 8, 8)])
    found = _aligned_code(a, b, _bank0_places(SM86, SM90))
    assert [d.key for d in found] == ["region[3].code[b:0x0000]", "region[3].code[0x0000]",
                                      "region[3].code[0x0010]", "region[3].code[0x0020]",
                                      "region[3].code[0x0030..0x0040]"]
    assert found[0].meaning.endswith("ACQBULK") and found[0].a is None
    assert found[1].meaning == "instruction ULDC.64 UR4, c[0x0][0x118] -> ULDC.64 UR4, c[0x0][0x208]; at 0x0010 in b"
    assert found[2].meaning == "instruction LDC.64 R0, c[0x0][0x168] -> LDC.64 R0, c[0x0][0x218]; at 0x0020 in b"
    assert found[3].meaning == "instruction LDC.64 R16, c[0x0][0x160] -> LDC.64 R16, c[0x0][0x210]; at 0x0030 in b"
    assert not any("control code" in d.meaning for d in found)
    assert found[4].meaning == "2 instructions unchanged, moved by +0x10 (1 instruction)"


def test_a_parameter_read_at_another_place_is_not_paired_as_moved():
    # c[0x0][0x168] on sm_86 is param+8; c[0x0][0x210] on sm_90 is param+0: another argument
    a = _lines([("LDC.64 R0, c[0x0][0x168]", 0x5a00, 2), ("EXIT", 8, 8)])
    b = _lines([("LDC.64 R0, c[0x0][0x210]", 0x8400, 2), ("EXIT", 8, 8)])
    found = _aligned_code(a, b, _bank0_places(SM86, SM90))
    assert [d.key for d in found] == ["region[3].code[0x0000]"]
    assert found[0].meaning == "instruction LDC.64 R0, c[0x0][0x168] -> LDC.64 R0, c[0x0][0x210]"
