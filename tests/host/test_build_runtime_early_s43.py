"""`bobc build -o HOST` compiles the C runtime while it evaluates the plan (probe s43 buildearly).

The runtime's objects depend on no plan (runtime_c/'s sources, the flags, the compiler), yet a
build compiled them only after evaluating, certifying and encoding the plan and compiling its
generated C: on a first build, gcc's seconds came on top of the evaluation's.  Now their compile
(gcc.compiled_early) starts before the plan is read, in a thread of its own, and the link waits for
whatever is left of it.  What must not change, each held here against a build that compiles them
when it links (gcc.compiled_early turned into a no-op: the build as it was):

- the host's bytes;
- what the build says: the `compiling the C runtime` line once, where it was (not before a plan's
  error, which stops the build first);
- a plan's error, or Ctrl-C, while the runtime compiles: the error (or `bobc: interrupted`, 130)
  is all that is said, every gcc is stopped and reaped, and no scratch folder or temporary is left;
- a gcc failure: its message, as a build that compiled then says it;
- the cache: the objects compiled early are kept, and the next build compiles none.

The fake gcc is a shell script in front of the real one: it notes each `-c` of a runtime source,
and either compiles it with the real gcc, never ends (sleep), or fails with a compile error.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
TIMEOUT_S = 300

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

# $FAKE_GCC_MODE: "compile" (note, then the real gcc), "hang" (note, then never end), "fail" (host_io.c
# fails with a compile error, the rest compiles); anything but a runtime source's -c is the real gcc's
FAKE_GCC = """#!/bin/sh
case "$*" in *host_plan.c*) exec "$REAL_GCC" "$@";; esac
for word in "$@"; do
    if [ "$word" = -c ]; then
        echo $$ >> "$FAKE_GCC_PIDS"
        case "$FAKE_GCC_MODE" in
            hang) exec sleep 600;;
            fail) case "$*" in *host_io.c*) echo "host_io.c:1:1: error: forced by the test" >&2; exit 1;; esac;;
        esac
        exec "$REAL_GCC" "$@"
    fi
done
exec "$REAL_GCC" "$@"
"""


def alive(pid: int) -> bool:
    """Running, or ended and not reaped (a zombie): either is a gcc the build did not finish with."""
    return Path(f"/proc/{pid}").exists()


def pids(log: Path) -> list[int]:
    return [int(word) for word in log.read_text().split()] if log.exists() else []


@pytest.fixture
def fake_gcc(tmp_path, monkeypatch):
    """The fake gcc first on PATH, a fresh cache and TMPDIR; yields (log of -c pids, set mode)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "gcc").write_text(FAKE_GCC)
    (folder / "gcc").chmod(0o755)
    log = tmp_path / "pids"
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("REAL_GCC", shutil.which("gcc"))
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_GCC_PIDS", str(log))
    monkeypatch.setenv("FAKE_GCC_MODE", "compile")
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    yield log, lambda mode: monkeypatch.setenv("FAKE_GCC_MODE", mode)
    for pid in pids(log):             # never leave a hanging fake behind, whatever the outcome
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def serial(monkeypatch):
    """The build as it was: no early compile (the objects compiled when the host is linked)."""
    from bobc.host import gcc

    monkeypatch.setattr(gcc, "compiled_early", lambda sources: contextlib.nullcontext())


def evaluating(monkeypatch, before=lambda: None, plan: Path | None = None):
    """pipeline.compile_plan (the plan's evaluation) preceded by `before()`, on `plan` if given."""
    from bobc import pipeline

    real = pipeline.compile_plan

    def compile_plan(path, *args, **options):
        before()
        return real(plan if plan is not None else path, *args, **options)

    monkeypatch.setattr(pipeline, "compile_plan", compile_plan)


def wait_until(condition, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def build(capsys, output: Path, *more) -> tuple[int, str, str]:
    from bobc import cli

    code = cli.main(["build", str(PLAN), "--target", "sm_90", "-o", str(output), *more])
    out, err = capsys.readouterr()
    return code, out, err


def scratch_left(cache: Path) -> list[str]:
    return sorted(str(p.relative_to(cache)) for p in cache.rglob(".tmp-*")) if cache.exists() else []


def early_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("bobc-gcc")]


def test_the_runtime_compiles_while_the_plan_is_evaluated_into_the_same_host(tmp_path, fake_gcc, monkeypatch, capsys):
    """The first runtime `gcc -c` starts before the plan's evaluation ends (the evaluation waits
    for it here: before, it came only after, and this waited in vain); the host is byte for byte
    the one a build that compiles when it links makes, the notice said once before `wrote`; the
    objects are kept, so the next build compiles none and says nothing of it."""
    log, _ = fake_gcc
    evaluating(monkeypatch, lambda: wait_until(lambda: pids(log), "no runtime compile began during evaluation",
                                               seconds=60))
    code, out, err = build(capsys, tmp_path / "early")
    assert code == 0, err
    assert err.count("bobc: compiling the C runtime") == 1, err
    assert out.strip().endswith("(sm_90)"), out
    compiled = len(pids(log))
    assert compiled > 0

    again, _, said = build(capsys, tmp_path / "again")      # the objects from the cache: no compile
    assert again == 0 and "compiling the C runtime" not in said, said
    assert len(pids(log)) == compiled, "the runtime was compiled again: the early objects were not kept"
    assert (tmp_path / "again").read_bytes() == (tmp_path / "early").read_bytes()

    serial(monkeypatch)
    evaluating(monkeypatch)
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache-serial"))
    code, _, said = build(capsys, tmp_path / "serial")
    assert code == 0, said
    assert said == err, "the serial build says another thing"
    assert (tmp_path / "serial").read_bytes() == (tmp_path / "early").read_bytes()
    assert early_threads() == []


