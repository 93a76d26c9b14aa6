"""A decimal immediate that its format cannot hold is refused with its line, never a traceback and
never silently INF or 0 (probe-sass finding 8a): binary32 for the float opcodes, binary64 (its
high word) for DADD/DMUL/DFMA/DSETP.  NaN words: bare NAN is a quiet NaN like +QNAN (finding 10:
it was read as a label); +SNAN names no payload and is refused outside a listing."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble


def _literal_column(text: str) -> int:
    """The column of the refused literal (the longest operand) of `text` written after one space:
    the refusal points at the operand (probe s32 sasssyntax finding 8)."""
    literal = max(text.split(" ", 1)[1].split(", "), key=len)
    return 2 + text.index(literal)


@pytest.mark.parametrize("text,message", [
    ("FADD R0, R1, 1e40", "1e40 is beyond binary32's range"),
    ("FMUL R0, R1, -1e39", "-1e39 is beyond binary32's range"),
    ("FSETP.GT.AND P0, PT, R1, 1e39, PT", "1e39 is beyond binary32's range"),
    ("FADD R0, R1, 1e-50", "1e-50 is below binary32's smallest value (1e-45): it would be 0"),
    ("DADD R0, R2, 1e400", "1e400 is beyond binary64's range"),
    ("DADD R0, R2, 1e-400", "1e-400 is below binary64's smallest value (5e-324): it would be 0"),
    ("FADD R0, R1, +SNAN", "+SNAN names no payload"),
])
def test_an_immediate_out_of_its_format_is_refused(text, message):
    for arch in ("sm_86", "sm_90"):
        with pytest.raises(BobcError) as info:
            assemble(f"NOP\n {text}\nEXIT\n", arch, source_name="k.sass")
        assert message in info.value.message
        assert (info.value.span.line, info.value.span.column) == (2, _literal_column(text))


@pytest.mark.parametrize("text,bits", [
    ("FADD R0, R1, 0.0", 0), ("FADD R0, R1, -0.0", 0x80000000), ("FADD R0, R1, 1e-45", 1),
    ("FADD R0, R1, 3.4028234663852886e38", 0x7F7FFFFF), ("FADD R0, R1, +INF", 0x7F800000),
    ("FADD R0, R1, NAN", 0x7FC00000), ("FADD R0, R1, -NAN", 0xFFC00000), ("FMUL R0, R1, 0x7fffffff", 0x7FFFFFFF),
    ("DADD R0, R2, 0.5", 0x3FE00000), ("DADD R0, R2, 0", 0), ("DADD R0, R2, -INF", 0xFFF00000),
])
def test_immediates_in_range_encode(text, bits):
    assert assemble(text + "\nEXIT\n", "sm_86").instructions[0].lo >> 32 == bits


_BIG = "9" * 400


@pytest.mark.parametrize("text,message", [
    # probe s28 asm finding 2: a decimal integer for a float opcode was an OverflowError traceback
    ("FADD R0, R1, 1000000000000000000000000000000000000000",
     "100000000000...0000 (40 characters) is beyond binary32's range"),
    (f"FADD R0, R1, {_BIG}", "999999999999...9999 (400 characters) is beyond binary32's range"),
    (f"FFMA R0, R1, -{_BIG}, R2", "(401 characters) is beyond binary32's range"),
    # finding 3: beyond binary64 too, float() is inf without an error: it was encoded as +INF
    ("FADD R0, R1, 1e400", "1e400 is beyond binary32's range"),
    ("FFMA R0, R1, 1e99999, R2", "1e99999 is beyond binary32's range"),
    ("FSETP.GT.AND P0, PT, R1, -1e99999, PT", "-1e99999 is beyond binary32's range"),
    ("FMUL R0, R1, -1e400", "-1e400 is beyond binary32's range"),
    ("HADD2 R0, R1, 1e99999, 1", "1e99999 is beyond binary16's range (largest finite 65504"),
    ("HADD2 R0, R1, 1, -1e400", "-1e400 is beyond binary16's range"),
    ("HADD2 R0, R1, 65520, 1", "65520 is beyond binary16's range"),
    (f"HFMA2 R0, R1, {_BIG}, 1, R2", "(400 characters) is beyond binary16's range"),
    (f"DADD R0, R2, {_BIG}", "(400 characters) is beyond binary64's range"),
    ("DMUL R0, R2, -1e99999", "-1e99999 is beyond binary64's range"),
])
def test_every_literal_beyond_its_format_is_refused(text, message):
    for arch in ("sm_86", "sm_90"):
        with pytest.raises(BobcError) as info:
            assemble(f"NOP\n {text}\nEXIT\n", arch, source_name="k.sass")
        assert message in info.value.message and "write +INF or -INF" in info.value.message
        assert (info.value.span.path, info.value.span.line, info.value.span.column) == \
            ("k.sass", 2, _literal_column(text))


@pytest.mark.parametrize("text,bits", [
    ("FADD R0, R1, -INF", 0xFF800000), ("FADD R0, R1, 3", 0x40400000),
    ("FADD R0, R1, 340282346638528859811704183484516925440", 0x7F7FFFFF),   # the largest finite, as an integer
    ("HADD2 R0, R1, -INF, 65504", 0xFC007BFF), ("DMUL R0, R2, +INF", 0x7FF00000),
])
def test_infinity_words_and_largest_finite_values_stay_accepted(text, bits):
    assert assemble(text + "\nEXIT\n", "sm_86").instructions[0].lo >> 32 == bits


def test_a_huge_float_literal_is_one_line_from_the_cli(tmp_path):
    import subprocess
    import sys
    source = tmp_path / "big.sass"
    source.write_text(f"FADD R1, R2, {'1' + '0' * 39}\nEXIT\n")
    done = subprocess.run([sys.executable, "-m", "bobc", "asm", "--arch", "sm_86", str(source), "-o",
                           str(tmp_path / "big.bin")], capture_output=True, text=True)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{source}:1:14: error: 100000000000...0000 (40 characters) is beyond binary32's range" in done.stderr
