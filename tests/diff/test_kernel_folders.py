"""`bobc dump -I DIR` / `bobc diff -I DIR`: argument names for a plan's own kernels (probe s27
regress, finding 5).  The manifest does not record where the plan's kernels are, so the names
came only from specs/: LinReg's `//@ param` lines were never read.  -I names the plan's own
kernel folders, searched before specs/."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
ROOT = REPO / "examples/linear_regression"


def bobc(*args):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("lr") / "images"
    done = bobc("build", PLAN, "--target", "sm_86", "--emit-images", folder)
    assert done.returncode == 0, done.stderr
    return folder


def test_dump_names_a_plans_own_kernel_arguments_with_I(images):
    plain = bobc("dump", images, "--no-code")
    named = bobc("dump", images, "--no-code", "-I", ROOT)
    assert plain.returncode == named.returncode == 0, plain.stderr + named.stderr
    line = next(x for x in named.stdout.splitlines() if x.startswith("launch[2].bank0[0x170] = "))
    assert line.endswith("# argument 2: the count (u32), the learning rate (binary32) (scalar)"), line
    assert "launch[2].bank0[0x170] = 0x3d4ccccd00000008  # parameter word 2 (the kernel's argument names unknown: " \
           "no linreg-sgd.sass found; pass -I with the folder that holds it)\n" in plain.stdout


def test_diff_names_them_too(images, tmp_path):
    import json

    changed = tmp_path / "changed"
    shutil.copytree(images, changed)
    manifest = json.loads((images / "manifest.json").read_text())
    at = manifest["launches"][2]["parameter_offset"] + 0x174          # the learning rate's high half
    data = bytearray((changed / "program.bin").read_bytes())
    data[at] ^= 1
    (changed / "program.bin").write_bytes(bytes(data))
    done = bobc("diff", images, changed, "-I", ROOT)
    assert done.returncode == 1, done.stderr
    assert "launch[2].bank0[0x170] (linreg-sgd): 0x3d4ccccd00000008 -> 0x3d4ccccc00000008  [argument 2: the count " \
           "(u32), the learning rate (binary32) (scalar): its high u32]" in done.stdout, done.stdout   # the half that changed (probe s30 regress3 6b)
    missing = bobc("diff", images, changed, "-I", tmp_path / "absent")
    assert missing.returncode == 2 and "no such folder" in missing.stderr


def test_an_inserted_instruction_is_one_line_and_the_rest_one_moved_range(images, tmp_path):
    """Session 28: instructions are aligned as sequences, not compared offset by offset, so a NOP
    inserted into a kernel is one `only in b` line and the unchanged instructions after it one
    line naming both ranges (it was one line for every instruction after the insertion)."""
    import json

    root = tmp_path / "linear_regression"
    shutil.copytree(ROOT, root)
    kernel = root / "LinReg/kernels/linreg-loss-grad.sass"
    text = kernel.read_text()
    anchor = "    MOV R10, RZ\n"
    assert text.count(anchor) == 1
    kernel.write_text(text.replace(anchor, "    NOP\n" + anchor))
    changed = tmp_path / "changed"
    done = bobc("build", root / "LinReg/Build/NativeHost.bob", "--target", "sm_86", "--emit-images", changed)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((images / "manifest.json").read_text())
    region = next(r for r in manifest["regions"] if r["identity"] == "linreg-loss-grad")
    done = bobc("diff", images, changed, "--json")
    assert done.returncode == 1, done.stderr
    code = [d for d in json.loads(done.stdout) if d["kind"] == "code"]
    prefix = f"region[{region['index']}].code["
    mine = [d for d in code if d["key"].startswith(prefix)]
    assert [d["key"] for d in mine] == [f"{prefix}b:0x0090]", f"{prefix}0x0090..{region['size'] - 16:#06x}]"], mine
    inserted, moved = mine
    assert inserted["a"] is None and "NOP" in inserted["meaning"]
    assert moved["b"] == f"0x00a0..{region['size']:#06x}"
    assert moved["meaning"].startswith(f"{(region['size'] - 0x90) // 16} instructions unchanged, moved by +0x10")
    # every other region's instructions are the same bytes (moved regions are their places' lines)
    assert all(d["key"].startswith(prefix) for d in code), code
    assert not [d for d in json.loads(done.stdout) if d["kind"] == "raw"]


def test_two_targets_compare_arguments_by_their_place_among_the_parameters(images, tmp_path):
    """Session 28: sm_86's parameters start at bank 0 offset 0x160, sm_90's at 0x210, so a diff
    of the two targets' images matched bank 0 words by offset and reported every argument (about
    3,000 lines for LinReg).  Words are matched by their place among the parameters now: the same
    arguments are no difference, and what remains is each target's own driver words."""
    import json

    sm90 = tmp_path / "sm90"
    done = bobc("build", PLAN, "--target", "sm_90", "--emit-images", sm90)
    assert done.returncode == 0, done.stderr
    found = json.loads(bobc("diff", images, sm90, "--json").stdout)
    bank0 = [d for d in found if d["kind"] == "bank0"]
    assert bank0 and all(d["a"] is None and int(d["key"].rsplit("[", 1)[1].rstrip("]"), 16) < 0x210 for d in bank0)
    assert all("cluster" in d["meaning"] for d in bank0), {d["meaning"] for d in bank0}
    # one argument changed on the sm_90 side is one line, keyed by its place among the parameters
    changed = tmp_path / "changed"
    shutil.copytree(sm90, changed)
    manifest = json.loads((sm90 / "manifest.json").read_text())
    at = manifest["launches"][2]["parameter_offset"] + 0x210 + 0x14          # argument 2's high half
    data = bytearray((changed / "program.bin").read_bytes())
    data[at] ^= 1
    (changed / "program.bin").write_bytes(bytes(data))
    after = json.loads(bobc("diff", images, changed, "--json", "-I", ROOT).stdout)
    argument = [d for d in after if d["kind"] == "bank0" and "param+" in d["key"]]
    assert [(d["key"], d["a"] ^ d["b"]) for d in argument] == [("launch[2].bank0[param+0x10]", 1 << 32)]
    assert argument[0]["meaning"].startswith("argument 2: the count (u32), the learning rate (binary32)")
