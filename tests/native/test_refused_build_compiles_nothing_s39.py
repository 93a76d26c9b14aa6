"""A `bobc build --entry DEF` that is refused compiles no C first (s39 leftovers4 finding 2).

A build of a native artifact whose program was found well typed before (bobc.recall) asked
for today's interpreter -- building it, so compiling the C runtime on a fresh cache, seconds of
gcc and a 'bobc: compiling the C runtime' line -- only to compare a kept artifact's bytes with
it, before looking whether any artifact was kept: a second refused build (or a refused entry
after another of the same module) compiled the runtime and printed that line ahead of its
refusal.  The interpreter is asked for only when an artifact is kept."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.host import gcc
from bobc.native import interpreter

REPO = Path(__file__).resolve().parents[2]

PLAN = '''module Native.Refused

import Runtime.NativePhysicalProgram
import Runtime.NativePhysicalNativeELF

def failZero : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"refused" 1 264
  (constructor NativePhysicalCommands NativePhysicalFail 0 b"never"))

def failZeroHost : Bytes = (nativePhysicalNativeELF failZero)
'''


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_refused_build_on_a_fresh_cache_compiles_no_runtime(tmp_path):
    plan = tmp_path / "Native" / "Refused.bob"
    plan.parent.mkdir()
    plan.write_text(PLAN)
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": str(cache)}
    for attempt in range(2):            # the second finds the program well typed before (recalled)
        done = subprocess.run([sys.executable, "-m", "bobc", "build", str(plan), "--entry", "failZeroHost", "-o",
                               str(tmp_path / "host")], capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith(f"bobc build: {plan}:"), (attempt, done.stderr)
        assert "compiling the C runtime" not in done.stderr, (attempt, done.stderr)
        assert "status 0 is not 1-255" in done.stderr.splitlines()[0], (attempt, done.stderr)
    # nothing of the runtime or the interpreter was compiled into the cache
    kinds = (gcc.CACHE_KIND, interpreter.CACHE_KIND)
    assert not any(path.name in kinds for path in cache.rglob("*")), \
        sorted(str(p.relative_to(cache)) for p in cache.rglob("*"))
    assert not (tmp_path / "host").exists()
