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
    # test_native_counts.program's identity is b"counts": the plan that built it says what each is
    assert done.stdout.decode() == (f"usage: ./worker {listed}\n       ./worker --version\n"
                                    f"the program names {k} file argument{'s' * (k != 1)}, each a path, in this order\n"
                                    "it carries no names for them: the plan that built program counts says what "
                                    "each is\n")


def test_a_file_named_help_is_given_as_dot_slash(tmp_path):
    code = program(read_file(0, 4))
    host = write_host(tmp_path, "worker", code)
    (tmp_path / "--help").write_bytes(b"abcd")
    done = subprocess.run([str(host), "./--help"], cwd=tmp_path, capture_output=True, timeout=60,
                          env={**os.environ, "NATIVE_DEVICE": "memory"})
    assert b"usage" not in done.stderr, done.stderr


def test_the_usage_says_where_the_arguments_meaning_is(tmp_path):
    """Probe s37 leftovers, finding 8: the usage listed ARG0 ... ARGn and nothing of what each is.
    A native program's bytes carry no argument names (NPHY, version, slots, state, identity,
    commands: a file command names its argument by index alone), so none is invented: the usage
    and --help say the program carries none and name the plan that built it by the program's
    identity, shown as --version shows it (a control character as '?')."""
    from bobc.reference.native_program import run_program

    code = program(read_file(1, 4), identity=b"pair\nworker-v2")
    write_host(tmp_path, "worker", code)
    note = b"it carries no names for them: the plan that built program pair?worker-v2 says what each is"
    environ = {**os.environ, "NATIVE_DEVICE": "memory"}
    for arguments, stream in ((["--help"], "stdout"), ([], "stderr")):
        done = subprocess.run(["./worker", *arguments], cwd=tmp_path, capture_output=True, timeout=60, env=environ)
        stdout, stderr = io.BytesIO(), io.BytesIO()
        status = run_program(code, arguments, name="./worker", stdout=stdout, stderr=stderr)
        assert (done.returncode, done.stdout, done.stderr) == (status, stdout.getvalue(), stderr.getvalue())
        said = getattr(done, stream)
        assert note in said and b"ARG0 (unused) ARG1 (read)" in said, said
    assert done.stderr == (b"native: usage: ./worker ARG0 (unused) ARG1 (read): the program names 2 file "
                           b"arguments, 0 given (" + note + b")\n")
