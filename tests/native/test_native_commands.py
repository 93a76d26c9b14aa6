"""Every command of a native physical program, run by the built C host (on the CPU:
NATIVE_DEVICE=memory) and by the reference interpreter: same files, same statuses, same
messages; the values themselves checked against NumPy / Python computed independently."""
from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from native_helpers import program_bytes


def words(*values) -> bytes:
    return b"".join(struct.pack("<Q", v & (2 ** 64 - 1)) for v in values)


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def same(c, reference):
    assert c.status == reference.status, (c.stderr, reference.stderr)
    assert c.stderr == reference.stderr
    assert c.files == reference.files


def arithmetic_expected(a: float, b: float, c_bits: int, d: int) -> bytes:
    """The eleven words of Native.Commands.arithmetic, by NumPy."""
    x, y = np.float64(a), np.float64(b)
    with np.errstate(all="ignore"):
        results = [x + y, x - y, x * y, x / y, np.sqrt(x)]
    out = [int(np.array([r]).view(np.uint64)[0]) for r in results]
    with np.errstate(all="ignore"):
        out.append(int(np.array([x], dtype=np.float64).astype(np.float32).view(np.uint32)[0]))
    widened = np.array([c_bits & 0xFFFFFFFF], dtype=np.uint32).view(np.float32).astype(np.float64)
    out.append(int(widened.view(np.uint64)[0]))
    out.append(f64_bits(float(d)))                 # exact rounding of the natural (CPython)
    out += [(d - 1) % 2 ** 64, f64_bits(a), 5]
    return words(*out)


@pytest.mark.parametrize("a, b", [(1.5, -0.25), (0.1, 3.0), (2.0, 0.0), (-4.0, 7.0), (1e308, 1e308)])
def test_arithmetic_both_ways_and_against_numpy(commands, both, a, b):
    c_bits, d = 0x3FC00000, 2 ** 63 + 2 ** 11 + 1        # 1.5f; a natural needing rounding to even
    data = words(f64_bits(a), f64_bits(b), c_bits, d)
    c, reference = both(program_bytes(commands, "arithmetic"), {"in.bin": data}, ["in.bin", "out.bin"])
    same(c, reference)
    assert c.status == 0 and c.stderr == b""
    assert c.files["out.bin"] == arithmetic_expected(a, b, c_bits, d)


def test_float_and_conversions_agree_on_random_bit_patterns(commands, both, tmp_path):
    """Specials too: NaNs, infinities, zeros of both signs, subnormals, negative square roots."""
    rng = np.random.default_rng(7)
    specials = [0, 2 ** 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000001, 1, 0x000FFFFFFFFFFFFF,
                f64_bits(-2.0), f64_bits(1e-310)]
    code = program_bytes(commands, "arithmetic")
    for trial in range(12):
        picked = [int(v) for v in rng.integers(0, 2 ** 64, size=4, dtype=np.uint64)]
        if trial < len(specials):
            picked[0] = specials[trial]
            picked[1] = specials[(trial * 5 + 3) % len(specials)]
        c, reference = both(code, {"in.bin": words(*picked)}, ["in.bin", "out.bin"])
        same(c, reference)
        assert c.status == 0


def test_repeat_and_branch(commands, both):
    c, reference = both(program_bytes(commands, "loops"), {"n.bin": words(5)}, ["n.bin", "out.bin"])
    same(c, reference)
    assert c.status == 0 and c.files["out.bin"] == words(15, 6)


def test_branch_to_fail_publishes_nothing(commands, both):
    c, reference = both(program_bytes(commands, "loops"), {"n.bin": words(0)}, ["n.bin", "out.bin"])
    same(c, reference)
    assert c.status == 9 and "out.bin" not in c.files
    assert c.stderr == b"native: command 11 (Fail): zero iterations; nothing was published\n"


