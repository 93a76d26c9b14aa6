"""`bobc diff` aligns submissions as a sequence and reads addresses through the alignments (probe s29
diffsub): one launch and the submission that runs it inserted into a plan is a short diff naming
them, not a line for every later launch's addresses, submission's segment and ring entry; a method
changed in a submission after the insertion is still shown, keyed by the aligned submission."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples/linear_regression"
PLAN = "LinReg/Build/NativeHost.bob"
FORWARD = ("def lrForwardSchedule : (family NvidiaLaunchSchedule) = "
           "(lrThen (lrLossGradLaunch lrInitialLossAddress) lrPredictLaunch)")


def bobc(*args):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def build(root: Path, out: Path, forward: str | None = None) -> Path:
    """LinReg's sm_90 images, its forward schedule replaced by `forward` (every launch has a
    submission of its own, so a launch added there comes with the submission that runs it)."""
    plan = root / "linear_regression"
    shutil.copytree(EXAMPLE, plan)
    if forward is not None:
        source = (plan / PLAN).read_text()
        assert FORWARD in source
        (plan / PLAN).write_text(source.replace(FORWARD, forward))
    done = bobc("build", plan / PLAN, "--target", "sm_90", "--emit-images", out)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    root = tmp_path_factory.mktemp("linreg")
    (root / "a").mkdir()
    (root / "b").mkdir()
    (root / "c").mkdir()
    a = build(root / "a", root / "images-a")
    # an SGD launch after the forward pass's predict launch (launch 2 of b), with its own submission
    b = build(root / "b", root / "images-b", "def lrForwardSchedule : (family NvidiaLaunchSchedule) = "
              "(lrThen (lrThen (lrLossGradLaunch lrInitialLossAddress) lrPredictLaunch) lrSGDLaunch)")
    # the same launch before the predict launch: the plan's last submission names launch 1, which
    # is now the inserted launch
    c = build(root / "c", root / "images-c", "def lrForwardSchedule : (family NvidiaLaunchSchedule) = "
              "(lrThen (lrThen (lrLossGradLaunch lrInitialLossAddress) lrSGDLaunch) lrPredictLaunch)")
    return a, b, c


def test_an_inserted_launch_and_submission_is_a_short_diff_naming_them(images):
    a, b, _ = images
    done = bobc("diff", a, b)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    # 202 lines before: every moved launch's QMD and parameter addresses and constant bank address
    assert len(lines) < 80, done.stdout
    assert "submission[+2] (linreg-submission): only in b: runs launch[+2] (linreg-sgd); 8 methods in 40 bytes " \
           "at push +0x90; gpfifo[2]  [a submission only in b]" in lines, done.stdout
    assert any(x.startswith("submission[2..42]: submission[2..42] -> submission[3..43]  [41 submissions")
               for x in lines), done.stdout
    assert any(x.startswith("launch[2..41]: launch[2..41] -> launch[3..42]  [40 launches") for x in lines), done.stdout
    assert "launch[2].kernel (linreg-sgd): only in b: linreg-sgd  [region 1]" in lines
    # nothing of a launch, submission or ring entry that only moved
    assert not [x for x in lines if x.startswith(("launch[2->", "launch[41->", "submission[3->", "gpfifo[", "raw",
                                                  "manifest."))], done.stdout
    as_json = json.loads(bobc("diff", a, b, "--json").stdout)
    assert len(as_json) == len(lines) - 1          # less the count (two folders: no folder note)
    inserted = next(d for d in as_json if d["key"] == "submission[+2]")
    assert inserted["kind"] == "submission" and inserted["a"] is None and "launch[+2]" in inserted["b"]
    assert bobc("diff", a, b).stdout == done.stdout          # deterministic


def _changed(source: Path, target: Path, image: str, offset: int, value: bytes) -> Path:
    shutil.copytree(source, target)
    data = bytearray((target / image).read_bytes())
    data[offset:offset + len(value)] = value
    (target / image).write_bytes(bytes(data))
    return target


def test_a_changed_method_and_ring_entry_after_the_insertion_are_keyed_by_the_aligned_submission(images, tmp_path):
    a, b, _ = images
    manifest = json.loads((b / "manifest.json").read_text())
    tenth = manifest["submissions"][10]               # a's submission 9, one place later
    assert tenth["launches"] == [10]
    # its SEM_PAYLOAD_LO (the sixth method: INVALIDATE, SEND_PCAS_A, PCAS2_B, then SEM_ADDR_LO, HI,
    # PAYLOAD_LO, ... in one INC_METHOD header at +0x10) 1 -> 2, and its ring entry one dword longer
    changed = _changed(b, tmp_path / "changed", "push.bin", tenth["push_offset"] + 0x10 + 4 + 8, (2).to_bytes(4, "little"))
    entry = bytearray((changed / "gpfifo.bin").read_bytes()[8 * tenth["ring_entry"]:8 * tenth["ring_entry"] + 8])
    dword1 = int.from_bytes(entry[4:], "little") + (1 << 10)
    _changed(changed, tmp_path / "changed2", "gpfifo.bin", 8 * tenth["ring_entry"] + 4, dword1.to_bytes(4, "little"))
    done = bobc("diff", a, tmp_path / "changed2")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) < 80, done.stdout
    payload = [x for x in lines if ".push[" in x]
    at_a = json.loads((a / "manifest.json").read_text())["submissions"][9]["push_offset"] + 0x10
    assert payload == ["submission[9->10].push[5] (linreg-submission): 0x1 -> 0x2  [method SEM_PAYLOAD_LO "
                       f"(subch 0 INC_METHOD, header at segment +0x10 (push +{at_a:#x} in a, "
                       f"+{tenth['push_offset'] + 0x10:#x} in b))]"], done.stdout
    ring = [x for x in lines if x.startswith(("gpfifo", "submission[9->10].gpfifo"))]
    assert len(ring) == 1 and ring[0].startswith("submission[9->10].gpfifo (linreg-submission): [") and \
        "length 10 dwords (40 bytes)" in ring[0] and "length 11 dwords (44 bytes)" in ring[0] and \
        ring[0].endswith("its address names submission[9->10]'s segment in both, which moved]"), ring
    # still the one inserted submission, and the run around the changed one
    assert any(x.startswith("submission[+2] (linreg-submission): only in b") for x in lines), done.stdout


def test_the_same_launch_index_naming_the_inserted_launch_is_a_difference(images):
    a, _, c = images
    done = bobc("diff", a, c)
    lines = done.stdout.splitlines()
    assert len(lines) < 80, done.stdout
    assert any(x.startswith("submission[+1] (linreg-submission): only in b: runs launch[+1] (linreg-sgd)")
               for x in lines), done.stdout
    # a's last submission runs a's launch 1 (predict); b's runs b's launch 1, the inserted SGD launch:
    # the same index, and the same QMD address in its SEND_PCAS_A, naming another launch
    assert "submission[42->43].launches (linreg-submission): [0x1] -> [0x1]  [the same indices, which name " \
           "launch[1->2] in a, launch[+1] in b]" in lines, done.stdout
    assert any(x.startswith("submission[42->43].push[1] (linreg-submission): 0x10100002 -> 0x10100002") and
               "which names launch[1->2]'s QMD (linreg-predict) in a, launch[+1]'s QMD (linreg-sgd) in b" in x
               for x in lines), done.stdout
