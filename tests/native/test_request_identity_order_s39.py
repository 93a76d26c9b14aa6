"""A request's identities are judged in the C host's order (probe s39 coverage2 finding 2):
runtime_c/native_request.c np_request_parse checks each identity for a zero byte as it reads it,
before the next one; bobc.native.request.parse_request read all four first, so bytes whose schema
held a zero byte and whose learner was cut short were refused by the host for the zero byte and by
bobc (`bobc dump`, `bobc inspect`, `bobc run --reference`, the writer) for the cut."""
from __future__ import annotations

import pytest

from .test_native_bounds_s34 import REQUEST_OPEN, END, damaged, field, host_and_reference, nat, program, writer_refusal


def requesting(body: bytes) -> bytes:
    return program(bytes([REQUEST_OPEN]) + field(body) + nat(0) + nat(8) + bytes([END]))


# the schema holds a zero byte; what follows it is cut short (a learner's length and no bytes)
ZERO_THEN_CUT = field(b"a\0b") + nat(50) + b"xy"
# the schema is sound; the learner holds a zero byte; the data identity is cut short
LATER_ZERO_THEN_CUT = field(b"a") + field(b"\0") + nat(9)


@pytest.mark.parametrize("body, words", [(ZERO_THEN_CUT, "the schema identity holds a zero byte"),
                                         (LATER_ZERO_THEN_CUT, "the learner identity holds a zero byte")],
                         ids=["schema", "learner"])
def test_an_identity_with_a_zero_byte_is_refused_before_a_later_field_is_read(tmp_path, body, words):
    from bobc.native.request import RequestError, parse_request

    with pytest.raises(RequestError) as refused:
        parse_request(body)
    assert str(refused.value) == words
    message = f"command 0 (RequestOpen): the request's bytes: {words}"
    code = requesting(body)
    assert host_and_reference(tmp_path, code, ["train"]) == (9, damaged(tmp_path, message))
    assert writer_refusal(code).startswith(f"the native physical program is refused: {message}")
