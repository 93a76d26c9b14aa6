"""A native artifact (`bobc build --entry DEF` of a Bytes definition) built before is not
evaluated again while nothing it was made from changed (bobc/stored.py `artifact`,
bobc/native/build.py): the same bytes, no module loaded; an edited module, another
interpreter (the runtime's native sources), a damaged entry or BOBC_CACHE_DIR=off each
evaluate it again."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc import cache
from bobc.native import build as native_build
from bobc.targets import target_named

from native_helpers import PLANS

TARGET = target_named("sm_86")


@pytest.fixture
def plan(tmp_path) -> Path:
    shutil.copytree(PLANS / "Native", tmp_path / "plans" / "Native")
    return tmp_path / "plans" / "Native" / "Commands.bob"


def artifact(plan: Path) -> bytes:
    return native_build.native_artifact(plan, TARGET, [], "arithmeticHost")


def test_a_second_build_writes_the_same_bytes_and_loads_nothing(cache_dir, loads, plan):
    first = artifact(plan)
    assert first[:4] == b"\x7fELF" and len(loads) == 1
    assert artifact(plan) == first and len(loads) == 1
    assert native_build.native_artifact(plan, TARGET, [], "arithmeticArtifact")[:4] == b"\x7fELF"
    assert len(loads) == 2                      # another entry of the same program: its own entry


def test_an_edited_module_is_evaluated_again(cache_dir, loads, plan):
    first = artifact(plan)
    plan.write_text(plan.read_text() + "\n-- an edit\n")
    assert artifact(plan) == first and len(loads) == 2      # a comment changes no byte, but it is read
    assert artifact(plan) == first and len(loads) == 2


def test_another_interpreter_is_a_miss(cache_dir, loads, plan, monkeypatch):
    first = artifact(plan)
    from bobc.native import interpreter

    today = interpreter.interpreter_bytes()
    changed = today[:-1] + bytes([today[-1] ^ 0xFF])        # as if the runtime's sources had changed
    monkeypatch.setattr(interpreter, "interpreter_bytes", lambda: changed)
    rebuilt = artifact(plan)
    # a host starts with the interpreter and the build's facts as its .bobc.version section
    # (bobc.native.writer.host_interpreter: the section table, which ends the executable, rewritten)
    from bobc.native.writer import host_interpreter

    assert len(loads) == 2 and rebuilt != first and rebuilt.startswith(host_interpreter(TARGET.name))
    assert not first.startswith(host_interpreter(TARGET.name))


def test_a_damaged_entry_is_a_miss_and_cache_off_always_evaluates(cache_dir, loads, plan, monkeypatch):
    first = artifact(plan)
    entries = list((cache_dir / "artifacts").iterdir())
    assert len(entries) == 1
    entries[0].write_bytes(b"not a pickle")
    assert artifact(plan) == first and len(loads) == 2
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    assert cache.folder() is None
    assert artifact(plan) == first and artifact(plan) == first and len(loads) == 4


def test_another_bobc_commit_is_a_miss(cache_dir, loads, plan, monkeypatch):
    """The host's .bobc.version section names the commit that built it (probe s32 leftovers finding
    1): an artifact kept by another commit of bobc is not written again as this one's."""
    first = artifact(plan)
    from bobc.host import version

    monkeypatch.setattr(version, "source_commit", lambda: "0123456789abcdef0123456789abcdef01234567")
    rebuilt = artifact(plan)
    assert len(loads) == 2 and rebuilt != first
    assert b"bobc commit: 0123456789abcdef0123456789abcdef01234567\n" in rebuilt
