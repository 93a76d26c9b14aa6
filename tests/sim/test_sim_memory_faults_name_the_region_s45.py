"""`bobc sim`'s fault for a shared-memory access past the block's shared memory names where the
plan gives that memory (session 45, leftovers7; left by s44 newuser9).

Before, a kernel declaring `.shared 0x80` whose code stores at 0x400 (examples/ridge's ridge-grad
with its declaration cut from 0x480) stopped on sm_86 with "shared-memory access at 0x400 (4 bytes)
lies outside the block's 1024 bytes of shared memory": the instruction was placed, but not a word
of where the 1024 came from, and no hint.  The certifier cannot refuse it (the region gives what
the source declares; the store's offset is the code's).  The expected values are the example's
own text: the region's shared bytes are `(sm86ProgramSharedBytes rdGradProgram)` on its line of
NativeHost.bob, the source's `.shared 0x80` = 128 bytes, and its `STS [R1+0x400]` the access.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RIDGE = REPO / "examples/ridge"


def test_a_shared_access_past_the_block_names_the_region_that_gives_it(tmp_path):
    shutil.copytree(RIDGE / "Ridge", tmp_path / "Ridge")
    kernel = tmp_path / "Ridge/kernels/ridge-grad.sass"
    kernel.write_text(kernel.read_text().replace("\n.shared 0x480\n", "\n.shared 0x80\n"))
    env = dict(os.environ, PYTHONPATH=str(REPO / "compiler"), BOBC_CACHE_DIR="off")
    subprocess.run([sys.executable, str(RIDGE / "make_record.py"), "-o", str(tmp_path / "record.bin")],
                   check=True, env=env)
    done = subprocess.run([sys.executable, "-m", "bobc", "sim", "Ridge/Build/NativeHost.bob", "train", "--target",
                           "sm_86", "--input", "record.bin", "--checkpoint-out", "c", "--predictions", "p",
                           "--result", "r"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 7 and "Traceback" not in done.stderr, done.stderr
    host = (tmp_path / "Ridge/Build/NativeHost.bob").read_text().splitlines()
    line = next(n for n, text in enumerate(host, 1) if "(sm86ProgramSharedBytes rdGradProgram)" in text)
    sts = next(n for n, text in enumerate(kernel.read_text().splitlines(), 1) if "STS [R1+0x400]" in text)
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"bobc sim: Ridge/kernels/ridge-grad.sass:{sts}:5: error: launch 0 (ridge-grad): "), first
    assert "shared-memory access at 0x400 (4 bytes) lies outside the block's 1024 bytes of shared memory" in first
    assert re.search(rf"the block's shared memory is region ridge-grad's shared bytes \(128, given at "
                     rf"Ridge/Build/NativeHost\.bob:{line}:\d+; the launch's QMD rounds them up to 1024\)", first), first
    assert "hint: give the region the shared bytes its kernel's code reaches" in done.stderr, done.stderr
    assert not any((tmp_path / name).exists() for name in "cpr")

