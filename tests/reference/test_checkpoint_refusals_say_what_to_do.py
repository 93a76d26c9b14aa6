"""Probe s32 "checkpoint" findings 2, 3, 4, 5 and 7: refusals of a checkpoint's or a record's
contents, from Bob's built host and from `bobc run --reference`, byte for byte the same:

- the path as every message shows it (docs/runtime.md, "Exit codes"): a newline or a tab is `?`
  (one line), a path over 128 bytes is shortened in the middle and the reason stays whole;
- the header's size rules each named by what is wrong (H not a multiple of 16, H below 64);
- a size field damaged in a file of exactly this host's size is said to be damage, not truncation;
- each refusal says what to do (copy it again, pass this plan's checkpoint, write it little-endian);
- a checkpoint holding a signalling NaN trains without a Python warning on stderr.

A built host checks its inputs before it looks for a GPU, so its refusals are real here."""
from __future__ import annotations

import contextlib
import io
import os
import re
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
COPY = "copy it again from where it was written, or use an earlier checkpoint"
FOREIGN = "pass a checkpoint this host's plan wrote, or none to start fresh"


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


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    import numpy as np
    from bob_model.formats import InputRecord, encode_input_record

    folder = tmp_path_factory.mktemp("s32-refusals")
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
    body = len(data) - 12
    return put(data, body, "<I", zlib.crc32(data[:body]))


def with_header_bytes(good: bytes, h: int) -> bytes:
    """A self-consistent envelope (sizes, CRC, trailer right) of the same identities and payload
    whose header is `h` bytes (the probe's H440 and H48)."""
    ours = struct.unpack_from("<I", good, 8)[0]
    payload = good[ours:len(good) - 12]
    header = bytearray(good[:min(h, ours)]) + bytes(max(0, h - ours))
    struct.pack_into("<I", header, 8, h)
    body = bytes(header) + payload
    return body + struct.pack("<I", zlib.crc32(body)) + b"BOBCEND1"


def compare(folder: Path, host: Path, argv) -> tuple[int, str]:
    """The host's and the reference's exit status and message, the same; the message after the name."""
    native = subprocess.run([str(host), *argv], cwd=folder, capture_output=True, timeout=60)
    status, said = reference(argv, folder)
    native_said = native.stderr.decode("utf-8", "surrogateescape")
    assert status == native.returncode, (native_said, said)
    assert native_said.startswith("bob-host: error: ") and said.startswith("bobc run: error: "), (native_said, said)
    message = native_said[len("bob-host: error: "):]
    assert said[len("bobc run: error: "):] == message
    assert message.count("\n") == 1 and message.endswith("\n"), message      # one line
    assert not any((folder / name).exists() for name in ("o.ck", "o.pr", "o.rs"))
    return status, message[:-1]


def refuse_checkpoint(setup, name: str, data: bytes, op: str = "train") -> tuple[int, str]:
    folder, host, _, _ = setup
    (folder / name).write_bytes(data)
    return compare(folder, host, [op, "--input", "record.bin", "--checkpoint", name, *OUTPUTS])


# ---- finding 2: the path as the file rules show it ----

def test_a_newline_in_a_checkpoints_name_is_shown_as_a_question_mark(setup):
    _, _, _, good = setup
    damaged = put(good, 500, "<B", good[500] ^ 1)
    status, said = refuse_checkpoint(setup, "bad\nname.bin", damaged)
    assert status == 4
    assert said.startswith("checkpoint bad?name.bin: corrupted: CRC-32 stored 0x"), said
    assert said.endswith(f": the file is damaged; {COPY}"), said


def test_a_tab_in_a_records_name_is_shown_as_a_question_mark(setup):
    folder, host, record, _ = setup
    (folder / "rec\tbig-endian.bin").write_bytes(put(record, 8, ">Q", 1))
    status, said = compare(folder, host, ["train", "--input", "rec\tbig-endian.bin", *OUTPUTS])
    assert status == 3
    # finding 7: a word written big-endian is said to be
    assert said == ("input record rec?big-endian.bin: version at byte 8 is 72057594037927936, expected 1 (its bytes reversed: "
                    "the record was written big-endian; write it little-endian)"), said


def test_a_long_path_is_shortened_and_the_reason_and_what_to_do_stay_whole(setup):
    folder, _, _, good = setup
    deep = folder / ("d" * 200) / ("e" * 200)
    deep.mkdir(parents=True, exist_ok=True)
    h = struct.unpack_from("<I", good, 8)[0]
    lengths = struct.unpack_from("<4I", good, 48)
    data_at = 64 + lengths[0] + lengths[1]
    foreign = resealed(put(good, data_at + 77, "<B", 0x21))      # one byte of the data identity
    assert data_at + 77 < h
    path = deep / "ck.bin"
    assert len(os.fsencode(str(path))) > 400
    status, said = refuse_checkpoint(setup, str(path), foreign)
    assert status == 5
    assert said.startswith("checkpoint /") and "d.../ck.bin: foreign checkpoint: data identity differs from byte 77: " \
        in said, said
    assert said.endswith(f"; {FOREIGN}"), said
    assert len(said.encode()) < 512 - len("bob-host: error: ")


