"""A native request's token stream magic, version and vocabulary are held to the stream header's
words (s39 leftovers4 finding 1, the native request's half): a request naming version or
vocabulary 2^32 was built and run, and every stream was then refused at run time ("version
0, this host reads 4294967296": a header's 4-byte word holds no such value).  Both hosts -- the C
host and the reference -- and the build refuse the request's bytes by name before the first
command; 2^32 - 1 is still taken (the stream is then checked as ever)."""
from __future__ import annotations

from pathlib import Path

import pytest

from native_helpers import c_host_and_reference, field, nat, physical_program, train_arguments

END, REQUEST_OPEN = 0, 26


program = physical_program


def request(version: int, vocabulary: int) -> bytes:
    """Identities "a", a 64-byte payload in one chunk, a token stream input (8-byte magic, 4-byte
    tokens, a 64-byte header), zero fresh state, reaching nothing, one publication each way."""
    return (field(b"a") * 4 + nat(64) + nat(64) + nat(1)
            + nat(1) + field(b"TESTSTRM") + nat(version) + nat(4) + nat(vocabulary) + nat(64)
            + nat(1) + nat(0)
            + nat(0) + nat(0) + b"".join(nat(1 if i in (2, 5) else 0) for i in range(6)))


def requesting(version: int, vocabulary: int) -> bytes:
    return program(bytes([REQUEST_OPEN]) + field(request(version, vocabulary)) + nat(0) + nat(8) + bytes([END]))


def host_and_reference(tmp_path: Path, code: bytes) -> tuple[int, bytes]:
    """The C host and the reference on a `train` of an 8-byte stream: the same status and stderr."""
    (tmp_path / "stream").write_bytes(bytes(8))
    return c_host_and_reference(tmp_path, code, train_arguments("stream"))


@pytest.mark.parametrize("version, vocabulary", [(1 << 32, 256), (1, 1 << 32), ((1 << 64) - 1, 256)])
def test_a_stream_word_past_32_bits_is_refused_alike_before_the_first_command(tmp_path, monkeypatch, version,
                                                                               vocabulary):
    from bobc.errors import BobcError
    from bobc.native.request import RequestError, parse_request
    from bobc.native.writer import native_host

    words = (f"a token stream of version {version} and vocabulary {vocabulary} (a stream header's version and "
             f"vocabulary are 32-bit words, at most 4294967295: no stream would match)")
    with pytest.raises(RequestError) as refused:
        parse_request(request(version, vocabulary))
    assert str(refused.value) == words
    with pytest.raises(BobcError) as written:
        native_host(requesting(version, vocabulary), "sm_90")
    assert f"command 0 (RequestOpen): the request's bytes: {words}" in str(written.value)
    monkeypatch.chdir(tmp_path)
    status, said = host_and_reference(tmp_path, requesting(version, vocabulary))
    assert status == 9, said
    assert f"command 0 (RequestOpen): the request's bytes: {words}".encode() in said
    assert not (tmp_path / "c").exists()


def test_32_bit_stream_words_are_taken_and_the_stream_checked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, said = host_and_reference(tmp_path, requesting((1 << 32) - 1, (1 << 32) - 1))
    assert status == 3 and b"token stream header" in said and b"request's bytes" not in said, said


def magic_request(magic: bytes) -> bytes:
    return (field(b"a") * 4 + nat(64) + nat(64) + nat(1)
            + nat(1) + field(magic) + nat(1) + nat(4) + nat(256) + nat(64)
            + nat(1) + nat(0)
            + nat(0) + nat(0) + b"".join(nat(1 if i in (2, 5) else 0) for i in range(6)))


def test_a_magic_longer_than_the_headers_first_8_bytes_is_refused_alike(tmp_path, monkeypatch):
    """The header's version word starts at byte 8 (docs/formats.md, "Token stream"): a 9-byte magic
    was compared over the version's first byte, so it matched only streams whose version agreed
    with its last byte (a 32-byte magic only streams of one token count)."""
    from bobc.native.request import RequestError, parse_request

    words = ("a token stream of 4-byte tokens, a 64-byte header and a 9-byte magic (tokens of 1, 2 or 4 bytes, a "
             "header of 64 bytes to 1 MiB, a magic of at most 8: the header's version starts at byte 8)")
    with pytest.raises(RequestError) as refused:
        parse_request(magic_request(b"TESTSTRM\x01"))
    assert str(refused.value) == words
    assert parse_request(magic_request(b"TESTSTRM")).stream.magic == b"TESTSTRM"
    code = program(bytes([REQUEST_OPEN]) + field(magic_request(b"TESTSTRM\x01")) + nat(0) + nat(8) + bytes([END]))
    monkeypatch.chdir(tmp_path)
    status, said = host_and_reference(tmp_path, code)
    assert status == 9 and f"command 0 (RequestOpen): the request's bytes: {words}".encode() in said, said
