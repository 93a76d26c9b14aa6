"""Primitives through the whole pipeline (parse, resolve, evaluate) against
Python's own integer and bytes semantics, and literal round trips."""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from bobc.language.parse import parse_module
from bobc.language.primitives import PRIMITIVES
from bobc.language.syntax import show_bytes

naturals = st.integers(min_value=0, max_value=2 ** 80)
small = st.integers(min_value=0, max_value=64)
byte_strings = st.binary(max_size=24)


def evaluate(tmp_path_factory, expression: str):
    from bobc.language import load_program
    from bobc.targets import SM86
    folder = tmp_path_factory.mktemp("prim")
    path = folder / "P.bob"
    path.write_text(f"module P\ndef result = {expression}\n", encoding="utf-8")
    return load_program(path, target=SM86).value("result").value


def literal(value) -> str:
    return show_bytes(value) if isinstance(value, bytes) else str(value)


EXPECTED = {
    "nat-add": lambda a, b: a + b,
    "nat-subtract": lambda a, b: max(a - b, 0),
    "nat-multiply": lambda a, b: a * b,
    "nat-divide": lambda a, b: 0 if b == 0 else a // b,
    "nat-modulo": lambda a, b: a if b == 0 else a % b,
    "nat-equal": lambda a, b: int(a == b),
    "nat-less": lambda a, b: int(a < b),
    "nat-bit-and": lambda a, b: a & b,
    "nat-bit-or": lambda a, b: a | b,
    "nat-bit-xor": lambda a, b: a ^ b,
}


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(EXPECTED)), naturals, st.one_of(naturals, st.just(0)))
def test_binary_natural_primitives(tmp_path_factory, name, a, b):
    # written partially applied, the way plans pass them around
    assert evaluate(tmp_path_factory, f"(({name} {a}) {b})") == EXPECTED[name](a, b)


@settings(max_examples=25, deadline=None)
@given(naturals, small)
def test_shifts_square_root_and_bit_length(tmp_path_factory, a, k):
    source = (f"(nat-add (nat-shift-left {a} {k}) (nat-add (nat-shift-right {a} {k}) "
              f"(nat-add (nat-square-root {a}) (nat-bit-length {a}))))")
    assert evaluate(tmp_path_factory, source) == \
        (a * 2 ** k) + (a // 2 ** k) + math.isqrt(a) + len(bin(a)) - 2 - (a == 0)


@settings(max_examples=25, deadline=None)
@given(byte_strings, byte_strings, small, small)
def test_byte_primitives(tmp_path_factory, x, y, start, count):
    assert evaluate(tmp_path_factory, f"(bytes-append {literal(x)} {literal(y)})") == x + y
    assert evaluate(tmp_path_factory, f"(bytes-slice {literal(x)} {start} {count})") == \
        x[start:start + count]
    assert evaluate(tmp_path_factory, f"(bytes-at {literal(x)} {start})") == \
        (x[start] if start < len(x) else 0)
    assert evaluate(tmp_path_factory, f"(bytes-equal {literal(x)} {literal(y)})") == int(x == y)


@settings(max_examples=25, deadline=None)
@given(naturals, st.integers(min_value=0, max_value=12))
def test_little_endian_round_trip(tmp_path_factory, n, width):
    encoded = evaluate(tmp_path_factory, f"(bytes-from-nat-le {n} {width})")
    assert len(encoded) == width
    assert evaluate(tmp_path_factory, f"(bytes-to-nat-le {literal(encoded)})") == n % 256 ** width


@given(byte_strings)
def test_byte_string_literals_round_trip(data):
    module = parse_module(f"module M\ndef x = {show_bytes(data)}\n", "M.bob")
    assert module.declarations[0].body.value == data


@given(naturals)
def test_hex_and_decimal_literals(n):
    module = parse_module(f"module M\ndef x = {hex(n)}\ndef y = {n}\n", "M.bob")
    assert [d.body.value for d in module.declarations] == [n, n]


def test_every_primitive_has_a_parsable_curried_type():
    for primitive in PRIMITIVES.values():
        module = parse_module(f"module M\ndef t = {primitive.type}\n", "M.bob")
        assert module.declarations[0].body is not None
        assert primitive.type.count("(pi unrestricted") == primitive.arity
