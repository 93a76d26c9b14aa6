"""`bobc build -o HOST --emit-images DIR` whose link fails publishes nothing, the images included
(README, "Outputs are all or nothing": a failure publishes none; probe s37 repro, finding 2): the
images were written before the host was linked, so a gcc or ld failure (or no room in TMPDIR)
left new images in DIR, and a `wrote ... images` line, under a failed command."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
OLD_IMAGES = REPO / "tests/golden/bob-sm_86"          # another target's images: other bytes than sm_90's


def failing_linker(folder: Path) -> Path:
    """A `gcc` first on PATH that compiles as the real one and fails every link (the command that
    names the math library, as every host link does), as ld fails on a missing library."""
    real = shutil.which("gcc") or shutil.which("cc")
    folder.mkdir()
    script = folder / "gcc"
    script.write_text("#!/bin/sh\n"
                      'for a in "$@"; do if [ "$a" = "-lm" ]; then\n'
                      '  echo "/usr/bin/ld: cannot find -lbobc-probe: No such file or directory" >&2\n'
                      '  echo "collect2: error: ld returned 1 exit status" >&2; exit 1; fi; done\n'
                      f'exec {real} "$@"\n')
    script.chmod(0o755)
    return folder


def test_a_failed_link_leaves_the_image_folder_as_it_was(tmp_path):
    environment = {**os.environ, "PATH": f"{failing_linker(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}"}
    shutil.copytree(OLD_IMAGES, tmp_path / "kept")
    before = {p.name: p.read_bytes() for p in (tmp_path / "kept").iterdir()}
    for images in ("new", "kept"):
        done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), "--target", "sm_90",
                               "-o", "host", "--emit-images", images, "--emit-c", "host.c"],
                              capture_output=True, text=True, timeout=600, cwd=tmp_path, env=environment)
        assert done.returncode != 0, done.stdout + done.stderr
        assert "ld returned 1" in done.stderr, done.stderr
        assert "wrote" not in done.stdout, done.stdout
        assert not (tmp_path / "host").exists() and not (tmp_path / "host.c").exists()
    assert not (tmp_path / "new").exists()
    assert {p.name: p.read_bytes() for p in (tmp_path / "kept").iterdir()} == before
