"""File paths a real user has (probe s34 paths): a name with a byte that is not UTF-8 printed on a
strict UTF-8 stdout (a UTF-8 locale such as en_US.UTF-8), a newline in a name given to any
command or in a plan's folder (file:line:column), and a plan path that begins with '-' after
`--`.  Each message stays one line, names the path with its own bytes (a control character as
'?', as the host's rt_io_shown and safe_io.shown show it), and never is a traceback."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINREG = REPO / "examples/linear_regression"
PLAN = LINREG / "LinReg/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    path = os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "BOBC_CACHE_DIR": str(tmp_path_factory.mktemp("cache")), "PYTHONPATH": path}


def bobc(*args, env, **kw):
    words = [a if isinstance(a, bytes) else os.fsencode(str(a)) for a in args]
    return subprocess.run([os.fsencode(sys.executable), b"-m", b"bobc", *words], capture_output=True,
                          env=env, timeout=300, stdin=subprocess.DEVNULL, **kw)


@pytest.fixture(scope="module")
def odd_host(tmp_path_factory, env):
    """A LinReg host in a folder whose name has the byte 0xff (not UTF-8)."""
    folder = os.fsencode(tmp_path_factory.mktemp("hosts")) + b"/odd\xffname"
    os.mkdir(folder)
    host = folder + b"/host"
    done = bobc("build", PLAN, "-o", host, env=env)
    assert done.returncode == 0, done.stderr
    return host


@pytest.mark.parametrize("command", ["diff", "inspect", "dump"])
def test_a_path_not_utf8_prints_on_a_strict_utf8_stdout(odd_host, env, command):
    strict = {**env, "PYTHONIOENCODING": "utf-8:strict"}
    words = [odd_host, odd_host] if command == "diff" else [odd_host]
    done = bobc(command, *words, env=strict)
    assert b"Traceback" not in done.stderr and done.returncode == 0, done.stderr
    if command != "dump":
        assert odd_host in done.stdout          # the path's own bytes, as stderr and the host print them


def test_an_unencodable_character_is_escaped_and_a_foreign_byte_kept(odd_host, env, tmp_path):
    other = tmp_path / "hé"
    shutil.copy(odd_host, other)
    done = bobc("diff", odd_host, other, env={**env, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert done.stdout == odd_host + b" and " + os.fsencode(tmp_path) + b"/h\\xe9 hold the same images and host plan\n"
