"""The lines `bobc diff` adds about what it compared (probe-regress3 finding 5): the note that an
image folder carries no host plan is for a folder against a host only, not for two folders (the
golden workflow: a committed folder against a fresh one); two native hosts, which carry no host
plan, are not said to hold the same host plan."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests/golden/bob-sm_90"


def bobc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


def test_two_image_folders_carry_no_note():
    done = bobc("diff", GOLDEN, GOLDEN)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{GOLDEN} and {GOLDEN} hold the same images"]
    done = bobc("diff", "--json", GOLDEN, GOLDEN)
    assert done.returncode == 0 and done.stderr == "" and done.stdout.strip() == "[]"


def test_two_native_hosts_hold_the_same_images_and_commands(tmp_path):
    host = tmp_path / "native"
    done = bobc("build", REPO / "tests/native/plans/Native/Commands.bob", "--entry", "arithmeticHost", "-o", host)
    assert done.returncode == 0, done.stderr
    done = bobc("diff", host, host)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{host} and {host} hold the same images and commands"]
