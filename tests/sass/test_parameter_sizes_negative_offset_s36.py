"""`bobc asm --parameter-sizes 4@-8`: a negative offset is said as that, exit 2 (probe s36 exitcodes2
finding 2).  Before, it was called an overlap with "the one before it, which ends at 0" -- for the
first parameter, which has none before it.  A parameter block's offsets count from its byte 0."""
from __future__ import annotations

import pytest

from bobc.cli import main

SOURCE = ".kernel k\n.registers 8\n    EXIT\n"


@pytest.mark.parametrize("sizes, ordinal", [("4@-8", 0), ("8,4@-4", 1)])
def test_a_negative_offset_is_named_not_called_an_overlap(tmp_path, capsys, sizes, ordinal):
    source = tmp_path / "k.sass"
    source.write_text(SOURCE)
    assert main(["asm", str(source), "--arch", "sm_90", "--cubin", "-o", str(tmp_path / "k.cubin"),
                 f"--parameter-sizes={sizes}"]) == 2
    err = capsys.readouterr().err
    assert f"parameter {ordinal} is at offset -" in err and "before the parameter block's first byte" in err
    assert "overlaps" not in err
    assert not (tmp_path / "k.cubin").exists()
