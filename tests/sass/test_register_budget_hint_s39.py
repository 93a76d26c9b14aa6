"""A kernel over its register budget is told where that budget is written (probe s39 newuser3,
finding 3): the source's `.registers N` line (the plan's region must then cover the new count), or
`bobc asm --register-budget` when that is the smaller.  Before, the hint said only "raise the
kernel's register budget", which names no place a user can edit."""
from __future__ import annotations

import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.sass.assembler import assemble_kernel

SOURCE = """.kernel over
.registers 8
    S2R R0, SR_TID.X
    IADD3 R0, R0, R20, RZ
    EXIT
done:
    BRA done
"""


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_the_registers_line_is_named(tmp_path, target):
    (tmp_path / "over.sass").write_text(SOURCE)
    with pytest.raises(BobcError) as refused:
        assemble_kernel(tmp_path / "over.sass", target)
    assert "over its budget of 8" in str(refused.value)
    assert "`.registers 8` line" in refused.value.hint
    assert "region" in refused.value.hint


def test_the_option_is_named_when_it_is_the_budget(tmp_path, capsys):
    (tmp_path / "over.sass").write_text(SOURCE.replace(".registers 8", ".registers 64"))
    assert main(["asm", str(tmp_path / "over.sass"), "--arch", "sm_90", "--register-budget", "8",
                 "-o", str(tmp_path / "out.bin")]) == 1
    err = capsys.readouterr().err
    assert "over its budget of 8" in err
    assert "hint: use fewer registers, or raise the budget: --register-budget" in err
    assert ".registers" not in err
