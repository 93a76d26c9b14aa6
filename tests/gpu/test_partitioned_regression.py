"""Seed 003 on the H200: two native peers, each its own process and GPU channel on the one GPU,
train the partitioned regression over 127.0.0.1 (docs/partitioned-regression.md).

- training on generated data (4096 rows, one pass a run) converges to NumPy's least squares
  and equals the NumPy reference of the same binary32-product, binary64-accumulation
  arithmetic bit for bit; the readback's w and a agree;
- a resume from the checkpoint continues bit-identically (two runs = the reference's 8192 steps);
- the prediction equals left x 1 + right x 2 computed the same way;
- a peer that disconnects, sends a malformed or out-of-order message, resumes another run's
  checkpoint, or never connects ends the other with a clear error and its last checkpoint intact;
  a port in use is refused by name; shards given in another order are refused naming the argument
  and the region (each shard carries its region's tag, docs/formats.md).

The hosts are built here for this GPU (its UUID from nvidia-smi -L or
/proc/driver/nvidia/gpus/*/information) by tests/gpu/build_partitioned_regression_hosts.py,
or taken from PR_HOSTS (a folder that script wrote for this GPU).
"""
from __future__ import annotations

import os
import re
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
for folder in (REPO / "compiler", REPO / "examples/partitioned_regression", REPO / "tests/gpu"):
    sys.path.insert(0, str(folder))

from partitioned_regression import formats as F  # noqa: E402
from partitioned_regression import reference as R  # noqa: E402

import build_partitioned_regression_hosts as B  # noqa: E402

pytestmark = pytest.mark.gpu
COORDINATES = [R.Coordinate(0.0, 0.0, 0.5, 0.05), R.Coordinate(0.25, -0.125, 0.25, 0.04)]
STEPS = B.STEPS


def gpu_identity() -> tuple[bytes, int]:
    """(UUID, /dev/nvidiaN minor) of the first GPU."""
    for information in sorted(Path("/proc/driver/nvidia/gpus").glob("*/information")):
        text = information.read_text()
        uuid = re.search(r"GPU UUID:\s*(GPU-[0-9a-fA-F-]+)", text)
        minor = re.search(r"Device Minor:\s*(\d+)", text)
        if uuid and minor:
            return B.uuid_bytes(uuid.group(1)), int(minor.group(1))
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    uuid = re.search(r"UUID:\s*(GPU-[0-9a-fA-F-]+)", listing)
    assert uuid, f"no GPU UUID in nvidia-smi -L: {listing!r}"
    return B.uuid_bytes(uuid.group(1)), 0


@pytest.fixture(scope="module")
def hosts(tmp_path_factory, port) -> dict[str, Path]:
    """The pair's hosts, built with this run's own port (tests/conftest.py `port`: a fixed one made
    two suites on one machine fail each other); PR_HOSTS: a folder built before, with its port."""
    prebuilt = os.environ.get("PR_HOSTS")
    if prebuilt:
        folder = Path(prebuilt).resolve()
        uuid, _ = gpu_identity()
        assert f"uuid {uuid.hex()}" in (folder / "hosts.txt").read_text(), "PR_HOSTS was built for another GPU"
        return {name: folder / name for name in B.HOSTS}
    uuid, minor = gpu_identity()
    return B.build(uuid, minor, tmp_path_factory.mktemp("pr-hosts"), port)


@pytest.fixture(scope="module")
def peer_port(hosts) -> int:
    """The port the hosts listen on and connect to (hosts.txt beside them)."""
    return B.recorded_port(hosts["worker0"].parent)


@pytest.fixture(scope="module")
def data():
    return R.generate()


