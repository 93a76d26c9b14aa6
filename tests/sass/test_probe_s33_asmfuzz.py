"""Probe s33 asmfuzz findings (bobc's SASS assembler against nvdisasm and ptxas); nvdisasm is the oracle.

1 HFMA2 / HFMA2.MMA with an immediate pair: B's `-`/`|..|` are bits 84/83 (ptxas's words), not A's lanes.
2 HADD2.F32 has no abs bit on A: `|Ra|` is refused, not dropped.
3 sm_86 ATOMG [RZ.64+off] is an illegal instruction: refused by name.
4 registers past 255 (R253, a block into R255): refused at the instruction, never a struct.error.
5 a stream with an undecodable word: the decodable instructions listed, the bad word named.
6 nvdisasm's printing of accepted forms assembles back to the same words.
7 a float literal's integer is suggested only where the field takes it.
"""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.cubin import write_cubin
from bobc.sass.oracle import disassemble
from bobc.targets import target_named

ARCHS = ["sm_86", "sm_90"]


def _decode(text: str, arch: str) -> list[str]:
    code = assemble(text + "\n    EXIT\n", arch).code
    decoded = disassemble(code, target_named(arch).nvdisasm_arch)
    assert not decoded.errors, decoded.errors
    return [line.text for line in decoded.lines][:-1]


def _refused(text: str, arch: str) -> BobcError:
    with pytest.raises(BobcError) as info:
        assemble(text + "\n    EXIT\n", arch, source_name="k.sass")
    return info.value


# -- 1 ------------------------------------------------------------------------------------------

HFMA2_PAIR = ["HFMA2 R5, R2, R3, 1, 1", "HFMA2 R5, R2, -R3, 1, 1", "HFMA2 R5, R2, |R3|, 1, 1",
              "HFMA2 R5, R2, -|R3|, 1, 1", "HFMA2.MMA R5, R2, -R3, 1, 1", "HFMA2.MMA R5, -|R2|, |R3|, 1, 1",
              "HFMA2 R5, RZ, -RZ, 0, 0", "HFMA2 R5, -R2, R3, -2, 0.5"]


@pytest.mark.parametrize("arch", ARCHS)
def test_hfma2_immediate_pair_negates_and_takes_abs_of_b(needs_nvdisasm, arch):
    assert _decode("\n".join(HFMA2_PAIR), arch) == HFMA2_PAIR


@pytest.mark.parametrize("arch", ARCHS)
def test_hfma2_immediate_pair_words_are_ptxas_words(arch):
    # ptxas 13 (neg.f16x2 / abs.f16x2 into fma.rn.f16x2 with a constant addend, -O3): the operand bits
    # of its words (the control code aside)
    ptxas = {"HFMA2 R4, R4, -R5, 1, 1": 0x00100005_3c003c0004047431,
             "HFMA2 R4, R4, |R5|, 1, 2": 0x00080005_3c00400004047431,
             "HFMA2 R6, R4, -|R5|, 1, 4": 0x00180005_3c00440004067431}
    for text, word in ptxas.items():
        got = assemble(f"    [B------:R-:W-:Y:S00] {text}\n    EXIT\n", arch).instructions[0].word
        assert got & ((1 << 105) - 1) == word, (text, hex(got))


# -- 2 ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("text", ["HADD2.F32 R8, |R2|, R3", "HADD2.F32 R8, -|R2|, R3"])
def test_hadd2_f32_abs_on_a_is_refused(arch, text):
    error = _refused(text, arch)
    assert "'|..|'" in error.message and error.span.column == text.index(", ") + 3, error


@pytest.mark.parametrize("arch", ARCHS)
def test_hadd2_modifiers_that_have_bits_still_encode(needs_nvdisasm, arch):
    texts = ["HADD2.F32 R8, -R2, |R3|", "HADD2.F32 R8, R2, -|R3|", "HADD2 R8, -|R2|, R3"]
    assert _decode("\n".join(texts), arch) == texts


# -- 3 ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["ATOMG.E.EXCH.STRONG.GPU PT, R3, [RZ.64+0x100], R2",
                                  "ATOMG.E.AND.STRONG.GPU PT, R17, [RZ.64], R17"])
def test_sm86_atomg_with_rz_base_is_refused(text):
    error = _refused(text, "sm_86")
    assert "cannot have base RZ on sm_86" in error.message and "CS2R" in error.hint
    assert error.span.column == 1 + text.index("[")


def test_sm86_atomg_rz_base_is_what_nvdisasm_rejects(needs_nvdisasm):
    # the refusal's reason: the word bobc used to write (base field 0xff) is no instruction on sm_86
    word = assemble("    ATOMG.E.EXCH.STRONG.GPU PT, R3, [R4.64+0x100], R2\n    EXIT\n", "sm_86").code
    patched = bytearray(word)
    patched[3] = 0xFF                           # bits 24..31: the base register -> RZ
    assert disassemble(bytes(patched[:16]), "SM86").errors
    assert not disassemble(word, "SM86").errors


@pytest.mark.parametrize("text", ["ATOMG.E.CAS.STRONG.GPU PT, R0, [RZ+0x4], R2, R3",
                                  "RED.E.ADD.STRONG.GPU [RZ.64+0x100], R2", "LDG.E R2, [RZ.64+0x100]"])
def test_sm86_other_rz_bases_still_assemble(needs_nvdisasm, text):
    assert len(_decode(text, "sm_86")) == 1


