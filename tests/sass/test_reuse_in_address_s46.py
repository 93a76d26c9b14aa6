"""`.reuse` inside an address is named as such (probe s46 leftovers8, finding 5).

`LDG.E R4, [R2.reuse.64]` was refused "expected an integer, found 'R2.reuse.64'": the address reader
took any register it could not read as an offset.  The operand reuse cache holds an instruction's
register *sources* (their .reuse flags, bits 122..124); nvdisasm never prints `.reuse` inside an
address's brackets -- the oracle is the ptxas/nvdisasm corpus (tests/sass/data), every line of which is
nvdisasm's own print: not one address there carries it.  Now the refusal says `.reuse` has no place there
and what to write instead, under the register; written as it says, the line assembles."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.sass.assembler import assemble

DATA = Path(__file__).parent / "data"


def _refusal(line: str, target: str = "sm_90") -> BobcError:
    with pytest.raises(BobcError) as caught:
        assemble(f"    {line}\n    EXIT\n", target)
    return caught.value


def test_nvdisasm_never_prints_reuse_inside_an_address_s46():
    seen = 0
    for arch in ("sm_86", "sm_90"):
        for row in (DATA / f"corpus-{arch}.tsv").read_text().splitlines():
            text = row.split("\t", 1)[0]
            seen += ".reuse" in text
            assert not re.search(r"\[[^\]]*\.reuse", text), text
    assert seen > 100          # the corpus does print .reuse, on sources


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
@pytest.mark.parametrize("line,register,fixed", [
    ("LDG.E R4, [R2.reuse.64]", "R2.reuse.64", "LDG.E R4, [R2.64]"),
    ("LDG.E R4, [R2.64.reuse]", "R2.64.reuse", "LDG.E R4, [R2.64]"),
    ("LDS R4, [R2.reuse+0x10]", "R2.reuse", "LDS R4, [R2+0x10]"),
    ("STS [R2.reuse], R4", "R2.reuse", "STS [R2], R4"),
])
def test_reuse_in_an_address_is_named_and_its_fix_assembles_s46(target, line, register, fixed):
    error = _refusal(line, target)
    assert "expected an integer" not in error.message, error.message
    assert "'.reuse' inside an address" in error.message, error.message
    written = fixed.split("[", 1)[1].split("]")[0].split("+")[0]
    assert f"write {written} there" in error.message, error.message
    # the caret under the register, at its column in the line (4 spaces of indent)
    assert error.span.column == 4 + line.index(register) + 1, (error.span, line)
    assert len(assemble(f"    {fixed}\n    EXIT\n", target).code) == 32      # the hint's line assembles


def test_a_suffix_no_address_takes_is_named_s46():
    error = _refusal("LDS R4, [R2.X3]")
    assert "expected an integer" not in error.message
    assert "register R2 with the suffix .X3 inside an address" in error.message, error.message
