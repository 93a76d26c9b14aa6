"""A GPFIFO image that is not whole 8-byte entries is refused naming its file (session 43 mutants9).

A gpfifo.bin cut by 4 bytes, with the manifest's sizes.gpfifo cut to match, passed every manifest
check and reached gpfifo.decode, whose refusal said "a GPFIFO image is whole 8-byte entries; this
one has 260 bytes" -- naming no file, so `bobc diff A B` did not say which side was damaged.  An
entry is two 32-bit dwords (open-gpu-doc clc56f.h: NVC56F_GP_ENTRY0 and NVC56F_GP_ENTRY1), 8 bytes,
so 260 bytes is 32 entries and half of one: the file and its byte count are what the user needs.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from bobc.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "bob-sm_86"


def _cut(tmp_path: Path) -> Path:
    work = tmp_path / "images"
    shutil.copytree(GOLDEN, work)
    data = (work / "gpfifo.bin").read_bytes()
    assert len(data) % 8 == 0
    (work / "gpfifo.bin").write_bytes(data[:-4])
    manifest = json.loads((work / "manifest.json").read_text())
    manifest["sizes"]["gpfifo"] = len(data) - 4
    (work / "manifest.json").write_text(json.dumps(manifest))
    return work


def test_dump_names_the_file_and_its_half_entry(tmp_path, capsys):
    work = _cut(tmp_path)
    size = (work / "gpfifo.bin").stat().st_size
    assert main(["dump", "--no-code", str(work)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{work / 'gpfifo.bin'} is {size:,} bytes" in err, err
    assert "8-byte" in err, err


def test_diff_names_the_damaged_side(tmp_path, capsys):
    work = _cut(tmp_path)
    for a, b in ((GOLDEN, work), (work, GOLDEN)):
        assert main(["diff", str(a), str(b)]) == 2          # cannot compare, never "they differ"
        err = capsys.readouterr().err
        assert f"{work / 'gpfifo.bin'} is " in err, err
