"""A contract naming a parameter word no launch can set is refused at its line: the last word is
61, not 127 (probe s40 docs9).

A launch's parameters lie in its constant bank 0 image from the target's parameter base: sm_90's
image is 1024 bytes and its parameters start at c[0x0][0x210] (where ptxas's sm_90 code reads
its first parameter), so (1024 - 0x210) / 8 = 62 words, 0..61; sm_86's 512-byte image from
0x160 has 20.  The certifier counted the whole 1024-byte image as parameters (words 0..127) and
docs/kernel-contracts.md said "a bank 0 holds at most 1024 bytes of them", so `//@ param 100
scalar N` or an extent reading `lo[70]` passed the contract and was refused only launch by
launch as a word the launch does not set."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.certify.kernels import LAST_WORD, ContractError, parse_contract

REPO = Path(__file__).resolve().parents[2]
KERNEL = ("// a kernel\n"
          "//@ block 64\n"
          "//@ param 0 pointer write 4*lo[1] the output\n"
          "//@ param 1 scalar N\n"
          "{extra}"
          ".kernel k\n"
          "    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
          "    LDC R4, c[0x0][RZ+param+0x8]\n"
          "    EXIT\n")
SM90_BANK0_BYTES, SM90_PARAMETER_BASE = 1024, 0x210     # independent of bobc.targets: see above


def test_the_last_word_is_sm_90s_room_past_its_parameter_base():
    assert LAST_WORD == (SM90_BANK0_BYTES - SM90_PARAMETER_BASE) // 8 - 1 == 61


@pytest.mark.parametrize("word, refused", [(61, False), (62, True), (127, True)])
def test_an_unused_word_past_the_last_is_refused_at_its_line(tmp_path, word, refused):
    source = tmp_path / "k.sass"
    source.write_text(KERNEL.format(extra=f"//@ param {word} unused\n"))
    if not refused:
        parse_contract(source)          # the last word a launch can set: accepted
        return
    with pytest.raises(ContractError) as caught:
        parse_contract(source)
    assert (f":5:11: parameter word {word} is past every launch's parameters (at most 496 bytes: words 0 "
            f"to 61)") in str(caught.value), str(caught.value)


def test_kernel_contracts_md_gives_the_last_word():
    doc = (REPO / "docs" / "kernel-contracts.md").read_text(encoding="utf-8")
    assert f"(past word {LAST_WORD}: sm_90's 1024-byte bank 0 holds 496 bytes of them" in doc
