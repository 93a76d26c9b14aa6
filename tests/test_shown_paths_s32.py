"""Every source file a message places an error at is shown one way: relative to the working
folder when it lies under it, else absolute (errors.shown_path).  The plan module was shown as
typed (LinReg/Build/NativeHost.bob:...) but the modules it imports and the kernel sources it
names absolute (/tmp/.../LinReg/Model.bob:11:42), because they are found under the plan's
resolved root (probe s32 paths finding 1).  Only the showing changed: a passed check keeps its
warnings with their files as stored, so a stored outcome is the same from any folder and is
shown in the folder it is recalled from."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_a_path_under_the_working_folder_is_shown_relative_and_any_other_absolute(tmp_path, monkeypatch):
    from bobc.errors import Span, shown_path

    (tmp_path / "here" / "A").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "here")
    assert shown_path(tmp_path / "here" / "A" / "B.bob") == "A/B.bob"
    assert shown_path("A/B.bob") == "A/B.bob"
    assert shown_path("./A/../A/B.bob") == "A/B.bob"
    assert shown_path(tmp_path / "there" / "B.bob") == str(tmp_path / "there" / "B.bob")
    assert shown_path("../there/B.bob") == str(tmp_path / "there" / "B.bob")
    assert shown_path(str(tmp_path / "hereafter" / "B.bob")) == str(tmp_path / "hereafter" / "B.bob")
    span = Span(str(tmp_path / "here" / "A" / "B.bob"), 3, 7)
    assert str(span) == "A/B.bob:3:7"
    assert span.location(shown=False) == f"{tmp_path}/here/A/B.bob:3:7"       # as stored, kept as it was


def test_a_stored_warning_is_shown_in_the_folder_it_is_printed_in(tmp_path, monkeypatch):
    from bobc.language.comments import shown_warning

    monkeypatch.chdir(tmp_path)
    stored = f"{tmp_path}/A/B.bob:5:8: warning: A.B imports C twice (first at line 4)\n  import C\nhint: h"
    assert shown_warning(stored) == "A/B.bob:5:8: warning: A.B imports C twice (first at line 4)\n  import C\nhint: h"
    assert shown_warning("not a warning") == "not a warning"


def _linreg(tmp_path) -> Path:
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    return tmp_path / "LinReg"


def _bobc(*words, cwd, cache="off"):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, words)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO / "compiler"),
                                        "BOBC_CACHE_DIR": str(cache)})


def _break(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize("where, broken, old, new", [
    ("LinReg/Model.bob:11:42", "Model.bob", "def linRegSamples : Nat = 64",
     "def linRegSamples : Nat = (naturalAdd 64 junk)"),
    ("LinReg/kernels/linreg-sgd.sass:4:11", "kernels/linreg-sgd.sass", "//@ block 32", "//@ block 0"),
])
def test_an_imported_module_and_a_kernel_source_are_shown_as_the_plan_module_is(tmp_path, where, broken, old, new):
    root = _linreg(tmp_path)
    _break(root / broken, old, new)
    done = _bobc("check", "LinReg/Build/NativeHost.bob", "--json", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"bobc check: {where}: error: "), done.stderr
    assert str(tmp_path) not in done.stderr
    refusal = json.loads(done.stdout)
    assert refusal["where"] == where and refusal["plan"] == "LinReg/Build/NativeHost.bob"
    # from a folder the plan does not lie under, every file is absolute, the plan module too
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _bobc("check", "../LinReg/Build/NativeHost.bob", cwd=elsewhere)
    assert done.stderr.startswith(f"bobc check: {tmp_path}/{where}: error: "), done.stderr


def test_a_plan_module_named_by_its_absolute_path_is_shown_as_its_imports_are(tmp_path):
    root = _linreg(tmp_path)
    _break(root / "Build" / "NativeHost.bob", "import Std.Natural\n", "import Std.Natural\nimport Nowhere.At.All\n")
    done = _bobc("check", root / "Build" / "NativeHost.bob", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("bobc check: LinReg/Build/NativeHost.bob:16:8: error: unknown module "
                                  "Nowhere.At.All"), done.stderr


def test_a_recalled_checks_warnings_are_shown_in_the_folder_it_is_recalled_from(tmp_path):
    root = _linreg(tmp_path)
    _break(root / "Model.bob", "import Std.Natural\n", "import Std.Natural\nimport Std.Natural\n")
    plan, cache, inner = root / "Build" / "NativeHost.bob", tmp_path / "cache", root / "kernels"
    said = "Model.bob:5:8: warning: LinReg.Model imports Std.Natural twice (first at line 4)"
    first = _bobc("check", plan, cwd=tmp_path, cache=cache)
    assert first.returncode == 0 and first.stderr.startswith(f"LinReg/{said}"), first.stderr
    again = _bobc("check", plan, "--json", cwd=inner, cache=cache)        # recalled: the same key
    assert again.returncode == 0 and again.stderr.startswith(f"{root}/{said}"), again.stderr
    assert json.loads(again.stdout)["warnings"][0].startswith(f"{root}/{said}")
    assert len(list((cache / "outcomes").iterdir())) == 1
    # what is kept names the file as stored (absolute), not either folder's view of it
    assert f'"{root}/{said}'.encode() in next((cache / "outcomes").iterdir()).read_bytes()
    inside = _bobc("check", plan, cwd=root, cache=cache)
    assert inside.returncode == 0 and inside.stderr.startswith(said), inside.stderr
