"""A contract extent computed from a pointer word (`4*lo[0]` where word 0 is the W pointer) is
an address's low half, not a size: it gave 0 bytes and was certified (probe s28 newmodel2
finding 7).  It is refused at its file:line:column, naming the word."""
from __future__ import annotations

import pytest

from bobc.certify.kernels import ContractError, parse_contract


def contract(tmp_path, lines):
    path = tmp_path / "k.sass"
    path.write_text("\n".join(lines) + "\n        EXIT ;\n", encoding="utf-8")
    return path


def test_an_extent_reading_a_pointer_word_is_refused_naming_it(tmp_path):
    path = contract(tmp_path, ["//@ param 0 pointer read 4*lo[3] the weights W",
                               "//@ param 1 pointer write 4*lo[0] the gradient G",
                               "//@ param 2 unused", "//@ param 3 scalar the count"])
    with pytest.raises(ContractError) as caught:
        parse_contract(path)
    assert str(caught.value) == (
        f"{path}:2:27: pointer word 1's extent '4*lo[0]' reads lo[0], but word 0 is declared a pointer: an "
        "address is no size; compute the extent from a scalar word (a count the plan patches) or give the size "
        "the code fixes")


def test_a_batch_count_reading_a_later_declared_pointer_is_refused(tmp_path):
    path = contract(tmp_path, ["//@ param 0 pointer read 16 each lo[1] by 16 the rows",
                               "//@ param 1 pointer read 4 the table"])
    with pytest.raises(ContractError) as caught:
        parse_contract(path)
    assert "pointer word 0's extent '16' (its batches) reads lo[1], but word 1 is declared a pointer" in str(caught.value)


def test_extents_over_scalar_words_stay_admitted(tmp_path):
    parsed = parse_contract(contract(tmp_path, ["//@ param 0 pointer read-write 4*lo[2] the weights W",
                                                "//@ param 1 pointer read 4*lo[2] each hi[2] by 8 G",
                                                "//@ param 2 scalar the count"]))
    assert [a.rule for a in parsed.arguments] == ["4*lo[2]", "4*lo[2]", ""]
