"""Under CI a test that skips for any reason but "no GPU" fails (tests/conftest.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

SAMPLE = '''
import os
import pytest

def test_needs_missing_data():
    pytest.skip("reference data not found")

@pytest.mark.gpu
def test_on_the_gpu():
    pass

def test_plain():
    with open(os.environ["SAMPLE_SAYS"], "w") as said:
        said.write(__file__)

@pytest.mark.xfail(reason="known")
def test_known_failure():
    assert False
'''


def run_sample(tmp_path, strict: bool):
    """SAMPLE run by a pytest of its own with tests/conftest.py's hooks (-p) and the project's
    settings (-c): in tmp_path, not in the checkout, where another run collected it (and, under
    CI, failed on its skip), and where a run killed meanwhile left it (probe s36 parallelsuites
    finding 3).  test_plain writes its file's path to tmp_path/said."""
    folder = tmp_path / f"sample{int(strict)}"
    folder.mkdir()
    (folder / "test_sample.py").write_text(SAMPLE)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BOBC_STRICT_SKIPS")}
    if strict:
        env["CI"] = "true"
    env["BOBC_TEST_NO_GPU"] = "1"
    env["SAMPLE_SAYS"] = str(tmp_path / "said")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider",
                           "-p", "tests.conftest", "-c", str(REPO / "pyproject.toml"), str(folder)],
                          cwd=REPO, capture_output=True, text=True, env=env)


def test_the_sample_runs_outside_the_checkout(tmp_path):
    done = run_sample(tmp_path, strict=False)
    assert done.returncode == 0, done.stdout
    assert REPO not in Path((tmp_path / "said").read_text()).parents


def test_a_data_skip_fails_under_ci_and_a_gpu_skip_does_not(tmp_path):
    done = run_sample(tmp_path, strict=True)
    assert done.returncode == 1, done.stdout
    assert "test_needs_missing_data" in done.stdout
    assert "reference data not found" in done.stdout
    assert "1 failed, 1 passed, 1 skipped, 1 xfailed" in done.stdout, done.stdout


def test_outside_ci_a_skip_is_a_skip(tmp_path):
    done = run_sample(tmp_path, strict=False)
    assert done.returncode == 0, done.stdout
    assert "1 passed, 2 skipped, 1 xfailed" in done.stdout, done.stdout
