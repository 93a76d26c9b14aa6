"""`bobc inspect HOST --extract DIR` writes the folder `bobc build --emit-images DIR` writes, byte for
byte (probe s28 determinism finding 6): manifest.json comes from the one writer of a manifest file
(bobc.nvidia.encode.manifest_text), not as the host's compact .bobc.manifest section.  Like
--emit-images, it first completes a publication a kill interrupted there (docs/runtime.md, Files)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLANS = {"bob": REPO / "examples/bob/Bob/Build/NativeHost.bob",
         "linreg": REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"}


def bobc(*args, env):
    done = subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def files_of(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def environment(tmp_path) -> dict:
    path = os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "BOBC_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": path}


@pytest.mark.parametrize("plan, target", [("bob", "sm_90"), ("linreg", "sm_86")])
def test_extract_writes_the_emitted_folder(tmp_path, plan, target):
    env = environment(tmp_path)
    bobc("build", PLANS[plan], "--target", target, "-o", tmp_path / "host", "--emit-images", tmp_path / "emitted",
         env=env)
    bobc("inspect", tmp_path / "host", "--extract", tmp_path / "extracted", env=env)
    emitted, extracted = files_of(tmp_path / "emitted"), files_of(tmp_path / "extracted")
    assert sorted(extracted) == sorted(emitted) == ["gpfifo.bin", "manifest.json", "program.bin", "push.bin", "qmd.bin"]
    for name in emitted:
        assert extracted[name] == emitted[name], f"{name}: the extracted file is not the emitted one"


def test_extract_completes_an_interrupted_extract(tmp_path):
    env = environment(tmp_path)
    bobc("build", PLANS["linreg"], "-o", tmp_path / "host", "--emit-images", tmp_path / "emitted", env=env)
    folder = tmp_path / "extracted"
    killed = subprocess.Popen([sys.executable, "-m", "bobc", "inspect", str(tmp_path / "host"), "--extract",
                               str(folder)], env={**env, "BOBC_IO_TEST_PAUSE_MS": "5000"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while not (folder / "program.bin").exists():       # the first rename
            assert killed.poll() is None and time.monotonic() < deadline, "the extract never began renaming"
            time.sleep(0.01)
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
    assert (folder / ".manifest.json.bob-journal").exists() and not (folder / "manifest.json").exists()
    done = bobc("inspect", tmp_path / "host", "--extract", folder, env=env)
    assert "completed an interrupted publication" in done.stderr, done.stderr
    assert files_of(folder) == files_of(tmp_path / "emitted")      # no journal, no temporary left


def test_extract_says_what_it_wrote_where(tmp_path):
    """Probe s36 newuser2 finding 7: `--extract DIR` created DIR and wrote its files with nothing
    said; now a last line names them, as `bobc build --emit-images` says where it wrote.  --json
    keeps stdout the one object."""
    env = environment(tmp_path)
    bobc("build", PLANS["bob"], "-o", tmp_path / "host", env=env)
    done = bobc("inspect", tmp_path / "host", "--extract", tmp_path / "out", env=env)
    written = {p.name for p in (tmp_path / "out").iterdir()}
    last = done.stdout.splitlines()[-1]
    assert last.startswith("wrote ") and last.endswith(f" to {tmp_path / 'out'}"), last
    assert set(last[len("wrote "):-len(f" to {tmp_path / 'out'}")].split(", ")) == written, (last, written)
    import json
    done = bobc("inspect", tmp_path / "host", "--extract", tmp_path / "again", "--json", env=env)
    assert json.loads(done.stdout)["ok"] is True
