"""Conversion and read-back on values that share structure (probe s29 types, findings 1 and 2).

A computation stuck on a variable holds its parts shared: `(nat-add b b)` holds one `b` twice,
so n such steps are a DAG of n nodes and a tree of 2^n.  Comparing two such values, or reading
one back, must do work linear in the DAG, count it as evaluation steps (docs/limits.md: the
step limit holds on every path), and a message must print a cut of the value without ever
computing the whole of it.

The slow cases run in a subprocess with a timeout and a memory limit, so a regression fails
instead of hanging the suite."""
from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from bobc.language import core
from bobc.language.check import show_value_type
from bobc.language.conversion import convertible
from bobc.language.limits import LimitExceeded
from bobc.language.primitives import PRIMITIVES
from bobc.language.quote import SHOWN_TEXT_BYTES, SHOWN_WIDTH, quote, shown_value
from bobc.language.values import HPrim, HVar, VBytes, VNat, VNeutral

from .conftest import REPOSITORY

ADD = PRIMITIVES["nat-add"]


def doubled(steps: int):
    """`x`, then `(nat-add b b)` of the one before, `steps` times: a DAG of steps + 1 nodes."""
    value = VNeutral(HVar(0, "x"))
    for _ in range(steps):
        value = VNeutral(HPrim(ADD, (value, value)))
    return value


def chain(length: int):
    """`(nat-add (nat-add ... x 1) ... 1)`: `length` distinct nodes (nothing shared)."""
    value = VNeutral(HVar(0, "x"))
    for _ in range(length):
        value = VNeutral(HPrim(ADD, (value, VNat(1))))
    return value


@pytest.fixture
def fuel():
    """Steps used since the test began (the limit set to `given`); the default restored."""
    def used():
        return core._fuel[1] - core._fuel[0]
    core.reset_fuel(1_000_000)
    yield used
    core.reset_fuel()


def test_two_copies_of_a_shared_value_compare_in_steps_linear_in_the_dag(fuel):
    # built apart (as the two sides of a claim are), so only a comparison that remembers the
    # pairs it compared avoids the 2^18 tree; each pair is a step (before: none counted)
    assert convertible(1, doubled(18), doubled(18))
    assert 0 < fuel() < 200


def test_conversion_counts_its_work_as_evaluation_steps(fuel):
    core.reset_fuel(1_000)
    with pytest.raises(LimitExceeded, match="evaluation steps: more than the limit of 1,000"):
        convertible(1, chain(5_000), chain(5_000))


def test_read_back_keeps_sharing_and_counts_steps(fuel):
    term = quote(1, doubled(16))
    assert term.arguments[0] is term.arguments[1]       # a DAG, not a tree of 2^16 nodes
    assert 0 < fuel() < 100
    core.reset_fuel(100)
    with pytest.raises(LimitExceeded, match="evaluation steps"):
        quote(1, chain(500))


def test_a_message_prints_a_cut_of_a_value_never_the_whole(fuel):
    text = shown_value(doubled(16), 1)
    assert text.startswith("(nat-add (nat-add ") and "..." in text
    assert len(text) < SHOWN_WIDTH + 100
    assert shown_value(VNat(3 ** 100_000)) == "13349714142304014694...(47,713 digits)"
    assert shown_value(VBytes(bytes(100_000))) == 'b"' + "\\x00" * 16 + '"...(100,000 bytes)'
    assert shown_value(VNat(2 ** 64)) == str(2 ** 64)       # what fits is printed whole
    # a plan's message (printable text: a refusal a failed proof's side carries) is shown whole
    # up to SHOWN_TEXT_BYTES, a longer one cut (Coppelius's shape refusals run to 700 bytes)
    reason = b"width (coppeliusShapeWidth) is 320: not a multiple of 128; " * 12
    assert shown_value(VBytes(reason)) == 'b"' + reason.decode() + '"'
    assert shown_value(VBytes(b"x" * (SHOWN_TEXT_BYTES + 1))) == 'b"' + "x" * 16 + f'"...({SHOWN_TEXT_BYTES + 1:,} bytes)'
    # `bobc eval --type` prints a type whole, but within PRINTED_TYPE_WIDTH characters
    whole = show_value_type(doubled(40))
    assert whole.startswith("(nat-add (nat-add ") and len(whole) < 70_000


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


