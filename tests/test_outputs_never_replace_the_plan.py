"""An output never replaces a file the command read (probe s27, finding 3): `bobc build -o`
naming one of the plan's own module files (the plan itself, a module it imports, a specs
module), and `bobc run --reference` naming a module or the reference kernels file it
imports, are refused with exit 8 as the host refuses an output that is an input, naming the
file, before anything is written -- whether the build loads the program or recalls it from
bobc's cache."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def bobc(cwd, *args, cache):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "BOBC_CACHE_DIR": str(cache)}, timeout=600)


def named(path: str) -> str:
    """How a message ends a path it names: a long one is shortened in its middle, its file name
    kept (docs/runtime.md), and tmp_path's length is the machine's (TMPDIR): only the file name,
    after a separator, is the same everywhere."""
    return "/" + Path(path).name


def _digests(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def linreg(tmp_path):
    folder = tmp_path / "plan"
    shutil.copytree(REPO / "examples/linear_regression", folder)
    return folder


@pytest.mark.parametrize("module", ["LinReg/Model.bob", "LinReg/Build/NativeHost.bob"])
def test_build_never_writes_over_a_module_of_the_plan(tmp_path, linreg, module):
    plan = linreg / "LinReg/Build/NativeHost.bob"
    before = _digests(linreg)
    cache = tmp_path / "cache"
    # cold (the program loaded), then warm twice (recalled: a successful build stores the program)
    outcomes = [bobc(tmp_path, "build", plan, "-o", linreg / module, cache=cache)]
    built = bobc(tmp_path, "build", plan, "-o", tmp_path / "host", cache=cache)
    assert built.returncode == 0, built.stderr
    outcomes.append(bobc(tmp_path, "build", plan, "-o", linreg / module, cache=cache))
    for done in outcomes:
        assert done.returncode == 8, done.stderr
        assert f"{linreg / module}: cannot write output (-o): is the input " in done.stderr
        assert f"{named(module)} (a module the build read); an output never replaces an input" in done.stderr
        assert "wrote" not in done.stdout
    assert _digests(linreg) == before


def test_build_never_writes_over_a_module_found_in_an_include_folder(tmp_path, linreg):
    """A module the plan imports from another folder of the search path (here -I, shadowing
    specs/'s copy; specs/ itself is read the same way) is read by the build too."""
    include = tmp_path / "include"
    imported = include / "Platform/Linux/Nvidia/PlanHost.bob"
    imported.parent.mkdir(parents=True)
    shutil.copy(REPO / "specs/Platform/Linux/Nvidia/PlanHost.bob", imported)
    plan = linreg / "LinReg/Build/NativeHost.bob"
    before = imported.read_bytes()
    done = bobc(tmp_path, "build", plan, "-I", include, "-o", imported, cache=tmp_path / "cache")
    assert done.returncode == 8, done.stderr
    assert "/PlanHost.bob (a module the build read); an output never replaces an input" in done.stderr
    assert imported.read_bytes() == before


def test_a_native_artifact_build_never_writes_over_its_module(tmp_path):
    folder = tmp_path / "plans"
    shutil.copytree(REPO / "tests/native/plans", folder)
    plan = folder / "Native/Request.bob"
    before = plan.read_bytes()
    cache = tmp_path / "cache"
    built = bobc(tmp_path, "build", plan, "--entry", "requestHost", "-o", tmp_path / "host", cache=cache)
    assert built.returncode == 0, built.stderr
    for _ in range(2):          # the artifact recalled from the cache, as after any successful build
        done = bobc(tmp_path, "build", plan, "--entry", "requestHost", "-o", plan, cache=cache)
        assert done.returncode == 8, done.stderr
        assert "/Request.bob (a module the build read); an output never replaces an input" in done.stderr
    assert plan.read_bytes() == before
    uncached = bobc(tmp_path, "build", plan, "--entry", "requestHost", "-o", plan, cache="off")
    assert uncached.returncode == 8 and "(a module the build read)" in uncached.stderr, uncached.stderr
    assert plan.read_bytes() == before


@pytest.mark.parametrize("option, victim, what", [
    ("--predictions", "reference_kernels.py", "the reference kernels this run imports"),
    ("--result", "LinReg/Model.bob", "a module of the plan"),
    ("--checkpoint-out", "LinReg/Build/NativeHost.bob", "a module of the plan"),
])
def test_run_reference_never_writes_over_the_plan_or_its_kernels(tmp_path, linreg, option, victim, what):
    record = tmp_path / "record.bin"
    made = subprocess.run([sys.executable, str(linreg / "make_record.py"), "-o", str(record)], capture_output=True,
                          text=True)
    assert made.returncode == 0, made.stderr
    outputs = {"--checkpoint-out": tmp_path / "c.bin", "--predictions": tmp_path / "p.bin",
               "--result": tmp_path / "r.bin", option: linreg / victim}
    before = _digests(linreg)
    done = bobc(tmp_path, "run", linreg / "LinReg/Build/NativeHost.bob", "train", "--reference", "--input", record,
                *(word for pair in outputs.items() for word in pair), cache=tmp_path / "cache")
    assert done.returncode == 8, done.stderr
    assert f"{named(victim)} ({option}): is the input " in done.stderr     # the plan host's words (probe s31 hostexe 5)
    assert f"{named(victim)} ({what}); an output never replaces an input" in done.stderr
    assert _digests(linreg) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "plan", "record.bin"]
    # the same command with its outputs elsewhere runs
    outputs[option] = tmp_path / "elsewhere.bin"
    done = bobc(tmp_path, "run", linreg / "LinReg/Build/NativeHost.bob", "train", "--reference", "--input", record,
                *(word for pair in outputs.items() for word in pair), cache=tmp_path / "cache")
    assert done.returncode == 0, done.stderr
