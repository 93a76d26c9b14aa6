"""A `bobc build --entry DEF` that is refused compiles no C first (s39 leftovers4 finding 2).

A build of a native artifact whose program was found well typed before (bobc.recall) asked
for today's interpreter -- building it, so compiling the C runtime on a fresh cache, seconds of
gcc and a 'bobc: compiling the C runtime' line -- only to compare a kept artifact's bytes with
it, before looking whether any artifact was kept: a second refused build (or a refused entry
after another of the same module) compiled the runtime and printed that line ahead of its
refusal.  The interpreter is asked for only when an artifact is kept.

Since session 43 a build with a cache compiles the runtime's objects while it evaluates the plan
(host/gcc.py compiled_early; tests/host/test_build_runtime_early_s43.py): a refusal stops that
compile at once, says nothing of it, and leaves no scratch folder; the runtime's kind folder may
be there (its scratch folder was made in it), and had the compile ended before the refusal its
objects would be kept, as any finished cache entry is.  What the refusal never does is what this
held: wait for that compile, say it, or build the interpreter."""
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
    # no interpreter was built, and the runtime's early compile, stopped, left no scratch folder
    # (a `.tmp-*`: an entry it finished before the refusal, whole and sealed, may stay)
    assert not any(path.name == interpreter.CACHE_KIND for path in cache.rglob("*")), \
        sorted(str(p.relative_to(cache)) for p in cache.rglob("*"))
    runtime = cache / gcc.CACHE_KIND
    assert not runtime.exists() or not [p.name for p in runtime.iterdir() if p.name.startswith(".tmp-")]
    assert not (tmp_path / "host").exists()
