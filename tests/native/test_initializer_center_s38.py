"""A request's SplitMix64 initializer center (probe s38 newmodel3, finding 1, the native request's
half): element i is (u - center) / denominator with u = z_i >> shift taken as an int64_t
(runtime_c/host_runtime.c rt_init_chunk).  A center past 2^63 - 1 was taken by the C host, whose
difference then wrapped (2^64 - 1 read as -1: values of the wrong sign), while the reference runner
died with NumPy's OverflowError traceback.  Both now refuse the request's bytes by name, the same
words, before the first command; 2^63 - 1 still runs.  So is a shift of 0, as a plan host's is
(bobc.plan.extract: "a shift is 1..63"): the draw itself read as an int64_t, less a center, overflows."""
from __future__ import annotations

from pathlib import Path

import pytest

from native_helpers import c_host_and_reference, field, nat, physical_program, train_arguments

END, REQUEST_OPEN = 0, 26


program = physical_program


def request(center: int, shift: int = 1) -> bytes:
    """Identities "a", a 64-byte payload in one chunk, a record input, one SplitMix64 initializer
    (denominator 2^63), reaching nothing, one publication each way."""
    return (field(b"a") * 4 + nat(64) + nat(64) + nat(1) + nat(0)
            + nat(2) + field(b"s") + nat(shift) + nat(center) + nat(1 << 63) + nat(0)
            + nat(0) + nat(0) + b"".join(nat(1 if i in (2, 5) else 0) for i in range(6)))


def requesting(center: int, shift: int = 1) -> bytes:
    return program(bytes([REQUEST_OPEN]) + field(request(center, shift)) + nat(0) + nat(8) + bytes([END]))


def host_and_reference(tmp_path: Path, code: bytes) -> tuple[int, bytes]:
    """The C host and the reference on a `train` of an 8-byte record: the same status and stderr."""
    (tmp_path / "record").write_bytes(bytes(8))
    return c_host_and_reference(tmp_path, code, train_arguments("record"))


@pytest.mark.parametrize("center", [1 << 63, (1 << 64) - 1], ids=["2^63", "2^64-1"])
def test_a_center_past_int64_is_refused_alike_before_the_first_command(tmp_path, center, monkeypatch):
    from bobc.errors import BobcError
    from bobc.native.request import RequestError, parse_request
    from bobc.native.writer import native_host

    words = (f"an initializer with center {center} (at most 2^63 - 1: the draw less the center is a signed "
             f"64-bit integer)")
    with pytest.raises(RequestError) as refused:
        parse_request(request(center))
    assert str(refused.value) == words
    with pytest.raises(BobcError) as written:
        native_host(requesting(center), "sm_90")
    assert f"command 0 (RequestOpen): the request's bytes: {words}" in str(written.value)
    monkeypatch.chdir(tmp_path)
    status, said = host_and_reference(tmp_path, requesting(center))
    assert status == 9, said
    assert f"command 0 (RequestOpen): the request's bytes: {words}".encode() in said
    assert not (tmp_path / "c").exists()


def test_a_center_of_2_to_the_63_minus_1_runs_alike(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert host_and_reference(tmp_path, requesting((1 << 63) - 1)) == (0, b"")


def test_a_shift_of_0_is_refused_alike_as_a_plan_hosts_is(tmp_path, monkeypatch):
    from bobc.native.request import RequestError, parse_request

    words = f"an initializer with shift 0 and denominator {1 << 63}"
    with pytest.raises(RequestError) as refused:
        parse_request(request(1, shift=0))
    assert str(refused.value) == words
    monkeypatch.chdir(tmp_path)
    status, said = host_and_reference(tmp_path, requesting(1, shift=0))
    assert status == 9 and f"command 0 (RequestOpen): the request's bytes: {words}".encode() in said, said
