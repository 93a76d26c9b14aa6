"""Seed 003's two peers on the CPU: both hosts the plan builds, interpreted by the independent
interpreter (tests/specs/native_program.py) over a socket pair, the device emulated from the
plan's own images (emulation.py).  The NumPy reference (partitioned_regression.reference) and
the files' layout written independently in partitioned_regression.formats are the oracles.
"""
from __future__ import annotations

import functools
import socket
import struct
import threading

import numpy as np
import pytest

from partitioned_regression import artifacts as A
from partitioned_regression import formats as F
from partitioned_regression import reference as R

import emulation as E

UUID = bytes.fromhex("8f1c2a3b4c5d6e7f8091a2b3c4d5e6f7")
PORT = 47001
COORDINATES = [R.Coordinate(0.0, 0.0, 0.5, 0.05), R.Coordinate(0.25, -0.125, 0.25, 0.04)]


@functools.lru_cache(maxsize=None)
def pair(resume: int, epoch: int, steps: int):
    return [A.parse_embedded(A.worker_artifact(UUID, k, PORT, resume, epoch, steps)) for k in range(2)]


@functools.lru_cache(maxsize=None)
def data():
    return R.generate()


def records():
    return [F.record(data(), k, COORDINATES[k]) for k in range(2)]


def run(resume, epoch, steps, checkpoint=None, **options):
    hosts = pair(resume, epoch, steps)
    files = [{6: records()[k], **(checkpoint or {})} for k in range(2)]
    return E.run_pair([h.program for h in hosts], [h.images for h in hosts], files, **options)


def checkpoint_of(outcomes):
    files = {}
    for outcome in outcomes:
        files.update({i: outcome.outputs[i] for i in range(5) if i in outcome.outputs})
    return files


@functools.lru_cache(maxsize=None)
def fresh_run(steps=256):
    return run(0, 1, steps)


def test_the_pair_trains_bit_identical_to_numpy_and_converges_to_least_squares():
    steps = 256
    outcomes = fresh_run(steps)
    assert [(o.status, o.message) for o in outcomes] == [(0, b""), (0, b"")]
    expected = R.train(data(), COORDINATES, steps)
    for k, outcome in enumerate(outcomes):
        assert outcome.submitted == 3 * steps
        for index, value in ((1 + 2 * k, expected[k].weight), (2 + 2 * k, expected[k].accumulator)):
            epoch, taken, got = F.shard_value(outcome.outputs[index])
            assert (epoch, taken) == (1, steps)
            assert R.bits(got) == R.bits(value), (k, index, got, value)
        # the device readback: the data block with w and a at its first two words
        readback = outcome.outputs[5]
        assert struct.unpack_from("<2d", readback) == (expected[k].weight, expected[k].accumulator)
    assert outcomes[0].outputs[0] == F.manifest(1)          # worker 0 publishes the manifest
    assert 0 not in outcomes[1].outputs
    solution = R.least_squares(data())
    np.testing.assert_allclose([c.weight for c in expected], solution, atol=1e-5)


def test_the_exact_arithmetic_matters():
    """The bit equality above is not luck: plain binary64 products diverge from the
    binary32-product arithmetic within a few steps."""
    x = data().features[0]
    exact = float(np.float64(1.0 / 3.0) * x[0])
    assert R.bits(R.product(1.0 / 3.0, x[0])) != R.bits(exact)


def test_a_resume_continues_bit_identically():
    steps = 40
    first = run(0, 1, steps)
    assert [o.status for o in first] == [0, 0]
    second = run(1, 1, steps, checkpoint_of(first))
    assert [(o.status, o.message) for o in second] == [(0, b""), (0, b"")]
    expected = R.train(data(), COORDINATES, 2 * steps)
    for k, outcome in enumerate(second):
        epoch, taken, weight = F.shard_value(outcome.outputs[1 + 2 * k])
        assert (epoch, taken) == (2, 2 * steps) and R.bits(weight) == R.bits(expected[k].weight)
        assert R.bits(F.shard_value(outcome.outputs[2 + 2 * k])[2]) == R.bits(expected[k].accumulator)
    assert second[0].outputs[0] == F.manifest(2)


def test_a_prediction_is_left_times_1_plus_right_times_2_computed_the_same_way():
    outcomes = fresh_run()
    checkpoint = checkpoint_of(outcomes)
    host = A.parse_embedded(A.prediction_artifact(UUID, 1))
    outcome = E.run_host(host.program, host.images, dict(checkpoint), None)
    assert (outcome.status, outcome.message) == (0, b"")
    weights = (F.shard_value(checkpoint[1])[2], F.shard_value(checkpoint[3])[2])
    prediction, = struct.unpack("<d", outcome.outputs[6])
    assert R.bits(prediction) == R.bits(R.predict(weights))
    assert R.bits(struct.unpack("<d", outcome.outputs[5])[0]) == R.bits(R.product(weights[1], 2.0))
    assert outcome.submitted == 2


