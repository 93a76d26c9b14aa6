"""decode.parameter_words lists every non-zero 8-byte word of a launch's parameter block, and only
those (its docstring); a mutant keeping the zero words passed test_images_encode, its one user
(session 43 mutants9, decode mutant D41).  The oracle reads the golden's program.bin at the
manifest's parameter_offset with struct: little-endian u64 words of the parameter_block bytes."""
from __future__ import annotations

import struct
from pathlib import Path

from bobc.nvidia import decode

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "bob-sm_86"


def test_parameter_words_are_the_blocks_nonzero_words():
    images = decode.read_images(GOLDEN)
    m = images.manifest
    size = m["sizes"]["parameter_block"]
    raw = (GOLDEN / "program.bin").read_bytes()
    for launch in m["launches"][:4]:
        block = raw[launch["parameter_offset"]:launch["parameter_offset"] + size]
        expected = [(8 * i, w) for i, (w,) in enumerate(struct.iter_unpack("<Q", block)) if w != 0]
        assert 0 < len(expected) < size // 8              # the block holds zero words to leave out
        assert decode.parameter_words(images, launch["index"]) == expected