# -- 4 ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("text,register", [("MOV R253, R1", "R253"), ("MOV R254, R1", "R254")])
def test_registers_past_255_are_refused_at_the_instruction(arch, text, register):
    error = _refused(f"    NOP\n    {text}", arch)
    assert f"highest {register}" in error.message and "255" in error.message
    assert (error.span.path, error.span.line, error.span.column) == ("k.sass", 2, 5)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("text", ["LDS.128 R252, [R2]", "LDS.64 R254, [R2]"])
def test_a_register_block_into_rz_is_refused(arch, text):
    error = _refused(text, arch)
    assert "runs into R255, which is RZ" in error.message


@pytest.mark.parametrize("arch", ARCHS)
def test_r252_is_the_highest_and_its_cubin_says_255(needs_nvdisasm, arch):
    assembled = assemble("    MOV R252, R1\n    EXIT\n", arch)
    assert assembled.registers == 255
    write_cubin(assembled, "k", target_named(arch), 0, 32)
    with pytest.raises(BobcError, match="256 registers"):
        write_cubin(assembled, "k", target_named(arch), 0, 32, registers=256)


# -- 5 ------------------------------------------------------------------------------------------

def test_disassembly_lists_the_decodable_instructions_around_a_bad_word(needs_nvdisasm):
    good = assemble("    S2R R0, SR_TID.X\n    ISETP.GE.AND P0, PT, R0, 0x10, PT\n    @P0 BRA done\n"
                    "    IADD3 R2, R0, 0x1, RZ\n    NOP\n    IADD3 R2, R0, 0x2, RZ\ndone:\n    EXIT\n", "sm_86").code
    bad = bytearray(assemble("    ATOMG.E.EXCH.STRONG.GPU PT, R3, [R4.64+0x100], R2\n    EXIT\n", "sm_86").code[:16])
    bad[3] = 0xFF
    code = bytearray(good)
    code[0x30:0x40] = bad
    code[0x50:0x60] = bad
    decoded = disassemble(bytes(code), "SM86")
    assert [(line.offset, line.text) for line in decoded.lines] == [
        (0x00, "S2R R0, SR_TID.X"), (0x10, "ISETP.GE.AND P0, PT, R0, 0x10, PT"), (0x20, "@P0 BRA 0x60"),
        (0x40, "NOP"), (0x60, "EXIT")]
    lo, hi = int.from_bytes(bad[:8], "little"), int.from_bytes(bad[8:], "little")
    assert [e.split(" (")[0] for e in decoded.errors] == [f"0x0030: undecodable word {lo:#018x} {hi:#018x}",
                                                           f"0x0050: undecodable word {lo:#018x} {hi:#018x}"]


# -- 6 ------------------------------------------------------------------------------------------

ROUND_TRIP = ["VOTE.ANY RZ, P1, P0", "VOTEU.ANY URZ, UP0, P5", "IMAD.U32 R24, RZ, -0x3a, R235",
              "IMAD R83, R115, 0x1, RZ", "STS.U16 [RZ-0x10], R4", "LDS.U8 R6, [RZ+0x10]",
              "LDL.LU.64 R58, [RZ+0x100]", "STL [RZ+-0x800000], R3"]


@pytest.mark.parametrize("arch", ARCHS)
def test_nvdisasm_text_of_accepted_forms_assembles_back(needs_nvdisasm, arch):
    code = assemble("\n".join(ROUND_TRIP) + "\n    EXIT\n", arch).code
    decoded = disassemble(code, target_named(arch).nvdisasm_arch)
    assert not decoded.errors
    printed = "\n".join(line.text for line in decoded.lines) + "\n"
    assert "VOTE.ANY P1, P0" in printed and "[0xfffff0]" in printed and "IMAD.MOV" in printed
    assert assemble(printed, arch).code == code


@pytest.mark.parametrize("arch", ARCHS)
def test_ptxas_vote_all_two_operand_text_reads_as_the_rz_form(arch, needs_nvdisasm):
    # ptxas's VOTE.ALL P1, !P1 is VOTE.ALL RZ, P1, !P1's word (learned since session 38 from
    # tools/ptx_corpus/memory_forms.ptx, vote.sync.all), never "takes 3 operands, not 2"; nvdisasm prints it back
    code = assemble("VOTE.ALL P1, !P1\nEXIT\n", arch).code
    assert code == assemble("VOTE.ALL RZ, P1, !P1\nEXIT\n", arch).code
    printed = disassemble(code[:16], target_named(arch).nvdisasm_arch)
    assert not printed.errors and [line.text for line in printed.lines] == ["VOTE.ALL P1, !P1"]


def test_rz_scaled_is_refused_not_printed_as_another_word():
    error = _refused("LDS.U8 R6, [RZ.X4]", "sm_86")
    assert "scales the zero register" in error.message


# -- 7 ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,literal,fits", [("IADD3 R1, R2, 1e10, RZ", "1e10", False),
                                               ("LEA R4, P3, R2, R6, 3.4e38", "3.4e38", False),
                                               ("LEA R4, P3, R2, R6, 32.0", "32.0", False),
                                               ("LEA R4, P3, R2, R6, 31.0", "31.0", True),
                                               ("IADD3 R1, R2, -2e9, RZ", "-2e9", True)])
def test_float_literal_hint_suggests_only_a_value_that_fits(text, literal, fits):
    error = _refused(text, "sm_90")
    if fits:
        suggested = error.message.rsplit("write ", 1)[1]
        assert len(_decode(text.replace(literal, suggested), "sm_90")) == 1
    else:
        assert "write" not in error.message and "beyond the field" in error.message
