"""The hosts' scalar-fill evaluator is NumPy-free and bit-identical to NumPy's float64 and to the C
host (session 44, numpyfree).

bobc.plan.host.scalar_value and encoded_fill -- the one evaluator of the reference host, the
simulator and `bobc check`'s word32 check (certify/limits.py _fresh_word32) -- computed with NumPy,
so the certifier special-cased a word32 fill that was a lone constant or the step to keep `bobc
check` NumPy-free (tests/test_build_caches.py), and any other program (`2 - t`) imported NumPy.  They
now compute with Python's float (C's double) and struct, taking the cases where Python raises and
IEEE 754 does not (x / 0, sqrt below 0, a binary32 past its range) as IEEE says.

Oracles, neither of them the code under test: NumPy's float64 operations (np.add ... np.sqrt under
errstate "ignore", astype("<f4")), with `power` the C library's pow, which the C host calls and
NumPy's np.power is not (probe s41 fillunify); and runtime_c/plan_fill.c itself, compiled with the
batch driver of tests/plan_fill_driver.py, over the same random programs (bytes and refusals)."""
from __future__ import annotations

import random
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bobc.plan.host import FillValueError, binary32_bytes, c_pow, encoded_fill, scalar_value

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))      # tests/: the shared C oracle
import plan_fill_driver  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
INF = float("inf")

# constants at the edges: signed zeros, subnormals, binary64's and binary32's extremes (3.4028235677973366e38
# is FLT_MAX + half an ulp: a tie that rounds to the infinity), 2^32 and its neighbours, huge integers
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -8.0, 0.95, 4.0, 0.1, 1e308, -1e308, 1.7976931348623157e308,
         5e-324, 1e-310, 2.0 ** 1023, 2.0 ** 53 + 2, 4294967295.0, 4294967296.0, 4294967295.5,
         3.4028234663852886e38, 3.4028235677973366e38, 3.402823567797337e38, -3.4028235677973366e38,
         2.0 ** -149, 2.0 ** -150, 1.5 * 2.0 ** -149, 2.0 ** -150 * 1.0000001]
OPS = ("add", "subtract", "multiply", "divide", "power", "sqrt")


def _constant(rng) -> float:
    r = rng.random()
    if r < 0.5:
        return rng.choice(EDGES)
    if r < 0.75:        # a finite binary32 pattern, either sign (NvidiaPlanHostFloat32)
        bits = rng.getrandbits(32) & 0x7F7FFFFF | rng.getrandbits(1) << 31
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    return rng.uniform(-1e6, 1e6) if rng.random() < 0.5 else rng.choice((1, -1)) * 2.0 ** rng.uniform(-1074, 1023)


def _program(rng, depth: int) -> list:
    if depth == 0 or rng.random() < 0.3:
        return [("step", 0.0)] if rng.random() < 0.3 else [("constant", _constant(rng))]
    op = rng.choice(OPS)
    if op == "sqrt":
        return _program(rng, depth - 1) + [(op, 0.0)]
    return _program(rng, depth - 1) + _program(rng, depth - 1) + [(op, 0.0)]


def _cases(seed: int, count: int) -> list:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        input_step = rng.choice([0, 1, 7, 2 ** 32 - 1, 2 ** 63, 2 ** 64 - 1, rng.getrandbits(64)])
        step = rng.choice([0, 1, 3, 2 ** 32 - 1, rng.getrandbits(32)])
        out.append((rng.choice(["binary32", "word32"]), input_step, step, _program(rng, rng.randint(0, 5))))
    return out


CASES = _cases(44, 3000)


def numpy_value(terms, t: int):
    """The oracle: each operation NumPy's float64 one (C's double), pow the C library's."""
    stack = []
    with np.errstate(all="ignore"):
        for op, value in terms:
            if op in ("constant", "step"):
                stack.append(np.float64(value if op == "constant" else t))
            elif op == "sqrt":
                stack.append(np.sqrt(stack.pop()))
            else:
                b, a = stack.pop(), stack.pop()
                stack.append(np.float64(c_pow()(float(a), float(b))) if op == "power" else
                             {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                              "divide": np.divide}[op](a, b))
    (value,) = stack
    return value


def bits64(v) -> str:
    return struct.pack("<d", float(v)).hex()


def test_random_programs_evaluate_to_numpys_float64_bit_for_bit():
    results = [bits64(scalar_value(terms, i + s)) for _, i, s, terms in CASES]
    assert results == [bits64(numpy_value(terms, i + s)) for _, i, s, terms in CASES]
    # the programs reach the cases Python raises for and IEEE does not, and the special values
    values = [struct.unpack("<d", bytes.fromhex(b))[0] for b in results]
    assert sum(v != v for v in values) > 50 and sum(v in (INF, -INF) for v in values) > 50
    assert any(b == bits64(-0.0) for b in results) and sum(0 <= v < 2 ** 32 and v == int(v) for v in values) > 50


