"""`bobc run PLAN OPERATION` and `bobc sim` with --entry naming a native host's Bytes point to
`bobc run PLAN native` (probe s30 cli finding 8).  Before, both said "a native host: build it with
-o, not as a plan host", the build's advice; a native host runs on the reference interpreter as
`bobc run PLAN native ARGUMENTS... --reference --entry DEF` (docs/native-host.md)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = "Native/Request.bob"         # tests/native/plans: requestHost is its host's Bytes


@pytest.mark.parametrize("command", [["run", "--reference"], ["sim"]])
def test_a_native_host_entry_is_pointed_to_run_native(tmp_path, command):
    (tmp_path / "in.bin").write_bytes(b"")
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off"}
    done = subprocess.run([sys.executable, "-m", "bobc", command[0], PLAN, "train", *command[1:],
                           "--entry", "requestHost", "--input", str(tmp_path / "in.bin"),
                           "--checkpoint-out", str(tmp_path / "c"), "--predictions", str(tmp_path / "p"),
                           "--result", str(tmp_path / "r")],
                          cwd=REPO / "tests/native/plans", env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("bobc: compiling the C runtime")]
    # judged by its declared type (Bytes), before the host is evaluated (probe s42 cli3 finding 1: the
    # words given or not, the same refusal; before, the built ELF's size was said at the definition)
    assert lines[0] == (f"bobc {command[0]}: error: requestHost is Bytes (a native host, not a plan host); "
                        f"`bobc {command[0]}` runs a plan host's train or predict"), lines[0]
    assert "build it with -o" not in lines[0]
    assert lines[-1] == (f"hint: run it with `bobc run {PLAN} native ARGUMENTS... --reference --entry requestHost` "
                         "(docs/native-host.md, \"The reference interpreter\"), or build it with "
                         f"`bobc build {PLAN} --entry requestHost -o HOST`")
    assert "Traceback" not in done.stderr
    assert sorted(os.listdir(tmp_path)) == ["in.bin"]
