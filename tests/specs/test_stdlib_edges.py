"""Edges of the standard library that the probe of session 31 found (probe s31 stdlib
findings 3-6): each test states the behaviour the module's comment promises."""
from __future__ import annotations

import pytest


def values(program, *names):
    return [program.value(name).value for name in names]


# ---- finding 4: Std.Numeric.Profile's identity is injective in the version ----

VERSIONS = [0, 1, 9, 10, 99, 100, 10 ** 39 - 1, 10 ** 39, 10 ** 40 - 1, 10 ** 40, 10 ** 40 + 1,
            10 ** 45, 2 * 10 ** 45, 2 ** 64 - 1, 2 ** 64, 2 ** 200, 10 ** 100]


def test_profile_identity_prints_every_digit_of_the_version(probe):
    text = "import Std.Numeric.Profile\n\n"
    for i, version in enumerate(VERSIONS):
        text += (f"def id{i} : Bytes = (stdNumericProfileIdentity (constructor StdNumericProfile StdNumericProfileValue "
                 f"(constructor StdNumericFormat StdNumericBinary16) (constructor StdNumericFormat StdNumericBinary16) {version}))\n"
                 f"def digits{i} : Nat = (stdNumericDecimalDigits {version})\n")
    program = probe(text)
    identities = values(program, *(f"id{i}" for i in range(len(VERSIONS))))
    assert identities == [b"f16-products-f16-accumulation-v%d" % version for version in VERSIONS]
    assert len(set(identities)) == len(VERSIONS)
    assert values(program, *(f"digits{i}" for i in range(len(VERSIONS)))) == [len(str(v)) for v in VERSIONS]
