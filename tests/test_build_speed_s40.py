"""Work bobc did that nothing used, found timing `bobc check` and `bobc build` (probe s40 buildspeed):
each test counts the work, never the time; the answers stay the same, only the waste goes."""
from __future__ import annotations


from bobc import cache, stored


class _Pickled:
    """A value that notes each time it is pickled."""
    count = 0

    def __reduce__(self):
        _Pickled.count += 1
        return (_Pickled, ())


def test_nothing_is_pickled_for_a_cache_that_is_off(monkeypatch, tmp_path):
    """probe s40 buildspeed finding 1: with BOBC_CACHE_DIR=off (docs/cache.md: caching off, nothing
    stored) cache.store and stored's entries still pickled every value -- each parsed module and
    assembled kernel of a cold check -- and threw the bytes away.  Off, nothing is pickled; on,
    the value is stored and loads back as before."""
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    _Pickled.count = 0
    cache.store("parsed", "k" * 64, _Pickled())
    stored._keep("plans", "k" * 64, None, _Pickled())     # the program is read only when stored
    assert _Pickled.count == 0, "a cache that is off pickles nothing"

    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    cache.store("parsed", "k" * 64, _Pickled())
    assert _Pickled.count == 1
    assert isinstance(cache.load("parsed", "k" * 64, _Pickled), _Pickled)


def _evaluator_plan(tmp_path):
    from bobc.language import load_program
    from bobc.targets import SM86

    folder = tmp_path / "Speed"
    folder.mkdir(exist_ok=True)
    (folder / "Eval.bob").write_text(
        "module Speed.Eval\n\nimport Std.Natural\n\n"
        "def picks = (lambda unrestricted n : Nat . (nat-eliminate (lambda unrestricted current : Nat . Nat) 0\n"
        "  (lambda unrestricted k : Nat . (lambda unrestricted total : Nat .\n"
        "    (nat-add total (naturalSelect (nat-modulo k 2) 1 10)))) n))\n"
        "def answer : Nat = (picks 100)\n")
    return load_program(folder / "Eval.bob", target=SM86)


def test_the_evaluator_makes_no_throwaway_objects_for_a_curried_call_or_a_select(monkeypatch, tmp_path):
    """probe s40 buildspeed finding 2: Coppelius's seed host evaluates about 700,000 applications
    (naturalSelect alone 250,000): each argument of a call but the last went through apply and
    the lambda's own ev only to make the closure for the next argument, and each select (a
    nat-eliminate whose step ignores the value below) made a new induction term for a value never
    read.  Now a call's arguments but the last bind directly and the induction term is made once
    with its nat-eliminate.  The value is the sum by hand: 50 odd k give 1, 50 even give 10 (550),
    and the steps taken are the same as before (counted with the change stashed: 451)."""
    from bobc.language import core

    program = _evaluator_plan(tmp_path)
    made, applied = [], []
    real_init, real_apply = core._NatInduction.__init__, core.apply
    monkeypatch.setattr(core._NatInduction, "__init__", lambda self, term: made.append(term) or real_init(self, term))
    monkeypatch.setattr(core, "apply", lambda *a: applied.append(a) or real_apply(*a))
    core.reset_fuel(100_000)
    try:
        assert program.value("answer").value == 550
        steps = 100_000 - core._fuel[0]
    finally:
        core.reset_fuel()
    assert made == [], "no induction term is made while evaluating"
    # (picks 100) and naturalSelect's three arguments, 100 times: one apply each, for the last
    assert len(applied) <= 1 + 100, len(applied)
    assert steps == 451
