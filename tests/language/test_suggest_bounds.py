"""The did-you-mean scan (bobc.language.suggest) is bounded and never blocks: a FIFO named
X.bob, a plan whose root is `/`, a big tree or a big file cannot hang `bobc check` over a
typo (probe-lang finding 3); its hints name what really happens when a module is shadowed,
and list a bounded number of modules (finding 9)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.language import load_program, suggest
from bobc.targets import SM86

COMPILER = Path(suggest.__file__).resolve().parents[2]       # the bobc under test


def bobc_check(plan, timeout=60):
    env = {**os.environ, "PYTHONPATH": str(COMPILER), "BOBC_CACHE_DIR": "off"}
    return subprocess.run([sys.executable, "-m", "bobc", "check", str(plan)], capture_output=True,
                          text=True, env=env, timeout=timeout)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_like_a_module_does_not_hang_a_typo(tmp_path):
    (tmp_path / "Q").mkdir()
    os.mkfifo(tmp_path / "Q" / "Pipe.bob")
    plan = tmp_path / "Q" / "Main.bob"
    plan.write_text("module Q.Main\ndef a = nosuchName\n", encoding="utf-8")
    done = bobc_check(plan)          # on a FIFO the old scan blocked in open() for ever
    assert done.returncode == 1 and "unknown name nosuchName" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_read_head_does_not_block_on_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "Pipe.bob")
    assert suggest.read_head(tmp_path / "Pipe.bob") == ""
    assert suggest.module_names([tmp_path]) == []


def test_a_filesystem_root_is_not_scanned(monkeypatch):
    def walk(*_):
        raise AssertionError("the scan walked the filesystem root")
    monkeypatch.setattr(suggest, "_walk", walk)
    assert suggest.module_files([Path("/")]) == []


def test_only_regular_files_with_module_names_count(tmp_path):
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "Real.bob").write_text("module A.Real\n", encoding="utf-8")
    (tmp_path / "A" / "Folder.bob").mkdir()
    (tmp_path / "A" / "Dangling.bob").symlink_to(tmp_path / "nowhere")
    (tmp_path / "A" / "not a module.bob").write_text("", encoding="utf-8")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "B.bob").write_text("", encoding="utf-8")
    assert suggest.module_names([tmp_path]) == ["A.Real"]


def test_the_walk_stops_at_its_bounds(tmp_path, monkeypatch):
    for index in range(30):
        folder = tmp_path / f"F{index:02}"
        folder.mkdir()
        (folder / "M.bob").write_text("def target : Nat = 1\n", encoding="utf-8")
    assert len(suggest.module_names([tmp_path])) == 30
    monkeypatch.setattr(suggest, "MAX_FOLDERS", 5)         # the root and 4 below it
    assert suggest.module_names([tmp_path]) == [f"F{i:02}.M" for i in range(4)]
    monkeypatch.setattr(suggest, "MAX_FOLDERS", 100)
    monkeypatch.setattr(suggest, "MAX_FILES", 3)
    assert len(suggest.module_names([tmp_path])) == 3
    monkeypatch.setattr(suggest, "MAX_FILES", 100)
    monkeypatch.setattr(suggest, "SECONDS", 0.0)
    assert suggest.module_names([tmp_path]) == []


def test_a_big_file_is_read_only_in_part(tmp_path, monkeypatch):
    (tmp_path / "Big.bob").write_text("module Big\n" + "-- filler\n" * 1000 + "def late : Nat = 1\n",
                                      encoding="utf-8")
    assert suggest.modules_declaring("late", [tmp_path]) == [("Big", tmp_path / "Big.bob")]
    monkeypatch.setattr(suggest, "MAX_FILE_BYTES", 1000)
    assert suggest.modules_declaring("late", [tmp_path]) == []


def test_a_shadowed_module_is_named_not_imported_again(tmp_path):
    (tmp_path / "Std").mkdir()
    (tmp_path / "Std" / "List.bob").write_text("module Std.List\ndef other : Nat = 1\n",
                                               encoding="utf-8")
    (tmp_path / "P").mkdir()
    plan = tmp_path / "P" / "Main.bob"
    plan.write_text("module P.Main\nimport Std.List\ndef xs : Type 0 = (family StdList Nat)\n",
                    encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(plan, target=SM86)
    hint = caught.value.hint
    assert "would bring it" not in hint
    assert f"the module Std.List that was loaded is {tmp_path / 'Std' / 'List.bob'}" in hint
    assert "shadows it" in hint and str(Path("specs") / "Std" / "List.bob") in hint


def test_the_modules_that_would_bring_a_name_are_few(tmp_path):
    for index in range(6):
        (tmp_path / "Lib").mkdir(exist_ok=True)
        (tmp_path / "Lib" / f"M{index}.bob").write_text(f"module Lib.M{index}\ndef shared : Nat = 1\n",
                                                        encoding="utf-8")
    plan = tmp_path / "Top.bob"
    plan.write_text("module Top\ndef x : Nat = shared\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(plan, target=SM86)
    assert "shared is defined in Lib.M0, Lib.M1 or Lib.M2 (and 3 more): `import Lib.M0` would " \
        "bring it" in caught.value.hint
