"""The residence stage's three parameters must fit the manifest's parameter block (session 43 mutants).

decode.read_images refuses a manifest whose parameter_base leaves no room for the stage's three
8-byte parameters (decode.STAGE_ARGUMENTS), before stage_lines reads them.  Mutating that check
to `>=` (a base that fits exactly refused) or dropping it (a struct.error traceback from
`bobc dump`) left every existing test passing.  The edge is hand arithmetic: three 8-byte words
from parameter_base end at parameter_base + 24, so in a 512-byte block 488 (0x1e8) is the last
base that fits -- words at 0x1e8, 0x1f0, 0x1f8 -- and 489 is one byte over.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bobc.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "coppelius-sm_86"   # carries a residence


def _with_base(tmp_path: Path, base: int) -> Path:
    work = tmp_path / "images"
    shutil.copytree(GOLDEN, work)
    manifest = json.loads((work / "manifest.json").read_text())
    assert manifest["sizes"]["parameter_block"] == 512 and manifest.get("residence")
    manifest["parameter_base"] = base
    (work / "manifest.json").write_text(json.dumps(manifest))
    return work


def test_a_base_whose_three_words_end_at_the_block_end_is_read(tmp_path, capsys):
    work = _with_base(tmp_path, 512 - 3 * 8)
    assert main(["dump", "--no-code", str(work)]) == 0
    out = capsys.readouterr().out
    for offset in (0x1e8, 0x1f0, 0x1f8):
        assert f"residence.stage.bank0[{offset:#x}] = " in out


@pytest.mark.parametrize("base", [512 - 3 * 8 + 1, 512 - 2 * 8, 512 - 8])
def test_a_base_leaving_no_room_is_refused_by_name(tmp_path, capsys, base):
    work = _with_base(tmp_path, base)
    assert main(["dump", "--no-code", str(work)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"parameter_base {base:#x} leaves no room for the residence stage's 3 parameters" in err
    assert "512-byte parameter block" in err
