"""An output naming a module the plan IMPORTS is refused naming that module as README says every
source file a message names is shown: "relative to the working folder when it lies under it
(`LinReg/Model.bob:11:27`), else absolute" (README, "Every mistake a user can make").  The import
is found by an absolute path, and the refusal showed it so: `bobc build Native/Request.bob --entry
requestHost -o Native/Short.bob` said "is the input /tmp/.../Native/Short.bob (a module the build
read)" while the plan module itself was shown relative (probe s42 cli3, "Left").  Expected text from
README's rule: the path relative to the working folder, for the module the user named and the one
it imports alike; a module outside the working folder (specs/) stays absolute."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture
def work(tmp_path):
    shutil.copytree(REPOSITORY / "tests/native/plans", tmp_path / "plans")
    return tmp_path / "plans"


def build(work, output):
    return subprocess.run([sys.executable, "-m", "bobc", "build", "Native/Request.bob", "--entry", "requestHost",
                           "-o", output], cwd=work, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "BOBC_CACHE_DIR": "off"})


@pytest.mark.parametrize("module", ["Native/Short.bob", "Native/Request.bob"], ids=["imported", "named"])
def test_a_module_under_the_working_folder_is_named_relative(work, module):
    before = (work / module).read_bytes()
    done = build(work, module)
    assert done.returncode == 8, done.stderr
    assert (f"bobc build: error: {module}: cannot write output (-o): is the input {module} (a module the build "
            "read); an output never replaces an input\n") in done.stderr, done.stderr
    assert (work / module).read_bytes() == before


def test_a_module_outside_the_working_folder_stays_absolute(work, tmp_path):
    """-I puts a copy of a specs module outside the working folder: shown absolute, as README says."""
    include = tmp_path / "include"
    imported = include / "Platform/Linux/Nvidia/PlanHost.bob"
    imported.parent.mkdir(parents=True)
    shutil.copy(REPOSITORY / "specs/Platform/Linux/Nvidia/PlanHost.bob", imported)
    done = subprocess.run([sys.executable, "-m", "bobc", "build", "Native/Request.bob", "--entry", "requestHost",
                           "-I", str(include), "-o", str(imported)], cwd=work, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"),
                                            "BOBC_CACHE_DIR": "off"})
    assert done.returncode == 8, done.stderr
    # a long path is shortened in its middle (docs/runtime.md): its start and its file name are kept
    shown = done.stderr.partition("is the input ")[2].partition(" (a module the build read)")[0]
    assert shown.startswith("/") and shown.endswith("/PlanHost.bob"), \
        done.stderr
