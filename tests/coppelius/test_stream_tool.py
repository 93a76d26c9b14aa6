"""write_stream.py (coppelius_model.stream.main), probe s32 stream findings 6 and 7: the stream is
written a piece at a time -- the same bytes as the whole-text encoding it replaced, on texts that
end inside, on and past a piece -- in memory bounded by the piece, not 13 x the text; a stream
shorter than one context of a bundled shape is written with a note naming the shapes that refuse
it; `-o -` is refused as bobc refuses it (a stream is a file), not written to a file named '-'."""
from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from coppelius_model import stream

from .conftest import EXAMPLE, TEXT

PROG = "write_stream.py"


def encoded_whole(text: bytes) -> bytes:
    """The stream as the tool wrote it before (the whole text widened at once, then hashed)."""
    body = np.frombuffer(text, dtype=np.uint8).astype(np.uint32).astype("<u4").tobytes()
    return struct.pack("<8sIIII Q 32s", b"COPSTRM1", 1, 4, 256, 64, len(text), hashlib.sha256(body).digest()) + body


@pytest.mark.parametrize("size", [0, 1, 6, 7, 8, 20, 21, 1000])
def test_the_pieces_make_the_same_bytes_as_the_whole(tmp_path, monkeypatch, capsys, size):
    monkeypatch.setattr(stream, "PIECE_BYTES", 7)
    text = bytes(range(256)) * 4 if size == 1000 else TEXT.read_bytes()[:size]
    text = text[:size]
    (tmp_path / "t").write_bytes(text)
    assert stream.main([str(tmp_path / "t"), "-o", str(tmp_path / "s")], prog=PROG) == 0
    assert (tmp_path / "s").read_bytes() == encoded_whole(text) == stream.from_bytes(text).encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s", "t"]        # no temporary left


def test_the_script_writes_the_same_bytes_for_the_bundled_text(tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLE / "write_stream.py"), str(TEXT), "-o", str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert (tmp_path / "s").read_bytes() == encoded_whole(TEXT.read_bytes())


def test_memory_is_bounded_by_the_piece_not_the_text(tmp_path, capsys):
    text = tmp_path / "sparse"
    with open(text, "wb") as handle:
        handle.truncate(32 << 20)                  # 32 MiB of zero bytes: a 128 MiB stream
    tracemalloc.start()
    try:
        assert stream.main([str(text), "-o", str(tmp_path / "s")], prog=PROG) == 0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert os.path.getsize(tmp_path / "s") == 64 + 4 * (32 << 20)
    # a piece: 1 MiB of text, 4 MiB widened (twice, as numpy's array and as bytes); the whole text
    # read at once would be 32 MiB, and widened 128 MiB
    assert peak < 16 << 20, peak
    with open(tmp_path / "s", "rb") as handle:
        head = handle.read(64)
    zeros = hashlib.sha256()
    for _ in range(32):
        zeros.update(bytes(4 << 20))
    assert head == encoded_whole(b"")[:24] + struct.pack("<Q", 32 << 20) + zeros.digest()


@pytest.mark.parametrize("size, note", [
    (1, "the stream holds 1 token, fewer than one context and its target, which every train or predict request "
        "reads (small 129, large 257): a host of small or large refuses it"),
    (128, "the stream holds 128 tokens, fewer than one context and its target, which every train or predict "
          "request reads (small 129, large 257): a host of small or large refuses it"),
    (129, "the stream holds 129 tokens, fewer than one context and its target, which every train or predict "
          "request reads (large 257): a host of large refuses it"),
    (256, "(large 257): a host of large refuses it"),
    (257, None),
    (0, "the stream holds no tokens; every train or predict request refuses it"),
])
def test_a_stream_shorter_than_a_context_is_written_with_a_note(tmp_path, capsys, size, note):
    (tmp_path / "t").write_bytes(TEXT.read_bytes()[:size])
    assert stream.main([str(tmp_path / "t"), "-o", str(tmp_path / "s")], prog=PROG) == 0
    out, err = capsys.readouterr()
    assert out == f"wrote {tmp_path / 's'}: {size} token{'' if size == 1 else 's'}\n"
    if note is None:
        assert err == ""
    else:
        assert err.startswith(f"{PROG}: note: ") and err.endswith(note + "\n") and err.count("\n") == 1, err
    assert (tmp_path / "s").read_bytes() == encoded_whole(TEXT.read_bytes()[:size])


def test_dash_is_refused_as_bobc_refuses_it(tmp_path):
    (tmp_path / "t").write_bytes(b"some text")
    done = subprocess.run([sys.executable, str(EXAMPLE / "write_stream.py"), "t", "-o", "-"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"{PROG}: error: -o -: the stream is written to a file, not stdout; name the file "
                           "(-o ./- for one named '-')\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]
    done = subprocess.run([sys.executable, str(EXAMPLE / "write_stream.py"), "t", "-o", "./-"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and (tmp_path / "-").read_bytes() == encoded_whole(b"some text")


def test_an_output_that_cannot_be_written_is_refused_and_nothing_is_left(tmp_path, monkeypatch, capsys):
    """A write of the body that fails (here: no room) leaves no temporary and no stream, exit 8."""
    (tmp_path / "t").write_bytes(b"x" * 100)
    real_write = os.write

    def full(fd, data):
        if len(data) == 400:            # the body's piece (the header is 64 bytes)
            raise OSError(28, os.strerror(28))
        return real_write(fd, data)
    monkeypatch.setattr(stream.os, "write", full)
    assert stream.main([str(tmp_path / "t"), "-o", str(tmp_path / "s")], prog=PROG) == 8
    assert capsys.readouterr().err == (f"{PROG}: error: output {tmp_path / 's'} (-o): write of the temporary file "
                                       "failed: No space left on device; nothing was published\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]
