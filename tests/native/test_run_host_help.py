"""Probe s32 leftovers finding 2: `bobc run PLAN native --help --reference --entry DEF` printed bobc's
own help instead of the host's.  From the operation on, every word that is not one of bobc's own
options is the host's, -h and --help included, and after `--` every word is (docs/native-host.md,
"The reference interpreter"; docs/runtime.md): the reference prints what the C host prints, byte for
byte, its program named DEF.  Before the operation --help stays bobc's."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from native_helpers import PLANS, load_module, program_bytes, write_host

COMMANDS = PLANS / "Native" / "Commands.bob"
REQUEST = PLANS / "Native" / "Request.bob"
ENVIRONMENT = {**os.environ, "NATIVE_DEVICE": "memory",
               "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "compiler")}


def bobc(*words, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *words], capture_output=True, cwd=cwd, env=ENVIRONMENT,
                          timeout=600)


def host_said(host: Path, name: str, *words, cwd):
    """The C host run under the name `name` (its argv[0]), as the reference names the program."""
    return subprocess.run([name, *words], executable=str(host), capture_output=True, cwd=cwd, env=ENVIRONMENT,
                          timeout=60)


@pytest.fixture(scope="module")
def arithmetic(tmp_path_factory):
    folder = tmp_path_factory.mktemp("help-host")
    return write_host(folder, "arithmetic-host", program_bytes(load_module(COMMANDS), "arithmetic"))


PLACED = {
    "right after native": ["native", "--help", "--reference", "--entry", "arithmetic"],
    "after bobc's options": ["native", "--reference", "--entry", "arithmetic", "--help"],
    "among bobc's options": ["--reference", "native", "-h", "--entry", "arithmetic"],
    "after --": ["native", "--reference", "--entry", "arithmetic", "--", "--help"],
}


@pytest.mark.parametrize("placement", sorted(PLACED))
def test_help_after_native_is_the_hosts(tmp_path, arithmetic, placement):
    words = PLACED[placement]
    expected = host_said(arithmetic, "arithmetic", "-h" if "-h" in words else "--help", cwd=tmp_path)
    if "-h" in words:       # the host takes --help alone: -h is a file argument there, refused by the count
        assert expected.returncode == 2
    else:
        assert expected.returncode == 0 and expected.stdout.startswith(b"usage: arithmetic ARG0 (read)")
    reference = bobc("run", str(COMMANDS), *words, cwd=tmp_path)
    assert (reference.returncode, reference.stdout, reference.stderr) == \
        (expected.returncode, expected.stdout, expected.stderr)


def test_help_before_native_is_bobcs(tmp_path):
    for words in (["--help"], ["--help", "native", "--reference", "--entry", "arithmetic"]):
        done = bobc("run", str(COMMANDS), *words, cwd=tmp_path)
        assert done.returncode == 0 and done.stdout.startswith(b"usage: bobc run "), done.stdout[:200]
        assert b"-h and --help included" in done.stdout         # the rule, in bobc's own help


def test_words_after_the_separator_are_the_programs_even_bobcs_option_names(tmp_path, arithmetic):
    """`-- --entry`: the program's file argument named --entry (one given of two: the usage refusal)."""
    expected = host_said(arithmetic, "arithmetic", "--entry", cwd=tmp_path)
    assert expected.returncode == 2 and b"2 file arguments, 1 given" in expected.stderr
    reference = bobc("run", str(COMMANDS), "native", "--reference", "--entry", "arithmetic", "--", "--entry",
                     cwd=tmp_path)
    assert (reference.returncode, reference.stdout, reference.stderr) == (2, b"", expected.stderr)


def test_a_request_programs_help_is_its_own(tmp_path):
    host = write_host(tmp_path, "request-host", program_bytes(load_module(REQUEST), "requestProgram"))
    expected = host_said(host, "requestProgram", "train", "--help", cwd=tmp_path)
    assert expected.returncode == 0 and expected.stdout.startswith(b"usage: requestProgram train|predict")
    reference = bobc("run", str(REQUEST), "native", "train", "--help", "--reference", "--entry", "requestProgram",
                     cwd=tmp_path)
    assert (reference.returncode, reference.stdout, reference.stderr) == (0, expected.stdout, expected.stderr)
