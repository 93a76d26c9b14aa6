"""A universe with a long level is cut in a message like a long natural (probe s39 typerules
finding 6): docs/language.md says every type an error prints is cut to about 300 characters,
long naturals by their length; `Type <5,001 digits>` printed whole."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86

LEVEL = "1" + "0" * 5000


def _refusal(tmp_path, text):
    path = tmp_path / "Big.bob"
    path.write_text("module Big\n\n" + text, encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    return caught.value.message


def test_a_long_universe_in_a_mismatch_is_cut(tmp_path):
    message = _refusal(tmp_path, f"def x = Type {LEVEL}\ndef y : Type 0 = x\n")
    assert "(5,001 digits)" in message          # the type of Type 10^5000: Type 10^5000 + 1, 5,001 digits
    assert max(len(line) for line in message.splitlines()) < 400


def test_a_long_universe_of_a_field_is_cut(tmp_path):
    message = _refusal(tmp_path, f"family F : Type 0\nconstructor C\nfield unrestricted t : "
                                 f"Type {LEVEL}\nend-family\n")
    assert "(5,001 digits)" in message
    assert len(message) < 400


def test_eval_prints_a_long_universe_whole(tmp_path):
    path = tmp_path / "Big.bob"
    path.write_text(f"module Big\n\ndef x = Type {LEVEL}\n", encoding="utf-8")
    from bobc.language.quote import show_value
    assert show_value(load_program(path, target=SM86).value("x"), width=None) == f"Type {LEVEL}"
