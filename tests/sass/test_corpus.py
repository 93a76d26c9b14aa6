"""(b) Reference corpus: every ptxas instruction re-encodes bit for bit, control code included.

tests/sass/data/corpus-<arch>.tsv holds nvdisasm's text and ptxas's words for the
PTX corpus (tools/ptx_corpus/build_corpus.py).  Each instruction whose form the
assembler supports is encoded again from the text plus the control code decoded
from ptxas's word, at its own address (branch targets) and in stream order (the
sm_86 hidden descriptor follows the kernel's ULDC.64 of the descriptor slot).
"""
from __future__ import annotations

import pytest

from bobc.sass.encoder import EncodeProblem, Encoder
from bobc.sass.learn import read_corpus, streams
from bobc.sass.syntax import Control, parse_instruction


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_corpus_reencodes_identically(arch, capsys):
    rows = read_corpus(arch)
    matched = in_subset = 0
    mismatches = []
    for stream in streams(rows).values():
        encoder = Encoder(arch)
        for row in stream:
            inst = parse_instruction(row.text)
            control = Control.from_word(row.word >> 64).bits() & 0x1FFFF
            try:
                word = encoder.encode(inst, row.offset, control)
            except EncodeProblem:
                continue
            in_subset += 1
            if word == row.word:
                matched += 1
            else:
                mismatches.append(f"{row.reference}: {row.text}: {word:#034x} != {row.word:#034x}")
    with capsys.disabled():
        print(f"\n{arch} corpus: {matched} matched / {in_subset} in subset / {len(rows)} total")
    assert not mismatches, "\n".join(mismatches[:20])
    assert in_subset == len(rows), "every instruction ptxas emitted is encoded"
