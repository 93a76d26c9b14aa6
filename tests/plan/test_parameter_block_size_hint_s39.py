"""A launch whose parameter block is too small for its patches is told the size that holds them
(probe s39 newuser3, finding 4).  Before, "patches word 44 (bytes 352..359), past its 8-byte
parameter block" left the user to work the size out.  LinReg's loss-grad launch patches arguments
0..6, words 0x160 / 8 + i (docs/writing-a-plan.md, section 5), so it needs (44 + 6 + 1) * 8 = 408
bytes: the size named certifies, 8 bytes fewer does not."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "linear_regression"
SIZE_LINE = "def lrParameterBytes : Nat = 512"
NEEDED = (0x160 // 8 + 6 + 1) * 8


def _check(tmp_path, size: int):
    host = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    if not host.exists():
        shutil.copytree(EXAMPLE / "LinReg", tmp_path / "LinReg")
    text = (EXAMPLE / "LinReg" / "Build" / "NativeHost.bob").read_text()
    assert text.count(SIZE_LINE) == 1
    host.write_text(text.replace(SIZE_LINE, f"def lrParameterBytes : Nat = {size}"))
    return subprocess.run([sys.executable, "-m", "bobc", "check", str(host)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)


def test_the_size_its_patches_need_is_named_and_is_enough(tmp_path):
    small = _check(tmp_path, 8)
    assert small.returncode == 1, small.stderr
    assert "past its 8-byte parameter block" in small.stderr
    assert f"need a block of at least {NEEDED} bytes" in small.stderr
    assert _check(tmp_path, NEEDED - 8).returncode == 1
    enough = _check(tmp_path, NEEDED)
    assert enough.returncode == 0, enough.stderr
