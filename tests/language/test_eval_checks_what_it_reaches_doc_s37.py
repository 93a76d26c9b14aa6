"""docs/language.md says what `bobc eval` type checks: the definition's body and every definition
it reaches, each against its own declared type, a definition depending on an ill-typed one refused
naming it.  It said the definitions used were only "taken at their declared types", which the
eval of a definition whose body checks but which uses an ill-typed one contradicts (probe s37
docs4 finding 3; the behaviour itself since ba48ebb, tests/test_cli.py).  The module below is the
doc's own example, and the refusal must read as the doc quotes it."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def quoted_refusal() -> str:
    text = " ".join((REPO / "docs" / "language.md").read_text(encoding="utf-8").split())
    section = text[text.index("`bobc eval PLAN NAME"):]
    assert "type checks the definition's body against its type and every definition it reaches" in section
    found = re.search(r"`(y cannot be evaluated: [^`]*?): \.\.\.`, exit (\d)", section)
    assert found, "docs/language.md no longer quotes eval's refusal of a definition depending on an ill-typed one"
    return found.group(1), int(found.group(2))


def test_eval_refuses_as_the_doc_says(tmp_path):
    words, status = quoted_refusal()
    (tmp_path / "M.bob").write_text('module M\n\ndef z : Nat = b"no"\n\ndef y : Nat = (nat-add z 1)\n')
    run = subprocess.run([sys.executable, "-m", "bobc", "eval", "M.bob", "y"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == status and run.stdout == "", (run.returncode, run.stdout)
    assert words in run.stderr, run.stderr
    assert "M.bob:3:15" in run.stderr and "Traceback" not in run.stderr, run.stderr
