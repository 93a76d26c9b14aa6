"""Probe s38 texts2 finding 2: a NUL character is binary data in a source's first 4096 bytes
(docs/language.md); past them it was taken in a comment or a byte string (`b"a<NUL>b"` was 3
bytes), so the same text was accepted or refused by where in the file it stood.  It is now
refused at its line and column wherever it stands past them, in a module and a SASS source."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PAD = "-- " + "x" * 4200 + "\n"         # a first line past the judged bytes


def _bobc(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bobc", *argv], capture_output=True, cwd=cwd, timeout=300,
                          env=dict(os.environ, BOBC_CACHE_DIR="off"))


@pytest.mark.parametrize("line3, column", [
    ('def a : Bytes = b"a\0b"', 20),         # in a byte string: after `def a : Bytes = b"a`
    ("def a : Bytes = b\"\" -- a\0b", 25),     # in a comment
])
def test_a_nul_past_the_judged_bytes_of_a_module_is_refused_at_its_place(tmp_path, line3, column):
    (tmp_path / "T").mkdir()
    (tmp_path / "T/A.bob").write_text("module T.A\n" + PAD + line3 + "\n", encoding="utf-8")
    assert line3.index("\0") + 1 == column
    ran = _bobc(tmp_path, "eval", "T/A.bob", "a")
    assert ran.returncode == 1, ran.stdout
    first, excerpt, caret, hint = ran.stderr.decode().splitlines()[:4]
    assert first == f"bobc eval: T/A.bob:3:{column}: error: a NUL character (U+0000) in the text: a source holds none"
    assert "\0" not in excerpt and caret.index("^") == excerpt.index("?")
    assert "\\x00" in hint


def test_a_nul_past_the_judged_bytes_of_a_sass_source_is_refused_at_its_place(tmp_path):
    line = "  S2R R0, SR_TID.X // a\0b"
    (tmp_path / "k.sass").write_text(".kernel k\n" + PAD.replace("--", "//") + line + "\n  EXIT\n", encoding="utf-8")
    ran = _bobc(tmp_path, "asm", "k.sass", "--arch", "sm_86", "-o", "k.bin")
    assert ran.returncode == 1, ran.stdout
    assert ran.stderr.decode().splitlines()[0] == \
        f"bobc asm: k.sass:3:{line.index(chr(0)) + 1}: error: a NUL character (U+0000) in the text: a source holds none"
    assert not (tmp_path / "k.bin").exists()


def test_the_same_sass_source_without_the_nul_assembles(tmp_path):
    (tmp_path / "k.sass").write_text(".kernel k\n" + PAD.replace("--", "//") + "  S2R R0, SR_TID.X // ab\n  EXIT\n")
    assert _bobc(tmp_path, "asm", "k.sass", "--arch", "sm_86", "-o", "k.bin").returncode == 0
