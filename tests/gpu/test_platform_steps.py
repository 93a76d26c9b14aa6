"""The platform's step kinds on a real GPU, through hosts built from the
synthetic plans in tests/platform/Synthetic (their reference-host runs:
tests/platform/test_synthetic_plans.py):

- a ring entry issued 10,000 times again, far past the 1024-entry ring, each
  waited for; the host's end check (GPGet == GPPut) passes and its status
  counts 10,001 entries;
- a 1,000,123-byte checkpoint payload moved through a 64 KiB staging buffer
  in fifteen chunks and a tail, read back byte-identical;
- two interval publications with 200,000 issues between them: the process
  killed between them leaves the first publication, whole, at the path;
- native commands run by the plan host itself (the Commands step): binary64
  arithmetic on mapped words, copies, a repeat, branches, Halt, and a Fail that
  ends the host with its status and publishes nothing -- files, exit status and
  stderr byte for byte the reference runner's (NAME.reference.json, written by
  tests/gpu/build_platform_hosts.py).

PLATFORM_HOSTS names a folder of prebuilt hosts (tests/gpu/build_platform_hosts.py);
else they are built here.
"""
from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))

from bobc.plan.model import CheckpointContract  # noqa: E402
from bob_model import formats  # noqa: E402
from bobc.reference import envelope  # noqa: E402
from bob_model.model import BobConfig  # noqa: E402

pytestmark = pytest.mark.gpu

# Synthetic.Common's synContract b"staging" 34487 29 (one update per invocation)
STAGING_CONTRACT = CheckpointContract(b"synthetic-schema|staging", b"synthetic-learner", b"synthetic-data",
                                      b"synthetic-seed", 1_000_123, 34_487, 1)


@pytest.fixture(scope="module")
def hosts(tmp_path_factory) -> Path:
    prebuilt = os.environ.get("PLATFORM_HOSTS")
    if prebuilt:
        return Path(prebuilt).resolve()
    sys.path.insert(0, str(REPO / "tests" / "gpu"))
    import build_platform_hosts
    folder = tmp_path_factory.mktemp("platform-hosts")
    build_platform_hosts.build(folder)
    return folder


@pytest.fixture
def work(tmp_path) -> Path:
    record = formats.InputRecord((np.arange(256) * 7 + 3) % 256, [97, 98, 99])
    (tmp_path / "record.bin").write_bytes(formats.encode_input_record(record))
    return tmp_path


def outputs(folder: Path) -> list[str]:
    return ["--input", str(folder / "record.bin"), "--checkpoint-out", str(folder / "out.ckpt"),
            "--predictions", str(folder / "predictions.bin"), "--result", str(folder / "result.bin")]


def test_a_ring_entry_issued_ten_thousand_times_again(hosts, work):
    done = subprocess.run([str(hosts / "synthetic-reissue"), "train", *outputs(work)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    step, issued, published = struct.unpack("<3Q", (work / "result.bin").read_bytes())
    assert (step, issued, published) == (0, 10_001, 0)
    # nothing published by the schedule: the fresh state handed on at step 0
    payload, step = envelope.decode((work / "out.ckpt").read_bytes(), BobConfig().contract)
    assert step == 0


def test_a_million_byte_payload_staged_in_64_kib_chunks(hosts, work):
    payload = np.random.default_rng(2026).integers(0, 256, 1_000_123, dtype=np.uint8).tobytes()
    (work / "in.ckpt").write_bytes(envelope.encode(STAGING_CONTRACT, 41, payload))
    done = subprocess.run([str(hosts / "synthetic-staging"), "train", "--checkpoint", str(work / "in.ckpt"),
                           *outputs(work)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    back, step = envelope.decode((work / "out.ckpt").read_bytes(), STAGING_CONTRACT)
    assert step == 42
    assert back == payload


def test_a_publication_killed_between_intervals_leaves_the_previous_one(hosts, work):
    contract = BobConfig().contract
    path = work / "out.ckpt"
    process = subprocess.Popen([str(hosts / "synthetic-interval"), "train", *outputs(work)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not path.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0002)
    killed = process.poll() is None
    if killed:
        process.send_signal(signal.SIGKILL)
    _, stderr = process.communicate(timeout=60)
    assert killed, (f"the host finished (exit {process.returncode}) before its first publication was seen: "
                    f"{stderr.decode(errors='replace')[-500:]}")
    payload, step = envelope.decode(path.read_bytes(), contract)     # whole: its CRC and trailer check
    assert step == 1
    fresh = formats.fresh_parameters(contract.seed).astype("<f4").tobytes()
    assert payload == fresh + bytes(2 * len(fresh))
    assert not [p.name for p in work.iterdir() if ".tmp-" in p.name], "a temporary was left beside the output"


@pytest.mark.parametrize("name", ["synthetic-commands", "synthetic-commands-fail"])
def test_commands_steps_match_the_reference_runner(hosts, work, name):
    import json
    expected = json.loads((hosts / f"{name}.reference.json").read_text())
    done = subprocess.run([str(hosts / name), "train", *outputs(work)], capture_output=True, timeout=120)
    assert done.returncode == expected["status"], done.stderr
    if expected["status"]:
        assert done.stderr.decode() == f"{name}: error: {expected['message']}\n"
        assert sorted(p.name for p in work.iterdir()) == ["record.bin"], "a failed host published something"
        return
    assert done.stderr == b""
    import hashlib
    assert sorted(expected["outputs"]) == ["predictions", "result"]
    for output, data in expected["outputs"].items():
        assert (work / f"{output}.bin").read_bytes() == bytes.fromhex(data), output
    assert hashlib.sha256((work / "out.ckpt").read_bytes()).hexdigest() == expected["checkpoint_sha256"]
