"""A bank 0 word whose argument is one u32 (`//@ param 5 scalar update (u32: ...)`): a change in its
high u32 is not labelled with the argument's name alone (probe-regress3 finding 6)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from bobc.nvidia.golden import _half_of_argument

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests/golden/coppelius-sm_86"
UPDATE = "argument 5: update (u32: 1 counts this launch's update, 0 a forward only) (scalar)"


def test_the_high_half_of_a_u32_argument_word_is_labelled_as_such(tmp_path):
    copy = tmp_path / "images"
    shutil.copytree(GOLDEN, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    launch = next(x for x in manifest["launches"] if x["identity"] == "coppelius-loss-copy")
    offset = launch["parameter_offset"] + manifest["parameter_base"] + 8 * 5
    program = bytearray((copy / "program.bin").read_bytes())
    program[offset + 4] ^= 1                       # bit 32 of parameter word 5
    (copy / "program.bin").write_bytes(bytes(program))
    done = subprocess.run([sys.executable, "-m", "bobc", "diff", GOLDEN, copy, "-I", REPO / "examples/coppelius"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith(f"launch[{launch['index']}].bank0["))
    assert line.endswith(f"[the high u32 of argument 5's word, which the argument does not use ({UPDATE} is "
                         "its low u32)]"), line


def test_halves_of_named_words():
    assert _half_of_argument(UPDATE, 0, 1) == f"{UPDATE}: its low u32"
    assert _half_of_argument("argument 2: M, N (u32) (scalar)", 0, 1 << 32) == \
        "argument 2: M, N (u32) (scalar): its high u32"
    assert _half_of_argument("argument 2: M, N (u32) (scalar)", 0, 1 << 32 | 1) == \
        "argument 2: M, N (u32) (scalar): both u32 halves"
    assert _half_of_argument("argument 0: x (pointer, read)", 0, 1 << 32) == "argument 0: x (pointer, read)"
