"""The evaluator's size limits (docs/limits.md: bits of any natural, bytes of any byte
string) hold on every path: a primitive applied to exactly its arguments (the PrimCall
fast paths), a partial application reaching call_primitive, succ, a nat-eliminate loop,
the type checker's evaluation and literals (hex ones counted in bits).  Each refusal is
a LimitExceeded naming the primitive, the limit, the definition and the file:line:column,
never a traceback, a MemoryError or a hang (probe-lang finding 1)."""
from __future__ import annotations

import time

import pytest

from bobc.errors import BobcError
from bobc.language import load_program, limits
from bobc.targets import SM86
from bobc.language.limits import LimitExceeded
from bobc.language.parse import ParseError

BITS = limits.NATURAL_BITS          # 262,144

PLAN = f"""module Sizes

def n : Nat = 300000
def powerFast = (nat-power 2 n)
def powerHuge = (nat-power 3 1000000000)
def powerAtLimit : Nat = (nat-bit-length (nat-power 2 {BITS - 1}))
def powerPartial = (nat-power 2)
def powerThroughApply = (powerPartial n)
def shiftHuge = (nat-shift-left 1 100000000000)
def shiftAtLimit : Nat = (nat-bit-length (nat-shift-left 1 {BITS - 1}))
def fromNatHuge = (bytes-from-nat-le 1 100000000000000)
def fromNatWidthPastInt = (bytes-from-nat-le 5 (nat-power 2 200))
def half = (nat-shift-left 1 {BITS - 1})
def allOnes = (nat-add half (nat-subtract half 1))
def allOnesBits : Nat = (nat-bit-length allOnes)
def addPast = (nat-add half half)
def succPast = (succ allOnes)
def squared = (nat-eliminate (lambda unrestricted k : Nat . Nat) 2
  (lambda unrestricted k : Nat . (lambda unrestricted b : Nat . (nat-multiply b b))) 22)
def wide = (bytes-append (bytes-from-nat-le 0 {BITS // 8}) b"\\x01")
def toNatPast = (bytes-to-nat-le wide)
def doubled = (nat-eliminate (lambda unrestricted k : Nat . Bytes) b"x"
  (lambda unrestricted k : Nat . (lambda unrestricted b : Bytes . (bytes-append b b))) 30)
def doubledLength = (bytes-length doubled)
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "Sizes.bob"
    path.write_text(PLAN, encoding="utf-8")
    return load_program(path, target=SM86)


def _line(name: str) -> int:
    return next(i for i, line in enumerate(PLAN.splitlines(), 1) if line.startswith(f"def {name} "))


@pytest.mark.parametrize("name, words", [
    ("powerFast", "nat-power 2 ^ 300,000 computes a natural of at least 300,001 bits"),
    ("powerHuge", "nat-power 3 ^ 1,000,000,000"),
    ("powerThroughApply", "nat-power 2 ^ 300,000"),
    ("shiftHuge", "nat-shift-left of a 1-bit natural by 100,000,000,000"),
    ("fromNatHuge", "bytes-from-nat-le asks for 100,000,000,000,000 bytes"),
    ("fromNatWidthPastInt", "bytes-from-nat-le asks for more than 2^200 bytes"),
    ("addPast", f"nat-add computes a natural of {BITS + 1:,} bits"),
    ("succPast", f"succ computes a natural of {BITS + 1:,} bits"),
    ("squared", f"nat-multiply computes a natural of {BITS + 1:,} bits"),
    ("toNatPast", f"bytes-to-nat-le computes a natural of {BITS + 1:,} bits"),
])
def test_a_value_past_a_size_limit_is_refused_at_once_naming_it_and_its_place(program, name, words):
    started = time.process_time()
    with pytest.raises(LimitExceeded) as caught:
        program.value(name)
    assert time.process_time() - started < 2.0
    error = caught.value
    assert words in error.message, error.message
    assert "more than the limit of" in error.message and f"in definition {name}" in error.message
    assert error.span is not None and error.span.path.endswith("Sizes.bob")
    # the call that computes it (squared's step is on the line after its def)
    assert error.span.line == _line(name) + (name == "squared")


def test_values_at_the_limit_are_computed(program):
    assert program.value("powerAtLimit").value == BITS
    assert program.value("shiftAtLimit").value == BITS
    assert program.value("allOnesBits").value == BITS


def test_a_byte_string_past_its_limit_is_refused_before_it_is_built(program, monkeypatch):
    monkeypatch.setattr(limits, "BYTES_LENGTH", 1 << 20)
    with pytest.raises(LimitExceeded) as caught:
        program.value("doubledLength")
    assert "bytes-append computes 2,097,152 bytes: more than the limit of 1,048,576" \
        in caught.value.message
    assert caught.value.span.line == _line("doubled") + 1


def test_the_type_checker_refuses_too_but_cleanly(tmp_path):
    path = tmp_path / "Proof.bob"
    path.write_text("module Proof\n"
                    "def proof : (equal Nat (nat-power 2 300000) 0) = (refl Nat 0)\n",
                    encoding="utf-8")
    with pytest.raises(LimitExceeded) as caught:
        load_program(path, target=SM86).check()
    assert "nat-power 2 ^ 300,000" in caught.value.render()
    assert "Proof.bob:2:" in caught.value.render()


def test_eval_prints_a_refusal_not_a_traceback(program, capsys):
    from bobc.cli import main
    path = program.modules["Sizes"].path
    for name in ("powerFast", "fromNatWidthPastInt", "shiftHuge"):
        assert main(["eval", str(path), name]) == 1
        err = capsys.readouterr().err
        assert f"Sizes.bob:{_line(name)}:" in err and "Traceback" not in err, err


@pytest.mark.parametrize("digits, refused", [
    ("f" * (BITS // 4), False),                 # 262,144 bits
    ("1" + "0" * (BITS // 4), True),            # 262,145 bits, 65,537 hex digits
    ("f" * 70_000, True),
])
def test_hex_literals_are_limited_in_bits_not_characters(tmp_path, digits, refused):
    path = tmp_path / "Hex.bob"
    path.write_text(f"module Hex\ndef a : Nat = 0x{digits}\n", encoding="utf-8")
    if not refused:
        assert load_program(path, target=SM86).value("a").value.bit_length() == BITS
        return
    with pytest.raises(ParseError) as caught:
        load_program(path, target=SM86)
    assert "Hex.bob:2:15" in caught.value.render()
    assert f"more than the limit of {BITS:,} bits" in caught.value.message


def test_a_refusal_is_a_bobc_error(program):
    with pytest.raises(BobcError):
        program.value("shiftHuge")


def test_a_step_limit_met_without_a_term_at_hand_names_the_definitions_place(tmp_path, monkeypatch):
    """probe-lang finding 8: a step limit met in the checker's own evaluation (an apply with no
    span) printed no file:line:column; it now points at the definition it was noted in."""
    from bobc.language import core
    path = tmp_path / "Steps.bob"
    path.write_text("module Steps\n"
                    "def n : Nat = (nat-eliminate (lambda unrestricted k : Nat . Nat) 0\n"
                    "  (lambda unrestricted k : Nat . (lambda unrestricted b : Nat . b)) 3)\n",
                    encoding="utf-8")
    program = load_program(path, target=SM86)
    core.reset_fuel(0)          # the checker's first step: the motive applied to 0
    with pytest.raises(LimitExceeded) as caught:
        program.check()
    assert caught.value.span is not None and caught.value.span.path.endswith("Steps.bob")
    assert "Steps.bob:2:5: error: evaluation steps" in caught.value.render()


def test_nesting_too_deep_names_the_definition(tmp_path):
    """probe-lang finding 2: 'evaluation nests too deeply' had no place and no definition."""
    from bobc.language.values import EvalError
    path = tmp_path / "Deep.bob"
    # an unchecked plan (it is refused by check): self-application through a family
    path.write_text("module Deep\n"
                    "def D : Type 0 = (pi unrestricted f : (family Bad) . Nat)\n"
                    "family Bad : Type 0\nconstructor MkBad\nfield unrestricted g : D\nend-family\n"
                    "def selfApply : (pi unrestricted b : (family Bad) . Nat) =\n"
                    "  (lambda unrestricted b : (family Bad) .\n"
                    "    (eliminate Bad (lambda unrestricted x : (family Bad) . Nat) b\n"
                    "      (branch MkBad g . (g b))))\n"
                    "def omega : Nat = (selfApply (constructor Bad MkBad selfApply))\n",
                    encoding="utf-8")
    with pytest.raises(EvalError) as caught:
        load_program(path, target=SM86).value("omega")
    assert "nests too deeply" in caught.value.message
    assert "in definition omega" in caught.value.message
    assert "Deep.bob:11:5" in caught.value.render()
    # probe s29 types finding 3: and the definition whose function recurs
    assert caught.value.message.endswith(", through selfApply (its function calls nest deepest)")
    assert caught.value.hint.startswith("selfApply likely calls itself without end")
