"""What `bobc dump` says of a launch's QMD, and which damaged manifests it refuses (probe s42
mutants8, mutation testing of nvidia/decode.py).  Each mutant below passed the dump and manifest
tests, now killed here:

- the grid shown without multiplying by the cluster (a clustered QMD counts clusters), or every
  sm_90 launch read as clustered (an unclustered one then showed a grid of 0 x 0 x 0);
- a dependent QMD pointer read as 16-byte units, not 256 (naming "the QMD at ..." no launch has),
  and the note on a pointer no launch's QMD is at dropped;
- the manifest's `schedules` indexed without its length checked (an IndexError traceback when
  the QMD names a dependent the manifest does not list);
- a 3-item list (a grid) of another length accepted; a span checked by its start only (a
  parameter block running past program.bin's end accepted); a launch naming a region the
  manifest does not list accepted; a required key inside an entry not said
  missing; a parameter_base equal to the parameter block's size accepted; a qmd_record of 0
  accepted; the note on a register count the manifest disagrees with dropped; a ring entry
  matched to the submission of its index, not to the one whose `ring_entry` names it.

Expected values by hand: a clustered QMD's grid counts clusters (clcbc0qmd.h QMD_TYPE
GRID_GPC_CGA, GPC_CGA_WIDTH/HEIGHT/DEPTH the cluster's shape; tests/images/test_clusters.py
has libcuda's fields), so (12, 4, 1) clusters of (1, 1, 4) are a grid of (12, 4, 4) blocks;
DEPENDENT_QMD0_POINTER (clcbc0qmd.h MW(479:448), 32 bits) holds a 256-byte-aligned QMD's address
>> 8; the damaged manifests hold values no manifest bobc writes can (a grid has 3 sizes, a
parameter block of 1024 bytes ends at 71168 + 1016 = 0x119f8 past a 71168-byte program.bin when it
starts 8 bytes before its end, a QMD record is never empty)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.nvidia.decode import launch_lines, read_images
from bobc.nvidia.encode import grid_qmd
from bobc.targets import SM90

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "bob-sm_90"


def _with_qmd(images, launch: int, record: bytes):
    m = images.manifest
    size, at = m["sizes"]["qmd_record"], m["launches"][launch]["qmd_offset"]
    images.qmd = images.qmd[:at] + record.ljust(size, b"\0") + images.qmd[at + size:]
    return images


def _lines(images) -> dict:
    return {line.key: line for line in launch_lines(images)}


def _qmd(**kw):
    return grid_qmd(SM90, "launch 0 (k)", kw.pop("grid", (12, 4, 4)), (256, 1, 1), 32, 0, 0x10_0000_0000,
                    0x100, 0x10_0000_A000, barriers=1, **kw)


def test_a_clustered_launch_shows_its_grid_in_blocks_and_its_cluster():
    images = _with_qmd(read_images(GOLDEN), 0, _qmd(cluster=(1, 1, 4)))
    lines = _lines(images)
    assert lines["launch[0].grid"].value == [12, 4, 4]            # (12, 4, 1) clusters x (1, 1, 4)
    assert lines["launch[0].cluster"].value == [1, 1, 4]
    assert lines["launch[0].qmd.GRID_DEPTH"].value == 1           # the QMD counts clusters


def test_a_dependent_qmd_is_named_by_the_launch_whose_qmd_is_there():
    images = read_images(GOLDEN)
    second = images.manifest["launches"][1]
    images = _with_qmd(images, 0, _qmd(dependents=(second["qmd_address"],)))
    images.manifest["launches"][0]["schedules"] = [second["index"]]
    line = _lines(images)["launch[0].schedules[0]"]
    assert line.value == f"launch {second['index']} ({second['identity']})"
    assert line.note == ""


def test_a_dependent_the_manifest_does_not_list_is_noted_not_a_traceback():
    images = read_images(GOLDEN)
    second = images.manifest["launches"][1]
    images = _with_qmd(images, 0, _qmd(dependents=(second["qmd_address"],)))
    assert images.manifest["launches"][0]["schedules"] == []      # the manifest lists none
    line = _lines(images)["launch[0].schedules[0]"]
    assert line.value == f"launch {second['index']} ({second['identity']})"
    assert line.note == "the manifest says []"


def _damaged(tmp_path, change) -> Path:
    folder = tmp_path / "images"
    shutil.copytree(GOLDEN, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    change(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


@pytest.mark.parametrize("change, words", [
    (lambda m: m["launches"][0].__setitem__("grid", [1, 1]), "launches\\[0\\].grid has 2 items, not 3"),
    (lambda m: m["launches"][0].pop("qmd_offset"), "launches\\[0\\].qmd_offset is missing"),
    (lambda m: m["sizes"].pop("parameter_block"), "sizes.parameter_block is missing"),
    (lambda m: m.__setitem__("parameter_base", m["sizes"]["parameter_block"]),
     "parameter_base 0x400 is not inside the 1024-byte parameter block"),
    # a parameter block whose start lies in program.bin but whose 1024 bytes run past its end
    (lambda m: m["launches"][0].__setitem__("parameter_offset", m["sizes"]["program"] - 8),
     "the manifest puts the launch 0 parameter block at 0x115f8..0x119f8, outside the 71168 bytes"),
    (lambda m: m["launches"][0].__setitem__("region", 9999),
     "launch 0 names region 9999, which the manifest does not list"),
])
def test_a_damaged_manifest_is_refused_naming_the_key(tmp_path, change, words):
    with pytest.raises(BobcError, match=words):
        read_images(_damaged(tmp_path, change))


def test_an_unclustered_launch_on_sm90_shows_the_qmds_grid_and_no_cluster():
    images = _with_qmd(read_images(GOLDEN), 0, _qmd(grid=(12, 4, 4)))     # QMD_TYPE GRID_CTA
    lines = _lines(images)
    assert lines["launch[0].grid"].value == [12, 4, 4]
    assert "launch[0].cluster" not in lines


def test_a_dependent_pointer_no_launchs_qmd_is_at_is_said():
    images = read_images(GOLDEN)
    stray = images.manifest["launches"][1]["qmd_address"] + 0x100      # 256-aligned, between records
    images = _with_qmd(images, 0, _qmd(dependents=(stray,)))
    line = _lines(images)["launch[0].schedules[0]"]
    assert line.value == f"the QMD at {stray:#x}"
    assert line.note == "no launch's QMD is there"


def test_a_register_count_the_manifest_disagrees_with_is_noted():
    images = read_images(GOLDEN)
    launch = images.manifest["launches"][0]
    region = next(r for r in images.manifest["regions"] if r["index"] == launch["region"])
    assert _lines(images)["launch[0].registers"].note == ""         # the golden manifest agrees
    region["qmd_registers"] += 8
    line = _lines(images)["launch[0].registers"]
    assert line.value == region["qmd_registers"] - 8                # the QMD's, not the manifest's
    assert line.note == f"region {launch['region']}'s manifest entry says {region['qmd_registers']}"


def test_a_qmd_record_of_zero_bytes_is_refused(tmp_path):
    # sizes.qmd_record is the bytes of one launch's QMD record: a QMD (clcbc0qmd.h, 2048+ bits) never fits 0
    with pytest.raises(BobcError, match="sizes.qmd_record is 0, not a positive byte count"):
        read_images(_damaged(tmp_path, lambda m: m["sizes"].__setitem__("qmd_record", 0)))


def test_a_ring_entry_is_attributed_to_the_submission_naming_it():
    # the manifest's `ring_entry` says which GPFIFO entry submits a submission's segment; it need
    # not be the submission's own index: with two submissions' entries swapped in the manifest,
    # each entry line follows the submission that names it
    from bobc.nvidia.decode import ring_lines

    images = read_images(GOLDEN)
    first, second = images.manifest["submissions"][:2]
    first["ring_entry"], second["ring_entry"] = second["ring_entry"], first["ring_entry"]
    lines = {line.key: line for line in ring_lines(images)}
    assert lines[f"gpfifo[{first['ring_entry']}]"].slot == f"submission[{first['index']}].gpfifo"
    assert lines[f"gpfifo[{second['ring_entry']}]"].slot == f"submission[{second['index']}].gpfifo"
    assert lines[f"gpfifo[{first['ring_entry']}]"].owner == first["identity"]
