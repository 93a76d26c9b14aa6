"""The token stream: written from any file, read back to the same tokens; each kind of
damage refused naming its part; a run's contexts are where the host's cursor reads."""
from __future__ import annotations

import hashlib
import struct
import subprocess
import sys

import numpy as np
import pytest

from coppelius_model import stream
from coppelius_model.model import context_at

from .conftest import EXAMPLE, TEXT


def test_the_tool_writes_a_stream_of_the_files_bytes(tmp_path):
    out = tmp_path / "text.stream"
    done = subprocess.run([sys.executable, "-m", "coppelius_model.stream", str(TEXT), "-o", str(out)],
                          cwd=EXAMPLE, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    data, text = out.read_bytes(), TEXT.read_bytes()
    assert data[:8] == b"COPSTRM1" and len(data) == 64 + 4 * len(text)
    assert struct.unpack_from("<IIIIQ", data, 8) == (1, 4, 256, 64, len(text))
    assert data[32:64] == hashlib.sha256(data[64:]).digest()
    assert bytes(stream.read(out).tokens.astype(np.uint8)) == text


def test_contexts_follow_the_cursor():
    text = TEXT.read_bytes()
    s = stream.from_bytes(text)
    for step in (0, 1, 7):
        inputs, targets = s.context(step, 128)
        expected_inputs, expected_targets = context_at(text, 128 * step, 128)
        assert np.array_equal(inputs, expected_inputs) and np.array_equal(targets, expected_targets)
        # the host reads 4 T bytes at the cursor 64 + 4 T k, and the targets 4 bytes on
        encoded = s.encode()
        cursor = 64 + 4 * 128 * step
        assert np.array_equal(np.frombuffer(encoded[cursor:cursor + 512], "<u4"), inputs)
        assert np.array_equal(np.frombuffer(encoded[cursor + 4:cursor + 516], "<u4"), targets)
    assert s.steps_available(128) == (len(text) - 1) // 128
    with pytest.raises(IndexError, match="end before update"):
        s.context(s.steps_available(128), 128)


@pytest.mark.parametrize("part,damage", [
    ("magic", lambda b: b"BOBINPUT" + b[8:]),
    ("version", lambda b: b[:8] + struct.pack("<I", 2) + b[12:]),
    ("token bytes", lambda b: b[:12] + struct.pack("<I", 1) + b[16:]),
    ("vocabulary", lambda b: b[:16] + struct.pack("<I", 512) + b[20:]),
    ("token count", lambda b: b[:-4]),
    ("sha256", lambda b: b[:-4] + struct.pack("<I", 7)),
    ("header", lambda b: b[:40]),
])
def test_damaged_streams_are_refused_naming_the_part(part, damage):
    good = stream.from_bytes(b"a real stream of text").encode()
    with pytest.raises(stream.StreamError) as caught:
        stream.decode(damage(good), "x.stream")
    assert caught.value.part == part and str(caught.value).startswith("x.stream: ")


def test_a_token_outside_the_vocabulary_is_refused():
    bad = stream.TokenStream(np.array([1, 2, 300], dtype=np.uint32)).encode()
    with pytest.raises(stream.StreamError, match="token 300 at index 2"):
        stream.decode(bad)


def test_the_script_beside_the_model_writes_the_same_stream(tmp_path):
    out = tmp_path / "s.stream"
    done = subprocess.run([sys.executable, str(EXAMPLE / "write_stream.py"), str(TEXT), "-o", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == stream.from_bytes(TEXT.read_bytes()).encode()


def test_a_missing_text_is_refused_with_a_message(tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLE / "write_stream.py"), str(tmp_path / "none.txt"),
                           "-o", str(tmp_path / "s.stream")], capture_output=True, text=True)
    assert done.returncode == 2 and "none.txt" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "s.stream").exists()
