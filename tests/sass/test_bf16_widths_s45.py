"""F2F / I2F / F2I's .BF16 is a 16-bit float type (probe s45 asmgaps4): the register widths of sm_90's bf16 conversions
are nvdisasm's (`nvdisasm -plr` of ptxas 13's cvt.rn.bf16.f64 / cvt.f64.bf16 / cvt.rn.bf16.s64: F2F.BF16.F64 R7, R6
assigns R7 alone and reads R6..R7, F2F.F64.BF16 R6, R6 reads R6 alone and assigns R6..R7, I2F.BF16.S64 R15, R8 reads
R8..R9).  Before, encoder._conversion_types skipped .BF16, so F2F.BF16.F64 was taken for an F64 -> F64 conversion: its
destination a pair, and ptxas's odd R7 refused by the assembler as an unaligned register block."""
from __future__ import annotations

import pytest

from bobc.sass.encoder import _reg_width
from bobc.sass.syntax import parse_instruction


@pytest.mark.parametrize("text,rd,sb", [("F2F.BF16.F64 R7, R6", 1, 2), ("F2F.BF16.F64.RM R5, R6", 1, 2),
                                        ("F2F.F64.BF16 R6, R6", 2, 1), ("I2F.BF16.S64 R15, R8", 1, 2),
                                        ("F2F.F16.F64 R7, R6", 1, 2)])
def test_bf16_conversion_widths_are_nvdisasms(text, rd, sb):
    inst = parse_instruction(text)
    assert (_reg_width(inst, "Rd"), _reg_width(inst, "Sb")) == (rd, sb)

