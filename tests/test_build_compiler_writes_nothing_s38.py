"""A C compiler on PATH that exits 0 but writes no -o file (a stub, a wrapper that does nothing) is
the C compiler's failure, said in one line, exit 1, nothing published (probe s38 coverage finding 6).

It was a FileNotFoundError traceback where the host is read next (host/sections.embed), and the
runtime's cache entries were stored without their objects."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


def _gcc(folder: Path, body: str) -> dict:
    folder.mkdir()
    script = folder / "gcc"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.parametrize("stage, body, made", [
    # every command: no object file is ever written
    ("compile", "exit 0\n", "object file"),
    # the real compiler for objects; the link (the command naming -lm, as every host link does) writes nothing
    ("link", 'for a in "$@"; do if [ "$a" = "-lm" ]; then exit 0; fi; done\nexec {real} "$@"\n', "executable"),
])
def test_a_compiler_that_writes_nothing_is_refused_by_name(tmp_path, stage, body, made):
    real = shutil.which("gcc") or shutil.which("cc")
    environment = _gcc(tmp_path / "bin", body.replace("{real}", real))
    environment["BOBC_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), "--target", "sm_86", "-o", "host",
                           "--emit-images", "images"], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=environment)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f"bobc build: error: the C compiler failed: {tmp_path / 'bin' / 'gcc'} could not build " in done.stderr
    assert f": it exited 0 but wrote no {made}\n" in done.stderr, done.stderr
    assert not (tmp_path / "host").exists() and not (tmp_path / "images").exists()
    # no cache entry holds fewer files than it names: each stored folder has its objects
    for entry in (tmp_path / "cache").glob("*objects/*/.entry"):
        assert any(p.suffix == ".o" for p in entry.parent.iterdir()), entry.parent
