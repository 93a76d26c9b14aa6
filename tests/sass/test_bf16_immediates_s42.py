"""A .BF16_V2 packed-half opcode's immediate pair is two bfloat16 values (probe s42 bf16arith).

nvdisasm prints the 32-bit immediate of HFMA2.BF16_V2 / HFMA2.MMA.BF16_V2 as two bfloat16 numbers, the
high half first (ptxas's add.rn.bf16x2 on sm_90 is `HFMA2.MMA.BF16_V2 R9, R4, 1, 1, R7`, word bits 32..63
0x3f803f80).  The assembler read them as binary16, so `HFMA2.BF16_V2 R5, R2, R3, 1, 1` was encoded with
0x3c003c00, which nvdisasm reads back as `0.0078125, 0.0078125`: a silently different constant.

Expected bits come from struct's binary32 (a bfloat16 is the high 16 bits of the binary32 of the same
value), and nvdisasm must print the text back unchanged.
"""
from __future__ import annotations

import struct

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.oracle import disassemble
from bobc.targets import TARGETS

ARCHES = ("sm_86", "sm_90")


def _bf16(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0] >> 16


def _immediate(text: str, arch: str) -> tuple[int, str]:
    word = assemble(f"{text}\nEXIT\n", arch).code[:16]
    listed = disassemble(word, TARGETS[arch].nvdisasm_arch)
    return int.from_bytes(word[4:8], "little"), listed.lines[0].text


CASES = [  # (high, low) as nvdisasm prints them, the word's bits 32..63 by struct
    (("1", "1"), _bf16(1.0) << 16 | _bf16(1.0)),
    (("0.5", "-2"), _bf16(0.5) << 16 | _bf16(-2.0)),
    (("1", "3.140625"), _bf16(1.0) << 16 | _bf16(3.140625)),
    # bfloat16's smallest subnormal 2^-133 and largest finite (2 - 2^-7) * 2^127, as nvdisasm prints them
    (("9.183549615799121156e-41", "3.38953138925153547590e+38"), 0x0001 << 16 | 0x7F7F),
    (("+INF", "-INF"), 0x7F80 << 16 | 0xFF80),
]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("pair, bits", CASES)
def test_bf16_pair_is_bfloat16(arch, pair, bits, needs_nvdisasm):
    text = f"HFMA2.BF16_V2 R5, R2, R3, {pair[0]}, {pair[1]}"
    got, back = _immediate(text, arch)
    assert got == bits, f"{got:#010x} != {bits:#010x}"
    assert back.replace(" ,", ",") == text


@pytest.mark.parametrize("arch", ARCHES)
def test_binary16_pair_unchanged(arch, needs_nvdisasm):
    """Without .BF16_V2 the pair stays binary16 (1.0 is 0x3c00, struct's 'e')."""
    one = struct.unpack("<H", struct.pack("<e", 1.0))[0]
    got, back = _immediate("HFMA2 R5, R2, R3, 1, 1", arch)
    assert got == one << 16 | one and back == "HFMA2 R5, R2, R3, 1, 1"


@pytest.mark.parametrize("text, message", [
    ("HFMA2.BF16_V2 R5, R2, R3, 0.1, 1", "not exactly representable in bfloat16"),
    ("HFMA2.BF16_V2 R5, R2, R3, 1e39, 1", "beyond bfloat16's range"),
    # 65504 is binary16's largest, 65536 not a binary16 but an exact bfloat16
    ("HFMA2.BF16_V2 R5, R2, R3, 65535, 1", "not exactly representable in bfloat16"),
])
def test_inexact_bfloat16_refused(text, message):
    with pytest.raises(BobcError, match=message):
        assemble(f"{text}\nEXIT\n", "sm_86")


def test_bfloat16_beyond_binary16_range_assembles():
    """65536 = 2^16 is past binary16's range but an exact bfloat16 (0x4780)."""
    word = assemble("HFMA2.BF16_V2 R5, R2, R3, 65536, 1\nEXIT\n", "sm_86").code[:16]
    assert int.from_bytes(word[4:8], "little") == _bf16(65536.0) << 16 | _bf16(1.0)
