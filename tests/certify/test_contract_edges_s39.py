"""Kernel-contract rules at their exact edges (probe s39 mutants2: each of these limits, moved by
one, went through the related certifier tests).

Expected values from docs/kernel-contracts.md (lo[i] is the low 32 bits of word i; an extent that
comes out negative is unknown, not a size) and docs/tensor-maps.md (the CUDA driver's
cuTensorMapEncodeTiled rules: 1 to 5 dimensions, a box item 1 to 256, a box row a multiple of 16
bytes, a box of at most 227 KiB), by hand."""
from __future__ import annotations

import pytest

from bobc.certify.kernels import LAST_WORD, PARAMETER_BYTES, ContractError, TensorMap, parse_contract

KERNEL = ("// a kernel\n"
          "//@ block 64\n"
          "//@ param 0 pointer write 4*lo[1] the output\n"
          "//@ param 1 scalar N\n"
          ".kernel k\n"
          "    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
          "    LDC R4, c[0x0][RZ+param+0x8]\n"
          "    EXIT\n")


def contract(tmp_path, old: str = "", new: str = ""):
    source = tmp_path / "k.sass"
    source.write_text(KERNEL.replace(old, new, 1) if old else KERNEL)
    return parse_contract(source)


def refusal(tmp_path, old: str, new: str) -> str:
    with pytest.raises(ContractError) as caught:
        contract(tmp_path, old, new)
    return str(caught.value)


def test_lo_is_the_low_32_bits_of_the_word(tmp_path):
    pointer = contract(tmp_path).argument(0)
    assert pointer.extent_for({1: 0x1_8000_0003}, 0, 0) == (4 * 0x8000_0003, "")


def test_an_extent_of_minus_one_is_unknown_and_zero_is_zero(tmp_path):
    pointer = contract(tmp_path, "4*lo[1]", "lo[1]-8").argument(0)
    assert pointer.extent_for({1: 8}, 0, 0) == (0, "")
    extent, why = pointer.extent_for({1: 7}, 0, 0)
    assert extent is None and "negative" in why


def test_a_tensor_map_with_an_empty_dimension_has_no_extent():
    mapped = TensorMap(word=3, pointer=0, element="binary32", dims=("lo[1]", "4"), strides=("1024",),
                       box=(4, 4), swizzle="none")
    # the farthest element: (256 - 1) * 4 + (4 - 1) * 1024 bytes from the pointer, and its 4 bytes
    assert mapped.extent({1: 256}) == (255 * 4 + 3 * 1024 + 4, "")
    extent, why = mapped.extent({1: 0})
    assert extent is None and "empty" in why


def tensormap(dims: str, strides: str, box: str) -> str:
    return f"//@ param 1 scalar N\n//@ tensormap 2 of 0 binary32 dims ({dims}) strides ({strides}) " \
           f"box ({box}) swizzle none the map\n"


@pytest.mark.parametrize("dims, strides, box, says", [
    ("256, 256", "1024", "2, 4", "a box row (2 binary32 elements) is 8 bytes, not a multiple of 16"),
    ("256, 512", "1024", "4, 257", "box item 257 is outside 1 to 256"),
    # 4 * 3 * 29 * 167 binary32 elements = 232464 bytes, 16 more than an sm_90 block's 227 KiB (232448)
    ("4, 3, 29, 167", "16, 48, 1392", "4, 3, 29, 167", "the box is 232464 bytes, more than the 232448 bytes"),
    ("1, 1, 1, 1, 1, 1", "16, 16, 16, 16, 16", "4, 1, 1, 1, 1, 1", "a tensor map has 1 to 5 dimensions, not 6"),
])
def test_a_tensor_map_past_the_drivers_limits_is_refused_at_its_line(tmp_path, dims, strides, box, says):
    assert says in refusal(tmp_path, "//@ param 1 scalar N\n", tensormap(dims, strides, box))


def test_the_largest_box_of_the_drivers_limits_parses(tmp_path):
    # 4 * 2 * 227 * 32 binary32 elements of 4 bytes: a 16-byte row, 232448 bytes (227 KiB) in all
    (mapped,) = contract(tmp_path, "//@ param 1 scalar N\n", tensormap("4, 2, 227, 32", "16, 32, 7264",
                                                                       "4, 2, 227, 32")).tensor_maps
    assert mapped.box == (4, 2, 227, 32)


def test_a_table_reaching_one_word_past_the_parameters_is_refused(tmp_path):
    assert PARAMETER_BYTES // 8 - 1 == LAST_WORD
    line = f"//@ table 2 rows 1 of {LAST_WORD} the rows\n"          # words 2 .. LAST_WORD + 1
    says = refusal(tmp_path, "//@ param 1 scalar N\n", "//@ param 1 scalar N\n" + line)
    assert f"reaches word {LAST_WORD + 1}, past every launch's parameters" in says
