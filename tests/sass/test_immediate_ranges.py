"""A decimal immediate that its format cannot hold is refused with its line, never a traceback and
never silently INF or 0 (probe-sass finding 8a): binary32 for the float opcodes, binary64 (its
high word) for DADD/DMUL/DFMA/DSETP.  NaN words: bare NAN is a quiet NaN like +QNAN (finding 10:
it was read as a label); +SNAN names no payload and is refused outside a listing."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble


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
        assert (info.value.span.line, info.value.span.column) == (2, 2)


@pytest.mark.parametrize("text,bits", [
    ("FADD R0, R1, 0.0", 0), ("FADD R0, R1, -0.0", 0x80000000), ("FADD R0, R1, 1e-45", 1),
    ("FADD R0, R1, 3.4028234663852886e38", 0x7F7FFFFF), ("FADD R0, R1, +INF", 0x7F800000),
    ("FADD R0, R1, NAN", 0x7FC00000), ("FADD R0, R1, -NAN", 0xFFC00000), ("FMUL R0, R1, 0x7fffffff", 0x7FFFFFFF),
    ("DADD R0, R2, 0.5", 0x3FE00000), ("DADD R0, R2, 0", 0), ("DADD R0, R2, -INF", 0xFFF00000),
])
def test_immediates_in_range_encode(text, bits):
    assert assemble(text + "\nEXIT\n", "sm_86").instructions[0].lo >> 32 == bits
