"""A folder named like another target's variant is not that variant (probe s40 mutants5, left): with
x.sass absent and a FOLDER x.sm_86.sass beside where it would be, a build for sm_90 was told "only its
variant for sm_86 is there" -- a folder holds no kernel, so no variant is there and the source is
simply not found (find_named returns None; the caller names the folders searched)."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.kernel_search import SourceError, find_named
from bobc.targets import target_named


def test_a_folder_named_like_a_variant_is_not_offered_as_one(tmp_path: Path):
    (tmp_path / "x.sm_86.sass").mkdir()
    assert find_named("x.sass", [tmp_path], target_named("sm_90")) is None


def test_a_file_variant_beside_it_is_still_named(tmp_path: Path):
    (tmp_path / "x.sm_86.sass").write_text(".kernel x\n    EXIT ;\n")
    with pytest.raises(SourceError, match="is absent for sm_90: only its variant for sm_86 is there"):
        find_named("x.sass", [tmp_path], target_named("sm_90"))