@pytest.mark.parametrize("terms, expected", [
    ([("constant", 1.0), ("constant", 0.0), ("divide", 0.0)], INF),
    ([("constant", -1.0), ("constant", 0.0), ("divide", 0.0)], -INF),
    ([("constant", 1.0), ("constant", -0.0), ("divide", 0.0)], -INF),
    ([("constant", -1e308), ("constant", -0.0), ("divide", 0.0)], INF),
    ([("constant", 1e308), ("constant", 1e308), ("multiply", 0.0), ("constant", 0.0), ("divide", 0.0)], INF),
    ([("constant", 0.0), ("constant", 0.0), ("divide", 0.0)], None),
    ([("constant", -0.0), ("constant", -0.0), ("divide", 0.0)], None),
    ([("constant", 0.0), ("constant", 0.0), ("divide", 0.0), ("constant", 0.0), ("divide", 0.0)], None),
    ([("constant", -0.0), ("sqrt", 0.0)], -0.0),
    ([("constant", -1.0), ("sqrt", 0.0)], None),
    ([("constant", -1e308), ("constant", 10.0), ("multiply", 0.0), ("sqrt", 0.0)], None),
    ([("constant", 1e308), ("constant", 10.0), ("multiply", 0.0), ("constant", 1e308), ("constant", 10.0),
      ("multiply", 0.0), ("subtract", 0.0)], None),
    ([("constant", -8.0), ("constant", 0.5), ("power", 0.0)], None),
])
def test_the_cases_python_raises_for_are_ieees(terms, expected):
    """x / 0, 0 / 0, sqrt(-x): NumPy's float64 (the oracle) and IEEE 754's own rules (an infinity
    signed by both signs; the invalid operation's NaN, this machine's)."""
    got = scalar_value(terms, 0)
    assert bits64(got) == bits64(numpy_value(terms, 0))
    assert got != got if expected is None else bits64(got) == bits64(expected)


def test_binary32_bytes_are_numpys_cast():
    """astype("<f4") is C's (float): ties to even, an infinity from FLT_MAX + half an ulp on (where
    struct.pack raises), NaNs quieted with sign and payload kept."""
    rng = random.Random(4432)
    values = list(EDGES) + [-v for v in EDGES] + [INF, -INF, INF - INF, -(INF - INF)]
    values += [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(3000)]
    values += [rng.choice((1, -1)) * 2.0 ** rng.uniform(-152, 129) for _ in range(3000)]
    with np.errstate(all="ignore"):
        expected = [np.float64(v).astype("<f4").tobytes() for v in values]
    assert [binary32_bytes(v) for v in values] == expected
    assert [encoded_fill("binary32", v, 0) for v in values] == expected
    assert sum(v == v and abs(v) != INF and e[2:] in (b"\x80\x7f", b"\x80\xff") for v, e in zip(values, expected)) > 5


def test_random_fills_are_the_c_hosts_bytes_and_refusals(tmp_path):
    says = plan_fill_driver.compiled_batch(tmp_path)
    ours = []
    for encoding, input_step, step, terms in CASES:
        t = input_step + step
        try:
            ours.append(encoded_fill(encoding, scalar_value(terms, t), t).hex())
        except FillValueError as refused:
            ours.append(plan_fill_driver.REFUSED + str(refused))
    theirs = says(CASES)
    assert ours == theirs
    assert sum(line.startswith(plan_fill_driver.REFUSED) for line in theirs) > 100
    assert sum("nan" in line for line in theirs) > 10


def test_evaluating_and_encoding_any_fill_imports_no_numpy():
    """`bobc check` evaluates every word32 fill at a fresh run's step (certify/limits.py); with
    every operation, a division by zero, a binary32 past its range and a refusal it imports no NumPy."""
    probe = r"""
import sys
from bobc.plan.host import Fill, Scalar, FillValueError, encoded_fill
from bobc.certify import limits
c = lambda v: Scalar("constant", value=v)
t = Scalar("step")
two_minus_t = Scalar("subtract", (c(2.0), t))
every = Scalar("add", (Scalar("power", (Scalar("sqrt", (Scalar("multiply", (t, c(3.0))),)), c(2.0))),
                       Scalar("divide", (c(1.0), Scalar("subtract", (t, t))))))
out = []
for step, scalar in ((0, two_minus_t), (3, two_minus_t), (1, every)):
    limits._fresh_word32(0, Fill(0, 0, step, "word32", scalar), out)
    Fill(0, 0, step, "binary32", scalar).encode(step)
encoded_fill("binary32", 1e300, 0)
print(len(out), "numpy" in sys.modules)
"""
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO,
                         env={"PYTHONPATH": str(REPO / "compiler"), "PATH": "/usr/bin:/bin"})
    assert run.stdout.split() == ["2", "False"], run.stderr
