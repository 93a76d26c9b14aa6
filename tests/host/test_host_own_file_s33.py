"""A plan host's own file is one of its inputs -- it reads its device images from /proc/self/exe
-- so an output (--predictions, --result, --checkpoint-out) or a BOBC_HOST_TIMING file that is
that file, by its path, a `../` spelling, a hard link or its absolute path, is refused before the
GPU is looked for, as an output that is an input is: exit 8, one line naming the host's file,
nothing written (probe s33 resources finding 3: on a GPU node `--result bob-host` would have
renamed the result over the host).  `--version` and `--help` past the file size limit
(`ulimit -f`), SIGXFSZ at its default disposition, say so on one line, exit 8, instead of a
silent death by the signal (probe s33 resources finding 4).  On this GPU-less machine a host
that passes every check stops at "no GPU" (exit 6)."""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    out = tmp_path_factory.mktemp("host") / "bob-host"
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", str(out)], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def folder(tmp_path, host):
    from bob_model.formats import InputRecord, encode_input_record

    (tmp_path / "record.bin").write_bytes(encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256,
                                                                          [119, 116, 32])))
    shutil.copy2(host, tmp_path / "h")
    os.link(tmp_path / "h", tmp_path / "hlink")
    (tmp_path / "sub").mkdir()
    return tmp_path


def run(folder, *arguments, env=None):
    return subprocess.run([str(folder / "h"), *arguments], cwd=folder, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


def files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("spelling", ["h", "./sub/../h", "hlink", "ABSOLUTE"])
@pytest.mark.parametrize("option", ["--predictions", "--result", "--checkpoint-out"])
def test_an_output_that_is_the_host_itself_is_refused(folder, spelling, option):
    named = str(folder / "h") if spelling == "ABSOLUTE" else spelling
    outputs = {"--checkpoint-out": "c.bin", "--predictions": "p.bin", "--result": "r.bin", option: named}
    before = files(folder)
    out = run(folder, "train", "--input", "record.bin", *[w for pair in outputs.items() for w in pair])
    assert (out.returncode, out.stderr) == (8, (
        f"h: error: output {named} ({option}): is the input {os.path.realpath(folder / 'h')} (this host's own "
        "file); an output never replaces an input; nothing was written\n"))
    assert files(folder) == before


def test_other_outputs_pass_the_checks(folder):
    out = run(folder, "train", "--input", "record.bin", "--checkpoint-out", "c.bin", "--predictions", "p.bin",
              "--result", "r.bin")
    assert out.returncode == 6, out.stderr          # every check passed: no GPU here


def test_a_timing_file_that_is_the_host_itself_is_refused(folder):
    before = files(folder)
    out = run(folder, "train", "--input", "record.bin", "--checkpoint-out", "c.bin", "--predictions", "p.bin",
              "--result", "r.bin", env={"BOBC_HOST_TIMING": "hlink"})
    assert (out.returncode, out.stderr) == (8, (
        f"h: error: BOBC_HOST_TIMING hlink: is the input {os.path.realpath(folder / 'h')} (this host's own file); "
        "a diagnostic file never replaces an input; nothing was written\n"))
    assert files(folder) == before


def _no_file_room():
    # SIGXFSZ is left at its default disposition (subprocess restores it before exec)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


@pytest.mark.parametrize("asked", ["--version", "--help"])
def test_stdout_past_the_file_size_limit_is_said_exit_8(folder, asked):
    with open(folder / "out.txt", "wb") as out:
        done = subprocess.run([str(folder / "h"), asked], stdout=out, stderr=subprocess.PIPE, text=True, timeout=60,
                              preexec_fn=_no_file_room)
    assert (done.returncode, done.stderr) == (8, (
        "h: error: cannot write to stdout: File too large (the file size limit, ulimit -f, is 0 bytes: raise it, "
        "then run again)\n"))
