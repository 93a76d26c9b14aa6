"""Probe s31 hostexe finding 10: a path holding a byte that is not UTF-8 (0xff) is printed by the C
host as that byte; `bobc run --reference` printed Python's escape (`\\udcff`).  Both now carry the
path's own bytes, byte for byte: an input that does not exist, an output in a folder that does
not exist (as far as the host goes without a GPU), on the plan host and on a native request host."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
sys.path.insert(0, str(REPO / "examples" / "bob"))
sys.path.insert(0, str(REPO / "tests" / "native"))
ODD = b"\xff\xfe"


def run(argv, cwd, env=None):
    return subprocess.run(argv, capture_output=True, cwd=cwd, env=env, timeout=300)


@pytest.fixture(scope="module")
def bob(tmp_path_factory):
    import numpy as np
    from bob_model.formats import InputRecord, encode_input_record

    folder = tmp_path_factory.mktemp("path-bytes")
    (folder / "record.bin").write_bytes(encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [119, 116, 32])))
    host = folder / "bob-host"
    done = run([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", str(host)], folder)
    assert done.returncode == 0, done.stderr
    return folder, host


CASES = {
    "a missing input": [b"train", b"--input", ODD + b".bin", b"--checkpoint-out", b"c.bin", b"--predictions",
                        b"p.bin", b"--result", b"r.bin"],
    "an output in a missing folder": [b"train", b"--input", b"record.bin", b"--checkpoint-out", ODD + b"d/c.bin",
                                      b"--predictions", b"p.bin", b"--result", b"r.bin"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_plan_reference_prints_the_paths_bytes_as_the_host(bob, name):
    folder, host = bob
    words = CASES[name]
    native = run([bytes(host), *words], folder)
    reference = run([sys.executable.encode(), b"-m", b"bobc", b"run", bytes(PLAN), *words, b"--reference"], folder)
    assert native.returncode in (3, 8), native.stderr
    assert reference.returncode == native.returncode, (native.stderr, reference.stderr)
    assert ODD in native.stderr and b"\\udc" not in reference.stderr
    assert native.stderr.partition(b": error: ")[2] == reference.stderr.partition(b": error: ")[2]


@pytest.fixture(scope="module")
def request_host(tmp_path_factory):
    from native_helpers import request_host as build

    path = build(tmp_path_factory)
    path.parent.chmod(0o755)
    return path


@pytest.mark.parametrize("where", ["input", "output folder"])
def test_a_native_request_prints_the_paths_bytes_as_the_host(tmp_path, request_host, where):
    from native_helpers import request_command, request_environment, request_stream

    (tmp_path / "s.bin").write_bytes(request_stream(list(range(60))))
    odd = os.fsdecode(ODD)
    arguments = (["train", "--input", odd + ".bin", "--checkpoint-out", "ck.bin"] if where == "input" else
                 ["train", "--input", "s.bin", "--checkpoint-out", odd + "d/ck.bin"])
    arguments += ["--predictions", "p.bin", "--result", "r.bin"]
    said = []
    for side in ("c", "reference"):
        done = run([os.fsencode(str(w)) for w in request_command(side, request_host, *arguments)], tmp_path,
                   request_environment())
        said.append((done.returncode, done.stderr))
    assert said[0] == said[1], said
    assert said[0][0] in (3, 8) and ODD in said[0][1], said
