"""Under CI a test that skips for any reason but "no GPU" fails (tests/conftest.py)."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

SAMPLE = '''
import pytest

def test_needs_missing_data():
    pytest.skip("reference data not found")

@pytest.mark.gpu
def test_on_the_gpu():
    pass

def test_plain():
    pass

@pytest.mark.xfail(reason="known")
def test_known_failure():
    assert False
'''


def run_sample(tmp_path, strict: bool):
    folder = REPO / "tests" / f"_sample_{os.getpid()}_{int(strict)}"
    folder.mkdir()
    try:
        (folder / "test_sample.py").write_text(SAMPLE)
        env = {k: v for k, v in os.environ.items() if k not in ("CI", "BOBC_STRICT_SKIPS")}
        if strict:
            env["CI"] = "true"
        env["BOBC_TEST_NO_GPU"] = "1"
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", str(folder)],
                              cwd=REPO, capture_output=True, text=True, env=env)
    finally:
        for path in folder.rglob("*"):
            if path.is_file():
                path.unlink()
        for path in sorted(folder.rglob("*"), reverse=True):
            path.rmdir()
        folder.rmdir()


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
