"""A command ended by a signal stops every process it started, and their own children (probe s35
interrupt findings 1-3; README, "Exit codes").

Finding 3: a SIGINT sent to bobc alone (`kill -INT`, a supervisor: not a terminal's Ctrl-C, which
reaches the whole process group) ended bobc with its line, but the gcc driver's own child (cc1,
as) ran on: subprocess.run SIGKILLs only the process it started, and bobc swept its descendants
for SIGTERM and SIGHUP only."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.test_cli_signals import alive, default_signals

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
DEADLINE_S = 60

# the gcc driver runs its compiler proper as a child and waits for it; here the header listing
# (`gcc -M`, run from bobc's main thread before anything is compiled) does so, its child noted
FAKE_GCC = """#!/bin/sh
for word in "$@"; do
    if [ "$word" = -M ]; then sh -c 'echo $$ >> "$FAKE_PIDS"; exec sleep 600'; exit 1; fi
done
exec "$REAL_GCC" "$@"
"""


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@contextmanager
def bobc_with(tmp_path: Path, argv: list[str], **settings: str):
    """`python -m bobc ARGV` in tmp_path with its own cache and TMPDIR and `settings` in its
    environment, started as a terminal's command; yields (the process, the file its fakes write
    their pids to).  Afterwards nothing it or its fakes started is left running."""
    pids = tmp_path / "pids"
    pids.write_text("")
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "BOBC_CACHE_DIR": str(tmp_path / "cache"), "TMPDIR": str(tmp_path / "tmp"),
           "FAKE_PIDS": str(pids), **settings,
           "PYTHONPATH": os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    run = subprocess.Popen([sys.executable, "-m", "bobc", *argv], cwd=tmp_path, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=default_signals)
    try:
        yield run, pids
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        run.stderr.close()
        for pid in map(int, pids.read_text().split()):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def gcc_on_path(tmp_path: Path, script: str) -> dict:
    """The environment settings that put `script` first on PATH as gcc (the real one in REAL_GCC)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "gcc").write_text(script)
    (fake / "gcc").chmod(0o755)
    return {"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "REAL_GCC": shutil.which("gcc"),
            "PYTHON": sys.executable}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_sigint_to_bobc_alone_stops_its_compilers_children(tmp_path):
    with bobc_with(tmp_path, ["build", str(PLAN), "-o", "host"], **gcc_on_path(tmp_path, FAKE_GCC)) as (run, pids):
        wait_until(lambda: pids.read_text().split() or run.poll() is not None, "the compiler's child started")
        assert run.poll() is None, run.stderr.read().decode()
        run.send_signal(signal.SIGINT)          # to bobc alone, not its process group
        assert run.wait(timeout=DEADLINE_S) == 130
        assert run.stderr.read().decode().splitlines()[-1] == "bobc: interrupted"
        child = int(pids.read_text().split()[0])
        wait_until(lambda: not alive(child), "the compiler's child still runs after bobc ended")
        assert os.listdir(tmp_path / "tmp") == []


# finding 1: the C runtime's compiles (in bobc's workers) ignore SIGTERM and never end by themselves
STUBBORN_GCC = """#!/bin/sh
case "$*" in *host_plan.c*) exec "$REAL_GCC" "$@";; esac
for word in "$@"; do
    if [ "$word" = -c ]; then
        exec "$PYTHON" -c 'import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
open(os.environ["FAKE_PIDS"], "a").write(f"{os.getpid()}\\n")
time.sleep(600)'
    fi
done
exec "$REAL_GCC" "$@"
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_sigterm_ends_a_build_whose_compilers_ignore_it(tmp_path):
    with bobc_with(tmp_path, ["build", str(PLAN), "-o", "host"], **gcc_on_path(tmp_path, STUBBORN_GCC)) as (run, pids):
        wanted = min(2, os.cpu_count() or 1)
        wait_until(lambda: len(pids.read_text().split()) >= wanted or run.poll() is not None, "compiles at work")
        assert run.poll() is None, run.stderr.read().decode()
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=DEADLINE_S) == 143
        assert run.stderr.read().decode().splitlines()[-1] == "bobc: terminated"
        assert not [pid for pid in map(int, pids.read_text().split()) if alive(pid)], "compilers still running"
        assert not (tmp_path / "host").exists() and os.listdir(tmp_path / "tmp") == []


# finding 2: nvdisasm, run side by side in worker threads by dump, diff and inspect, never ends by
# itself and ignores SIGTERM
STUBBORN_NVDISASM = """#!{python}
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
open(os.environ["FAKE_PIDS"], "a").write(f"{{os.getpid()}}\\n")
time.sleep(600)
"""


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_dump_whose_nvdisasm_ignores_sigterm(tmp_path, number):
    fake = tmp_path / "nvdisasm"
    fake.write_text(STUBBORN_NVDISASM.format(python=sys.executable))
    fake.chmod(0o755)
    with bobc_with(tmp_path, ["dump", str(REPO / "tests/golden/bob-sm_90")], BOBC_NVDISASM=str(fake)) as (run, pids):
        wait_until(lambda: len(pids.read_text().split()) >= 2 or run.poll() is not None, "nvdisasm at work")
        assert run.poll() is None, run.stderr.read().decode()
        run.send_signal(number)                 # to bobc alone
        code, line = {signal.SIGTERM: (143, "bobc: terminated"), signal.SIGINT: (130, "bobc: interrupted")}[number]
        assert run.wait(timeout=DEADLINE_S) == code
        assert run.stderr.read().decode().splitlines()[-1] == line
        assert not [pid for pid in map(int, pids.read_text().split()) if alive(pid)], "nvdisasm still running"
        assert os.listdir(tmp_path / "tmp") == []
