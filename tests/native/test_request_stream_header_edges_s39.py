"""A native request's token stream header, held at each rule's edge by the C host and the reference
alike (probe s39 mutants2: the header's 4-byte words read as 2 bytes, its 8-byte count read as 4,
a count whose bytes wrap 2^64, a digest compared over 31 bytes, a token equal to the vocabulary and
a file one byte shorter than the header all went through the related tests).

The stream is built field by field from docs/formats.md, "Token stream" (magic 0..8, version u32
at 8, bytes per token u32 at 12, vocabulary u32 at 16, header bytes u32 at 20, token count u64 at
24, sha256 of the token bytes at 32, the tokens from the header's end), with hashlib; the refusal
names the part (docs/native-host.md, RequestOpen: "refused naming the part (exit 3)")."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from native_helpers import c_host_and_reference, field, nat, physical_program, train_arguments

END, REQUEST_OPEN = 0, 26
MAGIC, VERSION, VOCABULARY = b"TESTSTRM", 1, 256


def requesting() -> bytes:
    """Identities "a", a 64-byte payload in one chunk, a token stream input (8-byte magic, 4-byte
    tokens, a 64-byte header), zero fresh state, reaching nothing, one publication each way."""
    request = (field(b"a") * 4 + nat(64) + nat(64) + nat(1)
               + nat(1) + field(MAGIC) + nat(VERSION) + nat(4) + nat(VOCABULARY) + nat(64)
               + nat(1) + nat(0)
               + nat(0) + nat(0) + b"".join(nat(1 if i in (2, 5) else 0) for i in range(6)))
    return physical_program(bytes([REQUEST_OPEN]) + field(request) + nat(0) + nat(8) + bytes([END]))


def stream(tokens=(1, 2, 255), version=VERSION, count=None, digest=None) -> bytes:
    body = b"".join(t.to_bytes(4, "little") for t in tokens)
    header = (MAGIC + version.to_bytes(4, "little") + (4).to_bytes(4, "little") + VOCABULARY.to_bytes(4, "little")
              + (64).to_bytes(4, "little") + (len(tokens) if count is None else count).to_bytes(8, "little")
              + (hashlib.sha256(body).digest() if digest is None else digest))
    assert len(header) == 64
    return header + body


def host_and_reference(tmp_path: Path, data: bytes) -> tuple[int, bytes]:
    """The C host and the reference on the same stream: the same status and stderr."""
    (tmp_path / "stream").write_bytes(data)
    return c_host_and_reference(tmp_path, requesting(), train_arguments("stream"))


def test_a_stream_by_the_format_is_taken(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, said = host_and_reference(tmp_path, stream())
    assert b"token stream" not in said, said


ONE = hashlib.sha256((1).to_bytes(4, "little")).digest()


@pytest.mark.parametrize("data, part", [
    # version 0x10001: its low 2 bytes are the request's version 1, its 4 are not
    (stream(version=0x10001), b"token stream version: 65537, this host reads 1"),
    # a count of 2^32 + 3: its low 4 bytes are the 3 tokens the file holds, its 8 are not
    (stream(count=(1 << 32) + 3), b"token stream token count"),
    # 2^62 4-byte tokens are 2^64 bytes: the header's size plus that wraps to the file's size
    (stream(tokens=(), count=1 << 62), b"token stream token count"),
    # the digest differs from the tokens' sha256 in its last byte only
    (stream(tokens=(1,), digest=ONE[:31] + bytes([ONE[31] ^ 1])), b"token stream sha256"),
    # a token equal to the vocabulary is outside it (tokens 0..255)
    (stream(tokens=(1, VOCABULARY)), b"token stream token: token 256 at index 1 is outside the vocabulary of 256"),
    # a file one byte shorter than the 64-byte header
    (stream(tokens=())[:63], b"token stream header: 63 bytes, shorter than the 64-byte header"),
], ids=["version-high-bytes", "count-high-bytes", "count-wraps", "digest-last-byte", "token-at-vocabulary",
        "short-header"])
def test_a_stream_off_by_one_at_a_rule_is_refused_naming_the_part(tmp_path, monkeypatch, data, part):
    monkeypatch.chdir(tmp_path)
    status, said = host_and_reference(tmp_path, data)
    assert status == 3, said
    assert part in said, said
