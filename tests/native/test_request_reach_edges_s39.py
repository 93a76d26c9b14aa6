"""A request's reach, held at its edge by the C host and the reference alike (probe s39 mutants3:
runtime_c/native_request.c check_reach's three bounds -- the reads from the input's start, the
cursor inside the stream, the reads from the cursor -- each moved one byte went through every
related test, since no test put a reach exactly at the input's size; and a token stream's reach was
said in tokens, a nonsense count, where it is not whole tokens from a token's start).

docs/native-host.md, RequestOpen: "the input holds the bytes the operation's reads reach from its
start, the cursor (base + step x scale) lies inside the stream ... and the stream holds what the run
reads from it ... (exit 3)".  The request is laid out as that page's "The request bytes": four
identities, payload bytes, chunk bytes, updates, the input (0: a record), the fresh state (0 ends
it), the cursor base and scale, then the train and the predict reach: bytes from the start, bytes
from the cursor, publications.  The fresh state's step is 0, so the cursor is the base."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from native_helpers import c_host_and_reference, field, nat, physical_program, train_arguments

END, REQUEST_OPEN = 0, 26


STREAM = nat(1) + field(b"TESTSTRM") + nat(1) + nat(4) + nat(256) + nat(64)


def request(records=0, cursor=0, base=0, source=nat(0)) -> bytes:
    """A 64-byte payload in one chunk, a record input (or `source`: STREAM, a token stream of 4-byte
    tokens under a 64-byte header), zero fresh state; the train request reads `records` bytes from
    the input's start and `cursor` from the cursor at byte `base`."""
    return (field(b"a") * 4 + nat(64) + nat(64) + nat(1) + source + nat(0)
            + nat(base) + nat(1) + nat(records) + nat(cursor) + nat(1) + nat(0) + nat(0) + nat(1))


def program(request_bytes: bytes) -> bytes:
    return physical_program(bytes([REQUEST_OPEN]) + field(request_bytes) + nat(0) + nat(8) + bytes([END]))


def token_stream(count: int) -> bytes:
    """docs/formats.md, "Token stream": magic, version 1, 4 bytes per token, vocabulary 256, a
    64-byte header, the token count, the sha256 of the tokens; then `count` tokens (all 7)."""
    body = (7).to_bytes(4, "little") * count
    header = (b"TESTSTRM" + (1).to_bytes(4, "little") + (4).to_bytes(4, "little") + (256).to_bytes(4, "little")
              + (64).to_bytes(4, "little") + count.to_bytes(8, "little") + hashlib.sha256(body).digest())
    assert len(header) == 64
    return header + body


def host_and_reference(tmp_path: Path, request_bytes: bytes, size) -> tuple[int, bytes]:
    """The C host and the reference on a `size`-byte input (or those bytes): the same status and stderr."""
    (tmp_path / "input").write_bytes(size if isinstance(size, bytes) else bytes(range(size)))
    return c_host_and_reference(tmp_path, program(request_bytes), train_arguments("input"))


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


# a token stream of 3 tokens (76 bytes), the cursor at the first token (byte 64)
SHORT = b"input input: the stream is shorter than a train request needs: it reads "


def test_a_stream_reach_of_whole_tokens_is_said_in_tokens_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, said = host_and_reference(tmp_path, request(cursor=16, base=64, source=STREAM), token_stream(3))
    assert status == 3, said
    assert SHORT + b"16 bytes from the cursor at byte 64, to byte 80; the stream has 76 bytes (3 tokens from " \
        b"the cursor on, 4 needed: give a longer stream)" in said, said


@pytest.mark.parametrize("cursor, base, says", [
    # 13 bytes are not whole tokens
    (13, 64, b"13 bytes from the cursor at byte 64, to byte 77; the stream has 76 bytes"),
    # a cursor at byte 65 is not a token's start
    (12, 65, b"12 bytes from the cursor at byte 65, to byte 77; the stream has 76 bytes"),
], ids=["reach-not-whole-tokens", "cursor-inside-a-token"])
def test_a_stream_reach_not_of_whole_tokens_is_said_in_bytes_only(tmp_path, monkeypatch, cursor, base, says):
    monkeypatch.chdir(tmp_path)
    status, said = host_and_reference(tmp_path, request(cursor=cursor, base=base, source=STREAM), token_stream(3))
    assert status == 3, said
    assert SHORT + says in said, said
    assert b"token" not in said, said