# ---- finding 3: each header rule by its own name ----

@pytest.mark.parametrize("h, words", [(440, "not a checkpoint: header bytes 440, not a multiple of 16"),
                                      (48, "not a checkpoint: header bytes 48, fewer than the 64 fixed bytes")])
def test_a_header_size_is_refused_for_the_rule_it_breaks(setup, h, words):
    _, _, _, good = setup
    status, said = refuse_checkpoint(setup, f"H{h}.bin", with_header_bytes(good, h))
    assert status == 4
    assert said == f"checkpoint H{h}.bin: {words}; pass a checkpoint this host's plan wrote", said
    assert "do not fit" not in said


# ---- finding 4: a damaged size field of a whole file is damage, not truncation ----

@pytest.mark.parametrize("offset, flip, field, have", [(24, 0x10, "payload bytes", 786448),
                                                       (24, 0x01, "payload bytes", 786433),
                                                       (10, 0x01, "header bytes", 65968)])
def test_a_flipped_size_field_in_a_file_of_this_hosts_size_is_damage(setup, offset, flip, field, have):
    _, _, _, good = setup
    assert len(good) == 786876
    want = 786432 if field == "payload bytes" else 432
    status, said = refuse_checkpoint(setup, "flipped.bin", put(good, offset, "<B", good[offset] ^ flip))
    assert status == 4
    assert said == (f"checkpoint flipped.bin: corrupted: its header says {field} {have:,}, this host's {want:,}, in a "
                    f"file of this host's size (786,876 bytes): the header is damaged; {COPY}"), said


def test_a_file_shorter_than_this_hosts_is_still_truncated(setup):
    _, _, _, good = setup
    status, said = refuse_checkpoint(setup, "short.bin", good[:-1])
    assert status == 4
    assert said.startswith("checkpoint short.bin: truncated: 786,875 bytes") and said.endswith(f"; {COPY}"), said


# ---- finding 7: what to do ----

def test_a_foreign_checkpoint_says_what_to_pass(setup):
    _, _, _, good = setup
    status, said = refuse_checkpoint(setup, "updates.bin", resealed(put(good, 40, "<Q", 5)))
    assert status == 5
    assert said == ("checkpoint updates.bin: foreign checkpoint: updates per invocation differ: this host's 10, the "
                    f"checkpoint's 5; {FOREIGN}"), said


def test_a_damaged_identity_length_is_refused_by_the_crc(setup):
    """The identities are judged after the CRC: a flipped length is damage (it was 'not a checkpoint')."""
    _, _, _, good = setup
    status, said = refuse_checkpoint(setup, "length.bin", put(good, 48, "<B", good[48] ^ 0x40))
    assert status == 4
    assert said.startswith("checkpoint length.bin: corrupted: CRC-32 stored") and said.endswith(COPY), said


# ---- finding 5: no Python warning reaches a user ----

@pytest.mark.parametrize("what", ["signalling NaN", "byte-swapped payload"])
def test_a_signalling_nan_trains_without_a_python_warning(setup, tmp_path, what):
    folder, _, _, good = setup
    h = struct.unpack_from("<I", good, 8)[0]
    if what == "signalling NaN":
        data = resealed(put(good, h, "<I", 0x7F800001))
    else:
        payload = good[h:len(good) - 12]
        swapped = b"".join(payload[k:k + 4][::-1] for k in range(0, len(payload), 4))
        data = resealed(good[:h] + swapped + good[len(good) - 12:])
    (tmp_path / "record.bin").write_bytes((folder / "record.bin").read_bytes())
    (tmp_path / "odd.ck").write_bytes(data)
    env = dict(os.environ, PYTHONPATH=str(REPO / "compiler"), PYTHONWARNINGS="default")
    done = subprocess.run([sys.executable, "-m", "bobc", "run", str(PLAN), "train", "--reference", "--input",
                           "record.bin", "--checkpoint", "odd.ck", *OUTPUTS], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    assert "holds step 20" in done.stdout


# ---- the step-room refusal (fix-envelope's patch outside its files, applied by the lead) ----

def test_a_checkpoint_without_room_for_the_run_says_what_it_is_still_good_for(setup):
    """A checkpoint whose step leaves no room for the run's updates under the u32 step limit: the
    path shown as the file rules show it (a newline is `?`), and what the checkpoint can still do."""
    _, _, _, good = setup
    late = resealed(put(good, 16, "<Q", 2 ** 32 - 1))        # the envelope's step, u64 at byte 16
    status, said = refuse_checkpoint(setup, "late\nstep.ck", late)
    assert status == 4
    assert re.fullmatch(r"checkpoint late\?step\.ck: step 4294967295 leaves no room for [1-9][0-9]* more updates? "
                        r"\(limit 4294967295\); it can still be used for predict, or train from an earlier checkpoint",
                        said), said
