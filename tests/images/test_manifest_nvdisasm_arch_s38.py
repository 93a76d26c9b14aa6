"""A manifest's nvdisasm_arch that is not its target's is a damaged manifest, refused by name (probe
s38 coverage finding 1).

encode_images writes `nvdisasm_arch` as the target's own name for nvdisasm (Target.nvdisasm_arch:
SM86 for sm_86, SM90 for sm_90).  A manifest naming another (`"x"`) made `bobc disasm` and `bobc
dump` end in a StopIteration traceback (sass/oracle.nop_word looks the name up among the targets);
one naming the other target's (`SM90` in sm_86 images) had nvdisasm read the code as another
architecture's, with exit 0.  The field table's sweep (test_manifest_field_table.py) runs dump with
--no-code, which never reads the name.  Now, as every other damaged key: dump and disasm exit 1,
diff cannot compare (2), each naming the manifest file and the key; nothing raises."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bobc.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


@pytest.mark.parametrize("folder, arch, says", [
    ("bob-sm_90", "x", "nvdisasm_arch 'x' is not target sm_90's ('SM90')"),
    ("bob-sm_86", "SM90", "nvdisasm_arch 'SM90' is not target sm_86's ('SM86')"),
    ("bob-sm_90", "SM86", "nvdisasm_arch 'SM86' is not target sm_90's ('SM90')"),
])
def test_another_architecture_is_a_damaged_manifest(tmp_path, capsys, folder, arch, says):
    golden = GOLDEN / folder
    work = tmp_path / "damaged"
    shutil.copytree(golden, work)
    manifest = json.loads((golden / "manifest.json").read_text())
    manifest["nvdisasm_arch"] = arch
    (work / "manifest.json").write_text(json.dumps(manifest))
    expected = f"{work / 'manifest.json'} is not a well-formed bobc image manifest: {says}"
    for argv, code in ((["disasm", str(work)], 1), (["disasm", str(work), "--region", "0"], 1),
                       (["dump", str(work)], 1), (["diff", str(golden), str(work)], 2)):
        assert main(argv) == code, argv        # an exception here is the traceback a user saw
        captured = capsys.readouterr()
        assert captured.err.startswith(f"bobc {argv[0]}: error: {expected}\n"), (argv, captured.err)
        assert argv[0] == "diff" or "region 0" not in captured.out, argv    # refused before any listing


def test_a_name_no_target_has_is_refused_where_the_target_is_unknown_too(tmp_path, capsys):
    golden = GOLDEN / "bob-sm_90"
    work = tmp_path / "damaged"
    shutil.copytree(golden, work)
    manifest = json.loads((golden / "manifest.json").read_text())
    manifest.update(target="sm_99", nvdisasm_arch="SM99")
    (work / "manifest.json").write_text(json.dumps(manifest))
    assert main(["dump", str(work)]) == 1
    assert "nvdisasm_arch 'SM99' is none of SM86, SM90" in capsys.readouterr().err


def test_the_target_s_own_name_is_read_as_before(tmp_path, capsys):
    for folder in ("bob-sm_86", "bob-sm_90"):
        assert main(["disasm", str(GOLDEN / folder), "--region", "0"]) == 0
        assert capsys.readouterr().out.startswith("region 0 ")
