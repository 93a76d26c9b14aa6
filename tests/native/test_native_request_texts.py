"""The request host's refusals name what they compared (probe s28 texts, findings 2 and 4): the
synthetic request host of plans/Native/Request.bob run by the C host (NATIVE_DEVICE=memory) and
by the reference interpreter, stderr and status compared byte for byte."""
from __future__ import annotations

import struct
import zlib

import pytest

from native_helpers import PLANS, load_module, program_bytes, run_sides, write_host
from test_native_request import ARGS, FRESH, GOOD, envelope

CURSOR_BASE, CURSOR_SCALE = 64, 16        # Request.bob: the stream's header, one 4-token context a step


@pytest.fixture(scope="module")
def code():
    return program_bytes(load_module(PLANS / "Native" / "Request.bob"), "requestProgram")


@pytest.fixture(scope="module")
def host(code, tmp_path_factory):
    return write_host(tmp_path_factory.mktemp("request-texts-host"), "request-host", code)


def both(tmp_path, code, host, inputs, arguments, name):
    c, reference = run_sides(tmp_path, code, host, inputs, arguments, name=name)
    assert (c.status, c.stderr) == (reference.status, reference.stderr)
    assert set(c.files) == set(inputs), "an output was written"
    return c.status, c.stderr.decode()


@pytest.mark.parametrize("step", [2 ** 55, 2 ** 64 - 1])
def test_a_cursor_past_64_bits_is_named_where_it_is(tmp_path, code, host, step):
    # predict has no step-room check: the cursor check meets the step as the checkpoint holds it
    status, text = both(tmp_path, code, host, {"s.bin": GOOD, "in.bin": envelope(FRESH, step)},
                        ["predict", "--checkpoint", "in.bin", *ARGS], f"s{step}")
    assert status == 3, text
    assert (f"the checkpoint's step {step} puts the cursor at byte {CURSOR_BASE + step * CURSOR_SCALE}, past the "
            f"stream's {len(GOOD)} bytes") in text, text


def test_a_header_too_long_for_the_payload_names_the_bytes_compared(tmp_path, code, host):
    data = bytearray(envelope(FRESH, 0))
    h = struct.unpack_from("<I", data, 8)[0]
    struct.pack_into("<I", data, 8, h + 16)
    struct.pack_into("<I", data, len(data) - 12, zlib.crc32(bytes(data[:-12])))
    status, text = both(tmp_path, code, host, {"s.bin": GOOD, "in.bin": bytes(data)},
                        ["train", "--checkpoint", "in.bin", *ARGS], "hdr")
    assert status == 4, text
    after = len(data) - (h + 16)
    assert (f"checkpoint in.bin: truncated: its header declares a {len(FRESH)}-byte payload, more than the {after} "
            f"bytes after its {h + 16}-byte header") in text, text
    assert after < len(FRESH)
