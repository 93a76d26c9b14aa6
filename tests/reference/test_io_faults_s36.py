"""Probe s36 faultinject: I/O faults injected into the publication, the host's (runtime_c/host_io.c,
through runtime_c/tests/rt_tool) and the reference runner's (bobc.reference.safe_io) alike.  An
LD_PRELOAD shim (io_fault_shim.c, built here) makes close() or fsync() fail with EIO on the
files the test names, so each fault is deterministic.

Finding 1: a temporary whose close() fails (NFS and FUSE report write-back errors there) was
a traceback on the reference side, its temporary left; it is refused as the host refuses it,
exit 8, nothing published, nothing left.
Finding 2: a folder fsync that fails after every rename was exit 8 "outputs published" on the
host, its journal left for the next invocation to "complete", and silence on the reference
side; both now say one warning, keep exit 0 (the outputs were written) and remove the journal."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_safe_io_journal import tool  # noqa: E402, F401 -- the rt_tool fixture (runtime_c/tests/rt_tool)

REPO = Path(__file__).resolve().parents[2]
OPTIONS = ("--predictions", "--result", "--checkpoint-out")

# safe_io's side of `rt_tool publish TAG P R C`: the same three outputs, the same bytes
REFERENCE = r"""
import json, sys
from bobc.reference import safe_io
from bobc.reference.errors import OutputWriteFailure
paths = sys.argv[2:5]
try:
    safe_io.recover(paths)
    files = safe_io.OutputSet()
    for path, option in zip(paths, ("--predictions", "--result", "--checkpoint-out")):
        files.add(path, option)
        files.stage(option, f"{sys.argv[1]} {option}\n".encode())
    files.publish()
except OutputWriteFailure as error:
    print(json.dumps([8, error.host_form()]))
else:
    print(json.dumps([0, ""]))
"""

# `bobc build -o`'s publication: one executable, its mode set (safe_io.publish_file)
EXECUTABLE = r"""
import sys
from bobc.reference import safe_io
from bobc.reference.errors import OutputWriteFailure
try:
    safe_io.publish_file(sys.argv[1], b"new host", "-o", mode=0o755)
except OutputWriteFailure as error:
    print(f"refused: {error.message} | {error.hint}")
else:
    print("published")
"""


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    out = tmp_path_factory.mktemp("io-fault") / "io_fault_shim.so"
    built = subprocess.run(["gcc", "-O1", "-Wall", "-Werror", "-shared", "-fPIC",
                            str(Path(__file__).with_name("io_fault_shim.c")), "-o", str(out)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    return out


def faulted(shim, op: str, path: str) -> dict:
    return {**os.environ, "LD_PRELOAD": str(shim), "IO_FAULT_OP": op, "IO_FAULT_PATH": path,
            "PYTHONPATH": str(REPO / "compiler")}


def c_publish(tool, folder: Path, tag: str, env=None) -> tuple[int, str]:  # noqa: F811
    done = subprocess.run([str(tool), "publish", tag, "p", "r", "c"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stderr


def reference_publish(folder: Path, tag: str, env=None) -> tuple[int, str, str]:
    environment = env or {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    done = subprocess.run([sys.executable, "-c", REFERENCE, tag, "p", "r", "c"], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    code, message = json.loads(done.stdout)
    return code, message, done.stderr


def contents(folder: Path) -> dict:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


def old_outputs(tool, folder: Path) -> dict:  # noqa: F811
    folder.mkdir()
    assert c_publish(tool, folder, "old")[0] == 0
    before = contents(folder)
    assert before == {"c": "old --checkpoint-out\n", "p": "old --predictions\n", "r": "old --result\n"}
    return before


def test_a_temporary_whose_close_fails_is_refused_alike_and_removed(tool, shim, tmp_path):  # noqa: F811
    said = {}
    for side in ("c", "reference"):
        folder = tmp_path / side
        before = old_outputs(tool, folder)
        env = faulted(shim, "close", f"{folder.resolve()}/.r.tmp-*")
        if side == "c":
            code, stderr = c_publish(tool, folder, "new", env)
            assert stderr.startswith("host: error: "), stderr
            said[side] = (code, stderr[len("host: error: "):].rstrip("\n"))
        else:
            code, message, stderr = reference_publish(folder, "new", env)
            assert "Traceback" not in stderr, stderr
            said[side] = (code, message)
        assert contents(folder) == before, f"{side}: the earlier outputs changed or a temporary was left"
    assert said["c"] == said["reference"] == (
        8, "output r: close of the temporary file failed: Input/output error (nothing was published)")


def test_an_executable_whose_close_fails_is_refused_and_removed(shim, tmp_path):
    """bobc build -o's publication (safe_io.publish_file with a mode)."""
    (tmp_path / "host").write_bytes(b"old host")
    done = subprocess.run([sys.executable, "-c", EXECUTABLE, "host"], cwd=tmp_path,
                          env=faulted(shim, "close", f"{tmp_path.resolve()}/.host.tmp-*"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ("refused: host: cannot write output (-o): write failed: Input/output error | nothing was "
                           "published; the files there "
                           "are unchanged\n")
    assert contents(tmp_path) == {"host": "old host"}


WARNING = ("warning: the outputs were published, but fsync of their folder {} failed: Input/output error; they are "
           "in place, but may not survive a crash or power loss: check the disk (dmesg)\n")


def test_a_folder_fsync_that_fails_after_the_renames_is_a_warning_alike(tool, shim, tmp_path):  # noqa: F811
    """Every fsync of the outputs' folder fails (those before the renames, of the journal's name,
    are not checked on either side): the outputs are new, the status 0, the journal removed, and
    the next invocation has nothing to complete."""
    new = {"c": "new --checkpoint-out\n", "p": "new --predictions\n", "r": "new --result\n"}
    for side in ("c", "reference"):
        folder = tmp_path / side
        old_outputs(tool, folder)
        env = faulted(shim, "fsync", str(folder.resolve()))
        if side == "c":
            code, stderr = c_publish(tool, folder, "new", env)
            assert (code, stderr) == (0, "host: " + WARNING.format("."))
        else:
            code, message, stderr = reference_publish(folder, "new", env)
            assert (code, message, stderr) == (0, "", "bobc: " + WARNING.format("."))
        assert contents(folder) == new, f"{side}: a journal or temporary left, or an output not new"
        # the next invocation: nothing interrupted, nothing to complete
        code, stderr = c_publish(tool, folder, "next")
        assert (code, stderr) == (0, "")
        code, message, stderr = reference_publish(folder, "again")
        assert (code, message, stderr) == (0, "", "")
