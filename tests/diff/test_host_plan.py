"""`bobc diff`, `dump` and `inspect` cover the host plan, not only the images (probe s28 newmodel2
finding 1): two LinReg hosts whose checkpoint schema and record check differ hold the same four
images, yet refuse different records and checkpoints.  diff used to say "hold the same images"
(exit 0), inspect showed one identity for both, dump showed nothing of the host plan."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/linear_regression"
PLAN = "LinReg/Build/NativeHost.bob"


def bobc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO / "compiler")})


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    """(base host, its image folder, a host whose schema and record version differ)."""
    root = tmp_path_factory.mktemp("hostplan")
    base, changed = root / "base", root / "changed"
    shutil.copytree(EXAMPLE / "LinReg", base / "LinReg")
    shutil.copytree(EXAMPLE / "LinReg", changed / "LinReg")
    source = changed / PLAN
    text = source.read_text(encoding="utf-8")
    edited = text.replace('b"linreg-w-then-b-f32-v1|features=7"', 'b"linreg-w-then-b-f32-v2|features=7"')
    edited = edited.replace('NvidiaPlanHostCheckWord b"version" 8 8 linRegInputVersion',
                            'NvidiaPlanHostCheckWord b"version" 8 8 7')
    assert edited.count("-v2|features=7") == 1 and '8 8 7)' in edited
    source.write_text(edited, encoding="utf-8")
    for folder, extra in ((base, ["--emit-images", root / "images"]), (changed, [])):
        done = bobc("build", PLAN, "--target", "sm_86", "-o", folder / "host", *extra, cwd=folder)
        assert done.returncode == 0, done.stderr
    return base / "host", root / "images", changed / "host"


def test_diff_names_the_host_plan_outside_the_images(hosts):
    base, _, changed = hosts
    done = bobc("diff", base, changed)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "hold the same" not in done.stdout
    lines = done.stdout.splitlines()
    # the host plan's members by name (probe s29 hostjson: they were table words, host.plan.plan[+0x18])
    assert "host.plan.contract.schema: linreg-w-then-b-f32-v1|features=7 -> linreg-w-then-b-f32-v2|features=7" \
        in lines, lines
    assert "host.plan.input.checks[1].value (version): 0x1 -> 0x7" in lines, lines
    assert any(x.startswith("host.section[.rodata]:") for x in lines), lines
    assert not any(x.startswith(("launch[", "region[", "submission[", "raw")) for x in lines), lines   # the images agree


def test_diff_of_one_host_with_itself_says_images_and_host_plan(hosts, tmp_path):
    base, _, _ = hosts
    copy = tmp_path / "copy"
    shutil.copy(base, copy)
    done = bobc("diff", base, copy)
    assert done.returncode == 0 and done.stdout.splitlines() == [f"{base} and {copy} hold the same images and host plan"]


def test_an_image_folder_against_a_host_compares_images_only_and_says_so(hosts):
    base, images, changed = hosts
    done = bobc("diff", images, changed)
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines() == [
        f"{images} is an image folder, which carries no host plan: the images alone are compared",
        f"{images} and {changed} hold the same images"]


def test_inspect_shows_a_host_identity_that_tells_the_two_apart(hosts):
    base, _, changed = hosts
    a, b = (json.loads(bobc("inspect", "--json", host).stdout) for host in (base, changed))
    assert a["images_identity"] == b["images_identity"]          # the plan identity: the images only
    assert a["host_identity"] != b["host_identity"]
    text = bobc("inspect", changed).stdout
    assert f"host identity: sha256 {b['host_identity']} " in text


def test_dump_prints_the_host_plan(hosts):
    base, _, changed = hosts
    a, b = (bobc("dump", "--no-code", host).stdout.splitlines() for host in (base, changed))
    assert "host.plan.contract.schema = linreg-w-then-b-f32-v2|features=7" in b, b[-40:]
    assert any(x.startswith("host.version.plan identity = sha256 ") for x in a)
    assert any(x.startswith("host.identity = sha256 ") for x in a)
    only_b = sorted(set(b) - set(a))
    assert only_b and all(x.startswith("host.") for x in only_b), only_b     # the images' facts are the same


def test_inspect_names_the_host_by_its_own_file_name(hosts, tmp_path):
    """inspect printed "(bob-host --version)" whatever the host is called (finding 7)."""
    base, _, _ = hosts
    renamed = tmp_path / "logreg-trainer"
    shutil.copy(base, renamed)
    text = bobc("inspect", renamed).stdout
    assert "  needs and provenance (logreg-trainer --version):" in text and "bob-host" not in text, text
