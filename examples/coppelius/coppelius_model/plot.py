"""Loss curves side by side as a PNG, with nothing but zlib (the GPU machine has no
plotting library to rely on): one polyline per curve over a shared box, step on x,
loss on y, each curve its colour (the legend is the caller's report); light grey
lines at every whole loss value, labelled in the left margin, and the step count at
ticks under the box (a 3 x 5 digit font drawn at twice its size)."""
from __future__ import annotations

import struct
import zlib

COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40)]
GRID, INK = (220, 220, 220), (0, 0, 0)
# digits 0-9, 3 pixels wide and 5 high, one row a string
DIGITS = ["111101101101111", "010110010010111", "111001111100111", "111001111001111", "101101111001001",
          "111100111001111", "111100111101111", "111001001001001", "111101111101111", "111101111001111"]
SCALE = 2


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def curves_png(curves: list, width: int = 640, height: int = 400, margin: int = 20) -> bytes:
    """PNG bytes of `curves` (lists of losses, one per step), each in COLOURS order."""
    pixels = [[(255, 255, 255)] * width for _ in range(height)]
    lo = min(min(c) for c in curves)
    hi = max(max(c) for c in curves)
    span = (hi - lo) or 1.0
    steps = max(len(c) for c in curves) - 1 or 1

    def point(i, value):
        x = margin + round(i * (width - 2 * margin - 1) / steps)
        y = margin + round((hi - value) * (height - 2 * margin - 1) / span)
        return x, y

    def line(a, b, colour):
        (x0, y0), (x1, y1) = a, b
        n = max(abs(x1 - x0), abs(y1 - y0), 1)
        for k in range(n + 1):
            pixels[y0 + round(k * (y1 - y0) / n)][x0 + round(k * (x1 - x0) / n)] = colour

    def text(x, y, digits):
        """`digits` with its top-left corner at (x, y), clipped to the image."""
        for k, digit in enumerate(digits):
            glyph = DIGITS[int(digit)]
            for bit, on in enumerate(glyph):
                if on == "1":
                    for dy in range(SCALE):
                        for dx in range(SCALE):
                            px, py = x + k * 4 * SCALE + (bit % 3) * SCALE + dx, y + (bit // 3) * SCALE + dy
                            if 0 <= px < width and 0 <= py < height:
                                pixels[py][px] = INK

    import math
    for value in range(math.ceil(lo), math.floor(hi) + 1):
        _, y = point(0, value)
        line((margin, y), (width - margin - 1, y), GRID)
        text(margin - 4 * SCALE * len(str(value)) - 2, y - 5 * SCALE // 2, str(value))
    tick = next(t for t in (1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000, 10 ** 9) if steps / t <= 8)
    for step in range(0, steps + 1, tick):
        x, _ = point(step, lo)
        line((x, height - margin), (x, height - margin + 3), INK)
        label = str(step)
        text(x - (4 * SCALE * len(label) - SCALE) // 2, height - margin + 5, label)

    box = [(margin - 1, margin - 1), (width - margin, margin - 1), (width - margin, height - margin),
           (margin - 1, height - margin), (margin - 1, margin - 1)]
    for a, b in zip(box, box[1:]):
        line(a, b, (0, 0, 0))
    for index, curve in enumerate(curves):
        points = [point(i, v) for i, v in enumerate(curve)]
        for a, b in zip(points, points[1:] or points):
            line(a, b, COLOURS[index % len(COLOURS)])
    raw = b"".join(b"\x00" + bytes(v for p in row for v in p) for row in pixels)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9))
            + _chunk(b"IEND", b""))
