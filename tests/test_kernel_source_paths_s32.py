"""A kernel source a plan names is relative to the plan's root, an -I folder or specs/
(docs/writing-a-plan.md, section 2).  An absolute path (`b"/etc/passwd"`) or one climbing out
of the folder (`b"../../../../etc/hostname"`) was read wherever it led, and an empty one was
refused as "kernel source  is in none of" (probe s32 contracts finding 10)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.kernel_search import SourceError, find_named
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("source, says", [
    ("", "the kernel source is empty: a kernel source is named relative to the plan's root, an -I folder or specs/"),
    ("  ", "the kernel source '  ' is only spaces"),
    ("/etc/passwd", "kernel source /etc/passwd is an absolute path: a kernel source is named relative to"),
    ("../k/x.sass", "kernel source ../k/x.sass climbs out of the folder it is named from ('..')"),
    ("a/../../k/x.sass", "kernel source a/../../k/x.sass climbs out of the folder"),
])
def test_a_source_that_is_not_relative_to_a_search_folder_is_refused(tmp_path, source, says):
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "x.sass").write_text("EXIT\n")
    with pytest.raises(SourceError) as caught:
        find_named(source, [tmp_path / "plan"], SM86)
    assert caught.value.message.startswith(says), caught.value.message
    assert "  " not in caught.value.message.replace("'  '", "'blank'")


def test_a_path_that_stays_in_its_folder_is_found(tmp_path):
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "x.sass").write_text("EXIT\n")
    assert find_named("k/../k/x.sass", [tmp_path], SM86) == tmp_path / "k/../k/x.sass"
    assert find_named("./k/x.sass", [tmp_path], SM86) == tmp_path / "k" / "x.sass"


@pytest.mark.parametrize("named, says", [
    ("/etc/passwd", "NativeHost.bob:44:59: error: kernel source /etc/passwd is an absolute path"),
    ("../../../../etc/hostname", "NativeHost.bob:44:59: error: kernel source ../../../../etc/hostname climbs out"),
    ("", "NativeHost.bob:44:59: error: the kernel source is empty"),
])
def test_a_plan_naming_such_a_source_is_refused_at_the_name(tmp_path, named, says):
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    host = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    text = host.read_text()
    old = 'SM86ProgramAssembly b"LinReg/kernels/linreg-sgd.sass"'
    assert text.splitlines()[43].count(old) == 1
    host.write_text(text.replace(old, f'SM86ProgramAssembly b"{named}"', 1))
    result = subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"],
                            capture_output=True, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert says in result.stderr
    assert "is kernel passwd" not in result.stderr and "is in none of" not in result.stderr
