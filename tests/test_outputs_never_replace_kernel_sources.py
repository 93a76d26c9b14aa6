"""An output never replaces a kernel source the command read (probe s30 cli finding 1): `bobc
build -o`, `bobc run --reference` and `bobc sim` outputs naming one of the plan's .sass kernel
sources (in the plan's folder or the standard library's specs/), a hard link to one, or (sim)
a file of the --images folder it runs, are refused with exit 8 as an output naming a module is,
naming both files, before anything is written -- whether the build loads the program or
recalls it from bobc's cache."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SGD = "LinReg/kernels/linreg-sgd.sass"


def bobc(cwd, *args, cache, env=None):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "BOBC_CACHE_DIR": str(cache), **(env or {})}, timeout=600)


def _digests(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(done, output, option, victim, what, host=False):
    assert done.returncode == 8, (done.returncode, done.stdout, done.stderr)
    # both named (a long path is shortened in the middle, as the host's messages are); `bobc run
    # --reference` and `bobc sim` word it as the plan host does (probe s31 hostexe finding 5, probe
    # s36 simwords finding 1)
    said = f"{Path(output).name} ({option}): is the input " if host else \
        f"{Path(output).name}: cannot write output ({option}): is the input "
    assert said in done.stderr, done.stderr
    assert f"{Path(victim).name} ({what}); an output never replaces an input" in done.stderr, done.stderr
    assert "wrote" not in done.stdout


@pytest.fixture
def linreg(tmp_path):
    folder = tmp_path / "plan"
    shutil.copytree(REPO / "examples/linear_regression", folder)
    return folder


@pytest.fixture
def record(tmp_path, linreg):
    path = tmp_path / "record.bin"
    made = subprocess.run([sys.executable, str(linreg / "make_record.py"), "-o", str(path)], capture_output=True,
                          text=True)
    assert made.returncode == 0, made.stderr
    return path


@pytest.mark.parametrize("kernel", ["linreg-sgd", "linreg-predict", "linreg-loss-grad"])
def test_build_never_writes_over_a_kernel_source_of_the_plan(tmp_path, linreg, kernel):
    plan = linreg / "LinReg/Build/NativeHost.bob"
    source = linreg / f"LinReg/kernels/{kernel}.sass"
    before = _digests(linreg)
    cache = tmp_path / "cache"
    # cold (the program loaded), then warm (recalled: a successful build stores the program)
    outcomes = [bobc(tmp_path, "build", plan, "-o", source, cache=cache)]
    built = bobc(tmp_path, "build", plan, "-o", tmp_path / "host", cache=cache)
    assert built.returncode == 0, built.stderr
    outcomes.append(bobc(tmp_path, "build", plan, "-o", source, cache=cache))
    outcomes.append(bobc(tmp_path, "build", plan, "-o", source, cache="off"))
    for done in outcomes:
        _refused(done, source, "-o", source, "a kernel source the build read")
    assert _digests(linreg) == before


def test_build_never_writes_over_a_hard_link_to_a_kernel_source(tmp_path, linreg):
    plan = linreg / "LinReg/Build/NativeHost.bob"
    link = tmp_path / "link.sass"
    os.link(linreg / SGD, link)
    before = _digests(linreg)
    done = bobc(tmp_path, "build", plan, "-o", link, cache=tmp_path / "cache")
    _refused(done, link, "-o", linreg / SGD, "a kernel source the build read")
    assert _digests(linreg) == before


def test_build_never_writes_over_a_standard_library_kernel(tmp_path):
    """The Bob example's kernels are specs/'s (here a copy named by BOBC_SPECS)."""
    specs = tmp_path / "specs"
    shutil.copytree(REPO / "specs", specs)
    victim = specs / "Realization/Nvidia/SM86/bob-adamw.sass"
    before = _digests(specs)
    done = bobc(tmp_path, "build", REPO / "examples/bob/Bob/Build/NativeHost.bob", "-o", victim,
                cache=tmp_path / "cache", env={"BOBC_SPECS": str(specs)})
    _refused(done, victim, "-o", victim, "a kernel source the build read")
    assert _digests(specs) == before


@pytest.mark.parametrize("option", ["--checkpoint-out", "--predictions", "--result"])
def test_run_reference_never_writes_over_a_kernel_source(tmp_path, linreg, record, option):
    outputs = {"--checkpoint-out": tmp_path / "c.bin", "--predictions": tmp_path / "p.bin",
               "--result": tmp_path / "r.bin", option: linreg / SGD}
    before = _digests(linreg)
    done = bobc(tmp_path, "run", linreg / "LinReg/Build/NativeHost.bob", "train", "--reference", "--input", record,
                *(word for pair in outputs.items() for word in pair), cache=tmp_path / "cache")
    _refused(done, linreg / SGD, option, linreg / SGD, "a kernel source of the plan", host=True)
    assert _digests(linreg) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "plan", "record.bin"]


@pytest.mark.parametrize("victim, what", [(SGD, "a kernel source of the plan"),
                                          ("LinReg/Build/NativeHost.bob", "a module of the plan")])
def test_sim_never_writes_over_the_plan_or_its_kernel_sources(tmp_path, linreg, record, victim, what):
    outputs = {"--checkpoint-out": tmp_path / "c.bin", "--predictions": linreg / victim, "--result": tmp_path / "r.bin"}
    before = _digests(linreg)
    done = bobc(tmp_path, "sim", linreg / "LinReg/Build/NativeHost.bob", "train", "--input", record,
                *(word for pair in outputs.items() for word in pair), cache=tmp_path / "cache")
    # the host's line, as `bobc run --reference` says it: docs/simulator.md gives sim "the same one-line
    # refusals and exit codes" as the host and the reference (probe s36 simwords finding 1: this test
    # had pinned bobc's own `PATH: cannot write output (...)` form for sim, which no doc gives it)
    _refused(done, linreg / victim, "--predictions", linreg / victim, what, host=True)
    assert _digests(linreg) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "plan", "record.bin"]


def test_sim_never_writes_over_the_images_it_runs(tmp_path, linreg, record):
    plan = linreg / "LinReg/Build/NativeHost.bob"
    images = tmp_path / "images"
    cache = tmp_path / "cache"
    emitted = bobc(tmp_path, "build", plan, "--emit-images", images, cache=cache)
    assert emitted.returncode == 0, emitted.stderr
    before = _digests(images)
    done = bobc(tmp_path, "sim", plan, "train", "--images", images, "--input", record,
                "--checkpoint-out", tmp_path / "c.bin", "--predictions", tmp_path / "p.bin",
                "--result", images / "qmd.bin", cache=cache)
    _refused(done, images / "qmd.bin", "--result", images / "qmd.bin", "one of the --images files", host=True)
    assert _digests(images) == before
    assert not (tmp_path / "c.bin").exists() and not (tmp_path / "p.bin").exists()
