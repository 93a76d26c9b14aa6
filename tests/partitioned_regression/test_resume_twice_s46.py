"""A resume run twice (probe s46 partreg2, finding 8).

A pair built to resume epoch e reads the checkpoint of epoch e and publishes that of e + 1
(docs/partitioned-regression.md, "What resume means").  Running the same resume again -- what a
new user does to train on -- found the manifest of e + 1 and said "the manifest (argument 0) is
not this pair's checkpoint at epoch 1 with its numerics and regions": it is this pair's, one
epoch on.  The manifest's epoch is now checked apart from the rest, and a manifest that is this
pair's but for its epoch says so and what to do; any other difference says what it said.

The manifests are formats.manifest's (the layout written out by hand from Checkpoint.
NativeRegions), one byte changed where a case says; the C host (NATIVE_DEVICE=memory) and bobc's
reference runner must say the same bytes, before connecting, nothing written."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from partitioned_regression import formats as F

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "examples/partitioned_regression"
UUID = "".join(f"\\x{b:02x}" for b in bytes(range(16)))
ANOTHER_EPOCH = ("coordinate checkpoint: the manifest (argument 0) is this pair's checkpoint at another epoch, not "
                 "epoch 1 (its bytes 4 to 11, little-endian, say which): a host built for epoch e reads the checkpoint "
                 "of epoch e and a resume writes that of e + 1, so run the next resume with hosts built for the "
                 "manifest's epoch, or put back the checkpoint of this epoch; nothing was published")
NOT_OURS = ("coordinate checkpoint: the manifest (argument 0) is not this pair's checkpoint at epoch 1 with its "
            "numerics and regions; nothing was published")


@pytest.fixture(scope="module")
def hosts(tmp_path_factory, port):
    folder = tmp_path_factory.mktemp("pr-resume-twice")
    (folder / "Pair.bob").write_text(
        "module Pair\n\nimport PartitionedRegression.Build.Workers\n\n"
        f'def resume0 : Bytes = (coordinateH200Worker b"{UUID}" 0 0 {port} 1 1 4)\n'
        f'def predict : Bytes = (coordinateH200Prediction b"{UUID}" 0 1)\n')
    built = {}
    for name in ("resume0", "predict"):
        done = subprocess.run([sys.executable, "-m", "bobc", "build", str(folder / "Pair.bob"), "--entry", name,
                               "--target", "sm_90", "-I", str(EXAMPLE), "-o", str(folder / name)],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        built[name] = folder / name
    return built


def changed(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


CASES = {                                         # the manifest given, what the host says
    "the next epoch": (F.manifest(2), ANOTHER_EPOCH),
    "epoch 2^32 + 1": (F.manifest(2 ** 32 + 1), ANOTHER_EPOCH),            # the epoch's high half alone differs
    "the magic": (changed(F.manifest(1), 0), NOT_OURS),
    "the numerics' length": (changed(F.manifest(1), 12), NOT_OURS),
    "the numerics": (F.manifest(1, b"f32-products-f64-accumulation-v2"), NOT_OURS),
    "the last region's size": (changed(F.manifest(1), 251 - 7), NOT_OURS),
}


@pytest.mark.parametrize("host", ["resume0", "predict"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_manifest_of_another_epoch_is_told_apart_from_another_pairs_s46(hosts, tmp_path, host, case):
    from bobc.native.artifact import split
    from bobc.reference.native_program import run_program

    manifest, words = CASES[case]
    assert len(manifest) == 252
    (tmp_path / "m").write_bytes(manifest)
    for region, name in enumerate(("w0", "a0", "w1", "a1")):
        (tmp_path / name).write_bytes(F.shard(2, 8, 0.5, region))
    (tmp_path / "record.bin").write_bytes(bytes(32 + 16 * 4096))
    arguments = ["m", "w0", "a0", "w1", "a1", "readback", "record.bin" if host == "resume0" else "prediction"]
    environment = {**os.environ, "NATIVE_DEVICE": "memory", "NATIVE_PEER_TIMEOUT_MS": "3000"}
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    done = subprocess.run([str(hosts[host]), *arguments], cwd=tmp_path, env=environment, capture_output=True,
                          timeout=60)
    said = io.BytesIO()
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        status = run_program(split(hosts[host].read_bytes(), str(hosts[host])).program, arguments,
                             name=str(hosts[host]), environ=environment, stderr=said)
    finally:
        os.chdir(here)
    assert (done.returncode, done.stderr) == (status, said.getvalue())
    assert status == 2 and done.stderr.decode().endswith(f"(Fail): {words}\n"), done.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before          # nothing written
