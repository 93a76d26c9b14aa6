"""The printer's `app` for a bound variable named like a form's head, looked up at its own binder
(probe s40 mutants5).

tests/language/test_roundtrip_properties_s40.py binds the form-named variable innermost (de
Bruijn index 0), so a printer looking the name up at the wrong end of its scope passed.  Here
`succ` is bound outside `f` (index 1 where it is applied): the grammar (grammar.lark, rule
`form`) reads `(succ 3)` as the successor form, so the application must print as `(app succ 3)`,
and `f`, bound innermost and no form's head, as `(f 3)`.
"""
from __future__ import annotations

from bobc.language.check import show_value_type

from .test_roundtrip_properties_s40 import files  # noqa: F401

TYPE = ("(pi 0 succ : (pi unrestricted a : Nat . Type 0) . (pi 0 f : (pi unrestricted a : Nat . Type 0) . "
        "(pi unrestricted x : (app succ 3) . (pi unrestricted y : (f 3) . Nat))))")


def test_a_form_named_variable_bound_further_out_prints_with_app(files):  # noqa: F811
    program = files.program(f"def T : Type 1 = {TYPE}\n")
    printed = program.deep(show_value_type, program.value("T"))
    assert "(app succ 3)" in printed and "(f 3)" in printed and "(app f 3)" not in printed
    again = files.program(f"def T : Type 1 = {TYPE}\ndef printed : Type 1 = {printed}\n"
                          f"def same : (equal (Type 1) T printed) = (refl (Type 1) T)\n")
    again.check()