def test_memory_commands(commands, both):
    payload = bytes(range(0xA0, 0xB0))
    c, reference = both(program_bytes(commands, "memory"), {"in.bin": payload}, ["in.bin", "mapped.bin", "state.bin"])
    same(c, reference)
    assert c.status == 0, c.stderr
    value = 0x1122334455667788
    visible = bytearray(64)
    visible[0:16] = b"IMAGE-BYTES-0123"
    visible[16:32] = payload
    visible[0x20] = value & 0xFF
    visible[0x22:0x24] = (value & 0xFFFF).to_bytes(2, "little")
    visible[0x24:0x28] = (value & 0xFFFFFFFF).to_bytes(4, "little")
    visible[0x28:0x30] = value.to_bytes(8, "little")
    assert c.files["mapped.bin"] == bytes(visible)
    assert c.files["state.bin"] == bytes(visible[:48]) + value.to_bytes(8, "little")


def test_fail_after_write_publishes_nothing(commands, both):
    c, reference = both(program_bytes(commands, "failing"), {"in.bin": words(1)}, ["in.bin", "out.bin"])
    same(c, reference)
    assert c.status == 7 and "out.bin" not in c.files
    assert c.stderr == b"native: command 2 (Fail): the plan refuses this input; nothing was published\n"


def test_halt_in_a_body_stops_everything_and_publishes(commands, both):
    c, reference = both(program_bytes(commands, "halting"), {}, ["out.bin"])
    same(c, reference)
    assert c.status == 0 and c.files["out.bin"] == words(0x68616C746564)


def test_telemetry_by_level(commands, both):
    code = program_bytes(commands, "telemetry")
    for level, labels in (("0", []), ("1", [b"first"]), ("3", [b"first", b"third"])):
        c, reference = both(code, {}, [], env={"NATIVE_TELEMETRY": level}, name=f"telemetry{level}")
        for outcome in (c, reference):
            assert outcome.status == 0
            lines = outcome.stderr.splitlines()
            assert [re.fullmatch(rb"native: telemetry (\w+) \+\d+ us", line).group(1) for line in lines] == labels


@pytest.mark.parametrize("name, status, message", [
    ("afterRelease", 10, b"native: command 3 (CopyStateToMapped): mapped [0x200000, +8) is in no host-mapped buffer "
                          b"(Map one there with a nonzero host address first)"),
    ("submitting", 3, b"native: command 2 (Submit): submission 0 (entry 0x2222): this session has no GPU "
                      b"(NATIVE_DEVICE=memory): a submission needs one"),
    # probe s43 nativemsgs: the word's buffer named (Commands.bob maps "semaphore" at host 0x200000)
    ("waiting", 4, b"native: command 2 (WaitMapped): mapped word 0x200000 (buffer \"semaphore\" + 0): the word reached 0, "
                   b"not 1, within 50 ms"),
])
def test_device_refusals(commands, both, name, status, message):
    c, reference = both(program_bytes(commands, name), {}, [], name=name)
    same(c, reference)
    assert c.status == status
    assert c.stderr == message + b"; nothing was published\n"


def test_read_file_of_the_wrong_size_or_missing(commands, both):
    code = program_bytes(commands, "loops")
    c, reference = both(code, {"n.bin": words(1, 2)}, ["n.bin", "out.bin"], name="loops-size")
    same(c, reference)
    assert c.status == 2
    assert c.stderr == (b"native: command 0 (ReadFile): argument 0 n.bin: 16 bytes, not the 8 the program reads; "
                        b"nothing was published\n")


def test_read_file_missing(commands, both):
    c, reference = both(program_bytes(commands, "loops"), {}, ["absent.bin", "out.bin"], name="loops-missing")
    same(c, reference)
    assert c.status == 2
    assert c.stderr == (b"native: command 0 (ReadFile): argument 0 absent.bin: cannot open: No such file or "
                        b"directory; nothing was published\n")


def test_too_many_arguments(commands, both):
    """A program without a request reads its files only: an extra word is a mistake, not ignored."""
    c, reference = both(program_bytes(commands, "loops"), {}, ["n.bin", "out.bin", "extra"], name="loops-extra")
    assert c.status == reference.status == 2
    assert b"the program names 2 file arguments, 3 given" in c.stderr
    assert b"the program names 2 file arguments, 3 given" in reference.stderr


def test_too_few_arguments(commands, both):
    c, reference = both(program_bytes(commands, "loops"), {}, ["n.bin"], name="loops-usage")
    assert c.status == reference.status == 2
    assert b"the program names 2 file arguments, 1 given" in c.stderr
    assert b"the program names 2 file arguments, 1 given" in reference.stderr
