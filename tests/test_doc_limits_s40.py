"""docs/limits.md's rows say the exit codes and sizes the code gives (probe s40 docs9).

The SASS source row said "a FIFO, device or larger file is refused by name, exit 2"; a source over
4 MiB is a file that is there but refused, exit 1 (README, "What a user is promised": 1 for a file
"too big", 2 for "a FIFO or device"; compiler/bobc/sass/source.py `_refusal`).  The row's codes are
read from the row and held to what `bobc asm` and `check_source` give for each file, and to README's
rule."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.sass.source import SOURCE_LIMIT_BYTES, check_source

REPO = Path(__file__).resolve().parents[1]
LIMITS = (REPO / "docs" / "limits.md").read_text(encoding="utf-8")


def _sass_row() -> str:
    rows = [line for line in LIMITS.splitlines() if line.startswith("| a SASS source bobc reads")]
    assert len(rows) == 1, "docs/limits.md: no one row for a SASS source"
    return rows[0]


def _asm_exit_code(path: Path, tmp_path: Path) -> int:
    done = subprocess.run([sys.executable, "-m", "bobc", "asm", str(path), "--arch", "sm_86",
                           "-o", str(tmp_path / "x.bin")], capture_output=True, text=True, timeout=120)
    assert done.stderr.startswith("bobc asm: error: ") and "Traceback" not in done.stderr, done.stderr
    return done.returncode


def test_the_sass_source_row_gives_the_exit_codes_check_source_gives(tmp_path):
    row = _sass_row()
    said = re.search(r"`bobc asm` refuses a FIFO or device by name, exit (\d), and a larger file exit (\d) "
                     r"\(a file refused; a plan's kernel or `run_kernel`'s source: exit (\d)\)", row)
    assert said, f"docs/limits.md's SASS source row no longer says each refusal's exit code: {row}"
    fifo_code, big_code, kernel_code = (int(said.group(i)) for i in (1, 2, 3))
    big = tmp_path / "big.sass"
    with open(big, "wb") as handle:
        handle.truncate(SOURCE_LIMIT_BYTES + 1)
    fifo = tmp_path / "pipe.sass"
    os.mkfifo(fifo)
    # README's exit codes: a file that is there but too big is 1, a FIFO or device 2 (usage)
    assert (_asm_exit_code(big, tmp_path), _asm_exit_code(fifo, tmp_path)) == (1, 2)
    assert (big_code, fifo_code) == (1, 2), row
    with pytest.raises(BobcError) as info:
        check_source(big)               # the one reader a plan's kernels and run_kernel go through
    assert info.value.exit_code == kernel_code == 1, row


def test_the_sass_source_row_gives_the_bound_declared():
    assert SOURCE_LIMIT_BYTES == 4 * 2 ** 20
    assert "a regular file of 4 MiB at most (`SOURCE_LIMIT_BYTES`" in _sass_row()
