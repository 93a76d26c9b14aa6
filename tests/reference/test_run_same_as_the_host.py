"""Probe s31 hostexe: `bobc run PLAN train|predict --reference` takes the host's arguments and
gives its refusals word for word (README: "same arguments, same refusals and exit codes"):
a shortened option is refused as the host refuses it (finding 1), `--input=-x` is one word
(finding 2), argparse's own words are gone (finding 5), an output's and a journal's refusal is
the host's one line (finding 5), BOBC_HOST_TIMING naming an input is refused alike (finding 6),
also with bobc's own options before the plan or the operation (probe s31 today finding 1).
And the host itself: --help/--version to a full stdout exit 8 (finding 7); an execute-only host
says it cannot read itself, exit 1, not "damaged" (finding 8)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
sys.path.insert(0, str(REPO / "examples" / "bob"))
OUT = ["--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"]


def run(argv, cwd, env=None, **kw):
    return subprocess.run(list(map(str, argv)), capture_output=True, cwd=cwd, env=env, timeout=300, **kw)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    import numpy as np
    from bob_model.formats import InputRecord, encode_input_record

    folder = tmp_path_factory.mktemp("same-as-host")
    folder.chmod(0o755)
    record = encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [119, 116, 32]))
    (folder / "record.bin").write_bytes(record)
    (folder / "-rec.bin").write_bytes(record)
    host = folder / "bob-host"
    done = run([sys.executable, "-m", "bobc", "build", PLAN, "-o", host], folder)
    assert done.returncode == 0, done.stderr
    return folder, host


def both(setup, argv, env=None):
    folder, host = setup
    native = run([host, *argv], folder, env)
    reference = run([sys.executable, "-m", "bobc", "run", PLAN, *argv, "--reference"], folder, env)
    return native, reference


CASES = {
    "shortened option": ["train", "--inp", "record.bin", *OUT],
    "shortened output option": ["train", "--input", "record.bin", "--checkpoint-o", "c.bin", "--pred", "p.bin",
                                "--result", "r.bin"],
    "unknown operation": ["bogus", "--input", "record.bin", *OUT],
    "no operation": ["--input", "record.bin", *OUT],
    "extra word": ["train", "--input", "record.bin", *OUT, "extra"],
    "version with a value": ["--version=1"],
    "version with a value beside others": ["train", "--input", "record.bin", *OUT, "--version=1"],
    "version beside others": ["train", "--input", "record.bin", *OUT, "--version"],
    "a value that is an option": ["train", "--input", "--checkpoint-out", "c.bin"],
    "a short option": ["train", "--input", "record.bin", *OUT, "-x"],
    "a dash value starting with -: a missing checkpoint": ["train", "--input=-rec.bin", "--checkpoint=-nope", *OUT],
    "output folder missing": ["train", "--input", "record.bin", "--checkpoint-out", "nodir/c.bin",
                              "--predictions", "p.bin", "--result", "r.bin"],
    "output a folder": ["train", "--input", "record.bin", "--checkpoint-out", ".", "--predictions", "p.bin",
                        "--result", "r.bin"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_reference_refuses_in_the_hosts_words(setup, name):
    native, reference = both(setup, CASES[name])
    assert native.returncode in (2, 4, 8), native.stderr
    assert reference.returncode == native.returncode, (native.stderr, reference.stderr)
    assert native.stderr.startswith(b"bob-host: error: ") and reference.stderr.startswith(b"bobc run: error: ")
    assert native.stderr.partition(b": error: ")[2] == reference.stderr.partition(b": error: ")[2]
    assert len(reference.stderr.splitlines()) == 1
    folder, _ = setup
    assert not any((folder / n).exists() for n in ("c.bin", "p.bin", "r.bin"))


# probe s31 today finding 1: bobc's own options may stand anywhere; the host's words keep their
# order and are still judged by the host's rules, word for word
PLACED = {"shortened option": ["--inp", "record.bin", *OUT],
          "a dash value starting with -: a missing checkpoint": ["--input=-rec.bin", "--checkpoint=-nope", *OUT],
          "an empty value": ["--input=", *OUT],
          "a repeated option": ["--input", "record.bin", *OUT, "--input", "record.bin"],
          "extra word": ["--input", "record.bin", *OUT, "extra"],
          "version with a value": ["--input", "record.bin", *OUT, "--version=1"],
          "a missing input": ["--input", "nothere.bin", *OUT]}
OWN = ["--reference", "--target", "sm_86", "--entry", "bobNativeHost", "-I", "."]


@pytest.mark.parametrize("placement", ["before the plan", "between the plan and the operation", "after the operation"])
@pytest.mark.parametrize("name", sorted(PLACED))
def test_bobcs_options_anywhere_leave_the_hosts_words_to_the_hosts_rules(setup, name, placement):
    folder, host = setup
    words = PLACED[name]
    native = run([host, "train", *words], folder)
    where = {"before the plan": [*OWN, PLAN, "train"], "between the plan and the operation": [PLAN, *OWN, "train"],
             "after the operation": [PLAN, "train", *OWN]}[placement]
    reference = run([sys.executable, "-m", "bobc", "run", *where, *words], folder)
    assert native.returncode in (2, 3, 4), native.stderr
    assert reference.returncode == native.returncode, (native.stderr, reference.stderr)
    assert native.stderr.partition(b": error: ")[2] == reference.stderr.partition(b": error: ")[2]
    assert reference.stderr.startswith(b"bobc run: error: ") and len(reference.stderr.splitlines()) == 1
    assert not any((folder / n).exists() for n in ("c.bin", "p.bin", "r.bin"))


def test_a_damaged_journal_is_refused_in_the_hosts_words(setup):
    folder, _ = setup
    (folder / ".c.bin.bob-journal").write_bytes(b"garbage")
    try:
        native, reference = both(setup, ["train", "--input", "record.bin", *OUT])
    finally:
        (folder / ".c.bin.bob-journal").unlink()
    assert native.returncode == reference.returncode == 8
    assert native.stderr.partition(b": error: ")[2] == reference.stderr.partition(b": error: ")[2]
    assert native.stderr.startswith(b"bob-host: error: journal ./.c.bin.bob-journal: a damaged publication journal")


def test_a_timing_file_naming_the_input_is_refused_by_both(setup):
    native, reference = both(setup, ["train", "--input", "record.bin", *OUT],
                             env=dict(os.environ, BOBC_HOST_TIMING="record.bin"))
    assert native.returncode == reference.returncode == 8, (native.stderr, reference.stderr)
    assert native.stderr.partition(b": error: ")[2] == reference.stderr.partition(b": error: ")[2] == (
        b"BOBC_HOST_TIMING record.bin: is the input record.bin; a diagnostic file never replaces an input; "
        b"nothing was written\n")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("option", ["--help", "--version"])
def test_help_and_version_to_a_full_stdout_exit_8(setup, option):
    folder, host = setup
    with open("/dev/full", "wb") as full:
        done = subprocess.run([str(host), option], stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert done.returncode == 8
    assert done.stderr == b"bob-host: error: cannot write to stdout: No space left on device\n"
    closed = subprocess.run(f"exec '{host}' {option} >&-", shell=True, stderr=subprocess.PIPE, timeout=60)
    assert closed.returncode == 8 and closed.stderr.startswith(b"bob-host: error: cannot write to stdout: ")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_an_execute_only_host_says_it_cannot_read_itself(setup):
    folder, host = setup
    xonly = folder / "xonly-host"
    shutil.copy(host, xonly)
    xonly.chmod(0o711)
    done = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", xonly, "--version"], folder)
    assert done.returncode == 1, done.stderr
    assert done.stderr.decode() == (f"xonly-host: error: cannot read its own file {xonly}: Permission denied; the host "
                                    f"reads its device images from it: make it readable (chmod +r {xonly})\n")


# probe s32 leftovers finding 2: from the operation on, --help and -h are the host's (docs/runtime.md):
# the reference prints the host's usage byte for byte, the program named `bobc run PLAN --reference`
@pytest.mark.parametrize("words", [["train", "--help"], ["predict", "-h", "--input", "x"],
                                   ["train", "--input", "record.bin", "--", "--help"]])
def test_help_after_the_operation_is_the_hosts_usage(setup, words):
    folder, host = setup
    name = f"bobc run {PLAN} --reference"
    native = subprocess.run([name, *[w for w in words if w != "--"]], executable=str(host), capture_output=True,
                            cwd=folder, timeout=60)
    assert native.returncode == 0 and native.stdout.startswith(f"usage: {name} train|predict".encode())
    reference = run([sys.executable, "-m", "bobc", "run", "--reference", PLAN, *words], folder)
    assert (reference.returncode, reference.stdout, reference.stderr) == (0, native.stdout, b"")
    assert not any((folder / n).exists() for n in ("c.bin", "p.bin", "r.bin"))


def test_help_before_the_operation_is_bobcs(setup):
    folder, _ = setup
    done = run([sys.executable, "-m", "bobc", "run", PLAN, "--help", "train", "--reference"], folder)
    assert done.returncode == 0 and done.stdout.startswith(b"usage: bobc run ")
