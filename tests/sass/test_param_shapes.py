"""ptxas's reads of a uniform .s8 / .s16 and a .f16 kernel parameter (tools/ptx_corpus/param_shapes.ptx):
it sign-extends a .s8 / .s16 that uniform arithmetic takes with UPRMT (0x8880 / 0x9910, PTX's
ld.param.s8 / .s16 into a .b32 register) and converts a .f16 to .f32 with
`HADD2.F32 R, -RZ, c[0x0] [imm].H0_H0` (a lane selection on a constant; on sm_90 ptxas also writes a
packed-half opcode's uniform source with one, `HADD2 R2, R4.H0_H0, UR4.H0_H0`).  With the pinned
ptxas and nvdisasm:
- each of those ptxas words assembles from nvdisasm's text to the same 128 bits, and nvdisasm reads
  bobc's word back as that text;
- a lane selection on a constant or uniform register of an opcode that has none is refused.
"""
from __future__ import annotations

import re

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.learn import read_corpus
from bobc.sass.oracle import disassemble
from bobc.sass.syntax import Control
from bobc.targets import TARGETS

ARCHES = ("sm_86", "sm_90")
FORMS = re.compile(r"^(UPRMT\b|HADD2\.F32 R\d+, -RZ, c\[0x0\] \[0x[0-9a-f]+\]\.H[01]_H[01]$|"
                   r"(HADD2|HMUL2|HFMA2|HMNMX2)\b.*\bUR\d+\.H[01]_H[01])")


def _rows(arch):
    return [r for r in read_corpus(arch) if FORMS.match(r.text) and r.reference.startswith("param_shapes.ptx")]


def test_ptxas_emits_these_forms():
    """The corpus (ptxas's own output) holds both forms on both targets: the UPRMT selectors of a
    .s8 and a .s16 (0x8880, 0x9910), and the .f16 read through a constant with a lane selection."""
    for arch in ARCHES:
        texts = [r.text for r in _rows(arch)]
        assert any(t.startswith("UPRMT") and ", 0x9910," in t for t in texts), arch
        assert any(t.startswith("HADD2.F32") for t in texts) or arch == "sm_90", arch
    assert any(", 0x8880," in r.text for a in ARCHES for r in _rows(a))
    assert any(".H0_H0" in r.text and "UR" in r.text for r in _rows("sm_90"))


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    rows = _rows(arch)
    assert rows
    words = []
    for row in rows:
        control = Control.from_word(row.word >> 64)._replace_reuse()     # reuse: from the text
        code = f"{control.text()} {row.text} ;\nEXIT ;\n"
        word = int.from_bytes(assemble(code, arch).code[:16], "little")
        assert word == row.word, f"{row.reference}: {row.text}: {word:#034x} != ptxas {row.word:#034x}"
        words.append(word)
    listed = disassemble(b"".join(w.to_bytes(16, "little") for w in words), TARGETS[arch].nvdisasm_arch)
    assert not listed.errors
    assert [d.text for d in listed.lines] == [r.text for r in rows]


@pytest.mark.parametrize("arch", ARCHES)
def test_lane_selection_where_the_opcode_has_none_is_refused(arch):
    for text in ("IADD3 R0, R1, c[0x0][0x160].H0_H0, RZ", "FADD R0, R1, c[0x0][0x160].H1_H1",
                 "IADD3 R0, R1, UR4.H0_H0, RZ"):
        with pytest.raises(BobcError, match=r"lane selection \.H[01]_H[01] is not available"):
            assemble(f"{text}\nEXIT\n", arch)
    with pytest.raises(BobcError, match="takes none"):
        assemble("HADD2.F32 R0, -RZ, c[0x0][0x160].reuse\nEXIT\n", arch)
    # the selection is the constant's own: H1_H1 is another word than H0_H0, and nvdisasm says so
    words = [assemble(f"HADD2.F32 R0, -RZ, c[0x0] [0x160].{lane}\nEXIT\n", arch).code[:16] for lane in ("H0_H0", "H1_H1")]
    assert words[0] != words[1]
    listed = disassemble(b"".join(words), TARGETS[arch].nvdisasm_arch)
    assert [d.text for d in listed.lines] == [f"HADD2.F32 R0, -RZ, c[0x0] [0x160].{lane}" for lane in ("H0_H0", "H1_H1")]

