"""A built-in form given an argument too many is refused as such, at that argument (s39
leftovers4 finding 3): `(nat-add 1 2 3)` was refused as "(nat-add 1 2) is not a function: its
type is Nat", at the whole form -- the user wrote one argument too many for nat-add, which takes
2.  Every primitive (docs/language.md, "Primitives": its result is a Nat or Bytes, never a
function) now says how many it takes; a constructor's argument too many and a function's are
named at that argument too (the keyword forms -- succ, the, equal, refl, nat-eliminate,
compiler-native-encode -- were refused at the extra token already)."""
from __future__ import annotations

import pytest

from bobc.cli import main
from bobc.language.primitives import PRIMITIVES

LITERAL = {"Nat": "7", "Bytes": 'b"ab"'}


def check(tmp_path, monkeypatch, capsys, body: str) -> tuple[int, str, str]:
    (tmp_path / "M").mkdir(exist_ok=True)
    text = f"module M.Arity\n\nfamily Two : Type 0\nconstructor TwoValue\nfield unrestricted twoA : Nat\nend-family\n\n" \
           f"def x = {body}\n"
    (tmp_path / "M/Arity.bob").write_text(text)
    monkeypatch.chdir(tmp_path)
    code = main(["check", "M/Arity.bob"])
    return code, capsys.readouterr().err, text


def place(text: str, written: str) -> str:
    at = text.rindex(written)
    return f"{text.count(chr(10), 0, at) + 1}:{at - text.rfind(chr(10), 0, at)}"


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_a_primitive_given_one_argument_too_many_says_how_many_it_takes(tmp_path, monkeypatch, capsys, name):
    primitive = PRIMITIVES[name]
    arguments = [LITERAL[kind] for kind in primitive.argument_kinds]
    extra = "12345"
    code, err, text = check(tmp_path, monkeypatch, capsys, f"({name} {' '.join(arguments)} {extra})")
    assert code == 1
    arity = len(arguments)
    assert err.startswith(f"bobc check: M/Arity.bob:{place(text, extra)}: error: {name} takes {arity} "
                          f"argument{'' if arity == 1 else 's'}, given {arity + 1}\n"), err
    assert "is not a function" not in err


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_a_primitive_given_its_arguments_is_well_typed(tmp_path, monkeypatch, capsys, name):
    arguments = [LITERAL[kind] for kind in PRIMITIVES[name].argument_kinds]
    code, err, _ = check(tmp_path, monkeypatch, capsys, f"({name} {' '.join(arguments)})")
    assert code == 0, err


def test_a_constructor_given_an_argument_too_many_is_refused_at_it(tmp_path, monkeypatch, capsys):
    code, err, text = check(tmp_path, monkeypatch, capsys, "(constructor Two TwoValue 1 23456)")
    assert code == 1
    assert err.startswith(f"bobc check: M/Arity.bob:{place(text, '23456')}: error: constructor TwoValue of Two takes "
                          "0 parameter(s) and 1 field(s), given 2 argument(s)\n"), err


def test_a_function_given_an_argument_too_many_is_refused_at_it(tmp_path, monkeypatch, capsys):
    code, err, text = check(tmp_path, monkeypatch, capsys, "((nat-add 1) 2 34567)")
    assert code == 1
    assert err.startswith(f"bobc check: M/Arity.bob:{place(text, '34567')}: error: in x: too many arguments: after "
                          "1, the result has type Nat, not a function type\n"), err
