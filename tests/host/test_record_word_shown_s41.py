"""A refused record word printed as its check's format -- bobc.reference.host.shown_word, the one
Python copy (bobc run --reference, bobc sim), at the edges the end-to-end test
(test_record_word_format_s41.py) does not reach: signed words of 1, 2 and 8 bytes, +inf, -0,
the smallest subnormals and largest finite values, a binary64 NaN's 16 hex digits (probe s41
mutants6: mutants of shown_word that passed).  The C host's shown_word is held to the same table in
runtime_c/tests/test_host_runtime.c (test_record_word_formats).

Expected strings worked by hand: two's complement of the width's bits (0xff in one byte is -1,
0x8000 in two -32768, 2^63 in eight -9223372036854775808); C99 printf "%.9g" / "%.17g" of the
IEEE 754 value: 2^-149 = 1.40129846...e-45, FLT_MAX = 3.40282346638...e+38 rounds to 3.40282347e+38,
2^-1074 = 4.9406564584124654e-324; -0 prints "-0"; infinities inf / -inf; a NaN nan with its bits
as many hex digits as the word holds."""
from __future__ import annotations

import pytest

from bobc.reference.host import shown_word

CASES = [
    (0xff, 1, "signed", "-1"),
    (0x7f, 1, "signed", "127"),
    (0x8000, 2, "signed", "-32768"),
    (0x7fffffff, 4, "signed", "2147483647"),
    (0x80000000, 4, "signed", "-2147483648"),
    (0xffffffffffffffff, 8, "signed", "-1"),
    (0x8000000000000000, 8, "signed", "-9223372036854775808"),
    (0xffffffffffffffff, 8, "unsigned", "18446744073709551615"),
    (0x7f800000, 4, "binary32", "inf"),
    (0xff800000, 4, "binary32", "-inf"),
    (0x80000000, 4, "binary32", "-0"),
    (0x00000001, 4, "binary32", "1.40129846e-45"),
    (0x7f7fffff, 4, "binary32", "3.40282347e+38"),
    (0xffc00000, 4, "binary32", "nan (0xffc00000)"),
    (0x7ff0000000000000, 8, "binary64", "inf"),
    (0x0000000000000001, 8, "binary64", "4.9406564584124654e-324"),
    (0x7ff8000000000001, 8, "binary64", "nan (0x7ff8000000000001)"),
    (0x3ff0000000000000, 8, "binary64", "1"),
]


@pytest.mark.parametrize("bits, width, word_format, shown", CASES)
def test_a_word_is_shown_as_its_format(bits, width, word_format, shown):
    assert shown_word(bits, width, word_format) == shown
