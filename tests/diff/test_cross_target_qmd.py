"""`bobc diff` of sm_86 images against sm_90 images compares the QMD fields by name (probe s32
targets finding 2).  The two targets' QMD layouts differ (V03_00, V04_00), and the diff left out
every QMD field then: SASS_VERSION 0x86 -> 0x90 and the shared-memory configuration were no line,
and a field a per-target change touched (BARRIER_COUNT) would have been invisible.  Now a field
both layouts have is compared by name, and one line names the fields only one layout has."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.nvidia import qmd

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


def bobc(*args):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cross")
    out = {}
    for target in ("sm_86", "sm_90"):
        out[target] = root / target
        done = bobc("build", PLAN, "--target", target, "--emit-images", out[target])
        assert done.returncode == 0, done.stderr
    return out


def test_the_qmd_fields_both_layouts_have_are_compared_by_name(images):
    done = bobc("diff", images["sm_86"], images["sm_90"], "--json")
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    launches = json.loads((images["sm_86"] / "manifest.json").read_text())["launches"]
    by_key = {d["key"]: d for d in found}
    for launch in launches:
        sass = by_key[f"launch[{launch['index']}].qmd.SASS_VERSION"]
        assert (sass["kind"], sass["a"], sass["b"]) == ("qmd", 0x86, 0x90)
        carveout = by_key[f"launch[{launch['index']}].qmd.MAX_SM_CONFIG_SHARED_MEM_SIZE"]
        assert carveout["a"] != carveout["b"]
    layout = by_key["qmd_layout.fields"]
    only_86 = [n for n in qmd.LAYOUTS["V03_00"].fields if n not in qmd.LAYOUTS["V04_00"].fields]
    only_90 = [n for n in qmd.LAYOUTS["V04_00"].fields if n not in qmd.LAYOUTS["V03_00"].fields]
    assert (layout["a"], layout["b"]) == (f"{len(only_86)} fields only V03_00 has",
                                          f"{len(only_90)} fields only V04_00 has")
    assert "V03_00 only: " in layout["meaning"] and "QMD_VERSION" in layout["meaning"]
    assert "V04_00 only: " in layout["meaning"] and "QMD_TYPE" in layout["meaning"]
    assert "RELEASE_ENABLE(0..2)" in layout["meaning"]                # an indexed family is one entry
    # a field of one layout only is never a line of its own
    assert not [d for d in found if d["kind"] == "qmd" and d["key"].rsplit(".qmd.", 1)[1] in only_86 + only_90]
    text = bobc("diff", images["sm_86"], images["sm_90"]).stdout
    assert "launch[0].qmd.SASS_VERSION" in text and "qmd_layout.fields: " in text


def test_a_field_changed_on_one_target_is_one_line(images, tmp_path):
    changed = tmp_path / "changed"
    shutil.copytree(images["sm_90"], changed)
    manifest = json.loads((changed / "manifest.json").read_text())
    high, low = qmd.LAYOUTS["V04_00"].fields["BARRIER_COUNT"]
    bit = 8 * manifest["launches"][1]["qmd_offset"] + low
    data = bytearray((changed / "qmd.bin").read_bytes())
    data[bit // 8] ^= 1 << (bit % 8)
    (changed / "qmd.bin").write_bytes(bytes(data))
    before = {d["key"] for d in json.loads(bobc("diff", images["sm_86"], images["sm_90"], "--json").stdout)}
    after = json.loads(bobc("diff", images["sm_86"], changed, "--json").stdout)
    new = [d for d in after if d["key"] not in before]
    assert [(d["key"], d["kind"]) for d in new] == [("launch[1].qmd.BARRIER_COUNT", "qmd")], new
