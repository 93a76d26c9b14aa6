"""A native request's own bytes, held at each rule's edge by the build's reader (bobc.native.request),
the C host and the reference alike (probe s39 mutants2: each of these bounds, moved by one, or the
seed's zero-byte refusal dropped from the C host, went through the related tests).

The request is built field by field as docs/native-host.md ("Requests", RequestOpen) and
bobc.native.request lay it out: four identities (u64 length, bytes), payload bytes, chunk bytes,
updates, the input (0 a record; 1 a token stream: magic, version, token bytes, vocabulary, header
bytes), the fresh state (1 zero, 2 SplitMix64: seed, shift, center, denominator; 0 ends it), the
cursor base and scale, and the train and predict reaches.  The limits: a chunk is 1 byte to the
payload; a token stream header is 64 bytes to 1 MiB; at most 2^16 initializers; a SplitMix64 shift
is 1 to 63 (a shift of a 64-bit draw) and its center at most 2^63 - 1, its seed holds no zero byte
(an identity, as the others)."""
from __future__ import annotations

from pathlib import Path

import pytest

from native_helpers import c_host_and_reference, field, nat, physical_program, train_arguments

END, REQUEST_OPEN = 0, 26


def splitmix(seed=b"s", shift=11, center=0, denominator=1) -> bytes:
    return nat(2) + field(seed) + nat(shift) + nat(center) + nat(denominator)


def request(payload=64, chunk=64, stream=None, fresh=b"") -> bytes:
    source = nat(0) if stream is None else nat(1) + field(b"TESTSTRM") + b"".join(nat(w) for w in stream)
    return (field(b"a") * 4 + nat(payload) + nat(chunk) + nat(1) + source + fresh + nat(0)
            + nat(0) + nat(0) + b"".join(nat(1 if i in (2, 5) else 0) for i in range(6)))


def program(request_bytes: bytes) -> bytes:
    return physical_program(bytes([REQUEST_OPEN]) + field(request_bytes) + nat(0) + nat(8) + bytes([END]))


def refused_alike(tmp_path: Path, monkeypatch, request_bytes: bytes) -> str:
    """The reader's refusal, which the C host and the reference give too (status 9, before the first command)."""
    from bobc.native.request import RequestError, parse_request

    with pytest.raises(RequestError) as refused:
        parse_request(request_bytes)
    words = str(refused.value)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "input").write_bytes(bytes(64))
    status, stderr = c_host_and_reference(tmp_path, program(request_bytes), train_arguments("input"))
    assert status == 9, stderr
    assert f"command 0 (RequestOpen): the request's bytes: {words}".encode() in stderr, stderr
    return words


def test_the_edges_that_are_taken_parse():
    from bobc.native.request import parse_request

    assert parse_request(request(64, 64)).contract.chunk_bytes == 64
    assert parse_request(request(stream=(1, 4, 256, 64))).stream.header_bytes == 64
    assert len(parse_request(request(fresh=nat(1) * (1 << 16))).fresh) == 1 << 16
    (init,) = parse_request(request(fresh=splitmix(shift=63, center=(1 << 63) - 1))).fresh
    assert (init.shift, init.center) == (63, (1 << 63) - 1)


CASES = {
    # the last natural (predict publications) one byte short
    "a natural 7 bytes long": (request()[:-1], "cut short at byte"),
    # the seed identity says 2 bytes, 1 follows (and nothing after it)
    "an identity one byte short": (field(b"a") * 3 + nat(2) + b"a", "cut short at byte 35 (seed)"),
    "a chunk one byte past the payload": (request(64, 65), "a 64-byte payload in chunks of 65 bytes"),
    "a 63-byte stream header": (request(stream=(1, 4, 256, 63)), "a 63-byte header"),
    "2^16 + 1 initializers": (request(fresh=nat(1) * ((1 << 16) + 1)), "more than 65536 initializers"),
    "a shift of 64": (request(fresh=splitmix(shift=64)), "an initializer with shift 64 and denominator 1"),
    "a center of 2^63": (request(fresh=splitmix(center=1 << 63)), "an initializer with center 9223372036854775808"),
    "a seed with a zero byte": (request(fresh=splitmix(seed=b"s\0t")), "an initializer's seed holds a zero byte"),
}


@pytest.mark.parametrize("name", CASES)
def test_a_request_one_past_a_rule_is_refused_alike(tmp_path, monkeypatch, name):
    data, says = CASES[name]
    assert says in refused_alike(tmp_path, monkeypatch, data)
