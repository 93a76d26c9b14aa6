"""`make test`, the README's and CI's test command (.ci/run), closes its transcript with the
slowest setups and tests (--durations=30), so that a slow test shows in every CI log, and
`make test JOBS=N` runs the suite on N pytest-xdist workers (README "Running the tests faster";
probe s38 testspeed: no CI log of the 24-minute suite said where the time went)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import REPO


def _test_command(*arguments: str) -> list[str]:
    """The pytest line `make -n test ARGUMENTS` would run (-n: print, run nothing)."""
    if shutil.which("make") is None:
        pytest.fail("make is needed (.ci/run installs it otherwise)")
    done = subprocess.run(["make", "-n", "-C", str(REPO), "test", *arguments], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if " -m pytest " in line]
    return line.split()


def test_make_test_prints_the_thirty_slowest():
    words = _test_command()
    assert "--durations=30" in words
    assert "-n" not in words                     # one process unless asked
    assert words[-1] == "tests"


def test_make_test_jobs_runs_that_many_xdist_workers():
    words = _test_command("JOBS=2")
    assert words[words.index("-n") + 1] == "2"
    assert "--durations=30" in words and words[-1] == "tests"