@pytest.fixture(scope="module")
def records(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("pr-records")
    paths = []
    for k in range(2):
        path = folder / f"record{k}.bin"
        path.write_bytes(F.record(data, k, COORDINATES[k]))
        paths.append(path)
    return paths


def checkpoint_paths(folder: Path) -> list[Path]:
    return [folder / name for name in ("manifest", "w0", "a0", "w1", "a1")]


def argv(host, folder, k, records):
    return [str(host), *map(str, checkpoint_paths(folder)), str(folder / f"readback{k}.bin"), str(records[k])]


def run_pair(hosts, names, folder, records, timeout=120, environment=None, environments=(None, None)):
    env = [{**os.environ, **(environment or {}), **(own or {})} for own in environments]
    first = subprocess.Popen(argv(hosts[names[0]], folder, 0, records), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env[0])
    time.sleep(0.5)                       # worker 0 listens first
    second = subprocess.Popen(argv(hosts[names[1]], folder, 1, records), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env[1])
    outcomes = []
    for process in (first, second):
        out, err = process.communicate(timeout=timeout)
        outcomes.append((process.returncode, err.decode(errors="replace")))
    return outcomes


@pytest.fixture(scope="module")
def trained(hosts, records, tmp_path_factory):
    folder = tmp_path_factory.mktemp("pr-fresh")
    started = time.perf_counter()
    outcomes = run_pair(hosts, ("worker0", "worker1"), folder, records)
    return folder, outcomes, time.perf_counter() - started


def weights_of(folder):
    files = [p.read_bytes() for p in checkpoint_paths(folder)]
    return [F.shard_value(files[i]) for i in range(1, 5)], files[0]


def test_training_equals_the_numpy_reference_bit_for_bit_and_converges(trained, data):
    folder, outcomes, seconds = trained
    assert outcomes == [(0, outcomes[0][1]), (0, outcomes[1][1])], outcomes
    shards, manifest = weights_of(folder)
    assert manifest == F.manifest(1)
    # each shard names its region (b"SHw0" ... b"SHa1", argument 1 to 4)
    assert [p.read_bytes()[:4] for p in checkpoint_paths(folder)[1:]] == list(F.TAGS)
    expected = R.train(data, COORDINATES, STEPS)
    for k in range(2):
        (e_w, s_w, weight), (e_a, s_a, accumulator) = shards[2 * k], shards[2 * k + 1]
        assert (e_w, s_w, e_a, s_a) == (1, STEPS, 1, STEPS)
        assert R.bits(weight) == R.bits(expected[k].weight), (k, weight, expected[k].weight)
        assert R.bits(accumulator) == R.bits(expected[k].accumulator)
        readback = (folder / f"readback{k}.bin").read_bytes()
        assert struct.unpack_from("<2d", readback) == (weight, accumulator)
    np.testing.assert_allclose([shards[0][2], shards[2][2]], R.least_squares(data), atol=1e-5)
    print(f"\n{STEPS} steps in {seconds:.3f} s (two processes, including start-up)")


def test_the_peers_share_one_gpu_context(trained):
    """By default (NATIVE_GPU_SHARE_GROUP=auto) worker 1 joins worker 0's channel group: it does not
    report taking a context of its own (runtime_c/native_device.h, "The pair's GPU context")."""
    _, outcomes, _ = trained
    assert all("context of its own" not in err for _, err in outcomes), outcomes


@pytest.mark.parametrize("share", ["0", "1"], ids=["own-contexts", "shared-required"])
def test_training_gives_the_same_bits_whether_or_not_the_peers_share_a_context(hosts, records, trained, share,
                                                                                tmp_path):
    """Each peer its own channel group (0, the GPU switches between them) or the shared group
    required (1, status 3 if it cannot be shared): the same weights as the default run."""
    outcomes = run_pair(hosts, ("worker0", "worker1"), tmp_path, records,
                        environment={"NATIVE_GPU_SHARE_GROUP": share})
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    assert [p.read_bytes() for p in checkpoint_paths(tmp_path)] == [p.read_bytes() for p in checkpoint_paths(trained[0])]


def test_a_peer_that_finds_no_context_to_join_says_so_and_takes_its_own(hosts, records, trained, tmp_path):
    """Worker 0 shares nothing (NATIVE_GPU_SHARE_GROUP=0); worker 1 (auto) waits 2 s for a group to
    join, says on stderr that it takes a context of its own, and the pair trains to the same bits."""
    outcomes = run_pair(hosts, ("worker0", "worker1"), tmp_path, records,
                        environments=({"NATIVE_GPU_SHARE_GROUP": "0"}, None))
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    assert "context of its own" in outcomes[1][1] and "NATIVE_GPU_SHARE_GROUP=0" in outcomes[1][1], outcomes[1][1]
    assert [p.read_bytes() for p in checkpoint_paths(tmp_path)] == [p.read_bytes() for p in checkpoint_paths(trained[0])]


def test_a_resume_continues_bit_identically(hosts, records, trained, data, tmp_path):
    folder, _, _ = trained
    for source in checkpoint_paths(folder):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    outcomes = run_pair(hosts, ("worker0-resume", "worker1-resume"), tmp_path, records)
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    shards, manifest = weights_of(tmp_path)
    assert manifest == F.manifest(2)
    expected = R.train(data, COORDINATES, 2 * STEPS)
    for k in range(2):
        assert shards[2 * k][:2] == (2, 2 * STEPS)
        assert R.bits(shards[2 * k][2]) == R.bits(expected[k].weight)
        assert R.bits(shards[2 * k + 1][2]) == R.bits(expected[k].accumulator)
    test_a_resume_continues_bit_identically.checkpoint = tmp_path


def test_the_prediction_is_left_times_1_plus_right_times_2(hosts, trained, tmp_path):
    folder = getattr(test_a_resume_continues_bit_identically, "checkpoint", None)
    assert folder is not None, "needs the resumed checkpoint (epoch 2)"
    done = subprocess.run([str(hosts["prediction"]), *map(str, checkpoint_paths(folder)),
                           str(tmp_path / "readback.bin"), str(tmp_path / "prediction.bin")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    shards, _ = weights_of(folder)
    prediction, = struct.unpack("<d", (tmp_path / "prediction.bin").read_bytes())
    assert R.bits(prediction) == R.bits(R.predict((shards[0][2], shards[2][2])))


# ---- failures: the surviving peer ends with a clear error, the last checkpoint intact ----
@pytest.fixture
def kept_checkpoint(trained, tmp_path):
    folder, _, _ = trained
    for source in checkpoint_paths(folder):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    return {p: p.read_bytes() for p in checkpoint_paths(tmp_path)}


def assert_intact(kept):
    for path, content in kept.items():
        assert path.read_bytes() == content, f"{path.name} changed"


def message(worker, step, partial=0.0):
    return struct.pack("<QQd", int.from_bytes(b"CDPR", "little") + (worker << 32), step, partial)


WORKER1_RECORD = []          # worker 1's record's bytes, for the scripted peer's data message


def greeted(peer, steps=STEPS):
    """Worker 1's side of the connect-time exchange of the run's identity, as worker1-resume
    (epoch 1, resume, STEPS steps) does it from the kept checkpoint (STEPS steps so far), then
    (when the identities agree) of the data's identity, with worker 1's record."""
    received = b""
    while len(received) < 56:
        chunk = peer.recv(56 - len(received))
        if not chunk:
            break
        received += chunk
    words = struct.unpack_from("<2Q", received.ljust(56, b"\0"), 40)     # the numerics' and plan's words: built alike
    peer.sendall(struct.pack("<7Q", int.from_bytes(b"CDPH", "little") + (1 << 32), 1, 1, STEPS, steps, *words))
    if steps == STEPS:
        received = b""
        while len(received) < 40:
            chunk = peer.recv(40 - len(received))
            if not chunk:
                return
            received += chunk
        peer.sendall(F.data_identity(WORKER1_RECORD[0], 1))


def worker0_against(hosts, records, folder, behaviour, port, timeout=60):
    WORKER1_RECORD[:] = [Path(records[1]).read_bytes()]
    process = subprocess.Popen(argv(hosts["worker0-resume"], folder, 0, records),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 20
    while True:
        try:
            peer = socket.create_connection(("127.0.0.1", port), timeout=5)
            break
        except OSError:
            assert time.time() < deadline, "worker 0 never listened"
            time.sleep(0.1)
    with peer:
        behaviour(peer)
        out, err = process.communicate(timeout=timeout)
    return process.returncode, err.decode(errors="replace")


@pytest.mark.parametrize("behaviour, words", [
    (lambda peer: None, "peer"),
    (lambda peer: (greeted(peer), peer.recv(24), peer.sendall(b"\xff" * 24)), "malformed message"),
    (lambda peer: (greeted(peer), peer.recv(24), peer.sendall(message(1, 2))), "out-of-order message"),
    (lambda peer: greeted(peer, steps=2 * STEPS), "resumes a checkpoint at another step count"),
], ids=["disconnects", "malformed", "out-of-order", "other-run"])
def test_a_misbehaving_peer_ends_worker_0_with_a_clear_error(hosts, records, kept_checkpoint, behaviour, words,
                                                             peer_port):
    folder = next(iter(kept_checkpoint)).parent
    code, err = worker0_against(hosts, records, folder, behaviour, peer_port)
    assert code == 5 and words in err, (code, err)
    assert_intact(kept_checkpoint)


def test_a_peer_that_never_connects_times_out(hosts, records, kept_checkpoint):
    folder = next(iter(kept_checkpoint)).parent
    process = subprocess.run(argv(hosts["worker0-resume"], folder, 0, records), capture_output=True, text=True,
                             timeout=120)
    assert process.returncode != 0 and process.stderr.strip(), process
    assert_intact(kept_checkpoint)


def test_a_port_in_use_is_refused_by_name(hosts, records, kept_checkpoint, peer_port):
    folder = next(iter(kept_checkpoint)).parent
    with socket.socket() as holder:
        # (reuse: earlier runs' connections may linger in TIME_WAIT; a listener still holds the port)
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", peer_port))
        holder.listen(1)
        done = subprocess.run(argv(hosts["worker0-resume"], folder, 0, records), capture_output=True, text=True,
                              timeout=60)
    assert done.returncode != 0 and str(peer_port) in done.stderr and "in use" in done.stderr, done.stderr
    assert_intact(kept_checkpoint)


ORDER = "(the order is: manifest, w0, a0, w1, a1)"


@pytest.mark.parametrize("name, order, words", [
    ("worker0-resume", ("manifest", "a0", "w0", "w1", "a1"),
     f"argument 1 holds worker 0's accumulator shard; give worker 0's weight shard there {ORDER}"),
    ("worker1-resume", ("manifest", "w1", "a1", "w0", "a0"),
     f"argument 3 holds worker 0's weight shard; give worker 1's weight shard there {ORDER}"),
], ids=["worker-0-within", "workers-swapped"])
def test_shards_given_in_another_order_are_refused(hosts, records, kept_checkpoint, name, order, words):
    """probe s32 checkpoint finding 1: before, a pair given `m a0 w0 a1 w1` trained from the
    accumulator as the weight and published it (exit 0).  The worker refuses before it connects
    (status 2), the checkpoint intact."""
    folder = next(iter(kept_checkpoint)).parent
    worker = int(name[len("worker")])
    done = subprocess.run([str(hosts[name]), *(str(folder / f) for f in order), str(folder / f"readback{worker}.bin"),
                           str(records[worker])], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"coordinate checkpoint: {words}" in done.stderr, done.stderr
    assert "OpenDevice" not in done.stderr and "Submit" not in done.stderr
    assert_intact(kept_checkpoint)
