"""The loss-curve PNG decodes (signature, IHDR, chunk CRCs, zlib) to an image with each
curve's colour drawn and the first curve's first point where its loss puts it."""
from __future__ import annotations

import struct
import zlib

from coppelius_model.plot import COLOURS, curves_png


def decode(png: bytes):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, {}
    while at < len(png):
        (length,) = struct.unpack_from(">I", png, at)
        kind, data = png[at + 4:at + 8], png[at + 8:at + 8 + length]
        assert struct.unpack_from(">I", png, at + 8 + length)[0] == zlib.crc32(kind + data) & 0xFFFFFFFF
        chunks[kind] = data
        at += 12 + length
    width, height = struct.unpack_from(">II", chunks[b"IHDR"])
    raw = zlib.decompress(chunks[b"IDAT"])
    rows = [raw[r * (1 + 3 * width) + 1:(r + 1) * (1 + 3 * width)] for r in range(height)]
    return width, height, [[tuple(row[3 * x:3 * x + 3]) for x in range(width)] for row in rows]


def test_two_curves_are_drawn_in_their_colours():
    width, height, pixels = decode(curves_png([[5.5, 4.0, 3.0, 2.5], [5.5, 4.2, 3.1, 2.4]], 200, 100, 10))
    assert (width, height) == (200, 100)
    seen = {p for row in pixels for p in row}
    assert COLOURS[0] in seen and COLOURS[1] in seen
    # the highest loss (5.5, both curves' first point) is at the box's top-left corner; the
    # second curve drawn last owns it
    assert pixels[10][10] == COLOURS[1]
