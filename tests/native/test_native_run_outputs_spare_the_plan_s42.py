"""`bobc run PLAN native ARGUMENTS... --reference --entry DEF`: no argument the program writes may be
a file the command read -- the plan's modules, the --kernels file (probe s42 cli3 finding 4).
`bobc run Native/Arguments.bob native a0 a1 Native/Arguments.bob o3 --reference --entry
resumeInPlace` wrote argument 2 (argument 1's 16 bytes) over the plan module itself, exit 0.  README,
"Outputs are all or nothing": "no output may be another output or an input ... An input is any file
the command read (...) the plan's modules and the kernel sources (...), `bobc run`'s reference kernels
file", as `bobc run PLAN train --reference` refuses it (tests/test_outputs_never_replace_the_plan.py).
Expected: exit 8, the host's form of the refusal naming the file and what it is, every file as it was."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
PLANS = REPOSITORY / "tests/native/plans/Native"


@pytest.fixture
def work(tmp_path):
    (tmp_path / "Native").mkdir()
    for name in ("Arguments.bob", "Short.bob"):
        shutil.copy(PLANS / name, tmp_path / "Native" / name)
    (tmp_path / "a0").write_bytes(b"0123456789abcdef")
    (tmp_path / "a1").write_bytes(b"ABCDEFGHIJKLMNOP")
    (tmp_path / "k.py").write_text("def SUBMIT(machine, entry):\n    pass\n")
    return tmp_path


def bobc(work, *arguments, kernels=()):
    return subprocess.run([sys.executable, "-m", "bobc", "run", "Native/Arguments.bob", "native", *arguments,
                           "--reference", "--entry", "resumeInPlace", *kernels], cwd=work, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})


def contents(work):
    return {str(p.relative_to(work)): p.read_bytes() for p in sorted(work.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("arguments, argument, path, what", [
    (("a0", "a1", "Native/Arguments.bob", "o3"), 2, "Native/Arguments.bob", "a module of the plan"),
    (("a0", "a1", "Native/Short.bob", "o3"), 2, "Native/Short.bob", "a module of the plan"),
    (("Native/Arguments.bob", "a1", "o2", "o3"), 0, "Native/Arguments.bob", "a module of the plan"),
    (("a0", "a1", "o2", "k.py"), 3, "k.py", "the kernels file this run imports"),
], ids=["written", "imported-module", "read-and-written", "kernels-file"])
def test_an_output_argument_never_replaces_what_the_run_read(work, arguments, argument, path, what):
    before = contents(work)
    done = bobc(work, *arguments, kernels=("--kernels", "k.py"))
    assert done.returncode == 8, done.stderr
    # the input relative to the working folder, an imported module too (README: every source file a
    # message names is shown relative when under the working folder; tests/test_imported_module_shown_relative_s42.py)
    assert done.stderr == (f"native: output {path} (argument {argument}): is the input {path} ({what}); "
                           "an output never replaces an input; nothing was written\n"), done.stderr
    assert contents(work) == before


def test_other_outputs_are_written(work):
    done = bobc(work, "a0", "a1", "o2", "o3")
    assert done.returncode == 0, done.stderr
    assert (work / "o2").read_bytes() == b"ABCDEFGHIJKLMNOP"
