"""The primitive functions: curried, total functions of Nat and Bytes.

Each row: the name a plan writes, its type in the language's own syntax (the
type checker parses it), and the Python function on plain ints/bytes.  They
are total: subtraction saturates, division by zero gives 0, modulo by zero
gives the dividend, slices clamp, reads out of range give 0.  Everything
else (naturalAdd, decimal printing, ...) is written in the language by the
specs on top of these.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Primitive:
    name: str
    type: str                   # in the language's syntax
    argument_kinds: tuple       # "Nat" | "Bytes", one per argument
    result_kind: str            # "Nat" | "Bytes"
    implementation: Callable

    @property
    def arity(self) -> int:
        return len(self.argument_kinds)


def _type(kinds: tuple, result: str) -> str:
    text = result
    for index in reversed(range(len(kinds))):
        text = f"(pi unrestricted {'abcdefgh'[index]} : {kinds[index]} . {text})"
    return text


def _divide(a: int, b: int) -> int:
    return a // b if b else 0


def _modulo(a: int, b: int) -> int:
    return a % b if b else a


def _from_nat_le(n: int, width: int) -> bytes:
    return (n % (1 << (8 * width))).to_bytes(width, "little") if width else b""


def _slice(x: bytes, start: int, count: int) -> bytes:
    return x[start:start + count]


def _at(x: bytes, i: int) -> int:
    return x[i] if i < len(x) else 0


_ROWS = [
    # name, argument kinds, result kind, implementation
    ("nat-add", ("Nat", "Nat"), "Nat", lambda a, b: a + b),
    ("nat-subtract", ("Nat", "Nat"), "Nat", lambda a, b: a - b if a > b else 0),
    ("nat-multiply", ("Nat", "Nat"), "Nat", lambda a, b: a * b),
    ("nat-divide", ("Nat", "Nat"), "Nat", _divide),
    ("nat-modulo", ("Nat", "Nat"), "Nat", _modulo),
    ("nat-power", ("Nat", "Nat"), "Nat", lambda a, b: a ** b),
    ("nat-square-root", ("Nat",), "Nat", math.isqrt),
    ("nat-equal", ("Nat", "Nat"), "Nat", lambda a, b: 1 if a == b else 0),
    ("nat-less", ("Nat", "Nat"), "Nat", lambda a, b: 1 if a < b else 0),
    ("nat-bit-and", ("Nat", "Nat"), "Nat", lambda a, b: a & b),
    ("nat-bit-or", ("Nat", "Nat"), "Nat", lambda a, b: a | b),
    ("nat-bit-xor", ("Nat", "Nat"), "Nat", lambda a, b: a ^ b),
    ("nat-shift-left", ("Nat", "Nat"), "Nat", lambda a, k: a << k),
    ("nat-shift-right", ("Nat", "Nat"), "Nat", lambda a, k: a >> k),
    ("nat-bit-length", ("Nat",), "Nat", lambda a: a.bit_length()),
    ("bytes-append", ("Bytes", "Bytes"), "Bytes", lambda x, y: x + y),
    ("bytes-length", ("Bytes",), "Nat", len),
    ("bytes-slice", ("Bytes", "Nat", "Nat"), "Bytes", _slice),
    ("bytes-at", ("Bytes", "Nat"), "Nat", _at),
    ("bytes-equal", ("Bytes", "Bytes"), "Nat", lambda x, y: 1 if x == y else 0),
    ("bytes-from-nat-le", ("Nat", "Nat"), "Bytes", _from_nat_le),
    ("bytes-to-nat-le", ("Bytes",), "Nat", lambda x: int.from_bytes(x, "little")),
]

PRIMITIVES: dict[str, Primitive] = {
    name: Primitive(name, _type(kinds, result), kinds, result, function)
    for name, kinds, result, function in _ROWS
}
