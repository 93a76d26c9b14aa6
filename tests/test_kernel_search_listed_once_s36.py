"""The kernel search walks each folder once a command (bobc.kernel_search.listed_once, opened by
bobc.cli around every command): a plan of n regions, each with its own source beside it, walked
its folder n times per caller (probe s36 scale finding 1: 2,000 regions spent 27 s in os.walk).
What the search finds is the same with and without the listing kept."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bobc import kernel_search
from bobc.cli import main
from bobc.kernel_search import SourceError, find_source, find_source_and_base, listed_once
from bobc.targets import SM86, SM90

REPO = Path(__file__).resolve().parents[1]


def kernel(path: Path, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f".kernel {name}\n.registers 8\n    EXIT\n")
    return path


@pytest.fixture
def walks(monkeypatch):
    """folder -> how many times os.walk started at it."""
    counted: dict[str, int] = {}
    real = os.walk

    def walk(top, *args, **kwargs):
        counted[os.fspath(top)] = counted.get(os.fspath(top), 0) + 1
        return real(top, *args, **kwargs)
    monkeypatch.setattr(kernel_search.os, "walk", walk)
    return counted


def _tree(root: Path) -> None:
    for i in range(6):
        kernel(root / "k" / f"s{i % 2}" / f"x{i}.sass", f"x{i}")
    kernel(root / "k" / "s0" / "x1.sm_90.sass", "x1")                 # a variant, in another folder than its base
    kernel(root / "k" / "s1" / "x2.sm_86.sass", "x2")
    kernel(root / "k" / ".hidden" / "x3.sass", "x3")                    # skipped
    kernel(root / "k" / "a" / "twice.sass", "twice")
    kernel(root / "k" / "b" / "twice.sass", "twice")                    # refused: two of one name
    kernel(root / "other" / "x0.sm_90.sass", "x0")


def _answers(root: Path):
    out = []
    for target in (SM86, SM90):
        for identity in [f"x{i}" for i in range(6)] + ["missing", "twice"]:
            try:
                out.append(find_source_and_base(identity, [root / "k", root / "other"], target))
            except SourceError as error:
                out.append(str(error))
    return out


def test_the_same_sources_are_found_with_the_listing_kept(tmp_path):
    _tree(tmp_path)
    fresh = _answers(tmp_path)
    with listed_once():
        kept = _answers(tmp_path)
    assert kept == fresh
    assert any(isinstance(a, str) and "2 sources named twice.sass" in a for a in kept)
    assert (tmp_path / "k" / "s0" / "x1.sm_90.sass", tmp_path / "k" / "s1" / "x1.sass") in kept


def test_each_folder_is_walked_once_while_the_listing_is_kept(tmp_path, walks):
    _tree(tmp_path)
    with listed_once():
        _answers(tmp_path)
    assert walks == {str(tmp_path / "k"): 1, str(tmp_path / "other"): 1}
    walks.clear()
    _answers(tmp_path)                                                  # outside: every search walks afresh
    assert walks[str(tmp_path / "k")] > 1


def test_outside_a_command_a_new_source_is_found(tmp_path):
    assert find_source("late", [tmp_path], SM90) is None
    made = kernel(tmp_path / "late.sass", "late")
    assert find_source("late", [tmp_path], SM90) == made
    with listed_once():
        assert find_source("late", [tmp_path], SM90) == made


def test_a_check_walks_the_plan_folder_once(tmp_path, walks, capsys):
    plan_root = tmp_path / "linear_regression"
    shutil.copytree(REPO / "examples" / "linear_regression", plan_root)
    code = main(["check", str(plan_root / "LinReg" / "Build" / "NativeHost.bob")])
    assert code == 0, capsys.readouterr().err
    # three regions, each looked up by several callers (encoder, certifier, footprints): one walk
    assert walks.get(str(plan_root), 0) == 1, walks
