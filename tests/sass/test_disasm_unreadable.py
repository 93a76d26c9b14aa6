"""`bobc disasm` of a path that is not a regular file of at most 1 GiB (probe s28 docs, finding 1):
refused by name, exit 2, without blocking and unread, as `bobc dump` and `bobc diff` refuse it
(docs/limits.md, the last row: bobc.nvidia.decode's check_input and bounded read)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest


def bobc(*args):
    # a hang fails here (TimeoutExpired)
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("arch", [[], ["--arch", "sm_90"], ["--arch", "sm_86"]])
def test_a_fifo_is_refused_never_waited_on(tmp_path, arch):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = bobc("disasm", fifo, *arch)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"bobc disasm: error: {fifo}: a FIFO, not a regular file\n"


def test_a_device_is_refused_unread():
    done = bobc("disasm", "/dev/zero")
    assert done.returncode == 2, done.stderr
    assert done.stderr == "bobc disasm: error: /dev/zero: a device, not a regular file\n"


@pytest.mark.parametrize("head", [b"", b"\x7fELF"])
def test_a_file_past_the_limit_is_refused_unread(tmp_path, head):
    """A raw stream (no ELF magic) or a host-looking file of 1 GiB + 1 byte (sparse: no disk is
    used) is refused by its size, naming the limit; it was read whole before (1 GB of memory)."""
    big = tmp_path / "big"
    with open(big, "wb") as handle:
        handle.write(head)
        handle.truncate((1 << 30) + 1)
    done = bobc("disasm", big)
    assert done.returncode == 1, done.stderr  # a file refused: 1 for every subcommand but diff (probe s30 cli finding 7)
    assert done.stderr == (f"bobc disasm: error: {big}: 1,073,741,825 bytes, more than this file can be "
                           "(1,073,741,824 bytes at most are read) (docs/limits.md: 1 GiB for any file bobc reads)\n")


def test_a_raw_stream_within_the_limit_is_still_disassembled(tmp_path):
    raw = tmp_path / "exit.bin"
    source = tmp_path / "exit.sass"
    source.write_text(".kernel k\n    EXIT ;\n")
    assert bobc("asm", source, "--arch", "sm_90", "-o", raw).returncode == 0
    done = bobc("disasm", raw)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("/*0000*/ [") and "EXIT ;" in done.stdout
