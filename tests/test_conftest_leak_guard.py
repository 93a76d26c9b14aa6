"""tests/conftest.py fails a test that leaves the process changed for the tests after it (a signal
handler, the environment, the working folder, the umask) and puts it back: CI runs every test in
one process, and such a change made later tests pass or fail by the order they ran in (session
34: an environment variable popped for good, a SIGINT disposition nobody could place)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

LEAKING = '''
import os, signal

def test_environment():
    os.environ["LEAK_GUARD_VARIABLE"] = "1"

def test_umask():
    os.umask(0o077)

def test_working_folder(tmp_path):
    os.chdir(tmp_path)

def test_signal_handler():
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)

def test_put_back_by_monkeypatch(monkeypatch, tmp_path):
    monkeypatch.setenv("LEAK_GUARD_OTHER", "1")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HOME", raising=False)

def test_after_them_all_is_as_before(tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    assert "LEAK_GUARD_VARIABLE" not in os.environ and "LEAK_GUARD_OTHER" not in os.environ
    assert mask == 0o022 and os.getcwd() == START
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL

START = os.getcwd()
'''


def test_a_test_that_leaves_the_process_changed_fails_and_the_next_starts_as_it_did(tmp_path):
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_leaking.py").write_text(LEAKING)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LEAK_GUARD", "PYTEST_"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rE", "--basetemp",
                           str(tmp_path / "t"), "test_leaking.py"], cwd=tmp_path, env=env, preexec_fn=lambda: os.umask(0o022),
                          capture_output=True, text=True, timeout=300)
    out = done.stdout
    assert done.returncode == 1, out
    assert "6 passed, 4 errors" in out, out
    for name, change in (("test_environment", "environment: LEAK_GUARD_VARIABLE: '(unset)' -> '1'"),
                         ("test_umask", "umask: '0o22' -> '0o77'"),
                         ("test_working_folder", "working folder: "),
                         ("test_signal_handler", "signal handlers: SIGUSR1: <Handlers.SIG_DFL: 0> -> <Handlers.SIG_IGN: 1>")):
        assert f"ERROR at teardown of {name} " in out and change in out, (name, out)
    assert "test_put_back_by_monkeypatch" not in out
