"""Probe s31 hostexe finding 11: `./worker0 --help` of a native host whose program names file
arguments (and takes no request options) was taken as file argument 0 and refused with the usage
(exit 2).  It now prints the usage on stdout and exits 0, the C host and the reference alike."""
from __future__ import annotations

import io
import os
import subprocess

import pytest

from native_helpers import write_host
from test_native_counts import program, read_file


@pytest.mark.parametrize("k", [1, 3])
def test_help_prints_the_usage_and_exits_0(tmp_path, k):
    from bobc.reference.native_program import run_program

    code = program(read_file(k - 1, 4))
    write_host(tmp_path, "worker", code)
    done = subprocess.run(["./worker", "--help"], cwd=tmp_path, capture_output=True, timeout=60,
                          env={**os.environ, "NATIVE_DEVICE": "memory"})
    stdout, stderr = io.BytesIO(), io.BytesIO()
    status = run_program(code, ["--help"], name="./worker", stdout=stdout, stderr=stderr)
    assert (done.returncode, done.stdout, done.stderr) == (status, stdout.getvalue(), stderr.getvalue())
    assert status == 0 and done.stderr == b""
    listed = " ".join(f"ARG{a} ({'read' if a == k - 1 else 'unused'})" for a in range(k))
    assert done.stdout.decode() == (f"usage: ./worker {listed}\n       ./worker --version\n"
                                    f"the program names {k} file argument{'s' * (k != 1)}, each a path, in this order\n")


def test_a_file_named_help_is_given_as_dot_slash(tmp_path):
    code = program(read_file(0, 4))
    host = write_host(tmp_path, "worker", code)
    (tmp_path / "--help").write_bytes(b"abcd")
    done = subprocess.run([str(host), "./--help"], cwd=tmp_path, capture_output=True, timeout=60,
                          env={**os.environ, "NATIVE_DEVICE": "memory"})
    assert b"usage" not in done.stderr, done.stderr
