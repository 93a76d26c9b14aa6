"""A new user's model, written from README.md, docs/ and the examples alone (probe s47 newuser12):
matrix factorization for recommendations (tests/matrix_factorization/MatFac).  User and item
embedding tables and biases (binary32), one batch of 64 (user, item, rating) triples, the predicted
rating bu[u] + bi[i] + U[u].V[i], the mean squared error, and plain gradient descent whose gradient
rows are scattered with binary32 atomics (RED.E.ADD.F32 on sm_86, REDG on sm_90: mf-grad.sass and
mf-grad.sm_90.sass), since several triples of the batch share a user or an item.  Three kernels
(mf-zero, mf-grad over a grid of two blocks, mf-sgd), one submission of three launches an update.

The oracle is numpy_model.py: the same math in float64 (np.add.at for the scattered rows), with its
own record and envelope readers and its own SplitMix64 fresh state.  The reference kernels
(reference_kernels.py) add the atomics in thread order, the simulator's order, so `bobc sim` writes
the reference run's bytes; a GPU adds them in whatever order they land, so the kernel is also held
to the float64 oracle under a bound that holds for every order of the adds (below)."""
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
PLAN = HERE / "MatFac" / "Build" / "NativeHost.bob"
U32 = 2.0 ** -24                      # binary32's unit roundoff


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"newuser12_{name}", HERE / f"{name}.py")
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
    folder = tmp_path_factory.mktemp("matfac")
    make = _module("make_record")
    (folder / "record.bin").write_bytes(make.record_bytes(make.make()))
    for name, checkpoint in (("fresh", None), ("resumed", "fresh-c.bin")):
        extra = ["--checkpoint", checkpoint] if checkpoint else []
        done = _bobc("run", PLAN, "train", "--reference", "--input", "record.bin", *extra, *_outputs(name), cwd=folder)
        assert done.returncode == 0, done.stderr
    return folder


def test_the_batch_shares_rows():
    """The point of the atomics: rows of the batch's gradient are shared by several triples."""
    users, items, _ = _module("make_record").make()
    assert np.bincount(users).max() >= 3 and np.bincount(items).max() >= 3


@pytest.mark.parametrize("name, checkpoint_in", [("fresh", None), ("resumed", "fresh-c.bin")])
def test_the_reference_run_is_the_float64_model(runs, name, checkpoint_in):
    model = _module("numpy_model")
    triples = model.read_record(runs / "record.bin")
    step0, W = (0, model.fresh()) if checkpoint_in is None else model.read_envelope(runs / checkpoint_in)
    W, p, initial, final = model.train(W, *triples)
    step, W_run = model.read_envelope(runs / f"{name}-c.bin")
    predictions = np.frombuffer((runs / f"{name}-p.bin").read_bytes(), "<f4")
    losses = np.frombuffer((runs / f"{name}-r.bin").read_bytes(), "<f4")
    assert step == step0 + model.UPDATES
    # One update's binary32 error in a parameter: lr (1/2) x (the row's m <= 8 shared triples + K + 3
    # roundings) x u x the terms' magnitudes (|g V| <= 1 here), about 3e-7; gradient descent at lr 1/2
    # on this problem does not amplify an error, so 20 updates stay below 20 x 3e-7 = 6e-6 < 1e-5.
    assert np.abs(W_run - W).max() < 1e-5
    assert np.abs(predictions - p).max() < 1e-5 * (1 + model.K)
    assert np.abs(losses - [initial, final]).max() < 1e-5
    assert final < initial / 2                           # it trains


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_the_simulator_writes_the_reference_bytes(runs, target):
    """RED (sm_86) and REDG (sm_90) applied in thread order, as the reference kernels add."""
    done = _bobc("sim", PLAN, "train", "--target", target, "--input", "record.bin", *_outputs(f"sim-{target}"),
                 cwd=runs)
    assert done.returncode == 0, done.stderr
    assert "no race between a launch's blocks" in done.stdout
    for kind in "cpr":
        assert (runs / f"sim-{target}-{kind}.bin").read_bytes() == (runs / f"fresh-{kind}.bin").read_bytes()


