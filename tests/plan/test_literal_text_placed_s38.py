"""Probe s38 texts2 finding 1: a byte string the plan writes as a literal and the compiler refuses
(a launch identity that is not ASCII, a buffer identity holding a zero byte: plan/extract.py's
`text` / `c_text`) is refused where the literal is written.  It was placed at the host's
definition: a literal is never a thunk, so language/values.py `origin` knew no place for it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODULE = "LinReg/Build/NativeHost.bob"


def _check_with(tmp_path, old: bytes, new: bytes) -> tuple[str, int, int]:
    """`bobc check` of linear_regression with the one literal `old` replaced by `new`: its first
    stderr line and where `old` begins (line, column: the text counted here, not by bobc)."""
    shutil.copytree(REPO / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    module = tmp_path / MODULE
    text = module.read_bytes()
    assert text.count(old) == 1
    start = text.index(old)
    line = 1 + text[:start].count(b"\n")
    column = 1 + len(text[text.rfind(b"\n", 0, start) + 1:start].decode("utf-8"))
    module.write_bytes(text.replace(old, new))
    ran = subprocess.run([sys.executable, "-m", "bobc", "check", MODULE], capture_output=True, cwd=tmp_path,
                         env=dict(os.environ, BOBC_CACHE_DIR="off"), timeout=600)
    assert ran.returncode == 1, ran.stderr.decode()
    return ran.stderr.decode().splitlines()[0], line, column


@pytest.mark.parametrize("old, new, said", [
    (b'(lrLaunch b"linreg-sgd"', '(lrLaunch b"linreg-sgé"'.encode(), "launch 2's identity should be ASCII"),
    (b'(lrBuffer b"qmd"', rb'(lrBuffer b"qm\x00d"', "buffer 1's identity holds a zero byte"),
])
def test_a_refused_literal_is_placed_at_the_literal(tmp_path, old, new, said):
    first, line, column = _check_with(tmp_path, old, new)
    column += len(old) - len(old.split(b" ", 1)[1])        # the literal, after `(lrLaunch `
    assert first.startswith(f"bobc check: {MODULE}:{line}:{column}: error: "), first
    assert said in first, first
