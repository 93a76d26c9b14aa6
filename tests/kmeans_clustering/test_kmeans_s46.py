"""A new user's model, written from README.md and docs/ alone (probe s46 newuser11): Lloyd's k-means
(tests/kmeans_clustering/KMeans) in two hand-written SASS kernels -- kmeans-assign (an integer argmin
over the centroids, the first minimum; the inertia summed by SHFL.DOWN within each warp, then across
the block's two warps through shared memory after BAR.SYNC) and kmeans-update (a grid of one block a
centroid, `each K by 4*D`, a data-dependent count converted by I2FP.F32.U32 and divided by MUFU.RCP) --
one submission of two launches per update, u32 predictions (the assignments) and a SplitMix64 fresh
state in [-2, 2).

The expected values are numpy_model.py's: Lloyd's algorithm in float64 with its own record and
envelope readers and its own SplitMix64 (nothing of bobc's).  `bobc sim` of this plan writes the
reference's bytes on both targets (checked by hand in the probe, about 5 s a run); one sm_86 run is
here, against the reference run's bytes."""
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
PLAN = HERE / "KMeans" / "Build" / "NativeHost.bob"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"newuser11_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bobc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})


def _outputs(name):
    return ["--checkpoint-out", f"{name}-c.bin", "--predictions", f"{name}-p.bin", "--result", f"{name}-r.bin"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kmeans")
    (folder / "record.bin").write_bytes(_module("make_record").record_bytes(_module("make_record").make()))
    for name, checkpoint in (("fresh", None), ("resumed", "fresh-c.bin")):
        extra = ["--checkpoint", checkpoint] if checkpoint else []
        done = _bobc("run", PLAN, "train", "--reference", "--input", "record.bin", *extra, *_outputs(name), cwd=folder)
        assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize("name, checkpoint_in", [("fresh", None), ("resumed", "fresh-c.bin")])
def test_the_reference_run_is_the_float64_model(runs, name, checkpoint_in):
    model = _module("numpy_model")
    X = model.read_record(runs / "record.bin")
    step0, C = (0, model.fresh()) if checkpoint_in is None else model.read_envelope(runs / checkpoint_in)
    C, a, initial, final = model.train(C, X)
    step, C_run = model.read_envelope(runs / f"{name}-c.bin")
    assignments = np.frombuffer((runs / f"{name}-p.bin").read_bytes(), "<u4")
    inertia = np.frombuffer((runs / f"{name}-r.bin").read_bytes(), "<f4")
    assert step == step0 + model.UPDATES
    assert (assignments == a).all()                     # the argmin, exactly
    # binary32 means of 16 points near 1.5 (one rounding a sum, one the RCP, one the product) against binary64
    assert np.abs(C_run - C).max() < 1e-6
    assert np.abs(inertia - [initial, final]).max() < 1e-4 * max(initial, 1)
    if checkpoint_in is None:
        assert final < initial / 5                      # the random start is far from the four blobs
    else:
        assert abs(final - initial) < 1e-9              # converged: the resumed run moves nothing
    assert sorted(np.bincount(assignments, minlength=4)) == [16, 16, 16, 16]


def test_the_simulator_writes_the_reference_bytes(runs):
    done = _bobc("sim", PLAN, "train", "--target", "sm_86", "--input", "record.bin", *_outputs("sim"), cwd=runs)
    assert done.returncode == 0, done.stderr
    for kind in "cpr":
        assert (runs / f"sim-{kind}.bin").read_bytes() == (runs / f"fresh-{kind}.bin").read_bytes(), kind


def test_a_nan_coordinate_is_refused_by_its_byte(runs):
    make = _module("make_record")
    X = make.make()
    X[3, 1] = np.nan
    (runs / "nan.bin").write_bytes(make.record_bytes(X))
    done = _bobc("run", PLAN, "train", "--reference", "--input", "nan.bin", *_outputs("nan"), cwd=runs)
    # coordinate 3 * 2 + 1 = 7 lies at 16 + 4 * 7 = 44; a NaN is below no bound (docs/writing-a-plan.md)
    assert done.returncode == 3 and "coordinate 7 at byte 44 is nan (0x7fc00000), not below 1024" in done.stderr, \
        done.stderr
    assert not (runs / "nan-c.bin").exists()

