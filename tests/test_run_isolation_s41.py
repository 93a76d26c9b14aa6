"""A pytest-xdist worker's reachable_folder is in the machine's temporary folder, as a one-process
run's is (tests/conftest.py, "A run's own folder"; probe s41 leftovers6).  Each worker is a run of its
own, so its TMPDIR when it starts is already its controller's private run/tmp: the worker had taken
that for the machine's temporary folder, and the tests that run code as another user (setuid:
tests/reference/test_safe_io_journal.py, test_safe_io_publish2.py) made their folders under
/tmp/pytest-of-USER, which pytest makes 0700 -- the other user could not reach them
('Permission denied' at exec), and those four tests failed only under `make test JOBS=2`."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REACHABLE_VARIABLE, REPO, RUN_VARIABLE

WORKER_SAMPLE = '''
import os
from pathlib import Path

from tests.conftest import reachable_folder


def test_a_worker_says_where_its_reachable_folders_go():
    folder = reachable_folder("bobc-s41-")
    try:
        Path(os.environ["SAID"], os.environ["PYTEST_XDIST_WORKER"]).write_text(
            "\\n".join([str(folder.parent), os.environ["TMPDIR"]]))
    finally:
        folder.rmdir()
'''


def test_each_xdist_workers_reachable_folders_are_in_the_machines_temporary_folder(tmp_path):
    """Expected: the TMPDIR the run was started with (the machine's temporary folder, `machine`
    here) -- the folder a one-process run uses, and the only one outside pytest's 0700
    pytest-of-USER; each worker's own TMPDIR is elsewhere, inside that private folder."""
    pytest.importorskip("xdist", reason="pytest-xdist is in the test extra (pip install -e '.[test]')")
    machine = tmp_path / "machine-tmp"
    machine.mkdir()
    (tmp_path / "sample").mkdir()
    (tmp_path / "sample" / "test_sample.py").write_text(WORKER_SAMPLE)
    (tmp_path / "said").mkdir()
    environment = {name: value for name, value in os.environ.items()       # a fresh `make test JOBS=2`
                   if name not in (RUN_VARIABLE, REACHABLE_VARIABLE, "BOBC_CACHE_DIR", "BOBC_TEST_CACHE_DIR")}
    environment.update(PYTHONPATH=str(REPO / "compiler"), SAID=str(tmp_path / "said"), TMPDIR=str(machine))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                           "-c", str(REPO / "pyproject.toml"), "-n", "2", "--dist", "each",   # each worker runs it
                           str(tmp_path / "sample")],
                          cwd=REPO, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    said = {path.name: path.read_text().split("\n") for path in (tmp_path / "said").iterdir()}
    assert sorted(said) == ["gw0", "gw1"]
    for worker, (reachable_parent, own_temporary) in said.items():
        assert reachable_parent == str(machine), worker
        assert Path(own_temporary).parent.name == f"popen-{worker}", own_temporary   # its own, private
