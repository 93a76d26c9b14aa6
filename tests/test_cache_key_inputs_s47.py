"""Each input of a cache key, changed alone, is a miss: the stored result is never handed to a lookup
that differs in it (session 47 leftovers9: session 46 mutants12 left the cache keys unmutated).  The
oracle is the cache's promise (docs/cache.md: a changed input is a different key; stored.py and
recall.py list what each result depends on): with one input changed, the lookup finds nothing, as it
would with the cache off, while the unchanged lookup finds the entry (so the test reaches the store).
Each test below was seen to fail with that input dropped from its key (the mutants in
/work/notes/s47/probe-leftovers9.md)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from bobc import cache, recall, stored
from bobc.language.modules import parse_stored


def _program(tmp_path, **changes):
    module_path = changes.pop("path", str(tmp_path / "A" / "M.bob"))
    source = changes.pop("source", "module A.M\ndef x : Nat = 1\n")
    name = changes.pop("module", "A.M")
    fields = dict(bobc_default_intrinsics=True, target=SimpleNamespace(name="sm_86"), plan_name="A.M",
                  modules={name: SimpleNamespace(path=module_path, source=source)},
                  search_path=[str(tmp_path)], bobc_sources_read={})
    fields.update(changes)
    return SimpleNamespace(**fields)


@pytest.mark.parametrize("change", [
    {"target": SimpleNamespace(name="sm_90")}, {"plan_name": "A.N"}, {"module": "A.K"},
    {"path": "/elsewhere/A/M.bob"}, {"source": "module A.M\ndef x : Nat = 2\n"},
    {"search_path": ["/elsewhere"]}], ids=["target", "plan", "module-name", "module-path", "module-text",
                                           "search-path"])
def test_a_verdict_is_not_taken_for_a_program_differing_in_one_input_s47(cache_dir, tmp_path, change):
    stored.keep_verdict(_program(tmp_path))
    assert stored.verdict_holds(_program(tmp_path))
    assert not stored.verdict_holds(_program(tmp_path, **change))


def test_a_verdict_of_another_bobc_is_not_taken_s47(cache_dir, tmp_path, monkeypatch):
    stored.keep_verdict(_program(tmp_path))
    monkeypatch.setattr(cache, "_PACKAGE_IDENTITY", b"another bobc's code and tables")
    assert not stored.verdict_holds(_program(tmp_path))


def _kept_plan(program, entry):
    return stored._kept("plans", stored._plan_key(program, entry), 1)


def test_a_plan_is_not_taken_for_another_entry_or_program_s47(cache_dir, tmp_path):
    program = _program(tmp_path, bobc_verdict="verdict one")
    stored._keep("plans", stored._plan_key(program, "main"), program, "the plan of main")
    assert _kept_plan(program, "main") == ("the plan of main",)
    assert _kept_plan(program, "other") is None
    assert _kept_plan(_program(tmp_path, bobc_verdict="verdict two"), "main") is None


def test_a_native_artifact_is_not_taken_for_another_entry_or_program_s47(cache_dir, tmp_path):
    program = _program(tmp_path, bobc_verdict="verdict one")
    stored.keep_artifact(program, "main", b"INTERPRETER" + b"written by main")
    interpreter = lambda: b"INTERPRETER"     # noqa: E731
    assert stored.artifact("verdict one", "main", interpreter) == (b"INTERPRETERwritten by main", None, None)
    assert stored.artifact("verdict one", "other", interpreter) is None
    assert stored.artifact("verdict two", "main", interpreter) is None


OUTCOME = {"plan": "A.M", "modules": 1, "families": 0, "definitions": 1, "entry": "main", "certified": False,
           "warnings": []}


def test_a_check_outcome_is_not_taken_for_another_entry_or_program_s47(cache_dir, tmp_path):
    program = SimpleNamespace(bobc_verdict="verdict one", search_path=[tmp_path])
    recall.keep_outcome(program, "main", OUTCOME, [])
    target = SimpleNamespace(name="sm_86")
    assert recall.outcome(program, "main", target) == OUTCOME
    assert recall.outcome(program, "other", target) is None
    assert recall.outcome(SimpleNamespace(bobc_verdict="verdict two", search_path=[tmp_path]), "main", target) is None


def test_a_parsed_tree_names_its_own_file_s47(cache_dir, tmp_path):
    """The same bytes at two paths: each tree's spans name the file it was read from (a type error
    in the second is reported in the second)."""
    text = b"module A.M\ndef x : Nat = 1\n"
    first, second = tmp_path / "one" / "A" / "M.bob", tmp_path / "two" / "A" / "M.bob"
    for path in (first, second):
        path.parent.mkdir(parents=True)
        path.write_bytes(text)
    assert parse_stored(first).declarations[0].span.path == str(first)
    assert parse_stored(second).declarations[0].span.path == str(second)


def test_an_edited_module_is_parsed_again_s47(cache_dir, tmp_path):
    path = tmp_path / "A" / "M.bob"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"module A.M\ndef x : Nat = 1\n")
    assert [d.name for d in parse_stored(path).declarations] == ["x"]
    path.write_bytes(b"module A.M\ndef y : Nat = 1\n")
    assert [d.name for d in parse_stored(path).declarations] == ["y"]


KERNEL_TEXT = ".kernel k\n    S2R R0, SR_TID.X\n    EXIT\n"


def _fresh(path, target, launched):
    from bobc.sass import assemble_kernel
    made = assemble_kernel(path, target, launched=launched)
    return made.code, [i.span.path if i.span else None for i in made.instructions]


def _cached(path, target, launched):
    from bobc import kernel_cache
    made = kernel_cache.assemble_kernel(path, target, launched=launched)
    return made.code, [i.span.path if i.span else None for i in made.instructions]


def test_a_stored_kernel_is_the_assemblers_for_each_input_s47(cache_dir, tmp_path):
    """As written then launched (sm_90's launch prologue, ACQBULK), then for sm_86, an edit, the same
    bytes at another path: each the assembler's own output (code, and the file its instructions'
    places name)."""
    from bobc.targets import target_named
    target = target_named("sm_90")
    first, second = tmp_path / "one" / "k.sass", tmp_path / "two" / "k.sass"
    for path in (first, second):
        path.parent.mkdir(parents=True)
        path.write_text(KERNEL_TEXT)
    assert _cached(first, target, False) == _fresh(first, target, False)
    assert _cached(first, target, True) == _fresh(first, target, True)
    other = target_named("sm_86")
    assert _cached(first, other, True) == _fresh(first, other, True)
    assert _cached(second, target, True) == _fresh(second, target, True)
    first.write_text(KERNEL_TEXT.replace("SR_TID.X", "SR_TID.Y"))
    assert _cached(first, target, True) == _fresh(first, target, True)
