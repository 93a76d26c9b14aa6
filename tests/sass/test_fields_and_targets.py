"""Branch targets at instruction boundaries, messages that name what was written, setmaxnreg's
range, special registers (probe s28 asm findings 7 and 8)."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble


def _error(text: str, arch: str = "sm_86", column: int = 1) -> BobcError:
    with pytest.raises(BobcError) as info:
        assemble(f"NOP\n{text}\nEXIT\n", arch, source_name="k.sass")
    assert (info.value.span.path, info.value.span.line, info.value.span.column) == ("k.sass", 2, column)
    return info.value


@pytest.mark.parametrize("target", ["0x8", "0x4", "0x14", "0x1c"])
def test_a_branch_into_an_instruction_is_refused(target):
    for arch in ("sm_86", "sm_90"):
        e = _error(f"BRA {target}", arch, column=5)     # at the target (probe s32 sasssyntax finding 8)
        assert e.message.startswith(f"branch target {target} is not at an instruction boundary (a multiple of 0x10)")


def test_branches_to_instruction_boundaries_still_assemble():
    for arch in ("sm_86", "sm_90"):
        assert len(assemble("NOP\nBRA 0x0\nBRA 0x20\nEXIT\n", arch).instructions) == 4


@pytest.mark.parametrize("text,message", [
    ("SHFL.IDX PT, R1, R2, 0x20, 0x1f", "SHFL's lane (or offset) 0x20 does not fit in 5 bits (0..0x1f)"),
    ("SHFL.IDX PT, R1, R2, 0x1, 0x2000", "SHFL's clamp (or segment mask) 0x2000 does not fit in 13 bits (0..0x1fff)"),
    ("SHFL.IDX PT, R1, R2, -1, 0x1f", "SHFL's lane (or offset) -1 does not fit in 5 bits"),
])
def test_field_messages_name_the_operand_not_the_slot(text, message):
    value = message.split(") ")[1].split()[0]      # the caret is under the operand (probe s29 asmrange)
    e = _error(text, column=text.index(f" {value},") + 2 if f" {value}," in text else text.rindex(value) + 1)
    assert e.message.startswith(message) and "Ilane" not in e.message and "Iclamp" not in e.message


@pytest.mark.parametrize("count", ["0x29", "0x10", "0x108", "25"])
def test_setmaxnreg_count_must_be_a_multiple_of_8_from_24_to_256(count):
    e = _error(f"[B------:R-:W-:-:S01] USETMAXREG.DEALLOC.CTAPOOL {count}", "sm_90", column=50)   # at the count
    assert f"USETMAXREG's register count {count} (" in e.message and "multiple of 8 from 24 to 256" in e.message


def test_setmaxnreg_counts_ptxas_writes_assemble():
    """ptxas (sm90_async.ptx): USETMAXREG.DEALLOC.CTAPOOL 0x28, USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xd8."""
    text = ("[B------:R-:W-:-:S01] USETMAXREG.DEALLOC.CTAPOOL 0x28\n"
            "[B------:R-:W-:-:S01] USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xd8\n"
            "[B------:R-:W-:-:S01] USETMAXREG.DEALLOC.CTAPOOL 0x18\n"
            "[B------:R-:W-:-:S01] USETMAXREG.DEALLOC.CTAPOOL 0x100\nEXIT\n")
    words = [i.word for i in assemble(text, "sm_90").instructions]
    assert [w >> 32 & 0x3FF for w in words[:4]] == [0x28, 0xD8, 0x18, 0x100]


def test_an_unknown_special_register_lists_the_known_ones():
    e = _error("S2R R1, SR_CLUSTERID.X", column=9)
    assert e.message.startswith("unknown special register SR_CLUSTERID.X (known: SR_LANEID, ")
    assert "SR_TID.X" in e.message and "SR_SWINHI" in e.message


@pytest.mark.parametrize("arch,text,word", [
    # ptxas 13 for %warpid, %smid, %globaltimer (probe s28 asm, mem_ops.ptx -O0/-O3)
    ("sm_86", "S2R R3, SR_VIRTID", 0x000fc000000003000000000000037919),
    ("sm_86", "S2R R4, SR_VIRTUALSMID", 0x000fc000000043000000000000047919),
    ("sm_86", "CS2R R8, SR_GLOBALTIMERLO", 0x000fc000000152000000000000087805),
    ("sm_86", "S2UR UR8, SR_VIRTUALSMID", 0x000e62000000430000000000000879c3),
    ("sm_90", "S2R R40, SR_VIRTID", 0x000e6400000003000000000000287919),
    ("sm_90", "S2UR UR12, SR_VIRTUALSMID", 0x000fe2000000430000000000000c79c3),
    ("sm_90", "CS2R R48, SR_GLOBALTIMERLO", 0x000fca00000152000000000000307805),
])
def test_special_registers_ptxas_emits_encode_as_ptxas(arch, text, word):
    lo, hi = word & (1 << 64) - 1, word >> 64
    assert assemble(f"{text} /* {lo:#018x} */\n /* {hi:#018x} */\n", arch).instructions[0].word == word
