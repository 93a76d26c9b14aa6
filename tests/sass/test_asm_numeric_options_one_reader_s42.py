"""Every numeric option of `bobc asm` reads its value one way (probe s42 cli3, "Left"): before,
--parameter-bytes and --block-size took argparse's int and said "invalid int value: 'abc'" (and
refused 1_000) where --register-count, --register-budget, sim's --max-steps and
--max-evaluation-steps say "not a whole number: 'abc'".  Expected text: the other options' words
(asserted beside them here, from the same command), exit 2, nothing written; a value out of range
still gets the option's own message naming its limit."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


def asm(tmp_path, *options):
    (tmp_path / "k.sass").write_text("EXIT ;\n")
    return subprocess.run([sys.executable, "-m", "bobc", "asm", "k.sass", "--arch", "sm_86", "--cubin", "-o", "k.cubin",
                           *options], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})


@pytest.mark.parametrize("option", ["--parameter-bytes", "--block-size", "--register-count", "--register-budget"])
@pytest.mark.parametrize("value", ["abc", "", "0x10", "1e3"])
def test_a_value_that_is_no_whole_number_is_refused_in_one_way(tmp_path, option, value):
    done = asm(tmp_path, option, value)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0] == f"bobc asm: error: argument {option}: not a whole number: {value!r}"
    assert "invalid int value" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "k.cubin").exists()


@pytest.mark.parametrize("option, value, limit", [
    ("--parameter-bytes", "-4", "a kernel takes 0 to 32764 bytes of parameters"),
    ("--block-size", "1_025", "a block has 1 to 1024 threads"),
])
def test_a_whole_number_out_of_range_is_told_its_range(tmp_path, option, value, limit):
    done = asm(tmp_path, option, value)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0].startswith(f"bobc asm: error: {option} ") and limit in done.stderr, done.stderr


@pytest.mark.parametrize("option, value", [("--parameter-bytes", "1_024"), ("--block-size", "1,024")])
def test_digits_grouped_as_the_other_options_take_them(tmp_path, option, value):
    done = asm(tmp_path, option, value)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "k.cubin").exists()
