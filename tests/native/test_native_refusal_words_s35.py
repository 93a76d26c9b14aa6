"""Probe s35 nativeloc finding 4: two refusals of a program's values said what was wrong but not
what to give: a Connect's address given as text (b"127.0.0.1:5000") was "not a 16-byte
sockaddr_in (AF_INET)" -- not its length, nor how the 16 bytes go, nor the library's builder --
and an OpenDevice given the UUID's text form (GPU-xxxxxxxx-..., as nvidia-smi -L prints it, 40
bytes) "has 40 bytes, not 16".  Now both say what the bytes are and how to make them, the same
words from the C host, the reference and bobc's writer."""
from __future__ import annotations

import pytest

from test_native_bounds_s34 import damaged, field, host_and_reference, nat, program, writer_refusal

CONNECT, OPEN_DEVICE, END = 19, 16, 0
HELP = ("2, 0, the port (big-endian), the 4 octets, 8 zero bytes; build it with linuxIPv4SocketAddress "
        "(Runtime.SocketAddress)")


@pytest.mark.parametrize("address, words", [
    (b"127.0.0.1:5000", "the socket address has 14 bytes, not the 16 of a sockaddr_in (AF_INET): " + HELP),
    # AF_INET6's family (10) in a 16-byte field
    (b"\x0a\x00\x13\x88" + bytes([127, 0, 0, 1]) + bytes(8),
     "the socket address starts 0a 00, not AF_INET's 02 00 (a sockaddr_in): " + HELP),
])
def test_a_connect_address_that_is_no_sockaddr_in_says_how_to_make_one(tmp_path, address, words):
    code = program(bytes([CONNECT]) + field(address) + nat(1) + nat(0) + bytes([END]), slots=1)
    message = f"command 0 (Connect): {words}"
    assert host_and_reference(tmp_path, code) == (9, damaged(tmp_path, message))
    assert writer_refusal(code) == f"the native physical program is refused: {message}"


def test_a_gpu_uuid_given_as_text_says_to_give_its_raw_bytes(tmp_path):
    text = b"GPU-6f1a2b3c-1111-2222-3333-444455556666"
    code = program(bytes([OPEN_DEVICE]) + field(text) + bytes([END]))
    message = ("command 0 (OpenDevice): the GPU UUID has 40 bytes, not 16 (the UUID's raw bytes, not its text "
               "GPU-xxxxxxxx-...; 16 zero bytes for the first GPU)")
    assert host_and_reference(tmp_path, code) == (9, damaged(tmp_path, message))
    assert writer_refusal(code) == f"the native physical program is refused: {message}"