NAT_TOWER = ("(nat-eliminate (lambda unrestricted c : Nat . Nat) x (lambda unrestricted k : Nat . "
             "(lambda unrestricted b : Nat . (nat-add b b))) {n})")

MODULES = {
    # a true claim on a 2^25-node tree (a DAG of 26): before, conversion never ended
    "Tower": "def f : (pi unrestricted x : Nat . (equal Nat {t} {t})) = "
             "(lambda unrestricted x : Nat . (refl Nat {t}))".format(t=NAT_TOWER.format(n=25)),
    # a false one: before, reading the left side back for the message took 13 GB
    "TowerFalse": "def f : (pi unrestricted x : Nat . (equal Nat {t} 0)) = "
                  "(lambda unrestricted x : Nat . (refl Nat 0))".format(t=NAT_TOWER.format(n=25)),
    # the standard library's SHA-256 of a variable, true and false
    "Digest": "import Data.SHA256Digest\ndef f : (pi unrestricted x : Bytes . (equal Bytes "
              "(sha256Digest x) (sha256Digest x))) = (lambda unrestricted x : Bytes . "
              "(refl Bytes (sha256Digest x)))",
    "DigestFalse": "import Data.SHA256Digest\ndef f : (pi unrestricted x : Bytes . (equal Bytes "
                   "(sha256Digest x) b\"\")) = (lambda unrestricted x : Bytes . (refl Bytes b\"\"))",
    # a 100,000-byte literal and a 47,713-digit natural in a message
    "Wide": 'def p : (equal Bytes (bytes-from-nat-le 0 100000) b"") = (refl Bytes b"")',
    "Tall": "def p : (equal Nat (nat-power 3 100000) 0) = (refl Nat 0)",
}


def check(tmp_path, name, *options, text=None):
    path = tmp_path / f"{name}.bob"
    path.write_text(f"module {name}\n\n{text or MODULES[name]}\n", encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "bobc", "check", str(path), *options],
                          capture_output=True, text=True, timeout=60, preexec_fn=_limited,
                          env={"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": "off",
                               "PYTHONPATH": str(REPOSITORY / "compiler")})


@pytest.mark.parametrize("name", ["Tower", "Digest"])
def test_a_true_claim_on_shared_values_checks(tmp_path, name):
    done = check(tmp_path, name, "--max-evaluation-steps", "100000")
    assert done.returncode == 0, done.stderr
    assert "well typed" in done.stdout


@pytest.mark.parametrize("name", ["TowerFalse", "DigestFalse", "Wide", "Tall"])
def test_a_false_claim_is_refused_in_a_few_lines(tmp_path, name):
    done = check(tmp_path, name)
    assert done.returncode == 1
    # TowerFalse's and DigestFalse's left sides are stuck on the variable x (finding 6)
    refusal = ("claims cannot be decided by computation" if name.endswith("False")
               else "claims does not hold")
    assert refusal in done.stderr and "Traceback" not in done.stderr
    assert "..." in done.stderr.splitlines()[1]           # the left side, cut
    assert len(done.stderr) < 1_500


def test_conversion_past_the_step_limit_is_refused_naming_the_definition(tmp_path):
    # 20,000 distinct nodes a side: about 70,000 steps to evaluate, as many again to compare
    # (before, the comparison counted none and this passed under the limit)
    side = ("(nat-eliminate (lambda unrestricted c : Nat . Nat) x (lambda unrestricted k : Nat . "
            "(lambda unrestricted b : Nat . (nat-add b k))) 20000)")
    text = (f"def long : (pi unrestricted x : Nat . (equal Nat {side} {side})) = "
                           f"(lambda unrestricted x : Nat . (refl Nat {side}))")
    done = check(tmp_path, "Compared", "--max-evaluation-steps", "100000", text=text)
    assert done.returncode == 1
    assert ("error: evaluation steps: more than the limit of 100,000 (docs/limits.md), "
            "in definition long") in done.stderr
    assert check(tmp_path, "Compared", "--max-evaluation-steps", "400000", text=text).returncode == 0
