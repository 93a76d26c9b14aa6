"""A long unknown name is refused at once, and shown shortened (probe s31 limits finding 2): the
did-you-mean weighs a name with a bounded amount of work whatever its length (a 30,000-character
unknown name once ran for minutes: edit distance and difflib's ratio are quadratic in it), and
`bobc eval NAME` shows a long NAME as its beginning and its length."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.language import load_program, suggest
from bobc.targets import SM86


@pytest.fixture
def cells(monkeypatch):
    """The edit-distance cells computed, counted; difflib's ratio refused past 1,000 characters."""
    counted = []
    distance = suggest._distance

    def counting(a, b, limit):
        result, used = distance(a, b, limit)
        counted.append(used)
        return result, used

    class Matcher:
        def __init__(self, junk, a, b):
            assert len(a) <= 1_000 and len(b) <= 1_000, "difflib's ratio weighed a long name"
            self.real = suggest.difflib.SequenceMatcher(junk, a, b)

        def __getattr__(self, name):
            return getattr(self.real, name)

    class Difflib:
        SequenceMatcher = Matcher

    monkeypatch.setattr(suggest, "_distance", counting)
    monkeypatch.setattr(suggest, "difflib", Difflib)
    return counted


@pytest.mark.parametrize("length", [30_000, 100_000])
def test_a_long_name_is_weighed_with_bounded_work(cells, length):
    name = "a" * length + "x"
    candidates = ["a" * length, "a" * (length + 2), "b" * length, "nat-add", "Nat", "a" * 10]
    suggest.closest(name, candidates)
    assert sum(cells) <= suggest.MAX_CELLS


def test_a_long_name_one_edit_away_is_still_suggested(cells):
    name = "a" * 3_000 + "x"
    assert suggest.closest(name, ["b" * 3_000, "a" * 3_000, "nat-add"]) == ["a" * 3_000]
    # for each of the two names of about its length, a band of MAX_EDITS either side of the
    # diagonal (the table is 3,001 x 3,000 = 9 M cells)
    assert 0 < sum(cells) <= 2 * 3_001 * (2 * suggest.MAX_EDITS + 1)


def test_the_band_gives_the_same_distance_as_the_whole_table():
    def whole(a, b):
        previous = list(range(len(b) + 1))
        for i, x in enumerate(a, 1):
            current = [i]
            for j, y in enumerate(b, 1):
                current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
            previous = current
        return previous[-1]

    words = ["", "a", "ab", "ba", "abc", "kitten", "sitting", "naturalAdd", "naturalAnd", "nat-add",
             "flaw", "lawn", "aaaa", "aaaaaaaab", "baaaaaaaa"]
    for a in words:
        for b in words:
            for limit in (1, 2, 3, 5):
                expected = whole(a, b)
                assert suggest._distance(a, b, limit)[0] == (expected if expected <= limit
                                                             else limit + 1), (a, b, limit)


def test_eval_of_a_long_unknown_name_shows_it_shortened(tmp_path, monkeypatch):
    monkeypatch.setenv("BOBC_SPECS", str(tmp_path / "no-specs"))
    plan = tmp_path / "Long.bob"
    plan.write_text(f"module Long\ndef {'a' * 3_000} : Nat = 1\n", encoding="utf-8")
    program = load_program(plan, target=SM86)
    with pytest.raises(BobcError) as caught:
        program.definition("a" * 3_000 + "x")
    rendered = caught.value.render()
    assert f"no definition {'a' * 60}...(3,001 characters) in Long or its imports" in rendered
    assert f"did you mean {'a' * 60}...(3,000 characters)?" in rendered
    assert max(len(line) for line in rendered.splitlines()) < 200


def test_shown_name_keeps_a_short_name_whole():
    assert suggest.shown_name("a" * 60) == "a" * 60
    assert suggest.shown_name("b" * 61) == "b" * 60 + "...(61 characters)"


def test_check_of_a_long_unknown_name_shows_it_shortened(tmp_path, monkeypatch):
    """The type checker's "unknown name" (Resolver._unknown) shortens it as eval does."""
    monkeypatch.setenv("BOBC_SPECS", str(tmp_path / "no-specs"))
    (tmp_path / "Long.bob").write_text(f"module Long\ndef x : Nat = {'q' * 5_000}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)         # the message's location is the plan as named: its length not TMPDIR's
    with pytest.raises(BobcError) as caught:
        load_program(Path("Long.bob"), target=SM86)
    rendered = caught.value.render()
    assert f"unknown name {'q' * 60}...(5,000 characters)" in rendered
    assert "Long.bob:2:" in rendered and str(tmp_path) not in rendered
    assert max(len(line) for line in rendered.splitlines()) < 200
