"""Two runs of the suite on one machine at once, or a run beside the user's own bobc, share
nothing (tests/conftest.py, "A run's own folder"; probe s36 parallelsuites): each run keeps its
temporaries (TMPDIR) and its bobc cache in its own pytest basetemp, and leaves no cache behind
in the user's ~/.cache/bobc."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO

RUN_VARIABLE = "BOBC_TEST_RUN"          # the run's folder, as tests/conftest.py names it

SAMPLE = '''
import os, tempfile, time
from pathlib import Path

from bobc import cache


def test_a_run_says_its_folders(tmp_path):
    cache.write("sample", "key", b"entry")             # through bobc's own cache folder()
    time.sleep(2)                                       # both runs are alive at once
    Path(os.environ["SAID"]).write_text("\\n".join([
        os.environ["TMPDIR"], tempfile.gettempdir(), os.environ.get("BOBC_CACHE_DIR", "(unset)"), str(cache.folder()),
        str(tmp_path), os.environ.get("{run}", "(unset)")]))
'''.replace("{run}", RUN_VARIABLE)


def test_this_run_keeps_its_temporaries_and_its_cache_in_its_own_folder(tmp_path_factory):
    run = tmp_path_factory.getbasetemp()
    assert os.environ[RUN_VARIABLE] == str(run)
    assert os.environ["TMPDIR"] == tempfile.gettempdir() == str(run / "tmp")
    if not os.environ.get("BOBC_TEST_CACHE_DIR"):
        assert os.environ["BOBC_CACHE_DIR"] == str(run / "bobc-cache")


def test_two_runs_at_once_share_no_folder_and_leave_no_cache(tmp_path):
    """Two pytest sessions started together with one TMPDIR and one HOME, as two `make test` of a
    user: each gets its own TMPDIR and cache inside its own basetemp, the user's ~/.cache/bobc is
    never made, and each run's cache is gone once it ended."""
    machine, home = tmp_path / "machine-tmp", tmp_path / "home"
    machine.mkdir()
    home.mkdir()
    (tmp_path / "sample").mkdir()
    (tmp_path / "sample" / "test_sample.py").write_text(SAMPLE)
    environment = {name: value for name, value in os.environ.items()
                   if name not in (RUN_VARIABLE, "BOBC_CACHE_DIR", "BOBC_TEST_CACHE_DIR", "XDG_CACHE_HOME")}
    environment.update(TMPDIR=str(machine), HOME=str(home), PYTHONPATH=str(REPO / "compiler"))
    runs = [subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                              "-c", str(REPO / "pyproject.toml"), str(tmp_path / "sample")],
                             cwd=REPO, env={**environment, "SAID": str(tmp_path / f"said{k}")},
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for k in range(2)]
    for run in runs:
        out, _ = run.communicate(timeout=300)
        assert run.returncode == 0, out
    said = [(tmp_path / f"said{k}").read_text().split("\n") for k in range(2)]
    for temporary, gettempdir, cache_variable, cache_folder, test_folder, run_folder in said:
        run = Path(run_folder)
        assert run.parent.parent == machine and run.name.startswith("pytest-"), run   # pytest-of-USER/pytest-N
        assert temporary == gettempdir == str(run / "tmp")
        assert cache_variable == cache_folder == str(run / "bobc-cache")
        assert Path(test_folder).parent == run
        assert not Path(cache_folder).exists()                   # removed when its run ended
    assert said[0][5] != said[1][5]
    assert not (home / ".cache").exists()



WORKER_SAMPLE = '''
import os, tempfile, time
from pathlib import Path

from bobc import cache


def test_a_worker_says_its_folders(tmp_path):
    cache.write("sample", "key", b"entry")             # through bobc's own cache folder()
    time.sleep(2)                                       # both workers are alive at once
    Path(os.environ["SAID"], os.environ["PYTEST_XDIST_WORKER"]).write_text("\\n".join([
        os.environ["TMPDIR"], tempfile.gettempdir(), os.environ["BOBC_CACHE_DIR"], str(cache.folder()),
        str(tmp_path), os.environ["{run}"]]))
'''.replace("{run}", RUN_VARIABLE)


def test_each_xdist_worker_keeps_its_temporaries_and_its_cache_in_its_own_folder(tmp_path):
    """`pytest -n 2` (pytest-xdist, the test extra's; README "Running the tests faster"): each
    worker is a run of its own, its TMPDIR and bobc cache in its own basetemp (the controller's
    popen-gwK), not the controller's folders shared by both, where the tests that count what a build
    left in TMPDIR or in the cache saw the other worker's files."""
    pytest.importorskip("xdist", reason="pytest-xdist is in the test extra (pip install -e '.[test]')")
    (tmp_path / "sample").mkdir()
    (tmp_path / "sample" / "test_sample.py").write_text(WORKER_SAMPLE)
    (tmp_path / "said").mkdir()
    environment = {name: value for name, value in os.environ.items()
                   if name not in (RUN_VARIABLE, "BOBC_CACHE_DIR", "BOBC_TEST_CACHE_DIR")}
    environment.update(PYTHONPATH=str(REPO / "compiler"), SAID=str(tmp_path / "said"))
    base = tmp_path / "base"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                           "-c", str(REPO / "pyproject.toml"), "-n", "2", "--dist", "each",   # each worker runs it
                           "--basetemp", str(base), str(tmp_path / "sample")],
                          cwd=REPO, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    said = {path.name: path.read_text().split("\n") for path in (tmp_path / "said").iterdir()}
    assert sorted(said) == ["gw0", "gw1"]
    for worker, (temporary, gettempdir, cache_variable, cache_folder, test_folder, run_folder) in said.items():
        own = base / f"popen-{worker}"                           # xdist's basetemp for the worker
        assert run_folder == str(own)
        assert temporary == gettempdir == str(own / "tmp")
        assert cache_variable == cache_folder == str(own / "bobc-cache")
        assert Path(test_folder).parent == own
        assert not Path(cache_folder).exists()                   # removed when its worker ended
