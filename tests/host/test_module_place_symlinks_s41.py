"""bobc.host.generate.module_place names where the plan wrote a launch relative to the search folder
the module was found in, whichever way a symlink spells the two (the clean-clone CI of session 41:
tests/test_build_reproducible_s37.py built LinReg through a symlinked checkout and its host's launch
table said NULL where the plain build said `LinReg/Build/NativeHost.bob:115:5` -- the module's path
went through the symlink, the search folder was resolved, and a plain prefix test saw no match).
Expected places: the module's path below the folder, written by hand."""
from __future__ import annotations

from types import SimpleNamespace

from bobc.host.generate import module_place


def _at(path):
    return SimpleNamespace(path=str(path), line=115, column=5)


def test_module_read_through_a_symlinked_folder(tmp_path):
    real = tmp_path / "real"
    (real / "LinReg" / "Build").mkdir(parents=True)
    (real / "LinReg" / "Build" / "NativeHost.bob").write_text("module LinReg.Build.NativeHost\n")
    (tmp_path / "link").symlink_to(real)
    module = tmp_path / "link" / "LinReg" / "Build" / "NativeHost.bob"
    assert module_place(_at(module), [real]) == "LinReg/Build/NativeHost.bob:115:5"
    assert module_place(_at(real / "LinReg" / "Build" / "NativeHost.bob"), [tmp_path / "link"]) == \
        "LinReg/Build/NativeHost.bob:115:5"
    assert module_place(_at(module), [tmp_path / "link"]) == "LinReg/Build/NativeHost.bob:115:5"


def test_a_module_in_no_search_folder_has_no_place(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "ab").mkdir()
    assert module_place(_at(tmp_path / "ab" / "M.bob"), [tmp_path / "a"]) is None
    assert module_place(None, [tmp_path]) is None
