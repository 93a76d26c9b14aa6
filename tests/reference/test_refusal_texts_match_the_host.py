"""`bobc run PLAN train|predict --reference` refuses a bad input record or checkpoint in the
host's own words (README: "same refusals and exit codes as the host"; probe s28 texts,
finding 3): Bob's built host and the reference runner are run over a table of damaged
checkpoints and records, and each one's stderr after the program's name ("bob-host: error: ",
"bobc run: error: ") and its exit code are compared.  A built host checks its inputs before it
looks for a GPU, so its refusals are real on a machine without one."""
from __future__ import annotations

import contextlib
import io
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
sys.path.insert(0, str(REPO / "examples" / "bob"))
OUTPUTS = ["--checkpoint-out", "o.ck", "--predictions", "o.pr", "--result", "o.rs"]


def reference(argv, folder) -> tuple[int, str]:
    """`bobc run PLAN ... --reference ARGV` in `folder`, in this process (the CLI's own main)."""
    from bobc.cli import main

    stderr = io.StringIO()
    before = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = main(["run", str(PLAN), argv[0], "--reference", *argv[1:]])
    finally:
        os.chdir(before)
    return status, stderr.getvalue()


def after_name(text: str, name: str) -> str:
    assert text.startswith(f"{name}: error: "), text
    return text[len(f"{name}: error: "):]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    import numpy as np
    from bob_model.formats import InputRecord, encode_input_record

    folder = tmp_path_factory.mktemp("refusal-texts")
    record = encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [119, 116, 32]))
    (folder / "record.bin").write_bytes(record)
    host = folder / "bob-host"
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", str(host)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    status, said = reference(["train", "--input", "record.bin", "--checkpoint-out", "good.ck", "--predictions",
                              "good.pr", "--result", "good.rs"], folder)
    assert status == 0, said
    return folder, host, record, (folder / "good.ck").read_bytes()


