"""`bobc build -o HOST --emit-images DIR --emit-c FILE` publishes its outputs all or nothing, also
when a signal or a failure comes between them (probe s42 cli3 finding 3).  The images were
published first, on their own, then the generated C and the host: SIGINT 2.5 s into a LinReg
build exited 130 ("bobc: interrupted") with DIR written and neither FILE nor HOST, and a host
that could not be written left DIR's images replaced.  The expected outcomes are the documented
rule, not this implementation's output: README, "Outputs are all or nothing" (a failure publishes
none; the renames run under one journal, with SIGINT, SIGTERM and SIGHUP waiting until the last
is done), and docs/native-host.md.  Now the three are one publication (commands/build.py
publish_build): a signal before the renames leaves nothing, one during them waits until all are
in place (the exit code stays the signal's), and a failure leaves every earlier file as it was.
Each case is raised at its exact place by a driver around bobc's own entry point."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
IMAGES = ["gpfifo.bin", "manifest.json", "program.bin", "push.bin", "qmd.bin"]

# bobc's entry point, SIGINT raised just before the build's outputs are published
BEFORE = """
import signal
import bobc.commands.build as build
real = build.write_host
def write_host(*args, **named):
    signal.raise_signal(signal.SIGINT)
    return real(*args, **named)
build.write_host = write_host
"""

# SIGINT raised right after the first rename (the images' program.bin): the others still to come
DURING = """
import os, signal
real = os.replace
def replace(source, destination, *args, **named):
    done = real(source, destination, *args, **named)
    if os.fspath(destination).endswith("program.bin"):
        signal.raise_signal(signal.SIGINT)
    return done
os.replace = replace
"""

# the host's temporary cannot be written (a full disk): the images' and the C's were
FULL = """
import errno, os
import bobc.reference.safe_io as safe_io
real = safe_io.write_all
def write_all(fd, data):
    if ".host.tmp-" in os.readlink(f"/proc/self/fd/{fd}"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real(fd, data)
safe_io.write_all = write_all
"""

# as a terminal's command has them: a test run in the background has SIGINT ignored, and bobc keeps an
# ignored one (tests/test_cli_signals.py)
MAIN = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from bobc.cli import main
sys.exit(main(sys.argv[1:]))
"""


def build(tmp_path, driver, *emit_c):
    return subprocess.run([sys.executable, "-c", driver + MAIN, "build", str(PLAN), "-o", "host",
                           "--emit-images", "images", *emit_c], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})


def everything(folder: Path) -> dict:
    """Every file under `folder` (hidden ones too: a temporary or journal left) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("emit_c", [(), ("--emit-c", "host.c")], ids=["host", "host-and-c"])
def test_a_signal_before_the_publication_leaves_nothing(tmp_path, emit_c):
    done = build(tmp_path, BEFORE, *emit_c)
    assert done.returncode == 130, done.stderr
    assert done.stderr.splitlines()[-1] == "bobc: interrupted", done.stderr
    assert "Traceback" not in done.stderr
    assert os.listdir(tmp_path) == []       # no images folder either: the build made none


@pytest.mark.parametrize("emit_c", [(), ("--emit-c", "host.c")], ids=["host", "host-and-c"])
def test_a_signal_between_the_renames_waits_for_the_last(tmp_path, emit_c):
    done = build(tmp_path, DURING, *emit_c)
    assert done.returncode == 130, done.stderr
    assert done.stderr.splitlines()[-1] == "bobc: interrupted", done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(os.listdir(tmp_path)) == ["host", *(["host.c"] if emit_c else []), "images"]
    assert sorted(os.listdir(tmp_path / "images")) == IMAGES
    assert os.access(tmp_path / "host", os.X_OK)


def test_a_host_that_cannot_be_written_leaves_the_earlier_outputs(tmp_path):
    (tmp_path / "images").mkdir()
    for name in IMAGES:
        (tmp_path / "images" / name).write_bytes(b"earlier " + name.encode())
    (tmp_path / "host.c").write_bytes(b"earlier C")
    (tmp_path / "host").write_bytes(b"earlier host")
    before = everything(tmp_path)
    done = build(tmp_path, FULL, "--emit-c", "host.c")
    assert done.returncode == 8, done.stderr
    assert "No space left on device" in done.stderr and "Traceback" not in done.stderr
    assert everything(tmp_path) == before


def test_a_host_that_cannot_be_written_leaves_no_image_folder(tmp_path):
    done = build(tmp_path, FULL)
    assert done.returncode == 8, done.stderr
    assert os.listdir(tmp_path) == []
