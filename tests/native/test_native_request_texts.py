"""The request host's refusals name what they compared (probe s28 texts, findings 2 and 4): the
synthetic request host of plans/Native/Request.bob run by the C host (NATIVE_DEVICE=memory) and
by the reference interpreter, stderr and status compared byte for byte."""
from __future__ import annotations

import hashlib
import struct
import zlib

import pytest

from native_helpers import PLANS, load_module, program_bytes, run_sides, write_host

CURSOR_BASE, CURSOR_SCALE = 64, 16        # Request.bob: the stream's header, one 4-token context a step
ARGS = ["--input", "s.bin", "--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]
TOKENS = [(i * 37 + 11) % 256 for i in range(60)]
FRESH = bytes(range(40))                  # Request.bob's 40-byte payload (its values do not matter here)


def stream(tokens, magic=b"COPSTRM1") -> bytes:
    """docs/formats.md's token stream: u32 tokens, vocabulary 256, a 64-byte header."""
    body = b"".join(struct.pack("<I", t) for t in tokens)
    return struct.pack("<8sIIIIQ32s", magic, 1, 4, 256, 64, len(tokens), hashlib.sha256(body).digest()) + body


def envelope(payload: bytes, step: int) -> bytes:
    """A checkpoint of Request.bob's rqContract (as tests/native/test_native_request.py writes it)."""
    from bobc.plan.model import CheckpointContract
    from bobc.reference import envelope as env
    contract = CheckpointContract(b"request-test-schema-v1", b"request-test-learner", b"token-stream-u32|context=4",
                                  b"request-test-seed", len(FRESH), 16, 6)
    return env.encode(contract, step, payload)


GOOD = stream(TOKENS)


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
    assert (f"checkpoint in.bin's step {step} puts the cursor at byte {CURSOR_BASE + step * CURSOR_SCALE}, past the "
            f"stream's {len(GOOD)} bytes") in text, text


def test_a_header_too_long_for_the_payload_names_the_bytes_compared(tmp_path, code, host):
    data = bytearray(envelope(FRESH, 0))
    h = struct.unpack_from("<I", data, 8)[0]
    struct.pack_into("<I", data, 8, h + 16)
    struct.pack_into("<I", data, len(data) - 12, zlib.crc32(bytes(data[:-12])))
    status, text = both(tmp_path, code, host, {"s.bin": GOOD, "in.bin": bytes(data)},
                        ["train", "--checkpoint", "in.bin", *ARGS], "hdr")
    assert status == 4, text
    # a file of this host's size whose header disagrees: a damaged field, not a truncation (probe s32
    # envelope finding 4); a shorter file is truncated, naming the bytes compared
    assert (f"checkpoint in.bin: corrupted: its header says header bytes {h + 16}, this host's {h}, in a file of "
            f"this host's size ({len(data)} bytes): the header is damaged; copy it again") in text, text
    status, text = both(tmp_path, code, host, {"s.bin": GOOD, "in.bin": bytes(data[:-1])},
                        ["train", "--checkpoint", "in.bin", *ARGS], "hdr-short")
    assert status == 4, text
    after = len(data) - 1 - (h + 16)
    assert (f"checkpoint in.bin: truncated: its header declares a {len(FRESH)}-byte payload, more than the {after} "
            f"bytes after its {h + 16}-byte header") in text, text
    assert after < len(FRESH)


def test_a_stream_too_short_counts_its_tokens_too(tmp_path, code, host):
    # train reads 100 bytes (25 tokens) from the cursor at byte 64; 24 tokens are there
    short = stream(TOKENS[:24])
    status, text = both(tmp_path, code, host, {"s.bin": short}, ["train", *ARGS], "short")
    assert status == 3, text
    assert text.endswith("it reads 100 bytes from the cursor at byte 64, to byte 164; the stream has 160 bytes "
                         "(24 tokens from the cursor on, 25 needed: give a longer stream); nothing was published\n"), text


@pytest.mark.parametrize("operation", ["train", "predict"])
def test_a_stream_too_short_after_a_checkpoints_cursor_names_the_checkpoint_and_its_step(tmp_path, code, host,
                                                                                        operation):
    """Resumed from a checkpoint whose cursor lies at the stream's end (its run trained on all of it),
    the refusal says that the cursor is the checkpoint's, by path and step (probe s36 resume finding 2):
    the cursor was only a byte offset, and the checkpoint went unnamed."""
    step = (len(TOKENS) - 1) // 4                       # 14: the cursor at byte 288, one token before the end
    status, text = both(tmp_path, code, host, {"s.bin": GOOD, "in.bin": envelope(FRESH, step)},
                        [operation, "--checkpoint", "in.bin", *ARGS], f"end-{operation}")
    assert status == 3, text
    assert f"from the cursor at byte {CURSOR_BASE + step * CURSOR_SCALE}," in text, text
    assert text.endswith(f"give a longer stream); the cursor is checkpoint in.bin's step {step}; nothing was "
                         "published\n"), text


TEXT_HINT = "the file starts as text, and a text is made a token stream first: docs/formats.md, \"Token stream\""
TEXTS = [
    ("text", "h\u00e9llo w\u00f6rld: a text given where its token stream belongs, longer than a header\n".encode(),
     "magic", True),
    ("short text", b"hello\n", "header", True),
    ("cut at the window", b"a" * 63 + "\u00e9 and more".encode(), "magic", True),
    ("crlf and tabs", b"one\ttwo\r\n" * 10, "magic", True),
    ("zeros", bytes(100), "magic", False),
    ("another format", b"BOBINPUT" + GOOD[8:], "magic", False),
    ("overlong utf-8", b"ab\xc0\x80" + b"c" * 80, "magic", False),
    ("a surrogate", b"ab\xed\xa0\x80" + b"c" * 80, "magic", False),
    ("a control byte", b"abc\x01" + b"c" * 80, "magic", False),
    ("empty", b"", "header", False),
]


@pytest.mark.parametrize("name, data, part, hinted", TEXTS, ids=[t[0] for t in TEXTS])
def test_a_text_given_as_the_stream_is_told_how_a_text_becomes_one(tmp_path, code, host, name, data, part, hinted):
    status, text = both(tmp_path, code, host, {"s.bin": data}, ["train", *ARGS], name.replace(" ", "-"))
    assert status == 3, text
    assert f"input s.bin: token stream {part}: " in text, text
    assert (TEXT_HINT in text) == hinted, text
