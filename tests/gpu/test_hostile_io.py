"""The host's file discipline on a real GPU (issue 19): the input record is read
once, before the GPU is touched, and the outputs are published together.

The record is replaced by another valid record while the host brings the GPU
up (BOBC_GPU_TRACE's first line says bring-up has begun, after the inputs were
read): a host that read the record again in its schedule would compute with the
new one; this one computes exactly what it computes from the old.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))

from bob_model import formats  # noqa: E402

pytestmark = pytest.mark.gpu


def _record(shift: int) -> bytes:
    return formats.encode_input_record(formats.InputRecord((np.arange(256) * 7 + shift) % 256,
                                                           [119, 116, 32]))


def _argv(host, folder, tag):
    return [str(host), "train", "--input", str(folder / "record.bin"),
            "--checkpoint-out", str(folder / f"{tag}.ckpt"), "--predictions",
            str(folder / f"{tag}.pred"), "--result", str(folder / f"{tag}.result")]


def _outputs(folder, tag):
    return [(folder / f"{tag}.{suffix}").read_bytes() for suffix in ("ckpt", "pred", "result")]


def test_the_record_is_read_once_before_the_gpu(host, tmp_path):
    (tmp_path / "record.bin").write_bytes(_record(3))
    plain = subprocess.run(_argv(host, tmp_path, "plain"), capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stderr
    (tmp_path / "other.bin").write_bytes(_record(100))
    argv = _argv(host, tmp_path, "other")
    argv[argv.index("--input") + 1] = str(tmp_path / "other.bin")
    other = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert other.returncode == 0, other.stderr
    assert _outputs(tmp_path, "plain") != _outputs(tmp_path, "other"), "the records must differ in effect"

    env = dict(os.environ, BOBC_GPU_TRACE="1")
    process = subprocess.Popen(_argv(host, tmp_path, "swapped"), stderr=subprocess.PIPE, text=True,
                               env=env)
    first = process.stderr.readline()          # bring-up has begun: the inputs were read
    assert first.startswith("rt-gpu:"), first
    os.replace(tmp_path / "other.bin", tmp_path / "record.bin")
    rest = process.stderr.read()
    assert process.wait(timeout=120) == 0, first + rest
    assert _outputs(tmp_path, "swapped") == _outputs(tmp_path, "plain")
    assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name], "temporaries left"
