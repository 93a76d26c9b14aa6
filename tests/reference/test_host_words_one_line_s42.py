"""A word the user gave that a plan host's parser refuses is shown with its control characters as
'?', by the host and by `bobc run --reference` alike, so the refusal stays one line (probe s42 cli3):
`HOST $'tr\\nain' ...` and `bobc run PLAN $'tr\\nain' --reference ...` said "unknown operation 'tr",
a line break, then "ain' (expected train or predict)".  runtime_c/host_runtime.h: "A message is one
line"; every other word a refusal names goes through shown_text / errors.printable.  Expected: the
parser's own sentence with '?' in place of each control character, the same after "error: " from
both, one line, exit 2."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = str(REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob")
OUT = ["--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"]


def run(argv, folder):
    return subprocess.run([str(a) for a in argv], cwd=folder, capture_output=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("host-words")
    (folder / "record.bin").write_bytes(b"\0" * 64)
    host = folder / "linreg-host"
    done = run([sys.executable, "-m", "bobc", "build", PLAN, "-o", host], folder)
    assert done.returncode == 0, done.stderr
    return folder, host


CASES = {
    "operation": (["tr\nain", "--input", "record.bin", *OUT],
                  "unknown operation 'tr?ain' (expected train or predict) (see --help)"),
    "extra word": (["train", "--input", "record.bin", *OUT, "ex\ttra"],
                   "unexpected argument 'ex?tra' (the operation is already given) (see --help)"),
    "short option": (["train", "-\x1bx", "--input", "record.bin", *OUT], "unknown option '-?x' (see --help)"),
    "long option": (["train", "--in\nput", "record.bin", *OUT], "unknown option '--in?put' (see --help)"),
    "next word": (["train", "--input", "-x\ny", *OUT],
                  "option --input needs a value; the next word, '-x?y', is an option (write --input=VALUE for a "
                  "value starting with '-') (see --help)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_refused_word_is_shown_on_one_line(setup, name):
    folder, host = setup
    argv, said = CASES[name]
    native = run([host, *argv], folder)
    reference = run([sys.executable, "-m", "bobc", "run", PLAN, *argv, "--reference"], folder)
    assert native.returncode == reference.returncode == 2, (native.stderr, reference.stderr)
    assert native.stderr == f"{host.name}: error: {said}\n".encode(), native.stderr
    assert reference.stderr == f"bobc run: error: {said}\n".encode(), reference.stderr
