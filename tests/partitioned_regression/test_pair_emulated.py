"""Seed 003's two peers on the CPU: both hosts the plan builds, interpreted by the independent
interpreter (tests/specs/native_program.py) over a socket pair, the device emulated from the
plan's own images (emulation.py).  The NumPy reference (partitioned_regression.reference) and
the files' layout written independently in partitioned_regression.formats are the oracles.
"""
from __future__ import annotations

import functools
from pathlib import Path
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


def run_mixed(builds, checkpoint=None, **options):
    """Worker k built with builds[k] = (resume, epoch, steps): a pair built differently."""
    hosts = [pair(*build)[k] for k, build in enumerate(builds)]
    files = [{6: records()[k], **(checkpoint or {})} for k in range(2)]
    return E.run_pair([h.program for h in hosts], [h.images for h in hosts], files, **options)


def checkpoint_at(epoch, steps, coordinates=COORDINATES, steps_of=None):
    """A pair's checkpoint of `epoch` made by hand: every shard at `steps` steps unless
    `steps_of` (argument -> steps) says otherwise."""
    files = {0: F.manifest(epoch)}
    for k, c in enumerate(coordinates):
        for argument, value in ((1 + 2 * k, c.weight), (2 + 2 * k, c.accumulator)):
            files[argument] = F.shard(epoch, (steps_of or {}).get(argument, steps), value, argument - 1)
    return files


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
            assert outcome.outputs[index][:4] == F.TAGS[index - 1]        # the shard names its region
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


def hello(tag_worker=1, epoch=1, resume=0, steps=8, taken=0, words=(0, 0)):
    """A run's identity (docs/partitioned-regression.md, "The run's identity"); `words`: the
    numerics' and the plan's words."""
    return struct.pack("<7Q", int.from_bytes(b"CDPH", "little") + (tag_worker << 32), epoch, resume, steps, taken,
                       *words)


