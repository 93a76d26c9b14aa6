"""sm_90's asynchronous forms (tools/ptx_corpus/sm90_async.ptx): TMA copies (UTMALDG/UTMASTG),
mbarriers (SYNCS.*), warpgroup MMA (HGMMA, WARPGROUP.*).

The corpus tests re-encode every ptxas instruction of that file; these check what the corpus
alone does not: the file is compiled for sm_90 only, the operand fields found by flipping
bits (descriptor flags, the inverted scale-d predicate, uniform address offsets) decode
through nvdisasm for values ptxas never chose, and the scheduler's limits are refused by name.
"""
from __future__ import annotations

import re

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.learn import PTX_CORPUS, only_sm90, read_corpus, streams
from bobc.sass.oracle import disassemble
from bobc.targets import TARGETS

S01 = "[B------:R-:W-:-:S01]"


def test_the_sm90_file_is_compiled_for_sm90_alone():
    ptx = PTX_CORPUS / "sm90_async.ptx"
    assert only_sm90(ptx.name)
    entries = set(re.findall(r"\.visible \.entry (\w+)\(", ptx.read_text()))
    sm90 = {name.split(":")[1] for name in streams(read_corpus("sm_90")) if name.startswith(ptx.name)}
    assert sm90 == entries
    assert not any(r.reference.startswith(ptx.name) for r in read_corpus("sm_86"))


def _decoded(texts, arch="sm_90"):
    source = "".join(f"{S01} {t}\n" for t in texts) + "EXIT\n"
    code = assemble(source, arch).code
    done = disassemble(code, TARGETS[arch].nvdisasm_arch)
    assert done.errors == []
    return [d.text for d in done.lines[:len(texts)]]


def test_descriptor_flags_scale_predicate_and_shapes_decode_as_written(needs_nvdisasm):
    texts = []
    for flags in ("", ".negA", ".negB", ".tnspA", ".tnspB", ".negA.tnspB", ".tnspA.tnspB"):
        texts.append(f"HGMMA.64x128x16.F32 R24, gdesc[UR8]{flags}, R24, !UP0, gsb0")
    for p in ("UP1", "!UP2", "UP5", "!UP6", "!UPT"):
        texts.append(f"HGMMA.64x64x16.F32 R32, gdesc[UR12], R32, {p}, gsb0")
    texts += ["HGMMA.64x256x16.F32 R24, gdesc[UR4].tnspB, RZ, !UPT, gsb0",
              "HGMMA.64x64x16.F32 R24, -R88, gdesc[UR6].tnspB, R24, UP3, gsb0",
              "WARPGROUP.DEPBAR.LE gsb0, 0x5"]
    assert _decoded(texts) == texts


def test_uniform_addresses_take_offsets_only_where_the_encoding_has_them(needs_nvdisasm):
    texts = ["SYNCS.EXCH.64 URZ, [UR6+0x10], UR4", "SYNCS.ARRIVE.TRANS64 RZ, [R2+URZ+0x8], R3",
             "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR9+0x20], R5", "UTMALDG.2D [UR16], [UR20]",
             "UTMASTG.2D [UR12], [UR32]", "@P3 ELECT P4, URZ, PT", "USETMAXREG.DEALLOC.CTAPOOL 0x18",
             "USETMAXREG.TRY_ALLOC.CTAPOOL UP2, 0xf0"]
    assert _decoded(texts) == texts
    with pytest.raises(BobcError, match="takes no address offset"):
        assemble(f"{S01} UTMALDG.2D [UR8+0x10], [UR4]\n", "sm_90")
    with pytest.raises(BobcError, match="unknown matrix descriptor flag"):
        assemble(f"{S01} HGMMA.64x64x16.F32 R24, gdesc[UR4].negC, R24, gsb0\n", "sm_90")


@pytest.mark.parametrize("text", ["HGMMA.64x64x16.F32 R24, gdesc[UR4], R24, gsb0", "WARPGROUP.ARRIVE",
                                  "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR9], R3", "UTMALDG.2D [UR8], [UR4]"])
def test_async_forms_without_a_control_code_are_refused_by_name(text):
    with pytest.raises(BobcError, match="explicit control code") as info:
        assemble(f"NOP\n{text}\nEXIT\n", "sm_90", source_name="k.sass")
    assert info.value.span.line == 2
    assemble(f"NOP\n{S01} {text}\nEXIT\n", "sm_90")


def test_sm90_forms_are_not_sm86_forms():
    with pytest.raises(BobcError, match="no sm_86 encoding|not supported"):
        assemble(f"{S01} UIADD3.64 UR24, UR16, 0x2, URZ\nEXIT\n", "sm_86")
    with pytest.raises(BobcError, match="no sm_86 encoding"):
        assemble(f"{S01} HGMMA.64x64x16.F32 R24, gdesc[UR4], R24, gsb0\nEXIT\n", "sm_86")


def test_a_cubin_of_code_that_resizes_its_registers_needs_the_count_at_entry():
    from bobc.sass.cubin import write_cubin
    from bobc.targets import SM90

    code = assemble(f"{S01} USETMAXREG.DEALLOC.CTAPOOL 0x28\nEXIT\n", "sm_90")
    with pytest.raises(BobcError, match="USETMAXREG"):
        write_cubin(code, "k", SM90, 8, 128)
    assert write_cubin(code, "k", SM90, 8, 128, registers=128)
