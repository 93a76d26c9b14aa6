"""The kernel search (bobc/kernel_search.py find_source) searches the plan's folder
recursively, but not what holds installed software there: a virtual environment made inside
the project (with bobc installed in it, its _share/specs carries every standard kernel), an
installed bobc (`pip install --target vendor`), site-packages, hidden folders, __pycache__.
Probe s30 packaging finding 3: such a copy was found before (or beside) the standard
library's, and the build refused the plan."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.kernel_search import find_source

REPO = Path(__file__).resolve().parents[1]
KERNELS = Path("Realization/Nvidia/SM86")


def installed_copy(folder: Path, venv: bool = True) -> Path:
    """A fake installed bobc under `folder`: in a virtual environment's site-packages (with its
    pyvenv.cfg) or, with venv=False, as `pip install --target` leaves it."""
    site = folder / "lib" / "python3.11" / "site-packages" if venv else folder
    kernels = site / "bobc" / "_share" / "specs" / KERNELS
    kernels.mkdir(parents=True)
    for source in (REPO / "specs" / KERNELS).glob("bob-row-gather*.sass"):
        shutil.copy(source, kernels / source.name)
    if venv:
        (folder / "pyvenv.cfg").write_text("home = /usr/bin\ninclude-system-site-packages = false\n")
    return kernels


@pytest.mark.parametrize("where", [".venv", "venv", "env", "vendor", "deps/site-packages/x", ".git/x", "__pycache__"])
def test_installed_software_under_the_plan_folder_is_not_searched(tmp_path, where):
    if where in ("vendor",):
        installed_copy(tmp_path / where, venv=False)
    elif where in (".venv", "venv", "env"):
        installed_copy(tmp_path / where)
    else:       # no pyvenv.cfg and no bobc folder: left out by the folder's name alone
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "bob-row-gather.sass").write_text(".kernel bob-row-gather\n")
    assert find_source("bob-row-gather", [tmp_path], "sm_90") is None
    own = tmp_path / "Kernels" / "bob-row-gather.sass"
    own.parent.mkdir()
    own.write_text(".kernel bob-row-gather\n")
    assert find_source("bob-row-gather", [tmp_path], "sm_90") == own


def test_a_folder_named_on_the_search_path_is_searched_whatever_it_is(tmp_path):
    kernels = installed_copy(tmp_path / ".venv")
    specs = kernels.parents[2]          # .../bobc/_share/specs: how an installed bobc's specs/ is named
    assert find_source("bob-row-gather", [specs], "sm_90") == kernels / "bob-row-gather.sass"
    hidden = tmp_path / ".kernels" / "bob-row-gather.sass"        # -I .kernels
    hidden.parent.mkdir()
    hidden.write_text(".kernel bob-row-gather\n")
    assert find_source("bob-row-gather", [tmp_path / ".kernels"], "sm_90") == hidden
    assert find_source("bob-row-gather", [tmp_path], "sm_90") is None


def test_a_folder_only_named_like_bobc_is_searched(tmp_path):
    own = tmp_path / "bobc" / "kernels" / "bob-row-gather.sass"      # no _share: the user's own folder
    own.parent.mkdir(parents=True)
    own.write_text(".kernel bob-row-gather\n")
    assert find_source("bob-row-gather", [tmp_path], "sm_90") == own


@pytest.mark.parametrize("environments", [[".venv"], [".venv", "venv"]])
def test_a_plan_beside_virtual_environments_checks(tmp_path, cache_dir, environments):
    """The probe's two cases: one virtual environment with bobc in the plan's folder (the kernel
    search found its copy first: "the plan encodes ... but the kernel search finds ... first"),
    and two (two sources of one name: "the plan is not certified")."""
    shutil.copytree(REPO / "examples" / "bob" / "Bob", tmp_path / "Bob")
    for name in environments:
        installed_copy(tmp_path / name)
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    env.pop("BOBC_SPECS", None)
    done = subprocess.run([sys.executable, "-m", "bobc", "check", "Bob/Build/NativeHost.bob"],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "site-packages" not in done.stdout + done.stderr
