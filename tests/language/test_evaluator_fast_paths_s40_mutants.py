"""The evaluator's fast paths (s40 buildspeed: a curried call's arguments but the last bound
inline, a select's one iteration) keep the step limit exact (probe s40 mutants5).

docs/limits.md: evaluation is refused when it takes more steps than the limit.  So an evaluation
that takes S steps passes under a limit of S and is refused under S - 1, whichever path takes its
last step.  tests/test_build_speed_s40.py counts the steps of a large evaluation, but no test put
the limit exactly at the count, so a fast path refusing at the limit itself (`<= 0`) passed.
Each term here ends in a fast path: a function applied to one argument and returning a lambda
(bound inline), and a nat-eliminate whose step never reads the value below (one iteration, k = 4
the predecessor of 5: the value by hand).
"""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import core, load_program
from bobc.targets import SM86

TERMS = {
    "curried": ("(pi unrestricted b : Nat . Nat)", "(g 7)", None),
    "select": ("Nat", "(nat-eliminate (lambda unrestricted c : Nat . Nat) 0 (lambda unrestricted k : Nat . "
                      "(lambda unrestricted ignored : Nat . k)) 5)", 4),
}


def _value(tmp_path, name, limit):
    kind, term, _ = TERMS[name]
    folder = tmp_path / f"L{limit}"
    folder.mkdir()
    (folder / "Fast.bob").write_text(
        "module Fast\n\ndef g = (lambda unrestricted a : Nat . (lambda unrestricted b : Nat . a))\n"
        f"def answer : {kind} = {term}\n")
    program = load_program(folder / "Fast.bob", target=SM86)
    core.reset_fuel(limit)
    try:
        value = program.value("answer")
        return value, limit - core._fuel[0]
    finally:
        core.reset_fuel()


@pytest.mark.parametrize("name", sorted(TERMS))
def test_an_evaluation_passes_at_exactly_its_steps_and_is_refused_one_below(tmp_path, name):
    value, steps = _value(tmp_path, name, 10_000)
    assert steps >= 1
    if TERMS[name][2] is not None:
        assert value.value == TERMS[name][2]
    again, taken = _value(tmp_path, name, steps)
    assert taken == steps
    with pytest.raises(BobcError, match="evaluation steps"):
        _value(tmp_path, name, steps - 1) if steps > 1 else _value(tmp_path, name, 0)
