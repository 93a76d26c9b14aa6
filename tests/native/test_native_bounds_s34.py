"""The native physical program's open bounds (session 34; docs/limits.md, "The native physical
program"), each refused alike by the C host's checks (runtime_c/native_program.c,
native_request.c, native_machine.c), the reference runner and bobc's writer:

- Repeats nested past MAX_REPEAT_NESTING: np_run and the reference's runner recurse once per
  Repeat body, so a crafted deep nesting crashed the C host (its stack) and the reference (a
  RecursionError traceback); now refused before the first command, exit 9;
- a Submit ring of more than 2^32 entries: its put index (n + 1) mod entries is a 32-bit word
  (the C host truncated it, the reference stopped with an OverflowError traceback);
- submission 2^64 - 1: its semaphore target n + 1 wraps to 0 in the C host (a wait that ends at
  once): refused at that Submit, status 1, before anything is written;
- a request whose checkpoint chunk count (payload // chunk bytes) does not fit the envelope's
  32-bit field: the C host truncated it into the checkpoints it wrote; now refused by name.

The programs are put together by hand (docs/platform.md's encoding), and the C host is the
interpreter with the program appended past bobc's writer, as a damaged host file would hold it."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from native_helpers import c_host_and_reference, field, nat, physical_program

MAX_NESTING = 64            # docs/limits.md: Repeats nested one in another's body
RING_LIMIT = 1 << 32        # docs/limits.md: a Submit ring's entries (a 32-bit GPPut)
CHUNK_LIMIT = (1 << 32) - 1  # docs/limits.md: a request's chunk count (the envelope's 32-bit field)


def immediate(value: int) -> bytes:
    return b"\0" + nat(value)


program = physical_program


END, STORE, REPEAT, OPEN_DEVICE, MAP, SUBMIT, REQUEST_OPEN = 0, 4, 12, 16, 17, 24, 26


def nested_repeats(levels: int) -> bytes:
    """`levels` Repeats of count 1, each the body of the one before; every tail End."""
    return program((bytes([REPEAT]) + immediate(1)) * levels + bytes([END]) * (levels + 1))


host_and_reference = c_host_and_reference


def damaged(tmp_path: Path, message: str) -> bytes:
    return f"native: {tmp_path / 'host'}: damaged host file: its program: {message}; rebuild it\n".encode()


def writer_refusal(code: bytes) -> str:
    from bobc.errors import BobcError
    from bobc.native.writer import native_host

    with pytest.raises(BobcError) as refused:
        native_host(code, "sm_90")
    return str(refused.value)


# ---- Repeat nesting ----

def test_repeats_nested_to_the_bound_run_alike(tmp_path):
    assert host_and_reference(tmp_path, nested_repeats(MAX_NESTING)) == (0, b"")


@pytest.mark.parametrize("levels", [MAX_NESTING + 1, 100_000], ids=["one-more", "100000"])
def test_repeats_nested_past_the_bound_are_refused_before_the_first_command(tmp_path, levels):
    code = nested_repeats(levels)
    message = (f"command {MAX_NESTING} (Repeat): Repeats nested {MAX_NESTING + 1} deep (one in another's body), "
               f"more than the {MAX_NESTING} a host runs; nest fewer")
    assert host_and_reference(tmp_path, code) == (9, damaged(tmp_path, message))
    assert writer_refusal(code).startswith(f"the native physical program is refused: {message}")


def test_repeats_one_after_another_are_not_nested(tmp_path):
    """Each Repeat the tail of the one before (np_run loops over tails): 1,000 of them run."""
    code = program((bytes([REPEAT]) + immediate(2) + bytes([END])) * 1000 + bytes([END]))
    assert host_and_reference(tmp_path, code) == (0, b"")


# ---- Submit: the ring's entries and the issue counter ----

RING, PUT, SEMAPHORE = 0x100000, 0x100800, 0x100900


def submitting(entries: int, counter: int) -> bytes:
    """OpenDevice (any GPU), a host-mapped page holding the ring, GPPut and the semaphore, the
    issue counter (state word 0) set to `counter`, one Submit."""
    return program(bytes([OPEN_DEVICE]) + field(bytes(16))
                   + bytes([MAP]) + field(b"ring") + nat(RING) + nat(RING) + nat(4096) + nat(0)
                   + bytes([STORE]) + nat(0) + immediate(counter)
                   + bytes([SUBMIT]) + nat(RING) + nat(entries) + nat(PUT) + immediate(0xABC) + nat(SEMAPHORE) + nat(0)
                   + bytes([END]))


@pytest.mark.parametrize("entries", [RING_LIMIT + 1, (1 << 64) - 1], ids=["2^32+1", "2^64-1"])
def test_a_ring_past_2_to_the_32_entries_is_refused_before_the_first_command(tmp_path, entries):
    code = submitting(entries, RING_LIMIT)
    message = f"command 3 (Submit): a ring of {entries} entries, more than the {RING_LIMIT} a 32-bit GPPut counts"
    assert host_and_reference(tmp_path, code) == (9, damaged(tmp_path, message))
    assert writer_refusal(code).startswith(f"the native physical program is refused: {message}")


def test_a_ring_of_2_to_the_32_entries_is_taken(tmp_path):
    """At the bound every put, (n + 1) mod 2^32, fits: the Submit runs up to the missing GPU."""
    status, said = host_and_reference(tmp_path, submitting(RING_LIMIT, RING_LIMIT))
    assert status == 3 and said.startswith(b"native: command 3 (Submit): submission 4294967296 (entry 0xabc): "), said


def test_submission_2_to_the_64_minus_1_is_refused_before_its_semaphore_target_wraps(tmp_path):
    status, said = host_and_reference(tmp_path, submitting(4, (1 << 64) - 1))
    assert (status, said) == (1, b"native: command 3 (Submit): submission 18446744073709551615: the issue counter is at "
                                 b"2^64 - 1, where the semaphore's target n + 1 would wrap to 0 (a counter takes "
                                 b"submissions 0 to 2^64 - 2); store a smaller count at its word; nothing was published\n")


def test_submission_2_to_the_64_minus_2_is_the_last_taken(tmp_path):
    status, said = host_and_reference(tmp_path, submitting(4, (1 << 64) - 2))
    assert status == 3 and said.startswith(b"native: command 3 (Submit): submission 18446744073709551614 "), said


def test_the_reference_writes_nothing_for_submission_2_to_the_64_minus_1():
    """With a GPU at hand (here a stand-in), the refusal comes before the ring, GPPut or the GPU."""
    from bobc.reference.native_program import Machine, Stop
    from bobc.native.program import decode

    machine = Machine(decode(submitting(4, (1 << 64) - 1)), [], gpu=lambda m, entry: pytest.fail("submitted"),
                      environ={}, stderr=io.BytesIO())
    with pytest.raises(Stop) as stop:
        machine._run(0)
    assert stop.value.status == 1 and b"submission 18446744073709551615: the issue counter" in stop.value.message
    assert not any(machine.mappings[0].memory) and machine.submitted == []


# ---- a request's chunk count ----

def request(payload: int, chunk: int) -> bytes:
    """A request of identities "a", a record input, no initializer, reaching nothing."""
    return (field(b"a") * 4 + nat(payload) + nat(chunk) + nat(1) + nat(0) + nat(0) + nat(0) + nat(0)
            + b"".join(nat(1 if i in (2, 5) else 0) for i in range(6)))


def requesting(payload: int, chunk: int) -> bytes:
    return program(bytes([REQUEST_OPEN]) + field(request(payload, chunk)) + nat(0) + nat(8) + bytes([END]))


@pytest.mark.parametrize("payload, chunk", [(CHUNK_LIMIT + 1, 1), ((1 << 64) - 1, 3), (1 << 40, 1 << 8)],
                         ids=["2^32", "2^64/3", "2^40/2^8"])
def test_a_chunk_count_past_32_bits_is_refused_by_name(tmp_path, payload, chunk):
    from bobc.native.request import RequestError, parse_request

    chunks = payload // chunk
    words = (f"a {payload}-byte payload in chunks of {chunk} byte{'' if chunk == 1 else 's'} is {chunks} chunks, "
             f"more than the {CHUNK_LIMIT} a checkpoint's 32-bit chunk count holds (make the chunks larger)")
    with pytest.raises(RequestError) as refused:
        parse_request(request(payload, chunk))
    assert str(refused.value) == words
    code = requesting(payload, chunk)
    message = f"command 0 (RequestOpen): the request's bytes: {words}"
    assert writer_refusal(code).startswith(f"the native physical program is refused: {message}")
    assert host_and_reference(tmp_path, code, ["train"]) == (9, damaged(tmp_path, message))


def test_a_chunk_count_of_2_to_the_32_minus_1_parses():
    from bobc.native.request import parse_request

    assert parse_request(request(CHUNK_LIMIT, 1)).contract.chunk_count == CHUNK_LIMIT
    assert parse_request(request(1 << 40, 1 << 9)).contract.chunk_count == 1 << 31


def test_the_limits_are_the_c_hosts():
    """The Python bounds are runtime_c's #defines (one value, two spellings)."""
    from bobc.native import program as decoding
    from bobc.native import request as requests

    root = Path(__file__).resolve().parents[2] / "runtime_c"
    header = (root / "native_program.h").read_text()
    assert f"#define NP_MAX_REPEAT_NESTING {decoding.MAX_REPEAT_NESTING}u" in header
    assert "#define NP_MAX_RING_ENTRIES ((uint64_t)1 << 32)" in header and decoding.MAX_RING_ENTRIES == 1 << 32
    assert "#define NP_REQUEST_MAX_CHUNKS UINT32_MAX" in (root / "native_request.h").read_text()
    assert requests.MAX_CHUNKS == (1 << 32) - 1
    assert (decoding.MAX_REPEAT_NESTING, decoding.MAX_RING_ENTRIES, requests.MAX_CHUNKS) == (
        MAX_NESTING, RING_LIMIT, CHUNK_LIMIT)
