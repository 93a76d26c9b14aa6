"""`bobc sim PLAN --images DIR` runs only this plan's images, for the target they were emitted for
(probe s28 docs, finding 5): LinReg's images run against Bob's plan faulted (exit 7) with a hint
to correct a correct kernel's contract; now images whose manifest is not the plan's build are
refused naming both (their kernels, the plan's, both plan identities), exit 2, and the target is
taken from their manifest when --target is not given (a --target that is not theirs is refused
by name)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bobc.cli import main
from bobc.host.version import plan_identity
from bobc.nvidia.encode import write_images

from .conftest import REPO, built_for

LINREG = REPO / "examples/linear_regression"
PLAN = LINREG / "LinReg/Build/NativeHost.bob"


def _files(folder: Path, prefix: str = "") -> list[str]:
    return ["--checkpoint-out", str(folder / f"{prefix}c"), "--predictions", str(folder / f"{prefix}p"),
            "--result", str(folder / f"{prefix}r")]


@pytest.fixture(scope="module")
def linreg(tmp_path_factory):
    """(folder, record, LinReg's sm_86 images folder, their plan identity)."""
    from bobc import pipeline
    from bobc.targets import TARGETS

    if str(LINREG) not in sys.path:
        sys.path.insert(0, str(LINREG))
    import make_record

    folder = tmp_path_factory.mktemp("linreg-images")
    (folder / "record.bin").write_bytes(make_record.record_bytes(*make_record.make(3)))
    built = pipeline.compile_plan(PLAN, TARGETS["sm_86"])
    images = write_images(built.images, folder / "images86")
    return folder, folder / "record.bin", images, plan_identity(built.images)


def _outputs(folder: Path, prefix: str = "") -> tuple[bytes, ...]:
    return tuple((folder / f"{prefix}{name}").read_bytes() for name in "cpr")


def test_images_are_run_for_their_own_target_without_target(tmp_path, linreg, capsys):
    _, record, images, _ = linreg
    assert main(["sim", str(PLAN), "train", "--images", str(images), "--input", str(record),
                 *_files(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("sim sm_86: train: 43 launches")
    assert main(["sim", str(PLAN), "train", "--target", "sm_86", "--input", str(record),
                 *_files(tmp_path, "built-")]) == 0
    assert _outputs(tmp_path) == _outputs(tmp_path, "built-")


def test_a_target_that_is_not_the_images_is_refused_by_name(tmp_path, linreg, capsys):
    _, record, images, _ = linreg
    assert main(["sim", str(PLAN), "train", "--images", str(images), "--target", "sm_90", "--input", str(record),
                 *_files(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bobc sim: error: the images in {images} are for sm_86, not --target sm_90\n"
                          "hint: leave --target out (the images say their target)"), err
    assert not any((tmp_path / name).exists() for name in "cpr")


def test_another_plans_images_are_refused_naming_both(tmp_path, linreg, capsys):
    """Bob's sm_86 images against LinReg's plan: refused before any file is read or written."""
    built, _ = built_for("sm_86")
    bob = write_images(built.images, tmp_path / "bob86")
    _, record, _, linreg_identity = linreg
    assert main(["sim", str(PLAN), "train", "--images", str(bob), "--input", str(record), *_files(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bobc sim: error: the images in {bob} are not this plan's: their kernels are "
                          "bob-row-gather, bob-loss-gradient, bob-adamw, bob-greedy-argmax, "
                          f"{PLAN}'s are linreg-loss-grad, linreg-sgd, linreg-predict "
                          f"(their plan identity is {plan_identity(built.images)}, {PLAN}'s for sm_86 is "
                          f"{linreg_identity})\n"), err
    assert "contract" not in err and "Traceback" not in err
    assert not any((tmp_path / name).exists() for name in "cpr")


def test_images_whose_manifest_is_not_the_plans_build_are_refused_at_the_first_difference(tmp_path, linreg,
                                                                                              capsys):
    import shutil

    _, record, images, _ = linreg
    changed = tmp_path / "changed"
    shutil.copytree(images, changed)
    manifest = json.loads((changed / "manifest.json").read_text())
    manifest["launches"][3]["grid"] = [2, 1, 1]
    (changed / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n")
    assert main(["sim", str(PLAN), "train", "--images", str(changed), "--input", str(record),
                 *_files(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bobc sim: error: the images in {changed} are not this plan's build: their manifest "
                          f"has launches[3].grid [2, 1, 1], {PLAN}'s [1, 1, 1] (the same plan identity, "), err
    assert "their manifest.json alone differs)\nhint: run the plan they were built from" in err


def test_an_images_file_that_is_a_fifo_is_refused_never_waited_on(tmp_path, linreg):
    import shutil
    import subprocess

    _, record, images, _ = linreg
    folder = tmp_path / "fifo"
    shutil.copytree(images, folder)
    (folder / "qmd.bin").unlink()
    os.mkfifo(folder / "qmd.bin")
    done = subprocess.run([sys.executable, "-m", "bobc", "sim", str(PLAN), "train", "--images", str(folder),
                           "--input", str(record), *_files(tmp_path)],
                          capture_output=True, text=True, timeout=120)     # a hang fails here
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"bobc sim: error: {folder / 'qmd.bin'}: a FIFO, not a regular file\n"
