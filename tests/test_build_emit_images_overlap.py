"""`bobc build -o X --emit-images D` with X and D overlapping (X is D, inside D, or holds D) is
refused before the build, nothing written, exit 8 (probe s27 regress, finding 8): the images
are written before the host, so either output would half-replace the other."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
GOLDEN = REPO / "tests/golden/bob-sm_90"


def bobc(*args, **kw):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          timeout=300, **kw)


@pytest.mark.parametrize("host_path, images", [("same", "same"), ("same/program.bin", "same"),
                                               ("same/bob-host", "same"), ("x", "x/images")])
def test_build_refuses_a_host_and_images_that_overlap(tmp_path, host_path, images):
    if "/" in host_path and host_path.startswith(images):
        shutil.copytree(GOLDEN, tmp_path / images)        # an image folder already there
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    done = bobc("build", PLAN, "--target", "sm_90", "-o", host_path, "--emit-images", images, cwd=tmp_path)
    assert done.returncode == 8, done.stdout + done.stderr
    assert "nothing was written" in done.stderr and "--emit-images folder" in done.stderr, done.stderr
    assert "wrote" not in done.stdout
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