def put(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def resealed(data: bytes) -> bytes:
    """`data` with its CRC-32 made right again (what a damaged header hides behind)."""
    body = len(data) - 12
    return put(data, body, "<I", zlib.crc32(data[:body]))


def checkpoints(good: bytes) -> dict:
    h = struct.unpack_from("<I", good, 8)[0]
    lengths = struct.unpack_from("<4I", good, 48)
    seed_at = 64 + sum(lengths[:3])
    payload = len(good) - h - 12
    # a sound envelope of a smaller payload (its chunk bytes to match): foreign by its payload bytes
    smaller = put(put(good[:h + payload - 12 * 4] + bytes(12), 24, "<Q", payload - 48), 32, "<Q", (payload - 48) // 3)
    return {
        "empty": b"",
        "short header": good[:40],
        "magic": b"X" + good[1:],
        "header bytes odd": put(good, 8, "<I", h + 4),
        "header bytes past the file": put(good, 8, "<I", len(good) + 16),
        "header bytes too many": resealed(put(good, 8, "<I", h + 16)),          # finding 2's case
        "truncated by one": good[:-1],
        "a byte more": good + b"\0",
        "payload field short": resealed(put(good, 24, "<Q", payload - 4)),
        "identities overflow the header": resealed(put(good, 48, "<I", h)),
        "trailer": good[:-1] + b"2",
        "crc": put(good, h + 5, "<B", good[h + 5] ^ 1),
        "padding": resealed(put(good, h - 1, "<B", 1)),
        "schema": resealed(put(good, 64 + 5, "<B", ord("X"))),
        "seed": resealed(put(good, seed_at, "<B", ord("X"))),
        "payload bytes": resealed(smaller),
        "chunk bytes": resealed(put(good, 32, "<Q", 131072)),
        "chunk count": resealed(put(good, 12, "<I", 2)),
        "updates per invocation": resealed(put(good, 40, "<Q", 11)),
        "no room for the updates": resealed(put(good, 16, "<Q", 2 ** 32 - 5)),
        "larger and foreign": resealed(put(good, seed_at, "<B", ord("X"))) + bytes(2 << 20),
        "larger": bytes(len(good) + (2 << 20)),
    }


def records(record: bytes) -> dict:
    return {
        "empty": b"",
        "one byte": record[:1],
        "a byte short": record[:-1],
        "a byte more": record + b"\0",
        "far too long": record + bytes(100_000),
        "magic": b"BOBINPUX" + record[8:],
        "version": put(record, 8, "<Q", 2),
        "pairs out of order": put(record, 16 + 2 * 5, "<B", 6),
        "pair against its word": put(record, 17 + 2 * 9, "<B", 0),
        "target word": put(record, 528 + 4 * 9, "<I", 256),
        "prompt": put(record, 1552 + 4 * 2, "<I", 0xFFFFFFFF),
    }


CHECKPOINT_CASES = [(name, op) for name in checkpoints(bytes(1000)) for op in ("train", "predict")
                    if op == "train" or name != "no room for the updates"]
RECORD_CASES = sorted(records(bytes(1564)))


def compare(folder: Path, host: Path, argv) -> tuple[int, str]:
    native = subprocess.run([str(host), *argv], cwd=folder, capture_output=True, text=True, timeout=60)
    status, said = reference(argv, folder)
    assert status == native.returncode, (native.stderr, said)
    assert after_name(said, "bobc run") == after_name(native.stderr, "bob-host")
    assert not any((folder / name).exists() for name in ("o.ck", "o.pr", "o.rs"))
    return status, native.stderr


@pytest.mark.parametrize("name, op", CHECKPOINT_CASES, ids=[f"{n}-{o}" for n, o in CHECKPOINT_CASES])
def test_a_damaged_checkpoint_is_refused_in_the_hosts_words(setup, name, op):
    folder, host, _, good = setup
    path = folder / ("ck " + name.replace(" ", "-") + ".bin")
    path.write_bytes(checkpoints(good)[name])
    status, said = compare(folder, host, [op, "--input", "record.bin", "--checkpoint", path.name, *OUTPUTS])
    assert status in (4, 5), said
    assert f"checkpoint {path.name}: " in said


@pytest.mark.parametrize("name", RECORD_CASES)
def test_a_damaged_record_is_refused_in_the_hosts_words(setup, name):
    folder, host, record, _ = setup
    path = folder / ("rec " + name.replace(" ", "-") + ".bin")
    path.write_bytes(records(record)[name])
    status, said = compare(folder, host, ["train", "--input", path.name, *OUTPUTS])
    assert status == 3, said
    assert f"input record {path.name}: " in said


@pytest.mark.parametrize("what", ["missing", "folder"])
def test_an_unreadable_input_is_refused_in_the_hosts_words(setup, what):
    folder, host, _, _ = setup
    if what == "folder":
        (folder / "a-folder").mkdir(exist_ok=True)
    name = "nothing-here" if what == "missing" else "a-folder"
    assert compare(folder, host, ["train", "--input", name, *OUTPUTS])[0] == 3
    assert compare(folder, host, ["train", "--input", "record.bin", "--checkpoint", name, *OUTPUTS])[0] == 4


def test_the_messages_name_what_the_probe_missed(setup):
    """The probe's cases by name: the values the reference used to leave out or show as Python reprs."""
    folder, host, record, good = setup
    table = checkpoints(good)
    expected = {
        "magic": "not a checkpoint (magic is not BOBCENV1)",
        "trailer": "corrupted: its trailer magic is not BOBCEND1: the file is damaged; copy it again",
        "seed": "seed identity differs from byte 0: this host's is 'bob-seed-v1', the checkpoint's is 'Xob-seed-v1'",
        "updates per invocation": "updates per invocation differ: this host's 10, the checkpoint's 11",
    }
    for name, text in expected.items():
        (folder / "named.ck").write_bytes(table[name])
        status, said = reference(["train", "--input", "record.bin", "--checkpoint", "named.ck", *OUTPUTS], folder)
        assert text in said and "b'" not in said, said
    (folder / "named.ck").write_bytes(table["crc"])
    said = reference(["train", "--input", "record.bin", "--checkpoint", "named.ck", *OUTPUTS], folder)[1]
    assert "CRC-32 stored 0x" in said and ", computed 0x" in said and "over bytes 0.." in said, said
    # each word at its byte, offset + i x stride (s42 recordoffset): Bob's pairs from byte 16, two bytes each
    for name, text in (("pair against its word",
                        f"pair's target 9 at byte {17 + 9 * 2} is 0, but the word at byte 564 says 66"),
                       ("pairs out of order", f"pair 5 at byte {16 + 5 * 2} names 6 (the 256 must list 0..255 in order)"),
                       ("one byte", "1 byte, expected exactly 1,564 (truncated)")):
        (folder / "named.bin").write_bytes(records(record)[name])
        said = reference(["train", "--input", "named.bin", *OUTPUTS], folder)[1]
        assert text in said, said
