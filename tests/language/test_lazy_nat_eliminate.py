"""A nat-eliminate whose step never reads the value below it runs one iteration, not `count`
(probe s31 stdlib findings 2 and 3).

`stdListAt` steps each list cell with `(lambda predecessor . (lambda ignored . (after
predecessor)))` and `naturalSelect` with `(lambda predecessor . (lambda ignored . whenNonzero))`.
Evaluation is lazy, so only the last iteration's value is the result; the evaluator ran every
iteration strictly, so each cell's loop ran the next cell's loop once per index below it: index
i cost about 2^i steps (index 30 of a 40-item list ran out the 32M-step limit), and a flag of
2^64 ran into the iteration limit.  A loop whose step reads its value costs what it did.

Costs are asserted as evaluation steps (docs/limits.md), never as time."""
from __future__ import annotations

import pytest

from bobc.language import core, load_program
from bobc.targets import SM86
from bobc.language.limits import LimitExceeded


def plan(tmp_path, body: str, name: str = "Lazy"):
    folder = tmp_path / "Lazy"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.bob"
    path.write_text(f"module Lazy.{name}\n\nimport Std.List\nimport Std.Natural\nimport Data.Bytes\n\n"
                    + body)
    return load_program(path, target=SM86)


def cons_list(items) -> str:
    text = "(constructor StdList StdListEmpty Nat)"
    for item in reversed(items):
        text = f"(constructor StdList StdListCons Nat {item} {text})"
    return text


def steps_of(program, name: str, budget: int = 100_000):
    """The value of `name` as an int, and the evaluation steps it took (within `budget`)."""
    core.reset_fuel(budget)
    try:
        value = program.value(name)
        return value.value, budget - core._fuel[0]
    finally:
        core.reset_fuel()


def test_list_index_costs_steps_linear_in_the_index(tmp_path):
    program = plan(tmp_path, f"def forty : (family StdList Nat) = {cons_list(range(1, 41))}\n"
                             "def at18 : Nat = (stdListAt Nat 99 forty 18)\n"
                             "def at30 : Nat = (stdListAt Nat 99 forty 30)\n"
                             "def at39 : Nat = (stdListAt Nat 99 forty 39)\n"
                             "def at40 : Nat = (stdListAt Nat 99 forty 40)\n")
    at18, steps18 = steps_of(program, "at18")
    assert at18 == 19 and steps18 < 500        # before: ~2^18 steps (0.33 s)
    at30, steps30 = steps_of(program, "at30")  # before: past the 32M-step limit
    assert at30 == 31 and steps30 < 500
    assert steps_of(program, "at39")[0] == 40
    assert steps_of(program, "at40")[0] == 99  # past the end: the default


def test_an_index_far_past_the_end_of_a_short_list_costs_almost_nothing(tmp_path):
    program = plan(tmp_path, f"def three : (family StdList Nat) = {cons_list([1, 2, 3])}\n"
                             "def at1 : Nat = (stdListAt Nat 99 three 1)\n"
                             "def atMillion : Nat = (stdListAt Nat 99 three 1000000)\n"
                             "def atHuge : Nat = (stdListAt Nat 99 three 0x10000000000000000)\n")
    assert steps_of(program, "at1")[0] == 2
    for name in ("atMillion", "atHuge"):        # before: 32M steps run out; 2^64 iterations refused
        value, steps = steps_of(program, name, budget=1_000)
        assert value == 99 and steps < 100


def test_a_large_flag_selects_in_a_few_steps(tmp_path):
    program = plan(tmp_path, "def big : Nat = 0x10000000000000000\n"
                             "def select : Nat = (naturalSelect big 7 9)\n"
                             "def selectZero : Nat = (naturalSelect 0 7 9)\n"
                             "def both : Nat = (naturalAnd big 5)\n"
                             "def either : Nat = (naturalOr big 0)\n"
                             "def million : Nat = (naturalSelect 1000000 7 9)\n")
    for name, wanted in (("select", 7), ("selectZero", 9), ("both", 1), ("either", 1),
                         ("million", 7)):
        value, steps = steps_of(program, name, budget=1_000)
        assert value == wanted and steps < 50, name
    program.check()     # a proof about a large flag checks (it was refused at the library's loop)


def test_a_proof_about_a_large_flag_checks(tmp_path):
    program = plan(tmp_path, "def holds : (equal Nat (naturalSelect 0x100000000 1 0) 1) = "
                             "(refl Nat 1)\n", name="Proof")
    program.check()


def test_a_loop_that_reads_its_value_costs_and_refuses_as_before(tmp_path):
    # the step reads `below` only under a let, an eliminate's branch or a lambda applied: the
    # analysis must see through each binder (a miss would give 1, not 1000)
    program = plan(tmp_path, """\
def counted : Nat = (nat-eliminate (lambda unrestricted k : Nat . Nat) 0
  (lambda unrestricted k : Nat . (lambda unrestricted below : Nat . (nat-add below 1))) 1000)
def underLet : Nat = (nat-eliminate (lambda unrestricted k : Nat . Nat) 0
  (lambda unrestricted k : Nat . (lambda unrestricted below : Nat .
    (let unrestricted x = (nat-add 1 1) in (nat-add below 1)))) 1000)
def underBranch : Nat = (nat-eliminate (lambda unrestricted k : Nat . Nat) 0
  (lambda unrestricted k : Nat . (lambda unrestricted below : Nat .
    (eliminate StdList (lambda unrestricted current : (family StdList Nat) . Nat)
      (constructor StdList StdListCons Nat 5 (constructor StdList StdListEmpty Nat))
      (branch StdListEmpty . 0)
      (branch StdListCons head tail induction . (nat-add below 1))))) 1000)
def underLambda : Nat = (nat-eliminate (lambda unrestricted k : Nat . Nat) 0
  (lambda unrestricted k : Nat . (lambda unrestricted below : Nat .
    ((lambda unrestricted y : Nat . (nat-add below y)) 1))) 1000)
def tooMany : Nat = (nat-eliminate (lambda unrestricted k : Nat . Nat) 0
  (lambda unrestricted k : Nat . (lambda unrestricted below : Nat . (nat-add below 1))) 0x200000)
""")
    assert steps_of(program, "counted") == (1000, 1000)      # one step an iteration, as before
    assert steps_of(program, "underLet")[0] == 1000
    assert steps_of(program, "underBranch")[0] == 1000
    assert steps_of(program, "underLambda") == (1000, 2000)  # and one for each application
    with pytest.raises(LimitExceeded, match="nat-eliminate runs 2,097,152 iterations"):
        program.value("tooMany")


def test_a_limit_met_in_the_library_points_at_the_plans_call(tmp_path):
    program = plan(tmp_path, "def hashed : Nat =\n  (dataBytesFNV1a64 (dataBytesZeros 2000000))\n")
    with pytest.raises(LimitExceeded) as caught:
        program.value("hashed")
    error = caught.value
    assert error.span.path.endswith("Lazy/Lazy.bob") and (error.span.line, error.span.column) == (8, 3)
    assert "nat-eliminate runs 2,000,000 iterations" in error.message
    assert "; met in the library at " in error.message and "Data/Bytes.bob:" in error.message
    assert error.hint.startswith("dataBytesFNV1a64 (in the library) runs past this limit")
    rendered = error.render()
    assert "(dataBytesFNV1a64 (dataBytesZeros 2000000))" in rendered.splitlines()[1]
