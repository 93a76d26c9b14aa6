"""Seed 003's built C hosts without a GPU (NATIVE_DEVICE=memory): what they do before their first
Submit -- the checkpoint's checks, a resume's row position, the peers' agreement on the run --
over real TCP, as two processes.  A session without a GPU refuses the first Submit (status 3),
so reaching it is the measure of everything before it."""
from __future__ import annotations

import os
import resource
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "examples/partitioned_regression"
sys.path.insert(0, str(EXAMPLE))

from partitioned_regression import formats as F  # noqa: E402

STEPS = 4
UUID = "".join(f"\\x{b:02x}" for b in bytes(range(16)))
HOSTS = {                       # worker, resume, epoch, steps (the port: the run's own, conftest.py `port`)
    "resume0": (0, 1, 1, STEPS),
    "resume1": (1, 1, 1, STEPS),
    "worker0": (0, 0, 1, STEPS),
    "worker1": (1, 0, 1, STEPS),
    "longer1": (1, 0, 1, 2 * STEPS),
}


@pytest.fixture(scope="module")
def hosts(tmp_path_factory, port) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pr-c-hosts")
    (folder / "Pair.bob").write_text("module Pair\n\nimport PartitionedRegression.Build.Workers\n\n" + "".join(
        f'def {name} : Bytes = (coordinateH200Worker b"{UUID}" 0 {worker} {port} {resume} {epoch} {steps})\n'
        for name, (worker, resume, epoch, steps) in HOSTS.items()))
    for name in HOSTS:
        built = subprocess.run([sys.executable, "-m", "bobc", "build", str(folder / "Pair.bob"), "--entry", name,
                                "--target", "sm_90", "-I", str(EXAMPLE), "-o", str(folder / name)],
                               capture_output=True, text=True, timeout=300)
        assert built.returncode == 0, built.stderr
    return {name: folder / name for name in HOSTS}


def checkpoint(folder: Path, steps: int, older: bool = False) -> None:
    """The pair's checkpoint of epoch 1 at `steps` steps (`older`: its shards of the older format,
    without their region's tag)."""
    (folder / "m").write_bytes(F.manifest(1))
    for region, (name, value) in enumerate((("w0", 0.5), ("a0", 0.25), ("w1", -0.5), ("a1", -0.25))):
        (folder / name).write_bytes(F.older_shard(1, steps, value) if older else F.shard(1, steps, value, region))


def record(worker: int, targets: float = 0.0) -> bytes:
    """A record of worker `worker`'s column (every x the worker's number + 1), every y `targets`."""
    return bytes(32) + struct.pack("<2d", worker + 1.0, targets) * 4096


