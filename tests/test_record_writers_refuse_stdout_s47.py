"""The record writers a new user runs first refuse `-o -` as bobc does (probe s47 docsaudit).

README ("What a user is promised"): `-` as an output is a usage error, exit 2 -- bobc writes no
output to stdout -- and `./-` names a file called `-`; examples/coppelius/write_stream.py refuses
it the same way (docs/formats.md, "Token stream"), and docs/writing-a-plan.md says LinReg's
make_record.py "publishes the record as bobc publishes an output".  Yet `make_record.py -o -` and
Bob's quick-start `build_fixture.py ... -o -` exited 0 having written a file named `-` in the
working folder, nothing on stdout: a user piping the record (`-o - | xxd`) got neither.

The oracle is README's rule: exit 2, nothing written (no file `-`), the message naming `./-`;
`-o ./-` still writes a file named `-` of the record's size (LinReg: 16 + 64 x 7 x 4 + 64 x 4
bytes; Bob: docs/formats.md's 1564)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BOB = REPO / "examples/bob"
WRITERS = {
    "linreg": ([sys.executable, str(REPO / "examples/linear_regression/make_record.py")], 16 + 64 * 7 * 4 + 64 * 4),
    "bob": ([sys.executable, str(BOB / "build_fixture.py"), str(BOB / "corpus.txt"),
             "--prompts-file", str(BOB / "prompts.txt")], 1564),
}


def run(command, *args, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "compiler"),
                                                         *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([*command, *args], capture_output=True, cwd=cwd, env=env, timeout=120)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_dash_as_the_output_is_refused_as_bobc_refuses_it_s47(writer, tmp_path):
    command, _ = WRITERS[writer]
    done = run(command, "-o", "-", cwd=tmp_path)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stdout == b""
    assert list(tmp_path.iterdir()) == [], "nothing is written, no file named '-'"
    err = done.stderr.decode()
    assert "-o -" in err and "./-" in err and "stdout" in err, err
    assert len(err.strip().splitlines()) <= 3, err


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_dot_slash_dash_names_a_file_called_dash_s47(writer, tmp_path):
    command, size = WRITERS[writer]
    done = run(command, "-o", "./-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "-").stat().st_size == size
