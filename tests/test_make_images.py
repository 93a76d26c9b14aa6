"""`make images` on a fresh clone (probe s28 docs finding 2): the rule wrote into out/, which no
clone has, so bobc refused ("its folder out does not exist") and make stopped with exit 8.  The
rule makes out/ first; out/ is a build output git ignores."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_images_makes_out_and_writes_both_targets(tmp_path):
    """The Makefile run in a folder without out/, bobc (this checkout's) standing in for the venv's."""
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    bobc = bin_folder / "bobc"
    bobc.write_text(f"#!/bin/sh\nPYTHONPATH={REPO / 'compiler'} exec {sys.executable} -m bobc \"$@\"\n")
    bobc.chmod(0o755)
    work = tmp_path / "clone"
    work.mkdir()
    assert not (work / "out").exists()
    done = subprocess.run(["make", "-f", str(REPO / "Makefile"), "images", "STAMP=", f"BIN={bin_folder}",
                           f"PLAN={REPO / 'examples/bob/Bob/Build/NativeHost.bob'}"],
                          cwd=work, capture_output=True, text=True, env={**os.environ, "MAKEFLAGS": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    for target in ("sm_86", "sm_90"):
        assert (work / "out" / f"images-{target}" / "manifest.json").is_file(), target


def test_out_is_ignored_by_git():
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    # (a path inside out/: `git check-ignore out` says nothing while no folder out exists)
    checked = subprocess.run(["git", "check-ignore", "-q", "out/images-sm_90/manifest.json"], cwd=REPO)
    assert checked.returncode == 0
