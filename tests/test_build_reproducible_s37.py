"""What decides a host's bytes (README, "What decides a host's bytes"; probe s37 repro).

A release engineer diffs hosts built elsewhere: the same plan, target, bobc and C toolchain give
the same bytes whatever the working folder, the plan's spelling (relative, absolute, through a
symlinked folder), an unrelated -I folder, the cache (warm against off), PYTHONHASHSEED, the
locale, TZ, SOURCE_DATE_EPOCH, HOME, TMPDIR, CC/CFLAGS/LDFLAGS; the umask decides only the mode.
The C toolchain does enter the bytes: the host's .comment names the gcc that built it, as gcc
itself reports its version (the oracle: `gcc -dumpfullversion`)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLANS = {"plan host": ("examples/linear_regression/LinReg/Build/NativeHost.bob", []),
         "native host": ("tests/native/plans/Native/Commands.bob", ["--entry", "arithmeticHost"])}

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def build(plan: str, options: list[str], output: Path, cwd: Path, environment: dict, umask: int = 0o022):
    done = subprocess.run([sys.executable, "-m", "bobc", "build", plan, *options, "-o", str(output)],
                          capture_output=True, text=True, timeout=600, cwd=cwd, env=environment,
                          umask=umask)
    assert done.returncode == 0, done.stderr
    return output.read_bytes()


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    """Each host as a plain build from the top of the checkout makes it, the plan path relative."""
    folder = tmp_path_factory.mktemp("first")
    return {name: build(plan, options, folder / name.replace(" ", "-"), REPO, dict(os.environ))
            for name, (plan, options) in PLANS.items()}


@pytest.mark.parametrize("name", list(PLANS))
def test_the_same_bytes_under_another_environment(first, tmp_path, name):
    plan, options = PLANS[name]
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "checkout").symlink_to(REPO)                   # the plan through a symlinked folder
    (tmp_path / "tmp").mkdir()
    (tmp_path / "unrelated").mkdir()
    environment = {**os.environ, "PYTHONHASHSEED": "4242", "TZ": "Asia/Kolkata", "LC_ALL": "C",
                   "LANG": "de_DE.UTF-8", "SOURCE_DATE_EPOCH": "0", "HOME": str(tmp_path / "home"),
                   "TMPDIR": str(tmp_path / "tmp"), "BOBC_CACHE_DIR": "off", "CC": "false",
                   "CFLAGS": "-O0 -g", "LDFLAGS": "-Wl,--build-id=none"}
    output = tmp_path / "a-longer-output-name"
    data = build(str(tmp_path / "checkout" / plan), [*options, "-I", str(tmp_path / "unrelated")], output,
                 tmp_path / "elsewhere", environment, umask=0o077)
    assert data == first[name]
    assert output.stat().st_mode & 0o777 == 0o700              # 0755 less the umask


def test_the_host_names_the_gcc_that_built_it(first):
    version = subprocess.run([shutil.which("gcc"), "-dumpfullversion"], capture_output=True,
                             text=True).stdout.strip()
    assert version
    for name, data in first.items():
        assert b"GCC: (" in data and version.encode() in data.split(b"GCC: (", 1)[1][:200], name
