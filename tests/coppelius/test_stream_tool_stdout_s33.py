"""write_stream.py when stdout cannot take its success line (probe s33 resources, write_stream.py
with an unwritable stdout): the stream is published first, so a full stdout (`> /dev/full`), a
closed one or a reader gone away is one line on stderr at most, never a traceback, and the exit
code is 0 -- the stream was written (docs/coppelius-host.md: 8 is "not written")."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from coppelius_model import stream

from .conftest import EXAMPLE, REPOSITORY

TOOL = EXAMPLE / "write_stream.py"
TEXT = REPOSITORY / "examples" / "bob" / "corpus.txt"


def environment(unbuffered: bool) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


def expected_stream() -> bytes:
    return stream.from_bytes(TEXT.read_bytes()).encode()


def written_anyway(output, reason: str) -> str:
    count = len(TEXT.read_bytes())
    return (f"write_stream.py: the stream was written, but its message could not be printed on stdout ({reason}): "
            f"wrote {output}: {count} tokens\n")


@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_full_stdout_is_one_line_and_the_exit_says_the_stream_was_written(tmp_path, unbuffered):
    output = tmp_path / "s.bin"
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, str(TOOL), str(TEXT), "-o", str(output)], stdout=full,
                              stderr=subprocess.PIPE, text=True, env=environment(unbuffered), timeout=120)
    assert done.returncode == 0
    assert done.stderr == written_anyway(output, "No space left on device")
    assert output.read_bytes() == expected_stream()
    assert [p.name for p in tmp_path.iterdir()] == ["s.bin"]


def test_a_closed_stdout_is_one_line_and_exit_0(tmp_path):
    output = tmp_path / "s.bin"
    done = subprocess.run([sys.executable, str(TOOL), str(TEXT), "-o", str(output)], stderr=subprocess.PIPE,
                          text=True, preexec_fn=lambda: os.close(1), timeout=120)
    assert done.returncode == 0
    assert done.stderr == written_anyway(output, "stdout is closed")
    assert output.read_bytes() == expected_stream()


@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_reader_gone_away_says_nothing_more_and_exit_0(tmp_path, unbuffered):
    output = tmp_path / "s.bin"
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, str(TOOL), str(TEXT), "-o", str(output)], stdout=write,
                              stderr=subprocess.PIPE, text=True, env=environment(unbuffered), timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 0 and done.stderr == ""
    assert output.read_bytes() == expected_stream()
