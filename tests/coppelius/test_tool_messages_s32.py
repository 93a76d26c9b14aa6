"""Coppelius's tools, probe s32 "checkpoint" finding 9: `outputs show --top` out of range names
the range (argparse's `choices` printed all 256 valid values on one line), and `checkpoint show`
of another model's checkpoint compares with the configuration, not with "this host" (it is a
tool, not a host), without the host's advice on what to pass to a host."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import EXAMPLE, REPOSITORY


def tool(module, *args, cwd) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(EXAMPLE), str(REPOSITORY / "compiler")])
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": path}, timeout=300)


@pytest.mark.parametrize("top, words", [("0", "0 is outside 1..256"), ("300", "300 is outside 1..256"),
                                        ("x", "not a whole number: 'x' (1 to 256)")])
def test_top_out_of_range_names_the_range(tmp_path, top, words):
    (tmp_path / "p.bin").write_bytes(bytes(1024))
    done = tool("coppelius_host.outputs", "show", "--predictions", "p.bin", "--top", top, cwd=tmp_path)
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last == f"python -m coppelius_host.outputs show: error: argument --top: {words}", done.stderr
    assert len(done.stderr) < 400, done.stderr


def test_show_of_another_models_checkpoint_compares_with_the_configuration(tmp_path):
    from bobc.plan.model import CheckpointContract
    from bobc.reference import envelope

    other = CheckpointContract(b"another-model-schema", b"learner", b"data", b"seed", 64, 64, 10)
    (tmp_path / "other.ckpt").write_bytes(envelope.encode(other, 3, bytes(64)))
    done = tool("coppelius_host.checkpoint", "show", "other.ckpt", cwd=tmp_path)
    assert done.returncode == 5, done.stderr
    said = done.stderr.strip()
    assert said.startswith("python -m coppelius_host.checkpoint: error: checkpoint other.ckpt: foreign checkpoint: "
                           "schema identity differs from byte 0: configuration small's is 'coppelius-"), said
    assert said.endswith("the checkpoint's is 'another-model-schema'"), said
    assert "this host" not in said and "start fresh" not in said
