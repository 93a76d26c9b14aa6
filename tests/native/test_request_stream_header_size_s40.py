"""A request's token stream header size at its edges (probe s40 mutants4): the C host refuses a
header above 1u << 20 bytes (runtime_c/native_request.c: `s->header_bytes > (1u << 20)`) and the
refusal's words say "a header of 64 bytes to 1 MiB", so 1 MiB = 1,048,576 bytes is taken and one
byte more refused; the s39 tests held only the 64-byte end, and a mutant refusing 1 MiB itself
passed them."""
from __future__ import annotations

import pytest

from bobc.native.request import RequestError, parse_request
from native_helpers import field, nat

MAGIC = b"TESTSTRM"


def _request(header: int) -> bytes:
    """tests/native/test_request_stream_header_edges_s39.py's request with the header size `header`."""
    return (field(b"a") * 4 + nat(64) + nat(64) + nat(1)
            + nat(1) + field(MAGIC) + nat(1) + nat(4) + nat(256) + nat(header)
            + nat(1) + nat(0)
            + nat(0) + nat(0) + b"".join(nat(1 if i in (2, 5) else 0) for i in range(6)))


@pytest.mark.parametrize("header", [64, 1 << 20])
def test_a_header_from_64_bytes_to_1_mib_is_taken(header):
    assert parse_request(_request(header)).stream.header_bytes == header


@pytest.mark.parametrize("header", [63, (1 << 20) + 1])
def test_a_header_past_either_end_is_refused(header):
    with pytest.raises(RequestError) as refused:
        parse_request(_request(header))
    assert f"a {header}-byte header" in str(refused.value) and "a header of 64 bytes to 1 MiB" in str(refused.value)