# ---- failures: the other peer ends with a clear error and publishes nothing ----
def fake_peer(behaviour):
    """Worker 1's end of the channel driven by `behaviour(sock)` instead of its host."""
    def replace(k, sock):
        if k != 1:
            return False
        threading.Thread(target=behaviour, args=(sock,), daemon=True).start()
        return True
    return replace


def message(tag_worker, step, partial=0.0):
    return struct.pack("<QQd", int.from_bytes(b"CDPR", "little") + (tag_worker << 32), step, partial)


@pytest.mark.parametrize("behaviour, words", [
    (lambda sock: sock.close(), b"peer"),
    (lambda sock: (sock.recv(24), sock.sendall(message(0, 1))), b"malformed message"),
    (lambda sock: (sock.recv(24), sock.sendall(b"\xff" * 24)), b"malformed message"),
    (lambda sock: (sock.recv(24), sock.sendall(message(1, 2))), b"out-of-order message"),
    (lambda sock: (sock.recv(24), sock.sendall(message(1, 1)), sock.recv(24), sock.sendall(message(1, 1))),
     b"out-of-order message"),
], ids=["disconnects", "wrong-tag", "garbage", "step-ahead", "step-repeated"])
def test_a_misbehaving_peer_ends_the_other_with_a_clear_error_and_nothing_published(behaviour, words):
    outcomes = run(0, 1, 8, break_peer=fake_peer(behaviour), timeout=5)
    worker0 = outcomes[0]
    assert worker0.status == 5 and words in worker0.message
    assert worker0.outputs == {}          # the last checkpoint stays as it was


def test_a_silent_peer_times_out():
    kept = []
    outcomes = run(0, 1, 8, break_peer=fake_peer(kept.append), timeout=0.5)
    assert outcomes[0].status == 5 and outcomes[0].outputs == {}


def test_a_resume_from_a_checkpoint_of_another_epoch_is_refused_by_name():
    checkpoint = checkpoint_of(fresh_run())          # epoch 1
    outcomes = run(1, 2, 8, checkpoint)              # expects epoch 2's
    for outcome in outcomes:
        assert outcome.status == 2 and b"manifest (argument 0)" in outcome.message and outcome.outputs == {}


def test_a_damaged_shard_is_refused_by_name():
    checkpoint = checkpoint_of(fresh_run())
    checkpoint[1] = b"FRAX" + checkpoint[1][4:]
    outcomes = run(1, 1, 8, checkpoint)
    assert outcomes[0].status == 2 and b"weight shard" in outcomes[0].message
    assert outcomes[0].outputs == {}


def test_a_short_record_is_refused():
    hosts = pair(0, 1, 8)
    outcome = E.run_host(hosts[0].program, hosts[0].images, {6: records()[0][:-8]}, None)
    assert outcome.status == 2 and outcome.outputs == {}


def test_the_h200s_sm90_images_train_the_same_bits():
    """The same hosts built for sm_90 (V04_00 QMDs, parameters at 0x210): the emulated device
    reads them as Hopper's and the pair computes the reference's bits."""
    steps = 16
    hosts = [A.parse_embedded(A.worker_artifact(UUID, k, PORT, 0, 1, steps, target_name="sm_90")) for k in range(2)]
    files = [{6: records()[k]} for k in range(2)]
    outcomes = E.run_pair([h.program for h in hosts], [h.images for h in hosts], files)
    assert [o.status for o in outcomes] == [0, 0]
    expected = R.train(data(), COORDINATES, steps)
    for k in range(2):
        assert R.bits(F.shard_value(outcomes[k].outputs[1 + 2 * k])[2]) == R.bits(expected[k].weight)


def test_the_echo_peer_trains_worker_0_to_the_pairs_bits():
    """bench/partitioned_regression/echo_peer.py (worker 1 on the CPU, for timing worker 0 alone on
    the GPU) speaks the protocol and does worker 1's arithmetic: worker 0 against it ends with the
    pair's checkpoint of its coordinate, bit for bit."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench/partitioned_regression"))
    import echo_peer
    steps = 64
    served = []

    def echo(k, sock):
        if k != 1:
            return False
        thread = threading.Thread(target=lambda: served.append(echo_peer.serve(sock, steps, COORDINATES[1], data())),
                                  daemon=True)
        thread.start()
        return True

    outcomes = run(0, 1, steps, break_peer=echo)
    assert outcomes[0].status == 0, outcomes[0].message
    assert served == [None]
    expected = R.train(data(), COORDINATES, steps)[0]
    for argument, value in ((1, expected.weight), (2, expected.accumulator)):
        epoch, taken, got = F.shard_value(outcomes[0].outputs[argument])
        assert (epoch, taken, R.bits(got)) == (1, steps, R.bits(value))
