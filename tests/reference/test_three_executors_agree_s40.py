"""Probe s40 tripleexec: one invocation, three executors -- the C host `bobc build` writes (run
here up to its GPU bring-up: exit 6 means every input and output passed its checks), `bobc run
--reference` and `bobc sim --images` -- give the same exit code, the same words after `error:`
and leave the folder alike (nothing written on a refusal).  The expected behaviour is the C
host's, which docs/runtime.md ("Command line", "Files") and docs/formats.md describe; README:
the reference takes "same arguments, same refusals and exit codes as the host".

Finding 1: `--version` alone is the host's version text, exit 0 (runtime_c/host_version.c
rt_host_version_asked); the reference and the simulator refused it as "given alone", exit 2."""
from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
sys.path.insert(0, str(REPO / "examples" / "bob"))
OUT = ["--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"]


def bobc(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, argv)], capture_output=True, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    import numpy as np
    from bob_model.formats import InputRecord, encode_input_record

    folder = tmp_path_factory.mktemp("three")
    record = encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [119, 116, 32]))
    for argv in (["build", PLAN, "-o", folder / "bob-host"], ["build", PLAN, "--emit-images", folder / "images"]):
        done = bobc(*argv, cwd=folder)
        assert done.returncode == 0, done.stderr
    (folder / "record.bin").write_bytes(record)
    done = bobc("run", "--reference", PLAN, "train", "--input", "record.bin", *OUT, cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder, record, (folder / "c.bin").read_bytes()


def executors(folder: Path):
    return {"host": lambda argv, cwd: subprocess.run([str(folder / "bob-host"), *argv], capture_output=True, cwd=cwd,
                                                     timeout=300),
            "reference": lambda argv, cwd: bobc("run", "--reference", PLAN, *argv, cwd=cwd),
            "sim": lambda argv, cwd: bobc("sim", "--images", folder / "images", PLAN, *argv, cwd=cwd)}


def test_version_alone_is_the_hosts_version_text_everywhere(built, tmp_path):
    """The host's --version (its .bobc.version section, exit 0) is what the reference and the
    simulator print for the same line: the host both would build from this checkout."""
    folder, _, _ = built
    outcomes = {name: run(["--version"], tmp_path) for name, run in executors(folder).items()}
    for name, done in outcomes.items():
        assert (done.returncode, done.stderr) == (0, b""), (name, done.stderr)
    assert outcomes["host"].stdout.startswith(b"native host built by bobc ")
    assert outcomes["reference"].stdout == outcomes["host"].stdout
    assert outcomes["sim"].stdout == outcomes["host"].stdout
    assert list(tmp_path.iterdir()) == []


def _with_crc(data: bytes) -> bytes:
    return data[:-12] + struct.pack("<I", zlib.crc32(data[:-12])) + data[-8:]


def _set(data: bytes, at: int, value: bytes) -> bytes:
    return _with_crc(data[:at] + value + data[at + len(value):])


def refusals(record: bytes, checkpoint: bytes):
    """(files, argv): each refused by the host before its GPU, its folder untouched."""
    resume = ["train", "--input", "rec.bin", "--checkpoint", "ck.bin", *OUT]
    old = {"c.bin": b"old", "p.bin": b"old", "r.bin": b"old"}
    return {
        "version beside an operation": ({}, ["train", "--version"]),
        "record a byte short": ({"rec.bin": record[:-1], **old}, ["train", "--input", "rec.bin", *OUT]),
        "checkpoint cut short": ({"rec.bin": record, "ck.bin": checkpoint[:100], **old}, resume),
        "checkpoint of another schema": ({"rec.bin": record, "ck.bin": _set(checkpoint, 64, b"X"), **old}, resume),
        "checkpoint with no room to train": ({"rec.bin": record, "ck.bin": _set(checkpoint, 16, struct.pack(
            "<Q", 2**32 - 10)), **old}, resume),
        "an output's folder missing": ({"rec.bin": record}, ["train", "--input", "rec.bin", "--checkpoint-out",
                                                             "no/c.bin", "--predictions", "p.bin", "--result", "r.bin"]),
    }


@pytest.mark.parametrize("case", ["version beside an operation", "record a byte short", "checkpoint cut short",
                                  "checkpoint of another schema", "checkpoint with no room to train",
                                  "an output's folder missing"])
def test_a_refusal_is_the_same_in_all_three(built, tmp_path, case):
    folder, record, checkpoint = built
    files, argv = refusals(record, checkpoint)[case]
    seen = {}
    for name, run in executors(folder).items():
        where = tmp_path / name
        where.mkdir()
        for file_name, data in files.items():
            (where / file_name).write_bytes(data)
        done = run(argv, where)
        assert {p.name: p.read_bytes() for p in where.iterdir()} == files, name   # nothing written
        assert len(done.stderr.splitlines()) == 1, (name, done.stderr)
        seen[name] = (done.returncode, done.stderr.partition(b": error: ")[2])
    assert seen["host"][0] not in (0, 6), seen
    assert seen["reference"] == seen["host"] and seen["sim"] == seen["host"], seen
