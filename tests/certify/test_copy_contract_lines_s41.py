"""`//@ copy FROM to TO BYTES what` (docs/kernel-contracts.md, "Copies"; probe s41 copycontract).

Each refusal is at the column of the word that is wrong, by the doc's rules: FROM a pointer the
kernel reads, TO one it only writes (`write`: a copy replaces what was there), neither batched nor
conditional, the size an expression over scalar words, one copy into a word.  The kernel is
coppelius-copy (words 0 src `read`, 1 dst `write`, 2 N scalar) with the copy line put before its
`.kernel` line, line 10 of the file.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.certify.kernels import ContractError, parse_contract

REPO = Path(__file__).resolve().parents[2]
COPY = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86" / "coppelius-copy.sass"


def _parse(tmp_path, line: str):
    text = "".join(line for line in COPY.read_text().splitlines(keepends=True) if not line.startswith("//@ copy"))
    source = tmp_path / "k.sass"
    source.write_text(text.replace(".kernel coppelius_copy", line + "\n.kernel coppelius_copy"))
    assert source.read_text().splitlines()[10 - 1] == line.splitlines()[0]
    return parse_contract(source, "k")


def test_a_copy_line_declares_its_words_and_size(tmp_path):
    copy, = _parse(tmp_path, "//@ copy 0 to 1 4*lo[2] the words").copies
    assert (copy.source, copy.destination, copy.size, copy.what, copy.line) == (0, 1, "4*lo[2]", "the words", 10)
    assert copy.bytes_for({2: (7 << 32) | 12}) == (48, "")          # 4 * lo[2], lo[2] = 12


@pytest.mark.parametrize("line, column, says", [
    ("//@ copy 1 to 0 4*lo[2]", 10, "the copy's source is word 1, declared 'pointer write' at line 8"),
    ("//@ copy 0 to 2 4*lo[2]", 15, "the copy's destination is word 2, which the contract declares scalar"),
    ("//@ copy 0 to 7 4", 15, "the copy's destination is word 7, which the contract does not declare"),
    ("//@ copy 0 to 0 4", 15, "the copy's source and destination are both word 0"),
    ("//@ copy 0 to 1 lo[1]", 17, "reads lo[1], but word 1 is declared a pointer: an address is no size"),
    ("//@ copy 0 to 1 4*lo[-1]", 22, "lo[-1] names word -1"),
    ("//@ copy 0 to 1 4*lo[2] +4", 25, "the copy's size is written with a space ('4*lo[2] +4')"),
    ("//@ copy 0 into 1 4", 12, "a copy is declared as '//@ copy FROM to TO BYTES what'"),
    ("//@ copy 0 to 99 4", 15, "parameter word 99 is past every launch's parameters"),
    ("//@ copy 0 to 1 4\n//@ copy 0 to 1 8", 15, "word 1 is a copy's destination at line 10 already"),
])
def test_a_copy_line_that_says_something_else_is_refused_at_its_column(tmp_path, line, column, says):
    with pytest.raises(ContractError) as refused:
        _parse(tmp_path, line)
    message = str(refused.value)
    number = 11 if "already" in says else 10
    assert f"k.sass:{number}:{column}: " in message
    assert says in message


def test_a_copy_destination_declared_read_write_is_refused(tmp_path):
    # a read-write destination would say the kernel reads what was there first
    text = COPY.read_text().replace("//@ param 1 pointer write 4*lo[2]", "//@ param 1 pointer read-write 4*lo[2]")
    source = tmp_path / "k.sass"
    source.write_text(text)
    with pytest.raises(ContractError, match=r"k.sass:10:15: the copy's destination is word 1, declared 'pointer "
                                            r"read-write' at line 8: a copy's destination is declared write"):
        parse_contract(source, "k")


def test_a_misspelt_copy_line_is_refused_not_dropped(tmp_path):
    with pytest.raises(ContractError, match=r"unknown contract line '//@ cpy' \(did you mean copy\?\)"):
        _parse(tmp_path, "//@ cpy 0 to 1 4")


# -- mutants6: the rules the doc states that no test above held (each a mutant of _check_copies /
# _contract_of that passed every test).  Columns counted by hand on line 10, '//@ copy F to T BYTES':
# FROM at column 10, TO at 15, BYTES at 17.

def _edited(tmp_path, *edits):
    text = COPY.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    source = tmp_path / "k.sass"
    source.write_text(text)
    return parse_contract(source, "k")


def test_a_read_write_source_is_accepted(tmp_path):
    # docs/kernel-contracts.md: "FROM must be a pointer declared read or read-write"
    copy, = _edited(tmp_path, ("//@ param 0 pointer read 4*lo[2]", "//@ param 0 pointer read-write 4*lo[2]")).copies
    assert (copy.source, copy.destination) == (0, 1)


@pytest.mark.parametrize("word, line, declared, column, part", [
    (0, 7, "//@ param 0 pointer read 4*lo[2] each lo[2] by 4", 10, "each lo[2] by 4"),
    (0, 7, "//@ param 0 pointer read 4*lo[2] unless lo[2]&1", 10, "unless lo[2]&1"),
    (1, 8, "//@ param 1 pointer write 4*lo[2] each lo[2] by 4", 15, "each lo[2] by 4"),
    (1, 8, "//@ param 1 pointer write 4*lo[2] when lo[2]&1", 15, "when lo[2]&1"),
])
def test_a_batched_or_conditional_copy_word_is_refused(tmp_path, word, line, declared, column, part):
    # the doc: "neither of them batched (each) nor conditional (when/unless): a copy is one range on
    # every launch"
    plain = declared.split(" each ")[0].split(" when ")[0].split(" unless ")[0]
    with pytest.raises(ContractError) as refused:
        _edited(tmp_path, (plain, declared))
    message = str(refused.value)
    assert f"k.sass:10:{column}: " in message
    assert f"is word {word}, declared with '{part}' at line {line}" in message


def test_a_copy_size_reading_a_tensor_map_word_is_refused(tmp_path):
    # the doc (expressions): a word declared a tensor map is an address, not a size; lo[3] at 17 + 2
    with pytest.raises(ContractError) as refused:
        _edited(tmp_path, ("//@ copy 0 to 1 4*lo[2]", "//@ tensormap 3 of 0 binary32 dims (256, 4) strides (1024) box "
                                                      "(32, 8) swizzle 128b G\n//@ copy 0 to 1 4*lo[3]"))
    assert "k.sass:11:19: the copy's size 4*lo[3] reads lo[3], but word 3 is declared a tensormap" in str(refused.value)


@pytest.mark.parametrize("line, column", [("//@ copy 0 to 62 4", 15), ("//@ copy 62 to 1 4", 10)])
def test_word_62_is_past_every_launch_as_source_or_destination(tmp_path, line, column):
    # the doc: "a word past 61" -- sm_90's 496 parameter bytes (1024 - 0x210) are words 0..61
    with pytest.raises(ContractError) as refused:
        _edited(tmp_path, ("//@ copy 0 to 1 4*lo[2]", line))
    assert f"k.sass:10:{column}: parameter word 62 is past every launch's parameters" in str(refused.value)


def test_word_61_is_within_the_parameters(tmp_path):
    # word 61 (bytes 488..495 of 496) is a launch's last word: refused only for not being declared
    with pytest.raises(ContractError) as refused:
        _edited(tmp_path, ("//@ copy 0 to 1 4*lo[2]", "//@ copy 61 to 1 4"))
    assert "k.sass:10:10: the copy's source is word 61, which the contract does not declare" in str(refused.value)


def test_a_copy_lines_description_is_kept_without_its_trailing_space(tmp_path):
    # the description is the line's words after BYTES, as a param line's `what` (trailing blanks are no words)
    copy, = _parse(tmp_path, "//@ copy 0 to 1 4*lo[2]   the words   ").copies
    assert copy.what == "the words"
