"""A decimal number as the C hosts read one: ASCII digits and nothing else (no sign, space,
underscore, exponent, 0x or unit), at most a bound.

The one reader of such a number on the Python side (a setting's value, bobc.reference.settings;
a publication journal's counts, bobc.reference.safe_io), as runtime_c reads it digit by digit
(host_settings.c rt_setting_decimal, host_io.c journal_number): leading zeros are taken, and a
number of any length is judged by its value without converting more digits than the bound has,
so neither Python's digit limit for int() nor a million digits is a failure.
"""
from __future__ import annotations


def decimal_at_most(text: str | bytes, most: int) -> int | None:
    """The value of `text` when it is one or more ASCII digits and at most `most`, else None."""
    if isinstance(text, str):
        if not text.isascii():
            return None
        text = text.encode("ascii")
    if not text or not text.isdigit():         # bytes.isdigit: ASCII 0-9 only
        return None
    significant = text.lstrip(b"0")
    if len(significant) > len(str(most)):
        return None
    value = int(significant or b"0")
    return value if value <= most else None
