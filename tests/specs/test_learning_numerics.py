"""Learning.Numerics gives IEEE 754's bits (probe s31 stdlib finding 1).

The oracle is NumPy's float32/float64 arithmetic (round to nearest, ties to
even), compared bit for bit: results are viewed as uint32/uint64, never
compared with ==, so -0.0 and +0.0 differ.  The one exception the module
documents: every NaN result is the format's quiet NaN (0x7fc00000 /
0x7ff8000000000000), whatever NaN NumPy's host gives.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

F32, F64 = np.float32, np.float64
U32, U64 = np.uint32, np.uint64
NAN32, NAN64 = 0x7FC00000, 0x7FF8000000000000


def bits32(x) -> int:
    return int(np.array(x, dtype=F32).view(U32))


def bits64(x) -> int:
    return int(np.array(x, dtype=F64).view(U64))


def from32(b: int):
    return np.array(b, dtype=U32).view(F32)[()]


def from64(b: int):
    return np.array(b, dtype=U64).view(F64)[()]


def oracle32(b: int) -> int:
    """What the module must give for NumPy's binary32 result pattern b."""
    return NAN32 if np.isnan(from32(b)) else b


def oracle64(b: int) -> int:
    return NAN64 if np.isnan(from64(b)) else b


EDGE32 = [0x00000000, 0x80000000,                          # +-0
          0x00000001, 0x80000001, 0x00000003, 0x007FFFFF,  # subnormals
          0x00800000, 0x80800000,                          # smallest normal
          0x7F7FFFFF, 0xFF7FFFFF, 0x7F7FFFFE,              # max finite
          0x7F800000, 0xFF800000,                          # infinities
          0x7FC00000, 0xFFC00001, 0x7F800001,              # NaNs (quiet, negative, signalling)
          0x3F800000, 0xBF800000, 0x3F800001, 0x40000000, 0x3F000000,
          0x4B800000, 0x33800000, 0x33800001,              # 2^24, 2^-24 (ties around 1)
          0x5F800000, 0x1F800000, 0x3DCCCCCD, 0x40490FDB]  # 2^64, 2^-64, 0.1, pi
EDGE64 = [0x0000000000000000, 0x8000000000000000,
          0x0000000000000001, 0x800FFFFFFFFFFFFF, 0x0010000000000000,
          0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
          0x7FF0000000000000, 0xFFF0000000000000,
          0x7FF8000000000000, 0xFFF0000000000001,
          0x3FF0000000000000, 0xBFF0000000000000, 0x3FF0000000000001,
          0x3CA0000000000000, 0x3CA0000000000001,          # 2^-53 (ties around 1)
          bits64(1e20), bits64(-1e20), bits64(1e-30), bits64(-1e-30),
          bits64(3.4028234663852886e38),                   # binary32's largest finite, exactly
          bits64(3.4028235677973366e38),                   # and its half ulp above: a tie, to infinity
          bits64(1.401298464324817e-45), bits64(7.006492321624085e-46),  # 2^-149 and its half (a tie, to 0)
          bits64(1.0000000596046448),                      # 1 + 2^-24: a binary32 tie (to even)
          bits64(0.1), bits64(1 / 3)]


def random32(generator, count):
    return [generator.getrandbits(32) for _ in range(count)]


def random64(generator, count):
    # a random pattern, or a value near binary32's range (so products overflow and underflow)
    out = []
    for _ in range(count):
        if generator.random() < 0.5:
            out.append(generator.getrandbits(64))
        else:
            out.append(bits64(generator.uniform(-1, 1) * 2.0 ** generator.randint(-160, 140)))
    return out


