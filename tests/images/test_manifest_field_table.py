"""A damaged image manifest is refused by name, never a traceback (probe s33 fuzzrec, finding 1).

`prologue.gpfifo_entry[0] = -1` (or 2**32) gave an OverflowError in `bobc dump` and `bobc diff`,
`submissions[0].ring_entry = []` and `launches[0].qmd_address = []` a TypeError; `bobc diff`'s
traceback exited 1, which says "they differ".  Every key of a real manifest is swept here with
values of another JSON type and integers no field can hold: `bobc dump` refuses (exit 1) and
`bobc diff` cannot compare (exit 2), each naming the file and the field; nothing raises."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from bobc.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "golden"

# Values of other JSON types, and integers outside every field's range (no count, offset,
# address or 32-bit word is negative or needs 65 bits).
WRONG = [-1, 1 << 64, [1], "x", None, 1.5, True, {}]


def _paths(value, path=()):
    """Every key and list item of a JSON value (a list's first item), as a tuple path."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path + (key,)
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:1]):
            yield path + (index,)
            yield from _paths(item, path + (index,))


def _dotted(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _must_refuse(original, wrong) -> bool:
    """Whether `wrong` can be no manifest's value where a real one holds `original`: another JSON
    type (a boolean is not an integer), or an integer outside 0..2^64-1."""
    if type(original) is not type(wrong):
        return True
    return isinstance(original, int) and not 0 <= wrong < 1 << 64


def _set(manifest, path, value):
    for part in path[:-1]:
        manifest = manifest[part]
    manifest[path[-1]] = value


def _cases(folder: Path, only=None):
    manifest = json.loads((folder / "manifest.json").read_text())
    for path in _paths(manifest):
        if only is not None and path[0] not in only:
            continue
        original = manifest
        for part in path:
            original = original[part]
        for wrong in WRONG:
            damaged = copy.deepcopy(manifest)
            _set(damaged, path, wrong)
            yield path, original, wrong, damaged


def _sweep(tmp_path, capsys, golden: Path, commands, only=None) -> int:
    work = tmp_path / "damaged"
    shutil.copytree(golden, work)
    refused = 0
    for path, original, wrong, damaged in _cases(golden, only):
        (work / "manifest.json").write_text(json.dumps(damaged))
        field = _dotted(path)
        for command in commands:
            argv = ["dump", "--no-code", str(work)] if command == "dump" else ["diff", str(golden), str(work)]
            code = main(argv)           # an exception here is the traceback a user would see
            err = capsys.readouterr().err
            assert "Traceback" not in err, (field, wrong, err)
            if _must_refuse(original, wrong):
                assert code == (1 if command == "dump" else 2), (command, field, wrong, code, err)
                assert f"{work / 'manifest.json'}" in err and field in err, (command, field, wrong, err)
                refused += 1
            else:
                assert code in ((0, 1) if command == "dump" else (0, 1, 2)), (command, field, wrong, code, err)
    return refused


def test_every_key_of_a_real_manifest_damaged_is_refused_by_name(tmp_path, capsys):
    assert _sweep(tmp_path, capsys, GOLDEN / "bob-sm_90", ("dump", "diff")) > 500


def test_a_residence_damaged_is_refused_by_name(tmp_path, capsys):
    """Coppelius's images carry a program residence, whose stage dump reads from the pushbuffer."""
    assert _sweep(tmp_path, capsys, GOLDEN / "coppelius-sm_86", ("dump",), only={"residence"}) > 50


@pytest.mark.parametrize("path, wrong, says", [
    (("prologue", "gpfifo_entry", 0), -1, "prologue.gpfifo_entry[0] is -1, not a 32-bit word"),
    (("prologue", "gpfifo_entry", 0), 1 << 32, "prologue.gpfifo_entry[0] is 4294967296, not a 32-bit word"),
    (("submissions", 0, "ring_entry"), [], "submissions[0].ring_entry is a list, not an index"),
    (("launches", 0, "qmd_address"), [], "launches[0].qmd_address is a list, not a 64-bit address"),
])
def test_the_probes_keys(tmp_path, capsys, path, wrong, says):
    """The three keys the probe found: one line naming the key, dump 1 and diff 2 (cannot compare)."""
    golden = GOLDEN / "bob-sm_90"
    work = tmp_path / "damaged"
    shutil.copytree(golden, work)
    manifest = json.loads((golden / "manifest.json").read_text())
    _set(manifest, path, wrong)
    (work / "manifest.json").write_text(json.dumps(manifest))
    assert main(["dump", str(work)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"bobc dump: error: {work / 'manifest.json'} is not a well-formed bobc image manifest: "
                          f"{says}"), err
    for a, b in ((golden, work), (work, golden)):
        assert main(["diff", str(a), str(b)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"bobc diff: error: {work / 'manifest.json'} is not a well-formed bobc image "
                              f"manifest: {says}"), err


def test_an_index_two_entries_share_is_refused(tmp_path, capsys):
    golden = GOLDEN / "bob-sm_90"
    work = tmp_path / "damaged"
    shutil.copytree(golden, work)
    manifest = json.loads((golden / "manifest.json").read_text())
    manifest["submissions"][1]["index"] = manifest["submissions"][0]["index"]
    (work / "manifest.json").write_text(json.dumps(manifest))
    assert main(["diff", str(golden), str(work)]) == 2
    assert "submissions[1].index is 0, as submissions[0].index is" in capsys.readouterr().err
