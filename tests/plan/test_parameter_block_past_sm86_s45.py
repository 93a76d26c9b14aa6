"""A launch that patches argument 20 (probe s45 newuser10: a new user's momentum kernel given a 21st
parameter word) was told "patches word 64 (bytes 512..519), past its 512-byte parameter block; its
patches need a block of at least 520 bytes", and a 560-byte block was then refused on every launch of
an sm_86 build as "outside 0..512": sm_86's constant bank 0 is 512 bytes and its kernels read
parameters from 0x160 (ptxas's EIATTR_PARAM_CBANK in the sm_86 listing), so it holds arguments 0..19
only, (512 - 0x160) / 8 = 20 words.  The refusal now names the argument, says which build cannot give
the block and why, and what to do; a build for sm_90 (1024-byte bank, arguments 0..61 from 0x210)
takes the block it names."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MLP = REPO / "tests" / "mlp_classifier"
SM86_BANK0, SM86_PARAMS = 512, 0x160          # docs/writing-a-plan.md section 5; the listing's PARAM_CBANK


def _plan(tmp_path, block: int):
    shutil.copytree(MLP / "Mlp", tmp_path / "Mlp", dirs_exist_ok=True)
    for name in ("mlp-momentum.sass", "mlp-momentum.sm_90.sass"):
        source = tmp_path / "Mlp" / "kernels" / name
        text = source.read_text()
        assert text.count("//@ param 4 scalar lr\n") == 1
        source.write_text(text.replace("//@ param 4 scalar lr\n", "//@ param 4 scalar lr\n//@ param 20 scalar extra\n"))
    host = tmp_path / "Mlp" / "Build" / "NativeHost.bob"
    text = host.read_text()
    for old, new in (("(mpPatch 4 mlpLearningRate mpNoPatches)", "(mpPatch 4 mlpLearningRate (mpPatch 20 7 mpNoPatches))"),
                     ("def mpParameterBytes : Nat = 512", f"def mpParameterBytes : Nat = {block}")):
        assert text.count(old) == 1
        text = text.replace(old, new)
    host.write_text(text)


def _check(tmp_path, target):
    return subprocess.run([sys.executable, "-m", "bobc", "check", "Mlp/Build/NativeHost.bob", "--target", target],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})


def test_the_sm86_listing_reads_parameters_where_the_message_says():
    listing = (MLP / "Mlp" / "kernels" / "mlp-momentum.sass").read_text()
    # EIATTR_PARAM_CBANK: the bank's section index, then the parameters' offset and size (.short each)
    record = re.search(r"EIATTR_PARAM_CBANK.*?\.word\s+index@\([\w.]+\)\s*\n\s*/\*[0-9a-f]+\*/\s+\.short\s+(0x[0-9a-f]+)",
                       listing, re.S)
    assert int(record.group(1), 16) == SM86_PARAMS


def test_argument_20_is_told_sm86_cannot_hold_it_and_sm90_takes_the_block_named(tmp_path):
    _plan(tmp_path, SM86_BANK0)
    done = _check(tmp_path, "sm_86")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    needed = SM86_PARAMS + 21 * 8
    assert f"patches word {SM86_PARAMS // 8 + 20} (argument 20: bytes 512..519)" in done.stderr, done.stderr
    assert f"need a block of at least {needed} bytes" in done.stderr
    last = (SM86_BANK0 - SM86_PARAMS) // 8 - 1
    assert (f"which a build for sm_86 cannot give (sm_86's constant bank 0 is {SM86_BANK0} bytes, arguments "
            f"0..{last} from {SM86_PARAMS:#x})") in done.stderr, done.stderr
    assert "or build for sm_90 only (at most 1024 bytes)" in done.stderr
    _plan(tmp_path, needed)
    enough = _check(tmp_path, "sm_90")
    assert enough.returncode == 0, enough.stderr
