"""A field type that computes with `eliminate` (probe s39 typerules findings 1 and 2).

The strict positivity walk (resolve._occurrence) followed every slot of a term, an
eliminator's `induction` too, which points back at the eliminator: any `eliminate` in a field
type ended in a RecursionError traceback.  It also never looked inside a branch's body, so a
family used to the left of an arrow there escaped the check: a family isomorphic to
`Bad -> Nat` type checked, and with it a definition whose evaluation never ends (the language
promises that every well-typed plan evaluates to a value, docs/language.md "Totality")."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86

UNIT = """family Unit : Type 0
constructor MkUnit
end-family
"""


def _program(tmp_path, text):
    path = tmp_path / "FieldElim.bob"
    path.write_text("module FieldElim\n\n" + UNIT + text, encoding="utf-8")
    return path


def test_an_eliminate_in_a_field_type_is_checked_and_evaluates(tmp_path):
    # the field's type is Nat, computed by eliminating the unit value
    path = _program(tmp_path, """
family Box : Type 0
constructor MkBox
field unrestricted f : (eliminate Unit (lambda unrestricted u : (family Unit) . Type 0) (record Unit) (branch MkUnit . Nat))
end-family

def b : (family Box) = (record Box (f = 3))
def inside : Nat = (eliminate Box (lambda unrestricted x : (family Box) . Nat) b (branch MkBox f . f))
""")
    program = load_program(path, target=SM86)
    program.check()
    assert program.value("inside").value == 3


def test_a_negative_use_inside_a_branch_of_a_field_type_is_refused(tmp_path):
    # f's type computes to (pi x : Bad . Nat): Bad is not strictly positive, and selfApp omega
    # would run forever
    path = _program(tmp_path, """
family Bad : Type 0
constructor C
field unrestricted f : (eliminate Unit (lambda unrestricted u : (family Unit) . Type 0) (record Unit) (branch MkUnit . (pi unrestricted x : (family Bad) . Nat)))
end-family

def selfApp : (pi unrestricted b : (family Bad) . Nat) =
  (lambda unrestricted b : (family Bad) .
    (eliminate Bad (lambda unrestricted q : (family Bad) . Nat) b (branch C f . (f b))))

def omega : (family Bad) = (constructor Bad C selfApp)

def loop : Nat = (selfApp omega)
""")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    error = caught.value
    assert "family Bad is not strictly positive: field f of C" in error.message
    assert (error.span.line, error.span.column) == (9, 20)


def test_a_nested_use_inside_a_branch_of_a_field_type_is_refused(tmp_path):
    path = _program(tmp_path, """
family Tree : Type 0
constructor Node
field unrestricted kids : (eliminate Unit (lambda unrestricted u : (family Unit) . Type 0) (record Unit) (branch MkUnit . (pi unrestricted n : Nat . (family Tree))))
end-family
""")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    assert "field kids of Node uses Tree inside its type" in caught.value.message