def receive(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            break
        data += chunk
    return data


def greeted(sock):
    """Worker 1's side of the connect-time exchange, as an 8-step fresh worker 1 built alike does
    it (the same numerics' and plan's words as worker 0's), then of the data's identity, with
    worker 1's record."""
    theirs = receive(sock, 56)
    sock.sendall(hello(words=struct.unpack_from("<2Q", theirs, 40)))
    receive(sock, 40)
    sock.sendall(F.data_identity(records()[1], 1))


def greeted_without_data(sock):
    """The connect-time exchange as worker 1 does it, then worker 0's data message received."""
    theirs = receive(sock, 56)
    sock.sendall(hello(words=struct.unpack_from("<2Q", theirs, 40)))
    receive(sock, 40)


@pytest.mark.parametrize("behaviour, words", [
    (lambda sock: sock.close(), b"peer"),
    (lambda sock: (greeted(sock), receive(sock, 24), sock.sendall(message(0, 1))), b"malformed message"),
    (lambda sock: (greeted(sock), receive(sock, 24), sock.sendall(b"\xff" * 24)), b"malformed message"),
    (lambda sock: (greeted(sock), receive(sock, 24), sock.sendall(message(1, 2))), b"out-of-order message"),
    (lambda sock: (greeted(sock), receive(sock, 24), sock.sendall(message(1, 1)), receive(sock, 24),
                   sock.sendall(message(1, 1))),
     b"out-of-order message"),
    (lambda sock: (receive(sock, 56), sock.sendall(b"\xff" * 56)), b"malformed first message"),
    (lambda sock: (receive(sock, 56), sock.sendall(message(1, 1) + bytes(32))), b"malformed first message"),
    (lambda sock: (receive(sock, 56), sock.sendall(hello(words=(0, 0)))), b"was built with other numerics"),
    (lambda sock: (greeted_without_data(sock), sock.sendall(b"\xff" * 40)), b"malformed data message"),
], ids=["disconnects", "wrong-tag", "garbage", "step-ahead", "step-repeated", "garbage-hello", "no-hello",
        "numerics-word", "garbage-data"])
def test_a_misbehaving_peer_ends_the_other_with_a_clear_error_and_nothing_published(behaviour, words):
    outcomes = run(0, 1, 8, break_peer=fake_peer(behaviour), timeout=5)
    worker0 = outcomes[0]
    assert worker0.status == 5 and words in worker0.message
    assert worker0.outputs == {}          # the last checkpoint stays as it was


def test_a_silent_peer_times_out():
    kept = []
    outcomes = run(0, 1, 8, break_peer=fake_peer(kept.append), timeout=0.5)
    assert outcomes[0].status == 5 and outcomes[0].outputs == {}


@pytest.mark.parametrize("payload", [b"PREPARES", bytes(8)], ids=["altered", "zeros"])
def test_worker_1_says_prepared_only_after_it_accepted_worker_0s(payload):
    """Worker 0's "prepared" message arrives altered (its step and tag right, its payload not
    PREPARED): worker 1 refuses it and must not have said "prepared" itself, or worker 0 would
    publish alone (probe s34 netfuzz: worker 1 sent its "prepared" before checking the one it
    received; worker 0 exited 0 with its shards and the manifest of epoch 2 beside worker 1's of
    epoch 1).  Worker 0 runs behind a relay that alters its last message."""
    import socket
    steps = 8
    hosts = pair(0, 1, steps)
    worker0 = {}

    def relay(k, sock):
        if k != 0:
            return False
        inner, outer = socket.socketpair()

        def from_worker0():
            sizes = [56, 40] + [24] * (steps + 1) + [24]
            try:
                for index, size in enumerate(sizes):
                    data = receive(outer, size)
                    if len(data) < size:
                        break
                    sock.sendall(data[:16] + payload if index == len(sizes) - 1 else data)
            except OSError:
                pass
            sock.shutdown(socket.SHUT_WR)

        def to_worker0():
            try:
                while chunk := sock.recv(4096):
                    outer.sendall(chunk)
            except OSError:
                pass
            outer.shutdown(socket.SHUT_WR)

        for pump in (from_worker0, to_worker0):
            threading.Thread(target=pump, daemon=True).start()
        threading.Thread(target=lambda: worker0.update(outcome=E.run_host(
            hosts[0].program, hosts[0].images, {6: records()[0]}, inner, 5)), daemon=True).start()
        return True

    files = [{6: records()[k]} for k in range(2)]
    outcomes = E.run_pair([h.program for h in hosts], [h.images for h in hosts], files, break_peer=relay, timeout=5)
    for _ in range(200):
        if "outcome" in worker0:
            break
        threading.Event().wait(0.05)
    worker1 = outcomes[1]
    assert worker1.status == 5 and b"malformed prepared message" in worker1.message, worker1.message
    assert worker1.outputs == {}
    assert worker0["outcome"].status == 5, worker0["outcome"].message     # worker 1 never said "prepared"
    assert worker0["outcome"].outputs == {}


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


@pytest.mark.parametrize("argument, damage, words", [
    (1, lambda shard: b"FRAX" + shard[4:],
     b"worker 0's weight shard (argument 1) is not a coordinate shard (it does not start with a region's tag; this "
     b"argument's is SHw0)"),
    (3, lambda shard: b"XHw1" + shard[4:], b"worker 1's weight shard (argument 3) is not a coordinate shard"),
    (2, lambda shard: shard[:4] + struct.pack("<Q", 2) + shard[12:],
     b"worker 0's accumulator shard (argument 2) is a frame of another epoch, not the manifest's epoch 1"),
    (4, lambda shard: shard[:20] + struct.pack("<Q", 16) + shard[28:],
     b"worker 1's accumulator shard (argument 4) holds a region of another size, not 8 bytes"),
    (1, lambda shard: shard[:12] + struct.pack("<Q", 0) + shard[20:],
     b"worker 0's weight shard (argument 1) has a step count that is not 1 to 4294967287"),
    (2, lambda shard: shard[:12] + struct.pack("<Q", 2 ** 64 - 1) + shard[20:],
     b"worker 0's accumulator shard (argument 2) has a step count that is not 1 to 4294967287"),
    (3, lambda shard: shard[:12] + struct.pack("<Q", 2 ** 32) + shard[20:],
     b"worker 1's weight shard (argument 3) has a step count that is not 1 to 4294967287"),
], ids=["magic", "magic-worker-1", "epoch", "region-size", "no-steps", "steps-2^64-1", "steps-2^32"])
def test_each_damaged_shard_field_is_refused_naming_the_file_and_the_field(argument, damage, words):
    """A refusal names the file by its argument and says which field is wrong (the region size
    is not the epoch); the damaged worker ends with 2 before connecting, its peer with 5."""
    checkpoint = checkpoint_at(1, 8)
    checkpoint[argument] = damage(checkpoint[argument])
    outcomes = run(1, 1, 8, checkpoint, timeout=2)
    damaged = (argument - 1) // 2
    assert outcomes[damaged].status == 2 and words in outcomes[damaged].message, outcomes[damaged].message
    assert outcomes[1 - damaged].status == 5
    assert [o.outputs for o in outcomes] == [{}, {}]


def test_a_resume_refuses_a_checkpoint_its_steps_would_carry_past_a_frame_word():
    """The pair's step count stays a frame word (Runtime.RegionFrame): a resume of 8 steps takes
    a checkpoint at up to 2^32 - 1 - 8 steps, not one more."""
    outcomes = run(1, 1, 8, checkpoint_at(1, 2 ** 32 - 8), timeout=2)
    assert outcomes[0].status == 2 and b"has a step count that is not 1 to 4294967287" in outcomes[0].message
    assert b"too far along for this run's 8 more steps" in outcomes[0].message


@pytest.mark.parametrize("taken", [1, 4095, 4096, 4097, 12_345_678, 2 ** 32 - 1 - 8])
def test_a_resume_continues_at_any_step_count_without_counting_up_to_it(taken):
    """The rows continue at row T mod N for a checkpoint at T steps, computed in a fixed number of
    commands: a checkpoint at 2^32 - 9 steps resumes as fast as one at 1 step (the plan counted
    to T before, ~10^5 steps a second on this interpreter), bit-identical to the reference."""
    steps = 8
    # both peers run (no refusal, no timeout expected): the peers' wait for each other is a hang
    # guard, long enough for two interpreters sharing a loaded machine's cores (a run takes ~3 s)
    outcomes = run(1, 1, steps, checkpoint_at(1, taken), timeout=60, join=300)
    assert [(o.status, o.message) for o in outcomes] == [(0, b""), (0, b"")]
    expected = R.train(data(), COORDINATES, steps, first_row=taken)
    for k, outcome in enumerate(outcomes):
        for argument, value in ((1 + 2 * k, expected[k].weight), (2 + 2 * k, expected[k].accumulator)):
            epoch, steps_so_far, got = F.shard_value(outcome.outputs[argument])
            assert (epoch, steps_so_far, R.bits(got)) == (2, taken + steps, R.bits(value)), (k, argument)


def test_a_workers_two_shards_at_different_step_counts_are_refused():
    outcomes = run(1, 1, 8, checkpoint_at(1, 8, steps_of={1: 16}), timeout=2)
    assert outcomes[0].status == 2, outcomes[0].message
    assert (b"worker 0's accumulator shard (argument 2) is at another step count than worker 0's weight shard "
            b"(argument 1)") in outcomes[0].message
    assert outcomes[1].status == 5 and [o.outputs for o in outcomes] == [{}, {}]


def test_the_pairs_shards_at_different_step_counts_end_both_peers():
    """Each worker's own shards agree, but worker 1's frames are of another run than worker
    0's: the peers compare the counts when they connect and neither trains."""
    outcomes = run(1, 1, 8, checkpoint_at(1, 8, steps_of={3: 16, 4: 16}))
    for k, outcome in enumerate(outcomes):
        assert outcome.status == 5 and outcome.outputs == {}, outcome.message
        assert b"resumes a checkpoint at another step count" in outcome.message
        assert f"(this worker, worker {k}: its shards' step count".encode() in outcome.message
        # the fix is a checkpoint put back, not a rebuild (probe s32 partnet finding 7)
        assert b"put back the five files of one run's checkpoint" in outcome.message
        assert b"build and start both peers alike" not in outcome.message


@pytest.mark.parametrize("builds, words", [
    (((0, 1, 8), (0, 1, 16)), [b"takes another number of steps (this worker, worker 0: 8 steps)",
                               b"takes another number of steps (this worker, worker 1: 16 steps)"]),
    (((0, 1, 8), (0, 2, 8)), [b"was built for another epoch (this worker, worker 0: epoch 1)",
                              b"was built for another epoch (this worker, worker 1: epoch 2)"]),
    (((0, 1, 8), (1, 1, 8)), [b"resumes a checkpoint (this worker, worker 0: a fresh run)",
                              b"starts fresh (this worker, worker 1: a resume)"]),
], ids=["steps", "epoch", "resume"])
def test_peers_built_differently_both_refuse_before_training(builds, words):
    """A pair built with different step counts, epochs or resume flags: both peers end with
    status 5 naming what differs (each its own value), before either submits anything, and
    neither publishes (before, one published while the other failed, or both exited 0 with a
    checkpoint no resume accepts)."""
    outcomes = run_mixed(builds, checkpoint_at(1, 8))
    for outcome, expected in zip(outcomes, words):
        assert outcome.status == 5 and expected in outcome.message, outcome.message
        assert outcome.outputs == {} and outcome.submitted == 0


def prediction(checkpoint, epoch=1):
    host = A.parse_embedded(A.prediction_artifact(UUID, epoch))
    return E.run_host(host.program, host.images, dict(checkpoint), None)


@pytest.mark.parametrize("steps_of, words", [
    ({4: 16}, b"worker 1's accumulator shard (argument 4) is at another step count than worker 0's weight shard "
              b"(argument 1)"),
    ({1: 16}, b"worker 0's accumulator shard (argument 2) is at another step count than worker 0's weight shard "
              b"(argument 1)"),
    ({3: 2 ** 64 - 1}, b"worker 1's weight shard (argument 3) has a step count that is not 1 to 4294967295 "
                       b"(a damaged frame)"),
], ids=["worker-1", "worker-0", "damaged"])
def test_a_prediction_refuses_shards_of_different_runs(steps_of, words):
    outcome = prediction(checkpoint_at(1, 8, steps_of=steps_of))
    assert outcome.status == 2 and words in outcome.message, outcome.message
    assert outcome.outputs == {} and outcome.submitted == 0


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


def test_the_reference_product_overflows_to_infinity_without_a_warning():
    """An operand or a product beyond binary32 is an infinity, as the kernel computes it, and the
    NumPy reference says nothing on stderr where the C host says nothing (probe s27: NumPy's
    'overflow encountered in cast' for a record with |x| > FLT_MAX)."""
    import math
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert R.product(1e300, 1.0) == math.inf
        assert R.product(-3e38, 3e38) == -math.inf
        assert R.product(2.0, 3.0) == 6.0


# ---- the pair agrees on its data and its plan before any step (probe s29 seed003 findings 1, 3) ----
def run_records(records_of, builds=None):
    hosts = [(builds or pair(0, 1, 8))[k] for k in range(2)]
    return E.run_pair([h.program for h in hosts], [h.images for h in hosts], [{6: r} for r in records_of])


DIFFERENT_DATA = ("coordinate peer: worker 1's targets y differ from worker 0's (argument 6 of each): the two "
                  "coordinate records are not from one data set; give both workers the records made from one data set")


@pytest.mark.parametrize("make, words", [
    (lambda: [records()[0], F.record(R.generate(seed=4), 1, COORDINATES[1])], DIFFERENT_DATA),
    # one target changed in the last row: the checksum sees every row
    (lambda: [records()[0], records()[1][:-8] + struct.pack("<d", 0.5)], DIFFERENT_DATA),
    # the same targets in another order
    (lambda: [records()[0], records()[1][:32] + records()[1][48:64] + records()[1][32:48] + records()[1][64:]],
     DIFFERENT_DATA),
    (lambda: [records()[0], records()[0]],
     "coordinate peer: worker 1's feature column is the same as worker 0's (argument 6 of each): one worker was "
     "given the other's coordinate record; give worker k the record of column k"),
], ids=["other-data-set", "one-target", "rows-reordered", "same-record"])
def test_peers_with_records_of_different_data_both_refuse_before_any_step(make, words):
    """Before, both trained (exit 0), each with its own error e, and published a checkpoint any
    resume accepted."""
    outcomes = run_records(make())
    for outcome in outcomes:
        assert outcome.status == 5 and words.encode() in outcome.message, outcome.message
        assert outcome.outputs == {} and outcome.submitted == 0


def changed_example(tmp_path, path, old, new):
    """A copy of examples/partitioned_regression with `old` replaced by `new` in `path`."""
    import shutil
    copy = tmp_path / "example"
    shutil.copytree(A.EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__", "partitioned_regression"))
    module = copy / path
    text = module.read_text()
    assert old in text
    module.write_text(text.replace(old, new))
    return copy


@pytest.mark.parametrize("path, old, new, words", [
    ("PartitionedRegression/Build/CoordinateDevice.bob", 'b"f32-products-f64-accumulation-v1"',
     'b"f32-products-f64-accumulation-v9"',
     [b"the other worker was built with other numerics (this worker, worker 0: numerics "
      b"f32-products-f64-accumulation-v1)",
      b"the other worker was built with other numerics (this worker, worker 1: numerics "
      b"f32-products-f64-accumulation-v9)"]),
    # the host's part of the update phase changed (the accumulator captured twice)
    ("PartitionedRegression/Build/CoordinateDevice.bob",
     "(phCopyMappedToState (naturalAdd data cdmAccumulator) (chAccumulator layout) coordinateWordBytes tail)",
     "(phCopyMappedToState (naturalAdd data cdmAccumulator) (chAccumulator layout) coordinateWordBytes "
     "(phCopyMappedToState (naturalAdd data cdmAccumulator) (chAccumulator layout) coordinateWordBytes tail))",
     [b"the other worker was built from another plan (another protocol, record or step program) (this worker, "
      b"worker 0: plan ", b"the other worker was built from another plan"]),
    ("PartitionedRegression/CoordinateHost.bob", 'b"partitioned-regression-coordinate-v2"',
     'b"partitioned-regression-coordinate-v3"', [b"was built from another plan", b"was built from another plan"]),
], ids=["numerics", "step-program", "protocol"])
def test_peers_built_from_different_plans_both_refuse_before_any_step(tmp_path, path, old, new, words):
    """Before, the pair trained (exit 0) and worker 0's manifest claimed its numerics for both."""
    changed = changed_example(tmp_path, path, old, new)
    builds = [pair(0, 1, 8)[0], A.parse_embedded(A.worker_artifact(UUID, 1, PORT, 0, 1, 8, example=changed))]
    outcomes = run_records(records(), builds)
    for outcome, expected in zip(outcomes, words):
        assert outcome.status == 5 and expected in outcome.message, outcome.message
        assert outcome.outputs == {} and outcome.submitted == 0


def test_a_pair_built_for_two_targets_still_trains():
    """The plan's word leaves out the kernels' images (the build target's, from one source): an
    sm_86 worker 0 and an sm_90 worker 1 agree and train to the reference's bits."""
    steps = 8
    builds = [pair(0, 1, steps)[0], A.parse_embedded(A.worker_artifact(UUID, 1, PORT, 0, 1, steps, target_name="sm_90"))]
    outcomes = run_records(records(), builds)
    assert [(o.status, o.message) for o in outcomes] == [(0, b""), (0, b"")]
    expected = R.train(data(), COORDINATES, steps)
    for k in range(2):
        assert R.bits(F.shard_value(outcomes[k].outputs[1 + 2 * k])[2]) == R.bits(expected[k].weight)


def test_a_worker_for_another_address_is_built_from_the_documented_entry_point():
    """probe s29 seed003 finding 6: coordinateH200WorkerAt names the pair's address (two machines);
    coordinateH200Worker is it at 127.0.0.1."""
    uuid = A.uuid_literal(UUID)
    program = A.load("import PartitionedRegression.Build.Workers\n\n"
                     f"def local : Bytes = (coordinateH200Worker {uuid} 0 1 {PORT} 0 1 8)\n"
                     f"def loopback : Bytes = (coordinateH200WorkerAt {uuid} 0 1 (coordinateAddress 127 0 0 1) {PORT} 0 1 8)\n"
                     f"def remote : Bytes = (coordinateH200WorkerAt {uuid} 0 1 (coordinateAddress 10 1 2 3) {PORT} 0 1 8)\n")
    local, loopback, remote = (bytes(program.value(name).value) for name in ("local", "loopback", "remote"))
    assert local == loopback and local != remote
    assert bytes([10, 1, 2, 3]) in A.parse_embedded(remote).program


def test_every_refusal_of_the_peers_ends_as_the_hosts_other_messages_do():
    """The host adds "; nothing was published" to a Fail's message that does not say it; the
    prepared refusal said it after a ':' (probe s32 partnet finding 7)."""
    from bobc.native.program import decode
    for host in pair(0, 1, 8):
        program = decode(host.program)
        said = [c.data for c in program.commands if c.name == "Fail"]
        assert b"coordinate peer: malformed prepared message (the other worker's last message is not PREPARED)" in said
        assert not [m for m in said if b"nothing was published" in m], said


ORDER = b"(the order is: manifest, w0, a0, w1, a1)"


def given(checkpoint, order):
    """The checkpoint's files given in `order` (order[i]: the argument whose file argument i + 1 gets)."""
    return {0: checkpoint[0], **{i + 1: checkpoint[source] for i, source in enumerate(order)}}


@pytest.mark.parametrize("order, words", [
    ((2, 1, 3, 4), [b"argument 1 holds worker 0's accumulator shard; give worker 0's weight shard there " + ORDER,
                    None]),
    ((2, 1, 4, 3), [b"argument 1 holds worker 0's accumulator shard; give worker 0's weight shard there " + ORDER,
                    b"argument 3 holds worker 1's accumulator shard; give worker 1's weight shard there " + ORDER]),
    ((3, 4, 1, 2), [b"argument 1 holds worker 1's weight shard; give worker 0's weight shard there " + ORDER,
                    b"argument 3 holds worker 0's weight shard; give worker 1's weight shard there " + ORDER]),
    ((1, 2, 4, 3), [None,
                    b"argument 3 holds worker 1's accumulator shard; give worker 1's weight shard there " + ORDER]),
], ids=["worker-0-within", "m-a0-w0-a1-w1", "workers-swapped", "worker-1-within"])
def test_shards_given_in_another_order_are_refused_naming_the_argument_and_the_region(order, words):
    """probe s32 checkpoint finding 1: a shard carries its region's tag (b"SHw0" ... b"SHa1"), so a
    shard in another region's place -- a worker's weight and accumulator swapped, or the workers'
    shards swapped -- is refused by the worker it belongs to, naming the argument, the region it
    holds and the one that argument takes (status 2, before connecting: its peer ends with 5);
    before, the pair trained from the accumulator as the weight (or the other worker's coordinate)
    and published that, exit 0."""
    outcomes = run(1, 1, 4, given(checkpoint_at(1, 8), order), timeout=2)
    for outcome, expected in zip(outcomes, words):
        if expected is None:
            assert outcome.status == 5, outcome.message
        else:
            assert outcome.status == 2 and b"coordinate checkpoint: " + expected in outcome.message, outcome.message
    assert [(o.outputs, o.submitted) for o in outcomes] == [({}, 0), ({}, 0)]


@pytest.mark.parametrize("order, words", [
    ((2, 1, 3, 4), b"argument 1 holds worker 0's accumulator shard; give worker 0's weight shard there " + ORDER),
    ((1, 2, 4, 3), b"argument 3 holds worker 1's accumulator shard; give worker 1's weight shard there " + ORDER),
    ((3, 4, 1, 2), b"argument 1 holds worker 1's weight shard; give worker 0's weight shard there " + ORDER),
], ids=["worker-0-within", "worker-1-within", "workers-swapped"])
def test_a_prediction_refuses_shards_given_in_another_order(order, words):
    outcome = prediction(given(checkpoint_at(1, 8), order))
    assert outcome.status == 2 and b"coordinate checkpoint: " + words in outcome.message, outcome.message
    assert outcome.outputs == {} and outcome.submitted == 0


def test_the_docs_say_that_shards_given_in_another_order_are_refused():
    doc = " ".join((Path(__file__).resolve().parents[2] / "docs/partitioned-regression.md").read_text().split())
    assert ("argument 1 holds worker 0's accumulator shard; give worker 0's weight shard there (the order is: "
            "manifest, w0, a0, w1, a1)") in doc
    assert "What is not detected: a shard carries no region identity" not in doc


def older_checkpoint(epoch, steps, coordinates=COORDINATES):
    """A checkpoint as the pair wrote it before shards named their region (b"FRAM", no tag)."""
    files = {0: F.manifest(epoch)}
    for k, c in enumerate(coordinates):
        files[1 + 2 * k] = F.older_shard(epoch, steps, c.weight)
        files[2 + 2 * k] = F.older_shard(epoch, steps, c.accumulator)
    return files


OLDER = (b" is of the older shard format (it starts with FRAM: no region tag); tag the checkpoint's shards with "
         b"python examples/partitioned_regression/upgrade_checkpoint.py MANIFEST W0 A0 W1 A1 " + ORDER +
         b", or train the pair afresh")


def test_a_checkpoint_of_the_older_format_is_refused_saying_so_and_what_to_do():
    outcomes = run(1, 1, 4, older_checkpoint(1, 8), timeout=2)
    for k, outcome in enumerate(outcomes):
        name = f"worker {k}'s weight shard (argument {1 + 2 * k})".encode()
        assert outcome.status == 2 and b"coordinate checkpoint: " + name + OLDER in outcome.message, outcome.message
        assert outcome.outputs == {} and outcome.submitted == 0
    outcome = prediction(older_checkpoint(1, 8))
    assert outcome.status == 2 and b"worker 0's weight shard (argument 1)" + OLDER in outcome.message


def test_the_upgrade_tool_tags_an_older_checkpoint_which_then_resumes_as_the_tagged_one_does(tmp_path, capsys):
    """examples/partitioned_regression/upgrade_checkpoint.py, which the refusal above names: the
    older checkpoint's shards tagged in the order given, then resumed, give the bits of the same
    checkpoint written tagged; run again, it leaves them as they are; a checkpoint given in another
    order than the hosts' is refused when a shard is tagged already, nothing rewritten."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("upgrade_checkpoint", A.EXAMPLE / "upgrade_checkpoint.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    names = ["m", "w0", "a0", "w1", "a1"]
    for argument, data in older_checkpoint(1, 8).items():
        (tmp_path / names[argument]).write_bytes(data)
    paths = [str(tmp_path / name) for name in names]
    assert tool.main(paths) == 0
    upgraded = {argument: (tmp_path / name).read_bytes() for argument, name in enumerate(names)}
    assert upgraded == checkpoint_at(1, 8)
    assert tool.main(paths) == 0 and {a: (tmp_path / n).read_bytes() for a, n in enumerate(names)} == upgraded
    swapped = [paths[0], paths[2], paths[1], paths[3], paths[4]]
    assert tool.main(swapped) == 2
    assert "argument 1" in capsys.readouterr().err
    assert {a: (tmp_path / n).read_bytes() for a, n in enumerate(names)} == upgraded
    outcomes = run(1, 1, 4, upgraded)
    assert [(o.status, o.message) for o in outcomes] == [(0, b""), (0, b"")]
    assert [o.outputs for o in outcomes] == [o.outputs for o in run(1, 1, 4, checkpoint_at(1, 8))]
