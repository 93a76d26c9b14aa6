"""sm_90's memory descriptor on generic and global accesses (probe s28 asm finding 1).

nvdisasm shows desc[URn] on sm_90 and hides it on sm_86; the words are the same.  A source that
writes no desc[..] gets the implicit descriptor (the last ULDC.64 URn, c[0x0][memory_descriptor];
UR4 before any) -- for LD too, whose sm_90 descriptor-less access (bit 91 clear) is spelled with
a 32-bit-looking address alone (`LD.E Rd, [Ra+off]`): `[Ra.64+off]` without desc[..] once took that
layout and wrote the offset over the descriptor field."""
from __future__ import annotations

import re

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.encoder import EncodeProblem, Encoder, forms_for
from bobc.sass.oracle import disassemble
from bobc.sass.syntax import parse_instruction, split_operands
from bobc.sass.tables.layouts import DESCRIPTOR_OPCODES


def _words(text: str, arch: str) -> list[int]:
    return [i.word for i in assemble(text + "\nEXIT\n", arch).instructions[:-1]]


def test_ld_64_without_descriptor_is_the_implicit_descriptor_on_sm90():
    """ptxas (corpus3.ptx:generic_shared -O3): sm_86 `LD.E R2, [R2.64]` and sm_90
    `LD.E R2, desc[UR6][R2.64]` are the same word, 0x0000000602027980 (after ULDC.64 UR6)."""
    prologue = "ULDC.64 UR6, c[0x0][memory_descriptor]\n"
    for arch in ("sm_86", "sm_90"):
        ldc, word = _words(prologue + "LD.E R2, [R2.64]", arch)
        assert word & (1 << 64) - 1 == 0x0000000602027980
    plain = _words("LD.E R2, [R4.64+0x1234]", "sm_90")[0]
    named = _words("LD.E R2, desc[UR4][R4.64+0x1234]", "sm_90")[0]
    assert plain == named == _words("LD.E R2, [R4.64+0x1234]", "sm_86")[0]
    assert plain >> 40 & 0xFFFFFF == 0x1234 and plain >> 32 & 0x3F == 4
    wide = _words("LD.E.128 R4, [R4.64+0x10]", "sm_90")[0]
    assert wide == _words("LD.E.128 R4, desc[UR4][R4.64+0x10]", "sm_90")[0]


def test_ld_descriptorless_form_is_unchanged():
    """ptxas (sm90_cluster.ptx): LD.E R10, [R10+0x4] = 0x000000040a0a7980, bit 91 clear."""
    word = _words("LD.E R10, [R10+0x4]", "sm_90")[0]
    assert word & (1 << 64) - 1 == 0x000000040a0a7980 and not word >> 91 & 1


def test_implicit_descriptor_is_read_by_the_scheduler():
    inst = parse_instruction("LD.E R2, [R4.64+0x10]")
    placed = Encoder("sm_90").place_operands(inst)
    assert ("UR", 4, 2) in placed.reads and ("R", 4, 2) in placed.reads


def test_descriptor_on_a_32_bit_address_is_refused():
    with pytest.raises(BobcError) as info:
        assemble("NOP\nLD.E R2, desc[UR6][R4+0x10]\nEXIT\n", "sm_90", source_name="k.sass")
    assert "LD with desc[UR6] takes a 64-bit address: write [R4.64" in info.value.message
    assert (info.value.span.line, info.value.span.column) == (2, 10)     # at the address


_ADDRESSES = ["[R4.64]", "[R4.64+0x10]", "desc[UR6][R4.64+0x10]", "[R4]", "[R4+0x10]",
              "desc[UR6][R4+0x10]", "[R4.64+UR8+0x10]", "desc[UR6][R4.64+UR8]"]


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_every_memory_form_decodes_to_the_address_written(arch, needs_nvdisasm):
    """Every memory form of the tables, its address written each way (desc[..] or not, .64 or not,
    offset, uniform offset): each one bobc accepts, nvdisasm decodes to the text written -- with
    desc[UR4] where sm_90 shows the implicit descriptor, without desc[..] on sm_86."""
    accepted, seen = [], set()
    for key, form in forms_for(arch).items():
        if "[M" not in key:
            continue
        mnemonic, _, rest = re.sub(r"^@!?U?P\w+\s+", "", form.example).partition(" ")
        operands = split_operands(rest)
        places = [i for i, o in enumerate(operands) if "[" in o and not o.startswith("c[")]
        if not places:
            continue
        where = places[-1] if mnemonic.startswith("LDGSTS") else places[0]
        for address in _ADDRESSES:
            text = f"{mnemonic} {', '.join(operands[:where] + [address] + operands[where + 1:])}"
            if text in seen:
                continue
            seen.add(text)
            try:
                accepted.append((text, Encoder(arch).encode(parse_instruction(text), 0, 0x7E0)))
            except EncodeProblem:
                pass
    assert len(accepted) > 200
    decoded = disassemble(b"".join(w.to_bytes(16, "little") for _, w in accepted), arch.replace("sm_", "SM"))
    assert not decoded.errors and len(decoded.lines) == len(accepted)
    wrong = []
    for (text, _), line in zip(accepted, decoded.lines):
        expected = text
        if arch == "sm_90" and text.split(".")[0] in DESCRIPTOR_OPCODES and "desc[" not in text:
            expected = text.replace("[R4.64", "desc[UR4][R4.64", 1)
        if arch == "sm_86":
            expected = re.sub(r"desc\[UR\d+\]", "", expected)
        if re.sub(r"\s+", "", expected) != re.sub(r"\s+", "", line.text):
            wrong.append(f"{text} -> {line.text}")
    assert not wrong, wrong
