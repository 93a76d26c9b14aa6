"""A primitive's work on a large value counts against the evaluation-step budget (docs/limits.md).

Each primitive call used to cost the budget nothing, whatever its size: `(bytes-from-nat-le k
268435456)` allocates 256 MiB, `bytes-append` of a growing string copies it whole, a product of
two 131,071-bit naturals takes milliseconds, yet a `nat-eliminate` of 2^20 such iterations (within
every limit) spent a few million steps of 32,000,000.  Sixteen 256 MiB iterations took 20 s on
the development machine; 2^20 of them would take weeks (probe s46 plantexts2 finding 1), where
docs/limits.md promises that a runaway plan stops within a few minutes.

Now a primitive charges one step per 4,096 bytes it builds or reads (bytes-append,
bytes-from-nat-le, bytes-slice, bytes-to-nat-le, bytes-equal) and, for the super-linear
arithmetic, the product of its operands' bits scaled to ~10 us a step (nat-multiply, nat-divide,
nat-modulo, nat-power, nat-square-root).  The oracle is the budget itself: each loop below does
more work per iteration than 100,000 steps buy in a few iterations (a 64 MiB string is 16,384
steps of 4,096 bytes), so under `--max-evaluation-steps 100000` each is refused as "evaluation
steps" at its own definition, within seconds; before, each ran for minutes (a loop's 20,000
iterations and their applications, ~60,000 steps, fit the budget: only the work is past it).  Word-sized work
(what plans do) still costs nothing beyond its applications: a 1,000-iteration loop of 64-bit
products and 4 KiB byte strings evaluates to its hand-computed value under the same budget."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]

BUDGET = 100_000
MiB = 1 << 20


def _loop(kind: str, base: str, step: str, count: int) -> str:
    return (f"(nat-eliminate (lambda unrestricted k : Nat . {kind}) {base} "
            f"(lambda unrestricted k : Nat . (lambda unrestricted below : {kind} . {step})) {count})")


BIG = "(nat-shift-left 1 131070)"          # a 131,071-bit natural
WIDE = "(nat-shift-left 1 262000)"         # a 262,001-bit natural
# eight products of two 131,071-bit naturals (~2 ms each here), summed
PRODUCTS = "(nat-add " * 7 + " ".join(f"(nat-multiply (nat-add {BIG} k) (nat-add {BIG} {i}))" + (")" if i else "")
                                       for i in range(8))

PLAN = f"""module Heavy

def chunk : Bytes = (bytes-from-nat-le 0 {MiB})
def block : Bytes = (bytes-from-nat-le 0 {64 * MiB})
def other : Bytes = (bytes-from-nat-le 0 {64 * MiB})
def allocate : Nat = {_loop("Nat", "0", f"(nat-add below (bytes-length (bytes-from-nat-le k {64 * MiB})))", 1024)}
def grow : Nat = (bytes-length {_loop("Bytes", 'b""', "(bytes-append below chunk)", 256)})
def multiply : Nat = {_loop("Nat", "0", f"(nat-modulo (nat-add below {PRODUCTS}) 1000)", 20000)}
def divide : Nat = {_loop("Nat", "0", f"(nat-add below (nat-divide (nat-add {WIDE} k) (nat-add {BIG} below)))", 20000)}
def root : Nat = {_loop("Nat", "0", f"(nat-modulo (nat-add below (nat-square-root (nat-add {WIDE} k))) 1000)", 20000)}
def toNatural : Nat = {_loop("Nat", "0", "(nat-add below (bytes-to-nat-le block))", 20000)}
def slice : Nat = {_loop("Nat", "0", "(nat-add below (bytes-length (bytes-slice block k 67108864)))", 20000)}
def same : Nat = {_loop("Nat", "0", "(nat-add below (bytes-equal block other))", 20000)}
def words : Nat = {_loop("Nat", "0", "(nat-modulo (nat-add below (nat-multiply (nat-add 18446744073709551615 k) 4294967295)) 1000003)", 1000)}
def small : Nat = (bytes-length {_loop("Bytes", 'b""', "(bytes-slice (bytes-append below (bytes-from-nat-le k 4096)) 0 8192)", 1000)})
"""


def _eval(tmp_path, name: str, timeout: float = 90) -> tuple[subprocess.CompletedProcess, float]:
    plan = tmp_path / "Heavy.bob"
    plan.write_text(PLAN, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPOSITORY / "compiler"), BOBC_CACHE_DIR="off")
    start = time.monotonic()
    ran = subprocess.run([sys.executable, "-m", "bobc", "eval", str(plan), name,
                          "--max-evaluation-steps", str(BUDGET)],
                         capture_output=True, text=True, env=env, timeout=timeout)
    return ran, time.monotonic() - start


def _line(name: str) -> int:
    return next(i for i, line in enumerate(PLAN.splitlines(), 1) if line.startswith(f"def {name} "))


@pytest.mark.parametrize("name", ["allocate", "grow", "multiply", "divide", "root", "toNatural",
                                  "slice", "same"])
def test_size_heavy_loop_runs_out_of_steps_s46(tmp_path, name):
    ran, took = _eval(tmp_path, name)
    assert ran.returncode == 1, (ran.stdout, ran.stderr)
    assert f"evaluation steps: more than the limit of {BUDGET:,}" in ran.stderr, ran.stderr
    assert f"in definition {name}" in ran.stderr, ran.stderr
    assert f"Heavy.bob:{_line(name)}:" in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr
    assert took < 60, f"{name} took {took:.1f} s to be refused"


def test_word_sized_work_still_evaluates_s46(tmp_path):
    # words: x_{k+1} = (x_k + (2^64 - 1 + k) * (2^32 - 1)) mod 1000003, x_0 = 0, 1000 times
    x = 0
    for k in range(1000):
        x = (x + (18446744073709551615 + k) * 4294967295) % 1000003
    ran, _ = _eval(tmp_path, "words")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == str(x)
    # small: a string kept at most 8,192 bytes, 4,096 appended each time: 8,192 after two rounds
    ran, _ = _eval(tmp_path, "small")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "8192"
