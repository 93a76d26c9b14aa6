"""How a bobc command ends on a signal (probe s31 signals findings 4-8).

SIGTERM and SIGHUP used to act as SIGKILL (no message, no cleanup: a build's `.NAME.tmp-*`
beside its output, a reference run's prepared temporaries, gcc children running on); now they end
a command as Ctrl-C does, every cleanup run, with one line (`bobc: terminated`, `bobc: hung up`)
and 128 + the signal's number.  A Ctrl-C while bobc starts is that one line too, never a
traceback; with stderr closed nothing goes to stdout in its place; and once a command has its
result, a signal no longer changes its exit code.
"""
from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
TIMEOUT_S = 180
LOCKED = b"bobc: folder out is locked"
ENDED = {signal.SIGINT: (130, "bobc: interrupted\n"), signal.SIGTERM: (143, "bobc: terminated\n"),
         signal.SIGHUP: (129, "bobc: hung up\n")}


def environment(tmp_path: Path, cache: Path) -> dict:
    env = {**os.environ, "BOBC_CACHE_DIR": str(cache), "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "compiler"), *filter(None, [env.get("PYTHONPATH")])])
    return env


def default_signals() -> None:
    """In the child: SIGINT and SIGHUP as a terminal's command gets them (a test suite started in
    the background has SIGINT ignored, and bobc keeps an ignored signal ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def wait_for(condition, process, what):
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        assert process.poll() is None, f"{what}: the command ended first"
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A cache with the C runtime compiled (a build then spends its time in the lock wait)."""
    folder = tmp_path_factory.mktemp("cache")
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", str(folder.parent / "warm")],
                          env=environment(folder.parent, folder / "c"), capture_output=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    return folder / "c"


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_build_ended_by_a_signal_says_so_and_leaves_nothing(tmp_path, cache, number):
    """`bobc build -o out/host` waiting for out's lock (its host written to `.host.tmp-*`), then
    the signal to bobc alone: its line, 128 + n, and neither the temporary nor bobc-proc-* left."""
    out = tmp_path / "out"
    out.mkdir()
    held = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(held, fcntl.LOCK_EX)
    err_path = tmp_path / "stderr"
    try:
        with open(err_path, "wb") as err:
            run = subprocess.Popen([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", "out/host"],
                                   cwd=tmp_path, env=environment(tmp_path, cache), stdout=subprocess.DEVNULL,
                                   stderr=err, preexec_fn=default_signals)
        try:
            wait_for(lambda: LOCKED in err_path.read_bytes(), run, "the lock notice")
            assert [n for n in os.listdir(out) if n.startswith(".host.tmp-")], os.listdir(out)
            run.send_signal(number)
            code, line = ENDED[number]
            assert run.wait(timeout=TIMEOUT_S) == code
            assert err_path.read_text().splitlines(keepends=True)[-1] == line
            assert os.listdir(out) == [], "the ended build left its temporary"
            assert os.listdir(tmp_path / "tmp") == [], "the ended build left its temporaries' folder"
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
    finally:
        os.close(held)


FAKE_GCC = """#!/bin/sh
# a compile of the C runtime (in bobc's workers) that never ends, its pid noted; anything else is gcc's
case "$*" in *host_plan.c*) exec "$REAL_GCC" "$@";; esac
for word in "$@"; do
    if [ "$word" = -c ]; then echo $$ >> "$FAKE_GCC_PIDS"; exec sleep 600; fi
done
exec "$REAL_GCC" "$@"
"""


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return False


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_a_build_ended_by_sigterm_stops_its_compilers(tmp_path, number):
    """SIGTERM (or SIGHUP) to bobc alone while gcc compiles the C runtime in bobc's workers:
    bobc stops its compilers and ends with its line.  Before, bobc died at once and they ran on
    (cc1 writing into the removed scratch folder); handled like Ctrl-C alone, bobc would wait for
    each running compile to end (here a compile that never does)."""
    import shutil

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "gcc").write_text(FAKE_GCC)
    (fake / "gcc").chmod(0o755)
    pids = tmp_path / "pids"
    pids.write_text("")
    env = environment(tmp_path, tmp_path / "cache")
    env.update(PATH=f"{fake}{os.pathsep}{env['PATH']}", FAKE_GCC_PIDS=str(pids), REAL_GCC=shutil.which("gcc"))
    run = subprocess.Popen([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", "host"], cwd=tmp_path,
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=default_signals)
    try:
        wait_for(lambda: len(pids.read_text().split()) >= min(2, os.cpu_count() or 1), run, "compiles at work")
        run.send_signal(number)
        code, line = ENDED[number]
        assert run.wait(timeout=60) == code
        assert run.stderr.read().decode().splitlines()[-1] == line.strip()
        compilers = [int(pid) for pid in pids.read_text().split()]
        assert not [pid for pid in compilers if alive(pid)], "compilers still running"
        assert not (tmp_path / "host").exists() and os.listdir(tmp_path / "tmp") == []
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        run.stderr.close()
        for pid in map(int, pids.read_text().split()):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


STARTING = """
import os, signal, sys
sys.argv[0] = "bobc"            # the command, as its console script starts it
signal.signal(signal.SIGINT, signal.default_int_handler)     # as a terminal's command has them: a test run
signal.signal(signal.SIGTERM, signal.SIG_DFL)                 # in the background has SIGINT ignored, under
signal.signal(signal.SIGHUP, signal.SIG_DFL)                  # nohup SIGHUP, and bobc keeps an ignored one so
import bobc                     # its first line: the command's own handling from here on
os.kill(os.getpid(), signal.{name})    # arrives while bobc.cli is imported
import bobc.cli
print("not stopped")
"""


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_bobc_starts_is_one_line(number):
    done = subprocess.run([sys.executable, "-c", STARTING.format(name=signal.Signals(number).name)],
                          env={**os.environ, "PYTHONPATH": str(REPO / "compiler")}, capture_output=True,
                          text=True, timeout=TIMEOUT_S)
    code, line = ENDED[number]
    assert (done.returncode, done.stderr, done.stdout) == (code, line, "")


def test_ctrl_c_while_the_command_line_is_read_is_one_line(monkeypatch, capsys):
    from bobc import cli

    def interrupted(only=None):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "build_parser", interrupted)
    try:
        code = cli.main(["check", "x.bob"])
    except KeyboardInterrupt:
        pytest.fail("a KeyboardInterrupt (a traceback) came out of cli.main")
    assert code == 130
    assert capsys.readouterr() == ("", "bobc: interrupted\n")


@pytest.mark.parametrize("plan", ["absent.bob", "Shadow.bob"])
def test_with_stderr_closed_json_is_the_only_thing_on_stdout(tmp_path, plan):
    """`2>&-`: Python's sys.stderr is None, and print(file=sys.stderr) wrote to stdout instead,
    after or before --json's one object (a refusal; check's warning).  Now such a line goes nowhere."""
    (tmp_path / "Shadow.bob").write_text("module Shadow\n\ndef zero : Nat = 1\n")      # a warning
    done = subprocess.run(["bash", "-c", 'exec "$0" -m bobc check --json "$1" 2>&-', sys.executable, plan],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO / "compiler"),
                                             "BOBC_CACHE_DIR": str(tmp_path / "cache")},
                          stdout=subprocess.PIPE, timeout=TIMEOUT_S)
    said = json.loads(done.stdout)          # one object, nothing before or after it
    if plan == "absent.bob":
        assert done.returncode == 2 and said["error"] == "no such file: absent.bob"
    else:
        assert done.returncode == 0 and "hides the built-in natural zero" in said["warnings"][0]


AFTER = """
import os, signal, sys
sys.argv[0] = "bobc"
import bobc.cli, bobc.cache
leave = bobc.cache.process_temporaries.__exit__
def leaving(self, *exception):      # the command has its result; its temporaries go now
    os.kill(os.getpid(), signal.{name})
    return leave(self, *exception)
bobc.cache.process_temporaries.__exit__ = leaving
sys.exit(bobc.cli.main(["eval", sys.argv[1], "answer"]))
"""


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_after_the_result_does_not_change_it(tmp_path, number):
    (tmp_path / "A.bob").write_text("module A\n\ndef answer : Nat = 42\n")
    done = subprocess.run([sys.executable, "-c", AFTER.format(name=signal.Signals(number).name), "A.bob"],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO / "compiler"),
                                             "TMPDIR": str(tmp_path)},
                          capture_output=True, text=True, timeout=TIMEOUT_S, preexec_fn=default_signals)
    assert (done.returncode, done.stdout, done.stderr) == (0, "42\n", "")
