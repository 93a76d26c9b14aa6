"""compiler/bobc/sass/README.md's `c[0x0][param+N]` (probe s34 docs34 finding 4): the README said it
is parameter byte N (0x160+N on sm_86), while the same README says ptxas keeps an sm_86 block of
more than 4352 bytes at 0x1a80.  `param` is the target's base whatever the block, so for that
block the documented spelling reads no parameter and is refused; the README says so, and this
holds each of its words to what `bobc asm --cubin` does."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bobc import cli

REPO = Path(__file__).resolve().parents[2]
README = REPO / "compiler/bobc/sass/README.md"


def _symbol_bullet() -> str:
    text = README.read_text()
    start = text.index("- Symbolic constants")
    return " ".join(text[start:text.index("\n- ", start + 1)].split())


def _asm(tmp_path, capsys, read, arch, sizes):
    source = tmp_path / "k.sass"
    source.write_text(f"MOV R2, c[0x0][{read}] ;\nEXIT ;\n")
    code = cli.main(["asm", str(source), "--arch", arch, "--cubin", "-o", str(tmp_path / "k.cubin"),
                     "--parameter-sizes", sizes])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("arch, sizes", [("sm_86", "8,4336"), ("sm_90", "8,4336"), ("sm_90", "8,4344,4")])
def test_param_is_parameter_byte_n_where_the_block_lies_at_the_base(tmp_path, capsys, arch, sizes):
    code, err = _asm(tmp_path, capsys, "param+0x8", arch, sizes)
    assert code == 0, err


def test_the_readme_names_the_block_where_param_reads_no_parameter(tmp_path, capsys):
    code, err = _asm(tmp_path, capsys, "param+0x8", "sm_86", "8,4344,4")
    assert code == 1, err
    assert "0x1a80" in err, err
    bullet = _symbol_bullet()
    assert re.search(r"`c\[0x0\]\[param\+N\]` = 0x160\+N on sm_86, 0x210\+N on sm_90", bullet), bullet
    assert "more than 4352 bytes" in bullet and "refused at the instruction (exit 1)" in bullet, bullet
    spelled = re.search(r"write parameter byte N as `c\[0x0\]\[(0x[0-9a-f]+)\+N\]`", bullet)
    assert spelled, bullet
    code, err = _asm(tmp_path, capsys, f"{spelled.group(1)}+0x8", "sm_86", "8,4344,4")
    assert code == 0, err
