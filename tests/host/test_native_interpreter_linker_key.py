"""The native interpreter's cache key holds the linker (probe s37 repro, finding 1).

The interpreter is a linked executable, and its bytes are the linker's: gcc runs `ld` by its bare
name (found on PATH), and another ld writes another file.  Its key held the gcc driver and the `as`
on PATH but not `ld`, so after the `ld` on PATH changed, a warm build kept the old interpreter --
and seed 003's and 004's hosts, which start with it, were not the bytes a cold build (cache off)
gives.  The oracle: the same interpreter built with the cache off, under the same PATH."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bobc import cache
from bobc.native import interpreter

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("ld") is None,
                                reason="needs gcc and ld")


def other_linker(folder: Path) -> Path:
    """An `ld` first on PATH that links as the system's and writes another build-id (md5, not
    gcc's default sha1): the same program, other bytes."""
    real = Path(shutil.which("ld")).resolve()
    folder.mkdir()
    script = folder / "ld"
    script.write_text(f'#!/bin/sh\nexec {real} "$@" --build-id=md5\n')
    script.chmod(0o755)
    return folder


def test_a_warm_interpreter_under_another_linker_is_the_cold_one(cache_dir, monkeypatch, tmp_path):
    first = interpreter.interpreter_bytes()                  # cached under the system's ld
    monkeypatch.setenv("PATH", f"{other_linker(tmp_path / 'bin')}:{os.environ['PATH']}")
    warm = interpreter.interpreter_bytes()
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    assert cache.folder() is None
    cold = interpreter.interpreter_bytes()
    assert cold != first                                     # the linker does decide the bytes
    assert warm == cold