def _grad_on_the_simulator(target, users, items, ratings, W):
    from bobc.sim.kernel import Pointer, run_kernel
    model = _module("numpy_model")
    U, V, bu, bi = (a.astype(np.float32) for a in model.unpack(W))
    buffers = {"U": U, "V": V, "bu": bu, "bi": bi,
               "gU": np.zeros_like(U), "gV": np.zeros_like(V), "gbu": np.zeros_like(bu), "gbi": np.zeros_like(bi),
               "users": users.astype(np.uint32), "items": items.astype(np.uint32), "ratings": ratings.astype(np.float32),
               "predictions": np.zeros(len(users), np.float32), "loss": np.zeros(1, np.float32)}
    b = len(users)
    params = [Pointer(n) for n in ("U", "V", "bu", "bi", "gU", "gV", "gbu", "gbi", "users", "items", "ratings",
                                   "predictions")]
    params += [np.uint32(b), np.uint32(model.K), np.uint32(model.NU), np.uint32(model.NI),
               np.float32(2.0 / b), np.float32(1.0 / b), Pointer("loss")]
    stem = "mf-grad.sm_90.sass" if target == "sm_90" else "mf-grad.sass"
    out = run_kernel(HERE / "MatFac" / "kernels" / stem, target, grid=(-(-b // 32),), block=(32,), params=params,
                     buffers=buffers, contract=True)
    return np.concatenate([out[n].ravel() for n in ("gU", "gV", "gbu", "gbi")]).astype(np.float64), out


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_the_scattered_gradient_is_within_an_order_free_bound(target):
    """mf-grad alone (run_kernel, held to its contract) against the float64 gradient, the batch in
    two orders.  A GPU applies the atomics in any order; the bound holds for every one: a binary32
    sum of m terms in any order is within (m - 1) u sum |t| of the exact sum, each term g_b V[i_b, k]
    carries one rounding of its own and g_b's error from the forward pass, (K + 2) u x the magnitude
    of the prediction's terms (bu, bi, the K products, then - r) scaled by 2/B (a power of two:
    exact).  Twice that bound is asserted."""
    model = _module("numpy_model")
    users, items, ratings = (np.asarray(a) for a in _module("make_record").make())
    W = model.fresh()
    U, V, bu, bi = model.unpack(W)
    users64, items64 = users.astype(np.int64), items.astype(np.int64)
    _, exact = model.loss_and_gradient(W, users64, items64, ratings.astype(np.float64))
    b = len(users)
    g = 2.0 / b * np.abs(model.predict(W, users64, items64) - ratings)
    forward = 2.0 / b * (model.K + 2) * U32 * (np.abs(bu[users64]) + np.abs(bi[items64])
                                                + (np.abs(U[users64]) * np.abs(V[items64])).sum(axis=1)
                                                + np.abs(ratings))
    bound = np.zeros_like(W)
    bU, bV, bbu, bbi = model.unpack(bound)
    m_u, m_i = np.bincount(users64, minlength=model.NU), np.bincount(items64, minlength=model.NI)
    np.add.at(bU, users64, ((m_u[users64] + 1) * U32 * g + forward)[:, None] * np.abs(V[items64]))
    np.add.at(bV, items64, ((m_i[items64] + 1) * U32 * g + forward)[:, None] * np.abs(U[users64]))
    np.add.at(bbu, users64, (m_u[users64] + 1) * U32 * g + forward)
    np.add.at(bbi, items64, (m_i[items64] + 1) * U32 * g + forward)
    results = []
    for order in (np.arange(b), np.random.default_rng(1).permutation(b)):
        G, out = _grad_on_the_simulator(target, users[order], items[order], ratings[order], W)
        assert (np.abs(G - exact) <= 2 * bound).all(), np.abs(G - exact).max()
        results.append(G)
    # the two orders' sums may differ in their last bits, never by more than the two bounds together
    assert (np.abs(results[0] - results[1]) <= 4 * bound).all()


def test_an_index_past_its_table_is_refused(runs):
    """The record's checks keep every atomic's row inside its table: a user index of 16 is refused."""
    make = _module("make_record")
    users, items, ratings = make.make()
    users = users.copy()
    users[5] = 16
    (runs / "bad.bin").write_bytes(make.record_bytes((users, items, ratings)))
    done = _bobc("run", PLAN, "train", "--reference", "--input", "bad.bin", *_outputs("bad"), cwd=runs)
    assert done.returncode == 3
    assert "user 5 at byte 36 is 16, not below 16" in done.stderr


def test_the_host_builds(runs):
    done = _bobc("build", PLAN, "--target", "sm_86", "-o", "matfac-host", cwd=runs)
    assert done.returncode == 0, done.stderr
    assert (runs / "matfac-host").stat().st_size > 0


def test_an_atomic_through_a_read_pointer_is_refused_by_sim_s47(runs, tmp_path):
    """mf-grad's contract with dL/dU (the RED target) declared `read`: `bobc check` certifies it (the
    certifier reads no memory access, docs/writing-a-plan.md section 2), and `bobc sim` refuses the
    first atomic into it at its line -- before probe s47 it ran the plan to the end."""
    import shutil
    copy = tmp_path / "MatFac"
    shutil.copytree(HERE / "MatFac", copy)
    for stem in ("mf-grad.sass", "mf-grad.sm_90.sass"):
        path = copy / "kernels" / stem
        text = path.read_text()
        assert text.count("//@ param 4 pointer read-write ") == 1
        path.write_text(text.replace("//@ param 4 pointer read-write ", "//@ param 4 pointer read "))
    done = _bobc("sim", copy / "Build" / "NativeHost.bob", "train", "--target", "sm_86", "--input",
                 runs / "record.bin", *_outputs(str(tmp_path / "bad")), cwd=tmp_path)
    assert done.returncode == 7, done.stderr
    assert "writes bytes its kernel's contract does not say it writes" in done.stderr, done.stderr
    assert "mf-grad.sass:" in done.stderr and "RED.E.ADD.F32.FTZ.RN.STRONG.GPU" in done.stderr, done.stderr
