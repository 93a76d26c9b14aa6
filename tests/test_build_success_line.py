"""`bobc build`'s success line and its default output (probe s28 determinism findings 5 and 7).

The line is printed after the output was written: a stdout that cannot take it (a full disk,
an encoding without the path's characters) never turns a written host into a traceback and
exit 1.  The host is written, so the exit code stays 0 (README: bobc's 8 means "not written");
one line on stderr says the message could not be printed.  Paths are shown as errors show
them (bobc.reference.safe_io.shown: a control character is '?', so the line stays one line).
Without -o, a refusal names the default ./bob-host and says no -o was given."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    path = os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "BOBC_CACHE_DIR": str(tmp_path_factory.mktemp("cache")), "PYTHONPATH": path}


def bobc(*args, env, **kw):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, env=env,
                          timeout=300, **kw)


@pytest.mark.parametrize("output", ["-o", "--emit-images"])
def test_a_full_stdout_is_one_line_on_stderr_and_the_output_stays_written(tmp_path, env, output):
    target = tmp_path / "out"
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), output, str(target)], stdout=full,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    # a first build into the test's cache also says it compiles the C runtime (docs/cache.md)
    said = "".join(line for line in done.stderr.splitlines(keepends=True)
                   if not line.startswith("bobc: compiling the C runtime"))
    assert said.count("\n") == 1, done.stderr
    assert said.startswith("bobc build: the output was written, but its message could not be printed on "
                                  "stdout (No space left on device): wrote "), done.stderr
    assert (target / "manifest.json").is_file() if output == "--emit-images" else target.is_file()


def test_a_path_stdout_cannot_encode_is_escaped(tmp_path, env):
    done = bobc("build", PLAN, "-o", tmp_path / "hé", env={**env, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert done.stdout == f"wrote {tmp_path}/h\\xe9 (sm_90)\n".encode()
    assert (tmp_path / "hé").is_file()


def test_a_control_character_in_a_path_keeps_the_line_one_line(tmp_path, env):
    done = bobc("build", PLAN, "-o", tmp_path / "new\nline", "--emit-images", tmp_path / "images\tfolder", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines() == [f"wrote sm_90 images to {tmp_path}/images?folder",
                                                 f"wrote {tmp_path}/new?line (sm_90)"]
    assert (tmp_path / "new\nline").is_file() and (tmp_path / "images\tfolder/program.bin").is_file()


def test_without_o_a_refusal_names_the_default_path(tmp_path, env):
    (tmp_path / "bob-host").mkdir()          # what is at ./bob-host cannot be replaced
    done = bobc("build", PLAN, env=env, cwd=tmp_path)
    assert done.returncode == 8, done.stderr
    message = done.stderr.decode()
    assert message.startswith("bobc build: error: bob-host: cannot write output (no -o given: the default "
                              "./bob-host): is a folder; "), message
    assert "(-o)" not in message and "name another path with -o HOST" in message
    assert done.stdout == b""
