"""A new user's model, written from README.md and docs/writing-a-plan.md alone (probe s45 newuser10):
a two-layer MLP classifier (relu hidden layer, softmax cross-entropy over 4 classes, heavy-ball momentum)
whose four kernels are PTX compiled by ptxas -O3 and taken as nvdisasm listings (ptx/ beside them; one
listing per target), four launches an update in one submission, a shared-memory block reduction of the
loss, kernels with two outputs, nine-word parameter blocks and a two-chunk checkpoint.

The expected values are numpy_model.py's: the same math in float64 with its own record and envelope
readers and its own SplitMix64 fresh state (nothing of bobc's).  `bobc sim` of this plan writes the
reference's bytes on both targets, fresh and resumed (checked by hand in the probe: 15 s a run, too
slow for this file)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PLAN = HERE / "Mlp" / "Build" / "NativeHost.bob"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"newuser10_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bobc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mlp")
    make = _module("make_record")
    (folder / "record.bin").write_bytes(make.record_bytes(*make.make()))
    for name, checkpoint in (("fresh", None), ("resumed", "fresh-c.bin")):
        extra = ["--checkpoint", checkpoint] if checkpoint else []
        done = _bobc("run", PLAN, "train", "--reference", "--input", "record.bin", *extra, "--checkpoint-out",
                     f"{name}-c.bin", "--predictions", f"{name}-p.bin", "--result", f"{name}-r.bin", cwd=folder)
        assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize("name, checkpoint_in", [("fresh", None), ("resumed", "fresh-c.bin")])
def test_the_reference_run_is_the_float64_model(runs, name, checkpoint_in):
    model = _module("numpy_model")
    X, y = model.read_record(runs / "record.bin")
    step0, W, V = (0, *model.fresh()) if checkpoint_in is None else model.read_envelope(runs / checkpoint_in)
    W, V, P, initial, final = model.train(W, V, X, y)
    step, W_run, V_run = model.read_envelope(runs / f"{name}-c.bin")
    P_run = np.frombuffer((runs / f"{name}-p.bin").read_bytes(), "<f4").reshape(model.N, model.C)
    losses = np.frombuffer((runs / f"{name}-r.bin").read_bytes(), "<f4")
    assert step == step0 + model.UPDATES
    # binary32 arithmetic (and MUFU ex2 / rcp / lg2 rounded from binary64) of 15 (30) updates against
    # binary64: measured within 2e-7 of parameters near 1
    assert np.abs(W_run - W).max() < 2e-6 and np.abs(V_run - V).max() < 2e-6
    assert np.abs(P_run - P).max() < 2e-6
    assert np.abs(losses - [initial, final]).max() < 2e-6
    assert final < initial                  # it trains


def test_a_predict_hands_the_checkpoint_on_with_its_loss(runs):
    done = _bobc("run", PLAN, "predict", "--reference", "--input", "record.bin", "--checkpoint", "resumed-c.bin",
                 "--checkpoint-out", "p-c.bin", "--predictions", "p-p.bin", "--result", "p-r.bin", cwd=runs)
    assert done.returncode == 0, done.stderr
    assert (runs / "p-c.bin").read_bytes() == (runs / "resumed-c.bin").read_bytes()
    assert (runs / "p-p.bin").read_bytes() == (runs / "resumed-p.bin").read_bytes()
    losses = np.frombuffer((runs / "p-r.bin").read_bytes(), "<f4")
    assert losses[0] == np.frombuffer((runs / "resumed-r.bin").read_bytes(), "<f4")[1] and losses[1] == 0


def test_a_label_past_the_classes_is_refused_by_its_byte(runs):
    make = _module("make_record")
    X, y = make.make()
    y[5] = 7
    (runs / "bad.bin").write_bytes(make.record_bytes(X, y))
    done = _bobc("run", PLAN, "train", "--reference", "--input", "bad.bin", "--checkpoint-out", "b-c.bin",
                 "--predictions", "b-p.bin", "--result", "b-r.bin", cwd=runs)
    # label 5 lies at 16 + 4 * (32 * 4) + 4 * 5 = 548
    assert done.returncode == 3 and "label 5 at byte 548 is 7, not below 4" in done.stderr, done.stderr
    assert not (runs / "b-c.bin").exists()
