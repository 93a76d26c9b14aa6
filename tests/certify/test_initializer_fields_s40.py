"""A plan host's SplitMix64 initializer is refused by the one field at fault, saying what to give
(probe s40 newuser4 finding 3).

A shift of 0 was said as "initializer 0 shifts by 0 and divides by 9223372036854775808; a shift is
1..63 and a denominator nonzero" -- a valid denominator named beside the fault, nothing to give --
and docs/limits.md gave the shift's bound as "63" alone, where 0 is refused too.  The bounds are
docs/limits.md's (shift 1 .. 63: the draw, shifted, less the center is read as a signed 64-bit
integer, runtime_c/host_runtime.c rt_init_chunk; denominator 1 .. 2^64 - 1)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/linear_regression"
ZERO = "(constructor NvidiaPlanHostInitializer NvidiaPlanHostInitZero)"


def _plan(tmp_path: Path, shift: int, denominator: int) -> Path:
    root = tmp_path / "lr"
    shutil.copytree(EXAMPLE / "LinReg", root / "LinReg")
    plan = root / "LinReg/Build/NativeHost.bob"
    text = plan.read_text()
    assert ZERO in text
    plan.write_text(text.replace(ZERO, f'(constructor NvidiaPlanHostInitializer NvidiaPlanHostInitSplitMix64 '
                                       f'b"seed" {shift} 8388608 {denominator})'))
    return plan


@pytest.mark.parametrize("shift, denominator, words", [
    (0, 1 << 63, "initializer 0 (checkpoint chunk 0) shifts its 64-bit draws by 0; give a shift of 1..63 "
                 "(docs/limits.md; 40 keeps 24-bit draws)"),
    (64, 16777216, "initializer 0 (checkpoint chunk 0) shifts its 64-bit draws by 64; give a shift of 1..63 "
                   "(docs/limits.md; 40 keeps 24-bit draws)"),
    (40, 0, "initializer 0 (checkpoint chunk 0) divides its draws by 0; give a denominator of 1..2^64 - 1 "
            "(docs/limits.md)"),
], ids=["shift-0", "shift-64", "denominator-0"])
def test_the_field_at_fault_is_named_alone(tmp_path, capsys, shift, denominator, words):
    assert main(["check", str(_plan(tmp_path, shift, denominator))]) == 1
    err = capsys.readouterr().err
    assert f"error: linRegNativeHost: {words}\n" in err, err


def test_a_shift_of_1_and_63_certify(tmp_path, capsys):
    for shift in (1, 63):
        folder = tmp_path / str(shift)
        assert main(["check", str(_plan(folder, shift, 16777216))]) == 0, capsys.readouterr().err
