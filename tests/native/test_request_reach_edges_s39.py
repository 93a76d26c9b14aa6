"""A request's reach, held at its edge by the C host and the reference alike (probe s39 mutants3:
runtime_c/native_request.c check_reach's three bounds -- the reads from the input's start, the
cursor inside the stream, the reads from the cursor -- each moved one byte went through every
related test, since no test put a reach exactly at the input's size).

docs/native-host.md, RequestOpen: "the input holds the bytes the operation's reads reach from its
start, the cursor (base + step x scale) lies inside the stream ... and the stream holds what the run
reads from it ... (exit 3)".  The request is laid out as that page's "The request bytes": four
identities, payload bytes, chunk bytes, updates, the input (0: a record), the fresh state (0 ends
it), the cursor base and scale, then the train and the predict reach: bytes from the start, bytes
from the cursor, publications.  The fresh state's step is 0, so the cursor is the base."""
from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

END, REQUEST_OPEN = 0, 26


def nat(value: int) -> bytes:
    return value.to_bytes(8, "little")


def field(data: bytes) -> bytes:
    return nat(len(data)) + data


def request(records=0, cursor=0, base=0) -> bytes:
    """A 64-byte payload in one chunk, a record input, zero fresh state; the train request reads
    `records` bytes from the input's start and `cursor` from the cursor at byte `base`."""
    return (field(b"a") * 4 + nat(64) + nat(64) + nat(1) + nat(0) + nat(0)
            + nat(base) + nat(1) + nat(records) + nat(cursor) + nat(1) + nat(0) + nat(0) + nat(1))


def program(request_bytes: bytes) -> bytes:
    commands = bytes([REQUEST_OPEN]) + field(request_bytes) + nat(0) + nat(8) + bytes([END])
    return b"NPHY" + (1).to_bytes(4, "little") + nat(0) + nat(64) + nat(0) + commands


def host_and_reference(tmp_path: Path, request_bytes: bytes, size: int) -> tuple[int, bytes]:
    """The C host and the reference on a `size`-byte input: the same status and stderr."""
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes
    from bobc.reference.native_program import run_program

    host = tmp_path / "host"
    host.write_bytes(interpreter_bytes() + trailer(program(request_bytes), "sm_90"))
    host.chmod(0o755)
    (tmp_path / "input").write_bytes(bytes(range(size)))
    arguments = ["train", "--input", "input", "--checkpoint-out", "c", "--predictions", "p", "--result", "r"]
    environ = {"NATIVE_DEVICE": "memory", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(host), *arguments], capture_output=True, timeout=60, cwd=tmp_path, env=environ)
    stderr = io.BytesIO()
    status = run_program(program(request_bytes), arguments, name=str(host), stderr=stderr, environ=environ)
    assert (status, stderr.getvalue()) == (done.returncode, done.stderr)
    return done.returncode, done.stderr


# (request, input size): each reach ends exactly at the input's last byte
TAKEN = {
    "reads from the start to the end": (request(records=64), 64),
    "the cursor at the end, reading nothing more": (request(records=64, base=64), 64),
    "reads from the cursor to the end": (request(cursor=3, base=61), 64),
}

# (request, input size, the refusal): each one byte past the input's end
REFUSED = {
    "reads from the start one past the end": (
        request(records=65), 64, b"input input: 64 bytes, but a train request reads 65 bytes of it"),
    "the cursor one past the end": (
        request(cursor=1, base=65), 64,
        b"input input: the fresh state's step 0 puts the cursor at byte 65, past the stream's 64 bytes"),
    "reads from the cursor one past the end": (
        request(cursor=3, base=62), 64,
        b"input input: the stream is shorter than a train request needs: it reads 3 bytes from the cursor "
        b"at byte 62, to byte 65; the stream has 64 bytes"),
}


@pytest.mark.parametrize("name", TAKEN)
def test_a_reach_to_the_inputs_last_byte_is_taken(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    data, size = TAKEN[name]
    status, said = host_and_reference(tmp_path, data, size)
    assert b"input input" not in said, said


@pytest.mark.parametrize("name", REFUSED)
def test_a_reach_one_byte_past_the_input_is_refused_alike(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    data, size, says = REFUSED[name]
    status, said = host_and_reference(tmp_path, data, size)
    assert status == 3, said
    assert says in said, said
