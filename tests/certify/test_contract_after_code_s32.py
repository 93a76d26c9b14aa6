"""A contract line stands alone on its line (docs/kernel-contracts.md, "Contract lines: the whole
grammar"): `EXIT //@ block 64` -- a `//@` after code -- is a plain comment to the assembler, so
the check it was written to declare silently went away (probe s32 paths finding 6).  It is
refused at the comment, saying to move the line; a comment after code whose `@` starts another
word (`EXIT // @todo`) stays a comment."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.certify.kernels import ContractError, parse_contract

REPO = Path(__file__).resolve().parents[2]

KERNEL = ("// a kernel\n"
          "//@ param 0 pointer write 4*lo[1] the output\n"
          "//@ param 1 scalar N\n"
          ".kernel k\n"
          "    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
          "    LDC R4, c[0x0][RZ+param+0x8]\n"
          "    EXIT\n")


def parsed(tmp_path, old: str, new: str):
    source = tmp_path / "k.sass"
    assert KERNEL.count(old) == 1
    source.write_text(KERNEL.replace(old, new, 1))
    return parse_contract(source)


@pytest.mark.parametrize("old, new, says", [
    ("    EXIT\n", "    EXIT //@ block 64\n",
     ":7:10: '//@ block' follows code on its line ('EXIT'), so it is a plain comment, not a contract line: a "
     "contract line stands alone on its line (//@ param, //@ block, //@ table, //@ tensormap, //@ copy, //@ require); move '//@ block 64' "
     "to a line of its own, or leave out the @ for a plain comment (docs/kernel-contracts.md)"),
    ("    LDC R4, c[0x0][RZ+param+0x8]\n", "    LDC R4, c[0x0][RZ+param+0x8]   //@param 2 scalar M\n",
     ":6:36: '//@param' follows code on its line ('LDC R4, c[0x0][RZ+param+0x8]'), so it is a plain comment"),
    ("    EXIT\n", "    EXIT  // @ blok 64\n",
     ":7:11: '// @ blok' follows code on its line ('EXIT'), so it is a plain comment, not a contract line: a "
     "contract line stands alone on its line (//@ param, //@ block, //@ table, //@ tensormap, //@ copy, //@ require); move '//@ block 64'"),
    (".kernel k\n", ".kernel k #@ table 0 rows 2 of 1\n",
     ":4:11: '#@ table' follows code on its line ('.kernel k'), so it is a plain comment"),
])
def test_a_contract_line_after_code_is_refused_at_its_comment(tmp_path, old, new, says):
    with pytest.raises(ContractError) as caught:
        parsed(tmp_path, old, new)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{tmp_path / 'k.sass'}{says}"), message


def test_a_comment_after_code_whose_at_sign_starts_another_word_stays_a_comment(tmp_path):
    contract = parsed(tmp_path, "    EXIT\n", "    EXIT // @todo unroll; //@ see the block above\n")
    assert [a.index for a in contract.arguments] == [0, 1] and contract.block is None


def test_bobc_check_refuses_a_contract_line_after_code(tmp_path):
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    source = tmp_path / "LinReg" / "kernels" / "linreg-sgd.sass"
    text = source.read_text()
    assert text.count("//@ block 32\n") == 1 and text.count("    @P0 EXIT\n") == 1
    source.write_text(text.replace("//@ block 32\n", "").replace("    @P0 EXIT\n", "    @P0 EXIT //@ block 32\n"))
    result = subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"],
                            capture_output=True, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off"})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert ("/kernels/linreg-sgd.sass:13:14: '//@ block' follows code on its line ('@P0 EXIT'), so it is "
            "a plain comment, not a contract line") in result.stderr, result.stderr
