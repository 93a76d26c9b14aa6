"""Seed 003's pair publishes in two phases (docs/partitioned-regression.md, "What publication does
not cover"): each peer prepares its outputs (PrepareOutputs), tells the other, and ends only when
the other's "prepared" arrives.  Both peers run by bobc's reference runner (run_program, the
device emulated by the example's reference kernels) in one process, over localhost TCP."""
from __future__ import annotations

import functools
import io
import threading

from partitioned_regression import artifacts as A
from partitioned_regression import formats as F
from partitioned_regression import reference as R
from partitioned_regression.device import EmulatedDevice

from bobc.reference.native_program import run_program

UUID = bytes.fromhex("8f1c2a3b4c5d6e7f8091a2b3c4d5e6f7")
STEPS = 8
COORDINATES = [R.Coordinate(0.0, 0.0, 0.5, 0.05), R.Coordinate(0.25, -0.125, 0.25, 0.04)]
KINDS = {"program": 1, "qmd": 2, "push": 3, "ring": 4}


@functools.lru_cache(maxsize=None)
def resume_pair(port: int):
    """The pair resuming at epoch 1, built for `port` (the run's own, conftest.py `port`)."""
    return [A.parse_embedded(A.worker_artifact(UUID, k, port, 1, 1, STEPS)) for k in range(2)]


def checkpoint(folder):
    """The pair's checkpoint of epoch 1 at STEPS steps, as a fresh run would have left it."""
    files = {"m": F.manifest(1)}
    for k, c in enumerate(COORDINATES):
        files[f"w{k}"] = F.shard(1, STEPS, c.weight, 2 * k)
        files[f"a{k}"] = F.shard(1, STEPS, c.accumulator, 2 * k + 1)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    data = R.generate()
    for k in range(2):
        (folder / f"record{k}.bin").write_bytes(F.record(data, k, COORDINATES[k]))
    return files


def run_pair(port, folder, readbacks, on_first_submit=None):
    """Both workers (threads) with the checkpoint in `folder` and readbacks[k] as worker k's
    readback; on_first_submit(k) runs at worker k's first submission.  [(status, stderr)] * 2."""
    outcomes = [None, None]

    def work(k):
        device, said = EmulatedDevice(), io.BytesIO()
        first = [True]

        def submit(machine, entry):
            if first[0] and on_first_submit is not None:
                on_first_submit(k)
            first[0] = False
            return device(machine, entry)

        host = resume_pair(port)[k]
        components = {KINDS[name]: data for name, data in host.images.items() if name in KINDS}
        arguments = [str(folder / name) for name in ("m", "w0", "a0", "w1", "a1")] + [
            str(readbacks[k]), str(folder / f"record{k}.bin")]
        status = run_program(host.program, arguments, name=f"worker{k}", gpu=submit, components=components,
                             stderr=said, environ={"NATIVE_PEER_TIMEOUT_MS": "5000"})
        outcomes[k] = (status, said.getvalue())

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return outcomes


def leftovers(folder):
    return sorted(p.name for p in folder.rglob("*") if ".tmp-" in p.name or "journal" in p.name)


def test_a_resumed_pair_publishes_every_file_at_the_next_epoch(port, tmp_path):
    checkpoint(tmp_path)
    outcomes = run_pair(port, tmp_path, [tmp_path / "rb0", tmp_path / "rb1"])
    assert outcomes == [(0, b""), (0, b"")]
    assert F.manifest(2) == (tmp_path / "m").read_bytes()
    for name in ("w0", "a0", "w1", "a1"):
        assert F.shard_value((tmp_path / name).read_bytes())[:2] == (2, 2 * STEPS)
    assert (tmp_path / "rb0").exists() and (tmp_path / "rb1").exists() and leftovers(tmp_path) == []


def test_a_worker_that_cannot_prepare_its_outputs_leaves_the_checkpoint_as_it_was(port, tmp_path):
    """Worker 1's readback folder is moved away once the run has started (after every path was
    checked): worker 1 fails at PrepareOutputs (status 8, its readback named), worker 0, prepared
    already, finds the connection closed (status 5); neither publishes, and the checkpoint both
    would have replaced stays byte for byte (on main worker 0 published a split checkpoint)."""
    before = checkpoint(tmp_path)
    (tmp_path / "sub").mkdir()

    def move(k):
        if k == 1:
            (tmp_path / "sub").rename(tmp_path / "moved")

    (status0, said0), (status1, said1) = run_pair(port, tmp_path, [tmp_path / "rb0", tmp_path / "sub" / "rb1"], move)
    assert status1 == 8, said1
    assert said1.startswith(b"native: command ") and b" (PrepareOutputs): output " in said1
    assert said1.endswith(f"sub/rb1 (argument 5): cannot create a temporary file in {tmp_path}/sub: No such file or "
                          f"directory; nothing was published\n".encode()), said1
    assert status0 == 5, said0
    assert b" (Receive): peer 127.0.0.1:" in said0 or b" (Send): peer 127.0.0.1:" in said0, said0
    # the message worker 0 waited for: worker 1's "prepared" (identity, data, STEPS steps, the last
    # step's, then it), and what to do
    assert f" closed the connection at message {STEPS + 4} from it (0 of 24 bytes received); the other peer " \
           f"stopped: see its messages for why, then start both again".encode() in said0 or b" (Send): " in said0, said0
    assert said0.endswith(b"nothing was published\n"), said0
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data, name
    assert not (tmp_path / "rb0").exists() and list((tmp_path / "moved").iterdir()) == []
    assert leftovers(tmp_path) == []
