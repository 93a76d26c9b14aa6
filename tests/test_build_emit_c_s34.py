"""`bobc build PLAN --emit-c FILE` keeps the host's generated C (probe s34 ux finding 2).

The C written is the very bytes gcc was given to compile into the host (checked where the build
hands its sources to the compiler), the same on every build of the same plan, and FILE is an
output as -o's host is: checked before the build, never a folder, never the host's own path nor
an input, all or nothing.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def bobc(*words, cwd):
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, words)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_emitted_c_is_what_gcc_compiled(tmp_path, cache, monkeypatch, capsys):
    from bobc import cli
    from bobc.host import gcc

    compiled: list[bytes] = []
    build = gcc.build

    def recording(sources, *rest, **named):
        compiled.extend(Path(source).read_bytes() for source in sources)
        return build(sources, *rest, **named)
    monkeypatch.setattr(gcc, "build", recording)
    code = cli.main(["build", str(PLAN), "-o", str(tmp_path / "host"), "--emit-c", str(tmp_path / "host.c")])
    assert code == 0, capsys.readouterr().err
    assert len(compiled) == 1                   # the one generated source; the runtime is a library
    assert (tmp_path / "host.c").read_bytes() == compiled[0]
    assert b"#include" in compiled[0]
    assert os.access(tmp_path / "host", os.X_OK)
    assert capsys.readouterr().out.count("host.c") == 1     # its line says where it went


def test_the_emitted_c_is_the_same_on_every_build(tmp_path, cache):
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        done = bobc("build", PLAN, "-o", "host", "--emit-c", "host.c", cwd=tmp_path / run)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "a/host.c").read_bytes() == (tmp_path / "b/host.c").read_bytes()
    assert (tmp_path / "a/host").read_bytes() == (tmp_path / "b/host").read_bytes()


@pytest.mark.parametrize("given, said", [
    ("folder", "is a folder"),
    ("host", "is the same file as -o host"),
    (str(PLAN), "an output never replaces an input"),
])
def test_an_emit_c_path_that_cannot_be_an_output_is_refused_before_the_build(tmp_path, cache, given, said):
    (tmp_path / "folder").mkdir()
    done = bobc("build", PLAN, "-o", "host", "--emit-c", given, cwd=tmp_path)
    assert done.returncode == 8, done.stderr
    assert "(--emit-c)" in done.stderr and said in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["folder"]    # nothing written


def test_emit_c_named_dash_is_a_usage_error(tmp_path, cache):
    done = bobc("build", PLAN, "--emit-c", "-", cwd=tmp_path)
    assert done.returncode == 2
    assert "--emit-c -: bobc writes no output to stdout" in done.stderr


def test_a_native_physical_program_host_has_no_generated_c(tmp_path, cache):
    done = bobc("build", REPO / "tests/native/plans/Native/Commands.bob", "--entry", "arithmeticHost",
                "-o", "host", "--emit-c", "host.c", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--emit-c writes the C that bobc generates for a plan host" in done.stderr
    assert not (tmp_path / "host").exists() and not (tmp_path / "host.c").exists()


def test_emit_c_inside_the_image_folder_is_named_in_the_hint(tmp_path, cache, capsys):
    """The refused output is the C file: the hint names it, not the host (probe s34 today34 finding 2)."""
    from bobc import cli

    (tmp_path / "imgs").mkdir()
    code = cli.main(["build", str(PLAN), "-o", str(tmp_path / "host"), "--emit-c", str(tmp_path / "imgs/x.c"),
                     "--emit-images", str(tmp_path / "imgs")])
    err = capsys.readouterr().err
    assert code == 8, err
    assert "(--emit-c)" in err and "give the generated C and the images separate paths" in err, err
    assert not (tmp_path / "host").exists() and list((tmp_path / "imgs").iterdir()) == []