def bad_plan(tmp_path: Path) -> Path:
    plan = tmp_path / "Bad" / "Plan.bob"
    plan.parent.mkdir()
    plan.write_text("module Bad.Plan\n\ndef x : Nat = true\n")
    return plan


@pytest.mark.parametrize("ending", ["plan error", "ctrl-c"])
def test_an_evaluation_that_fails_stops_the_runtime_compile_and_leaves_nothing(tmp_path, fake_gcc, monkeypatch,
                                                                              capsys, ending):
    """The plan's error (or Ctrl-C) while the runtime's compilers run (here: never end): what the
    build says is what a build that never started them says (the plan's error; `bobc: interrupted`,
    130), at once, and each compiler is stopped and reaped, its scratch folder in the cache and the
    command's temporaries gone, no host, no thread left."""
    log, mode = fake_gcc
    mode("hang")
    started = lambda: wait_until(lambda: len(pids(log)) >= min(2, os.cpu_count() or 1), "no compiler started")

    def interrupted():
        started()
        raise KeyboardInterrupt

    evaluating(monkeypatch, interrupted if ending == "ctrl-c" else started,
               plan=bad_plan(tmp_path) if ending == "plan error" else None)
    began = time.monotonic()
    code, out, err = build(capsys, tmp_path / "host")
    took = time.monotonic() - began
    compilers = pids(log)
    assert compilers and not [pid for pid in compilers if alive(pid)], "a compiler runs on, or was not reaped"
    assert took < 60, f"the build waited {took:.0f} s for the compile it should have stopped"
    assert not (tmp_path / "host").exists()
    assert scratch_left(tmp_path / "cache") == []
    assert os.listdir(tmp_path / "tmp") == []
    assert early_threads() == []
    assert "compiling the C runtime" not in err

    # the same build with no early compile: the same words and code
    serial(monkeypatch)
    code_serial, out_serial, err_serial = build(capsys, tmp_path / "host")
    assert (code, out, err) == (code_serial, out_serial, err_serial)
    assert code == (130 if ending == "ctrl-c" else 1), err
    if ending == "ctrl-c":
        assert err == "bobc: interrupted\n"
    else:
        assert err.startswith(f"bobc build: {tmp_path / 'Bad' / 'Plan.bob'}:3:15: error: unknown name true"), err


def test_a_compile_error_in_the_early_compile_is_said_as_before(tmp_path, fake_gcc, monkeypatch, capsys):
    """A runtime source gcc refuses (the fake's host_io.c): the build's message, exit code and
    notice are those of a build that compiled the runtime when it linked; no host, nothing left."""
    log, mode = fake_gcc
    mode("fail")
    code, out, err = build(capsys, tmp_path / "host")
    assert code != 0 and "host_io.c:1:1: error: forced by the test" in err, err
    assert "gcc could not build the runtime source" in err and "host_io.c" in err, err
    assert err.index("bobc: compiling the C runtime") < err.index("bobc build:"), err
    assert not (tmp_path / "host").exists() and scratch_left(tmp_path / "cache") == []
    assert not [pid for pid in pids(log) if alive(pid)]

    serial(monkeypatch)
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache-serial"))
    assert build(capsys, tmp_path / "host") == (code, out, err.replace(str(tmp_path / "cache"),
                                                                         str(tmp_path / "cache-serial")))


def default_signals() -> None:
    """In the child: SIGINT as a terminal's command gets it (a test run in the background has it
    ignored, and bobc keeps an ignored signal ignored: tests/test_cli_signals.py)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_to_a_build_whose_runtime_compiles_stops_every_compiler(tmp_path, fake_gcc):
    """A real SIGINT to `bobc build` once its runtime compilers run (they never end), which is
    while the plan is evaluated (LinReg's evaluation takes longer than the compile's start): one
    line, 130, every compiler stopped and reaped, nothing left in the cache or TMPDIR."""
    log, mode = fake_gcc
    mode("hang")
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    run = subprocess.Popen([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", str(tmp_path / "host")],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not pids(log):
            assert run.poll() is None, run.stderr.read()
            assert time.monotonic() < deadline, "no compiler started"
            time.sleep(0.01)
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=60) == 130
        assert run.stderr.read().decode() == "bobc: interrupted\n"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        run.stderr.close()
    time.sleep(0.2)                    # the compilers were SIGTERMed and waited for by bobc
    assert not [pid for pid in pids(log) if alive(pid)], "a compiler runs on"
    assert not (tmp_path / "host").exists()
    assert scratch_left(tmp_path / "cache") == [] and os.listdir(tmp_path / "tmp") == []
