"""Whole ptxas kernels assembled back from nvdisasm's listing (with the decoded control codes).

For every corpus kernel: the
assembled stream equals ptxas's .text byte for byte, and the register count the
assembler reports equals what `ptxas -v` reported (REGCOUNT = highest register
+ 1 + 2 on both architectures).
"""
from __future__ import annotations

import pytest

from bobc.sass import assemble
from bobc.sass.learn import CORPUS, read_corpus, streams
from bobc.sass.syntax import Control, parse_instruction


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_whole_kernels_and_register_counts(arch, capsys):
    counts = dict(line.split("\t") for line in (CORPUS / f"registers-{arch}.tsv").read_text().splitlines() if line)
    checked = 0
    for name, rows in streams(read_corpus(arch)).items():
        text = "\n".join(f"{Control.from_word(r.word >> 64).text()} {r.text} ;" for r in rows)
        assembled = assemble(text, arch, source_name=name)
        assert assembled.code == b"".join(r.word.to_bytes(16, "little") for r in rows), name
        if any(parse_instruction(r.text).opcode == "USETMAXREG" for r in rows):
            # setmaxnreg: ptxas's REGCOUNT is the .maxnreg the pool is shared out from; the code
            # uses no more (cubin.write_cubin asks for it: test_sm90_async)
            assert assembled.registers <= int(counts[name]), name
        else:
            assert assembled.registers == int(counts[name]), name
        checked += 1
    with capsys.disabled():
        print(f"\n{arch}: {checked} of {len(counts)} ptxas kernels reassembled whole, register counts equal")
    assert checked == len(counts)
