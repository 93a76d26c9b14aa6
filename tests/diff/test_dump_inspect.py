"""`bobc dump` on the wrong thing, a broken manifest, `bob-host --version`, `bobc inspect --json`."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
GOLDEN = REPO / "tests/golden/bob-sm_90"


def bobc(*args):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True)


def test_dump_of_a_plain_file_says_what_it_is(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    done = bobc("dump", text)
    # a file that is there but not bobc's: 1, as for every subcommand (probe s30 cli finding 7)
    assert done.returncode == 1 and "no such folder" not in done.stderr
    assert "is neither an image folder nor a host executable" in done.stderr


@pytest.mark.parametrize("manifest,expected", [
    ("{", "is not JSON"),
    ('{"target": "sm_90"}', "not a bobc image manifest: it lacks qmd_layout"),
    (None, "launches[3].qmd_offset is a string, not a byte count or offset"),
    ("OFFSET", "outside the 13824 bytes of"),
])
def test_a_bad_manifest_is_one_clear_error(tmp_path, manifest, expected):
    folder = tmp_path / "images"
    shutil.copytree(GOLDEN, folder)
    good = json.loads((GOLDEN / "manifest.json").read_text())
    if manifest is None:
        good["launches"][3]["qmd_offset"] = "0x600"
        manifest = json.dumps(good)
    elif manifest == "OFFSET":
        good["launches"][3]["qmd_offset"] = 0x10000
        manifest = json.dumps(good)
    (folder / "manifest.json").write_text(manifest)
    for command in ("dump", "diff"):
        done = bobc(command, folder, *([GOLDEN] if command == "diff" else []))
        assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr
        assert expected in done.stderr, done.stderr


def test_dump_json_is_the_same_facts(tmp_path):
    text = bobc("dump", GOLDEN, "--no-code").stdout.splitlines()
    facts = json.loads(bobc("dump", GOLDEN, "--no-code", "--json").stdout)
    assert [f["key"] for f in facts] == [line.split(" = ", 1)[0] for line in text]


def test_the_host_says_what_it_needs(host):
    import hashlib

    done = subprocess.run([str(host), "--version"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("native host built by bobc ")
    assert "target: sm_90 (QMD V04_00)" in lines
    assert "compute class: 0xcbc0 (HOPPER_COMPUTE_A)" in lines
    assert any(line.startswith("driver branch: 580 ") for line in lines)
    assert "plan: Bob.Build.NativeHost" in lines
    # the identity is sha256 over the four images as `bobc build --emit-images` writes them
    digest = hashlib.sha256()
    for name in ("program", "qmd", "push", "gpfifo"):
        part = (GOLDEN / f"{name}.bin").read_bytes()
        digest.update(len(part).to_bytes(8, "little") + part)
    assert f"plan identity: sha256 {digest.hexdigest()} (program, QMD, pushbuffer, GPFIFO images)" in lines
    commit = next(line for line in lines if line.startswith("bobc commit: "))
    assert commit == "bobc commit: unknown (bobc was not run from a clean git checkout)" or \
        len(commit.split()[-1]) == 40

    inspected = json.loads(bobc("inspect", host, "--json").stdout)
    assert inspected["version"]["driver branch"].startswith("580")
    assert inspected["target"] == "sm_90" and ".bobc.program" in inspected["sections"]
    assert "driver branch: 580" in bobc("inspect", host).stdout


def test_check_json(tmp_path):
    done = bobc("check", PLAN, "--json")
    result = json.loads(done.stdout)
    assert result["well_typed"] and result["certified"] and result["launches"] == 27