def pairs(edges, randoms, generator, count):
    chosen = [(a, b) for a in edges for b in edges]
    chosen += [(generator.choice(randoms), generator.choice(randoms)) for _ in range(count)]
    chosen += [(generator.choice(edges), generator.choice(randoms)) for _ in range(count // 2)]
    return chosen


@pytest.fixture(scope="module")
def numerics(tmp_path_factory):
    from bobc.language import Intrinsics, load_program
    from bobc.targets import SM86
    from bobc.language.values import VNat
    plan = tmp_path_factory.mktemp("numerics") / "Probe.bob"
    plan.write_text("module Probe\n\nimport Learning.Numerics\n", encoding="utf-8")
    program = load_program(plan, intrinsics=Intrinsics(), target=SM86)
    formats = {32: program.value("Learning.Numerics.learningBinary32"),
               64: program.value("Learning.Numerics.learningBinary64")}

    def call(name, *arguments):
        function = program.value("Learning.Numerics." + name)
        values = [formats[a[1]] if isinstance(a, tuple) else VNat(a) for a in arguments]
        return program.deep(lambda: program.force(program.apply(function, *values))).value
    return call


FORMAT32, FORMAT64 = ("format", 32), ("format", 64)


def check(results):
    wrong = [r for r in results if r[-2] != r[-1]]
    assert not wrong, f"{len(wrong)} of {len(results)} differ, e.g. " + ", ".join(
        f"{r[0]}({', '.join(hex(x) for x in r[1:-2])}) = {r[-2]:#x}, IEEE {r[-1]:#x}" for r in wrong[:5])


def test_binary32_operations_match_numpy_bit_for_bit(numerics):
    generator = random.Random(31)
    randoms = random32(generator, 400)
    operations = (("learningMultiply", np.multiply), ("learningAdd", np.add), ("learningSubtract", np.subtract))
    results = []
    with np.errstate(all="ignore"):
        for a, b in pairs(EDGE32, randoms, generator, 400):
            for name, operation in operations:
                expected = oracle32(bits32(operation(from32(a), from32(b))))
                results.append((name, a, b, numerics(name, FORMAT32, a, b), expected))
    check(results)


def test_binary64_operations_match_numpy_bit_for_bit(numerics):
    generator = random.Random(64)
    randoms = random64(generator, 200)
    operations = (("learningMultiply", np.multiply), ("learningAdd", np.add), ("learningSubtract", np.subtract))
    results = []
    with np.errstate(all="ignore"):
        for a, b in pairs(EDGE64, randoms, generator, 150):
            for name, operation in operations:
                expected = oracle64(bits64(operation(from64(a), from64(b))))
                results.append((name, a, b, numerics(name, FORMAT64, a, b), expected))
    check(results)


def test_conversions_match_numpy_bit_for_bit(numerics):
    generator = random.Random(2)
    results = []
    with np.errstate(all="ignore"):
        for a in EDGE64 + random64(generator, 300):
            results.append(("narrow", a, numerics("learningConvert", FORMAT64, FORMAT32, a),
                            oracle32(bits32(F32(from64(a))))))
        for a in EDGE32 + random32(generator, 300):
            results.append(("widen", a, numerics("learningConvert", FORMAT32, FORMAT64, a),
                            oracle64(bits64(F64(from32(a))))))
    check(results)


def test_mixed_product_and_sum_match_numpy_bit_for_bit(numerics):
    generator = random.Random(3)
    randoms = random64(generator, 200)
    results = []
    with np.errstate(all="ignore"):
        for a, b in pairs(EDGE64, randoms, generator, 200):
            product = F64(F32(from64(a)) * F32(from64(b)))
            results.append(("learningMixedProduct", a, b, numerics("learningMixedProduct", a, b),
                            oracle64(bits64(product))))
            results.append(("learningSum", a, b, numerics("learningSum", a, b),
                            oracle64(bits64(from64(a) + from64(b)))))
    check(results)


def test_the_probes_cases(numerics):
    """The cases the probe found (signed zeros, a binary32 overflow), and NaN's documented bits."""
    assert numerics("learningMixedProduct", bits64(1e20), bits64(1e20)) == 0x7FF0000000000000
    assert numerics("learningMixedProduct", bits64(-1e20), bits64(1e20)) == 0xFFF0000000000000
    assert numerics("learningMixedProduct", bits64(-0.0), bits64(2.0)) == 0x8000000000000000
    assert numerics("learningMixedProduct", bits64(1e-30), bits64(-1e-30)) == 0x8000000000000000
    assert numerics("learningMultiply", FORMAT32, 0x80000000, 0x3F800000) == 0x80000000
    assert numerics("learningAdd", FORMAT32, 0x80000000, 0x80000000) == 0x80000000
    assert numerics("learningSubtract", FORMAT32, 0x80000000, 0x00000000) == 0x80000000
    assert numerics("learningAdd", FORMAT32, 0x3F800000, 0xBF800000) == 0x00000000     # x + -x is +0
    assert numerics("learningConvert", FORMAT64, FORMAT32, 0x8000000000000000) == 0x80000000
    assert numerics("learningConvert", FORMAT32, FORMAT64, 0x7F800000) == 0x7FF0000000000000
    assert numerics("learningMultiply", FORMAT32, 0x7F800000, 0x00000000) == NAN32
    assert numerics("learningAdd", FORMAT64, 0x7FF0000000000000, 0xFFF0000000000000) == NAN64
    assert numerics("learningConvert", FORMAT64, FORMAT32, 0xFFF0000000000001) == NAN32
    assert numerics("learningIsNaN", FORMAT32, 0xFFC00001) == 1
    assert numerics("learningIsNaN", FORMAT32, 0x7F800000) == 0
    assert numerics("learningIsInfinite", FORMAT64, 0xFFF0000000000000) == 1
    assert numerics("learningRound", FORMAT32, 1, 0, 1) == 0x80000000
    assert numerics("learningRound", FORMAT32, 1, 1, 0) == NAN32
