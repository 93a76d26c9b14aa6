"""A type whose universe is too small for what it holds gets a hint saying the universe rule
and what to write (probe s46 plantexts2 finding 6).  docs/language.md ("Expressions"): `Type n :
Type n+1`; a pi over `Type 0` is in `Type 1`.  Before, `def T : Type 0 = Type 0` was a bare
"type mismatch ... should have type Type 0 but has type Type 1" with no hint, though the fix is
one digit.  Places counted by hand: "def T : Type 0 = " is 17 characters, so the value is at
column 18 of line 2; its declared type at column 9."""
import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86


@pytest.mark.parametrize("value, needed", [
    ("Type 0", 1),
    ("(pi unrestricted A : Type 0 . A)", 1),
    ("(pi unrestricted A : Type 1 . Nat)", 2),
])
def test_a_type_too_large_for_its_declared_universe_is_told_the_level_s46(tmp_path, value, needed):
    path = tmp_path / "U.bob"
    path.write_text(f"module U\ndef T : Type 0 = {value}\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    error = caught.value
    assert (error.span.line, error.span.column) == (2, 18)
    assert f"should have type\n    Type 0\n  but has type\n    Type {needed}" in error.message
    assert error.hint is not None and "Type n : Type n+1" in error.hint, error.hint
    assert f"def T : Type {needed} =" in error.hint, error.hint


def test_a_value_of_another_kind_gets_no_universe_hint_s46(tmp_path):
    path = tmp_path / "U.bob"
    path.write_text("module U\ndef n : Nat = Type 0\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    assert "Type n : Type n+1" not in (caught.value.hint or "")
