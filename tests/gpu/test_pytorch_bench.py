"""bench/gpu/pytorch_bob.py on the CPU, on the GPU machine (where torch is installed; the
CPU test machines have no torch, and a clone's tests may not skip for a missing tool).

The script is issue 10's PyTorch comparison; its invocation mode must be the
same invocation as the host's, so it is held against the PyTorch case too.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from bob_model.formats import decode_predictions

pytestmark = pytest.mark.gpu


def test_invocation_mode_reproduces_the_case(repo, shared, tmp_path):
    pytest.importorskip("torch")
    folder = shared / "data" / "bob-reference"
    done = subprocess.run(
        [sys.executable, str(repo / "bench/gpu/pytorch_bob.py"), "invocation", "--device", "cpu",
         "--case", str(folder / "case.npz"), "--out", str(tmp_path),
         "--check", str(folder / "expected-1.npz")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["results"][0]
    check = report["check"]
    assert check["tokens_equal"] and check["step_equal"]
    assert max(check[k] for k in ("initial_loss", "training_loss", "logit_rows", "P")) < 1e-4
    tokens, valid = decode_predictions((tmp_path / "predictions.bin").read_bytes())
    assert tokens.tolist() == [97, 32, 116] and np.all(valid == 1)
