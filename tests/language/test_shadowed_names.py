"""Two variables of one name print apart in a message (probe s29 types finding 4): a mismatch
between the A a lambda binds and the A an inner lambda binds over it said "should have type A
but has type A".  The innermost keeps its name; the one it shadows prints as A@1."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86
from bobc.language.quote import shown_names


def refusal(tmp_path, text):
    path = tmp_path / "Shadow.bob"
    path.write_text("module Shadow\n\n" + text + "\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    return caught.value.message


def test_a_shadowed_variable_prints_apart_from_the_one_shadowing_it(tmp_path):
    message = refusal(tmp_path, "def f : (pi unrestricted A : Type 0 . (pi unrestricted x : A . "
                                "(pi unrestricted A : Type 0 . A))) = (lambda unrestricted A : "
                                "Type 0 . (lambda unrestricted x : A . (lambda unrestricted A : "
                                "Type 0 . x)))")
    assert message == ("in f: type mismatch: this expression should have type\n    A\n"
                       "  but has type\n    A@1")


def test_the_names_of_one_context_are_numbered_from_the_innermost():
    assert shown_names(["A", "x", "A", "B", "A"]) == ["A@2", "x", "A@1", "B", "A"]
    assert shown_names(["A", "B"]) == ["A", "B"]