def run_pair(hosts, names, folder: Path, timeout: float = 120, records=None, cpu_s: int | None = None):
    """Both peers as processes (worker 0 first), with the pair's checkpoint paths; each
    (status, stderr).  `timeout` is a hang guard; `cpu_s` bounds each peer's CPU time
    (RLIMIT_CPU: past it the kernel ends the peer with SIGXCPU), a bound on work that a loaded
    machine does not move as it moves the wall clock."""
    for worker in range(2):
        (folder / f"record{worker}.bin").write_bytes((records or [record(0), record(1)])[worker])
    # no test here waits for a peer to time out (each outcome is a message or a Submit): the
    # peers' wait is long enough that a loaded machine never ends a healthy exchange
    environment = {**os.environ, "NATIVE_DEVICE": "memory", "NATIVE_PEER_TIMEOUT_MS": "30000"}

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, resource.getrlimit(resource.RLIMIT_CPU)[1]))
    processes = []
    for worker, name in enumerate(names):
        arguments = ["m", "w0", "a0", "w1", "a1", f"readback{worker}", str(folder / f"record{worker}.bin")]
        processes.append(subprocess.Popen([str(hosts[name]), *arguments], cwd=folder, env=environment,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          preexec_fn=limited if cpu_s is not None else None))
    try:
        return [(p.wait(timeout), p.stderr.read()) for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_resume_far_along_reaches_its_first_submission_at_once(hosts, tmp_path):
    """A checkpoint at 2^32 - 1 - steps steps: the rows are positioned (4095 rotations at most)
    and both peers reach their first Submit in well under a second; the plan counted up to the
    step count before (~2 s per 10^8 steps, minutes here, forever for a damaged 2^64 - 1).
    Bounded in CPU time, not wall time: counting to 2^32 would take each peer past 10 s of CPU
    (killed by SIGXCPU), where a loaded machine can take that long in wall time for anything."""
    checkpoint(tmp_path, 2 ** 32 - 1 - STEPS)
    outcomes = run_pair(hosts, ("resume0", "resume1"), tmp_path, cpu_s=10)
    for status, stderr in outcomes:
        assert status == 3 and "(Submit): submission 0" in stderr, (status, stderr)


def test_a_damaged_step_count_is_refused_naming_the_file(hosts, tmp_path):
    checkpoint(tmp_path, 2 ** 64 - 1)
    outcomes = run_pair(hosts, ("resume0", "resume1"), tmp_path)
    for worker, (status, stderr) in enumerate(outcomes):
        assert status == 2, stderr
        assert (f"coordinate checkpoint: worker {worker}'s weight shard (argument {1 + 2 * worker}) has a step count "
                f"that is not 1 to {2 ** 32 - 1 - STEPS}") in stderr
    assert not (tmp_path / "readback0").exists()


def test_peers_built_for_different_step_counts_refuse_before_opening_the_gpu(hosts, tmp_path):
    outcomes = run_pair(hosts, ("worker0", "longer1"), tmp_path)
    for worker, (status, stderr) in enumerate(outcomes):
        assert status == 5, stderr
        steps = STEPS * (1 + worker)
        assert (f"the other worker takes another number of steps (this worker, worker {worker}: {steps} steps)"
                in stderr)
        assert "OpenDevice" not in stderr and "Submit" not in stderr
    assert not any((tmp_path / name).exists() for name in ("m", "w0", "a0", "w1", "a1"))


@pytest.mark.parametrize("records, words", [
    ([record(0), record(1, targets=1.0)],
     "coordinate peer: worker 1's targets y differ from worker 0's (argument 6 of each): the two coordinate records "
     "are not from one data set; give both workers the records made from one data set; nothing was published"),
    ([record(0), record(0)],
     "coordinate peer: worker 1's feature column is the same as worker 0's (argument 6 of each): one worker was "
     "given the other's coordinate record; give worker k the record of column k; nothing was published"),
], ids=["targets", "same-column"])
def test_peers_with_records_of_different_data_refuse_before_the_first_submission(hosts, tmp_path, records, words):
    """probe s29 seed003 finding 1: before, both trained and published (exit 0)."""
    outcomes = run_pair(hosts, ("worker0", "worker1"), tmp_path, records=records)
    for status, stderr in outcomes:
        assert status == 5 and words in stderr and "Submit" not in stderr, stderr
    assert not any((tmp_path / name).exists() for name in ("m", "w0", "a0", "w1", "a1"))


ORDER = "(the order is: manifest, w0, a0, w1, a1)"


@pytest.mark.parametrize("name, order, older, words", [
    ("resume0", ("m", "a0", "w0", "w1", "a1"), False,
     f"coordinate checkpoint: argument 1 holds worker 0's accumulator shard; give worker 0's weight shard there {ORDER}"),
    ("resume1", ("m", "w1", "a1", "w0", "a0"), False,
     f"coordinate checkpoint: argument 3 holds worker 0's weight shard; give worker 1's weight shard there {ORDER}"),
    ("resume1", ("m", "w0", "a0", "w1", "w0"), False,
     f"coordinate checkpoint: argument 4 holds worker 0's weight shard; give worker 1's accumulator shard there {ORDER}"),
    ("resume0", ("m", "w0", "a0", "w1", "a1"), True,
     "coordinate checkpoint: worker 0's weight shard (argument 1) is of the older shard format (it starts with FRAM: "
     "no region tag); tag the checkpoint's shards with python examples/partitioned_regression/upgrade_checkpoint.py "
     f"MANIFEST W0 A0 W1 A1 {ORDER}, or train the pair afresh; nothing was published"),
], ids=["worker-0-within", "worker-1-workers-swapped", "worker-1-weight-twice", "older-format"])
def test_a_shard_in_another_regions_place_is_refused_by_the_c_host_and_the_reference_alike(hosts, tmp_path, name,
                                                                                          order, older, words):
    """probe s32 checkpoint finding 1: a shard now carries its region's tag, so shards given in
    another order (or of the older format, which had none) are refused naming the argument, the
    region it holds and the one that argument takes, before the worker connects (status 2, nothing
    written), by the C host and bobc's reference runner with the same bytes; before, both trained
    from the swapped state and published it (exit 0)."""
    from bobc.native.artifact import split
    from bobc.reference.native_program import run_program
    import io

    checkpoint(tmp_path, 8, older=older)
    worker = int(name[-1])
    (tmp_path / "record.bin").write_bytes(record(worker))
    arguments = [*order, "readback", "record.bin"]
    host = hosts[name]
    environment = {**os.environ, "NATIVE_DEVICE": "memory", "NATIVE_PEER_TIMEOUT_MS": "3000"}
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    done = subprocess.run([str(host), *arguments], cwd=tmp_path, env=environment, capture_output=True, timeout=60)
    said = io.BytesIO()
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        status = run_program(split(host.read_bytes(), str(host)).program, arguments, name=str(host),
                             environ=environment, stderr=said)
    finally:
        os.chdir(here)
    assert (done.returncode, done.stderr) == (status, said.getvalue())
    assert status == 2 and words in done.stderr.decode(), done.stderr
    assert "Connect" not in done.stderr.decode()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before          # nothing written
