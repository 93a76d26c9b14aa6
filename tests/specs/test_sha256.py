"""Data.SHA256*: SHA-256 in the plan language equals Python's hashlib.

FIPS 180-4's example messages (one block, empty, two blocks of 448 and 896
bits) and random messages around the padding's boundaries (55/56 and 119/120
bytes, where the length spills into another block), evaluated by our
evaluator in one program so each digest costs one evaluation.
"""
from __future__ import annotations

import hashlib
import random

from .conftest import REPOSITORY  # noqa: F401  (fixtures)

FIPS_MESSAGES = [
    b"abc",
    b"",
    b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
    b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
]


def literal(message: bytes) -> str:
    return 'b"' + "".join(f"\\x{byte:02x}" for byte in message) + '"'


def digests(probe, messages):
    text = "import Data.SHA256Digest\n\n" + "".join(
        f"def digest{i} : Bytes = (sha256Digest {literal(m)})\n" for i, m in enumerate(messages))
    program = probe(text)
    program.check()
    return [program.value(f"digest{i}").value for i in range(len(messages))]


def test_fips_180_4_examples(probe):
    got = digests(probe, FIPS_MESSAGES)
    assert got[0].hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert got == [hashlib.sha256(m).digest() for m in FIPS_MESSAGES]


def test_random_messages_across_block_boundaries(probe):
    generator = random.Random(180_4)
    lengths = [1, 55, 56, 63, 64, 65, 119, 120, 128, 200]
    messages = [bytes(generator.randrange(256) for _ in range(n)) for n in lengths]
    assert digests(probe, messages) == [hashlib.sha256(m).digest() for m in messages]


def test_padding_and_schedule_pieces(probe):
    program = probe("import Data.SHA256Schedule\nimport Data.SHA256Core\n\n"
                    "def padded : Bytes = (sha256Padded b\"abc\")\n"
                    "def blocks : Nat = (sha256BlockCount (bytes-from-nat-le 0 56))\n"
                    "def rotated : Nat = (sha256RotateRight 1 1)\n"
                    "def k63 : Nat = (sha256K 63)\n")
    # 5.1.1: "abc", 0x80, 52 zero bytes, the length 24 as 64-bit big-endian
    assert program.value("padded").value == b"abc\x80" + bytes(52) + (24).to_bytes(8, "big")
    assert program.value("blocks").value == 2          # 56 bytes + 9 do not fit one block
    assert program.value("rotated").value == 0x80000000
    assert program.value("k63").value == 0xC67178F2     # FIPS 180-4 4.2.2, the last constant
