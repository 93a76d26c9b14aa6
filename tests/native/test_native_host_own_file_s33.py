"""A native host's own file is one of its inputs -- it reads its program and images from
/proc/self/exe -- so an output argument that is that file (by its path, a `../` spelling, a hard
link) is refused before the program runs, as an output that is an input is: exit 8, one line,
nothing written, the host intact (probe s33 resources finding 3: `--result ./ch` passed every
check and would have renamed the result over the host).  And past the file size limit
(`ulimit -f`), with SIGXFSZ at its default disposition as a batch scheduler leaves it, the host
is not killed silently: its write fails, one line names the output and the limit, exit 8, the
earlier output intact, no temporary left (probe s33 resources finding 4).

The program (plans/Native/Arguments.bob resumeInPlace) reads arguments 0 and 1, writes 0 back
(in place) and writes 2 and 3.  The reference interpreter has no host file (it runs the plan's
program bytes, and `bobc run` reads the plan's modules, which are its inputs already): only the C
host is run here."""
from __future__ import annotations

import os
import resource
import shutil
import subprocess

import pytest

from native_helpers import PLANS, load_module, program_bytes, write_host

CHECKPOINT = bytes(range(16))
RECORD = bytes(range(100, 116))


@pytest.fixture(scope="module")
def resume(tmp_path_factory):
    code = program_bytes(load_module(PLANS / "Native" / "Arguments.bob"), "resumeInPlace")
    return write_host(tmp_path_factory.mktemp("host"), "resume", code)


def _folder(tmp_path, host):
    (tmp_path / "sub").mkdir()
    (tmp_path / "ck.bin").write_bytes(CHECKPOINT)
    (tmp_path / "rec.bin").write_bytes(RECORD)
    local = tmp_path / "h"
    shutil.copy2(host, local)
    return local


def _run(host, folder, arguments, preexec_fn=None):
    return subprocess.run([str(host), *arguments], cwd=folder, env={**os.environ, "NATIVE_DEVICE": "memory"},
                          capture_output=True, timeout=60, preexec_fn=preexec_fn)


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("spelling", ["h", "./sub/../h", "hlink", "ABSOLUTE"])
def test_an_output_argument_that_is_the_host_itself_is_refused(tmp_path, resume, spelling):
    local = _folder(tmp_path, resume)
    os.link(local, tmp_path / "hlink")
    before = _files(tmp_path)
    named = str(local) if spelling == "ABSOLUTE" else spelling
    for argument in (2, 3):
        arguments = ["ck.bin", "rec.bin", "o2", "o3"]
        arguments[argument] = named
        done = _run(local, tmp_path, arguments)
        assert (done.returncode, done.stderr.decode()) == (8, (
            f"native: output {named} (argument {argument}): is the input {os.path.realpath(local)} (this host's own "
            "file); an output never replaces an input; nothing was written\n"))
        assert _files(tmp_path) == before            # the host, its link and the inputs as they were
    # the same host given other outputs runs (NATIVE_DEVICE=memory: no GPU needed)
    done = _run(local, tmp_path, ["ck.bin", "rec.bin", "o2", "o3"])
    assert done.returncode == 0, done.stderr


def test_a_trace_file_that_is_the_host_itself_is_refused(tmp_path, resume):
    local = _folder(tmp_path, resume)
    before = _files(tmp_path)
    done = subprocess.run([str(local), "ck.bin", "rec.bin", "o2", "o3"], cwd=tmp_path, capture_output=True,
                          env={**os.environ, "NATIVE_DEVICE": "memory", "NATIVE_TRACE": "h"}, timeout=60)
    assert (done.returncode, done.stderr.decode()) == (8, (
        f"native: NATIVE_TRACE h: is the input {os.path.realpath(local)} (this host's own file); a diagnostic file "
        "never replaces an input; nothing was written\n"))
    assert _files(tmp_path) == before


def _limit(size):
    def limit():
        # SIGXFSZ is left at its default disposition (subprocess restores it before exec)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


def test_past_the_file_size_limit_the_publication_is_refused_not_killed(tmp_path, resume):
    local = _folder(tmp_path, resume)
    (tmp_path / "o2").write_bytes(b"earlier o2")
    before = _files(tmp_path)
    done = _run(local, tmp_path, ["ck.bin", "rec.bin", "o2", "o3"], preexec_fn=_limit(8))
    assert (done.returncode, done.stderr.decode()) == (8, (
        "native: output ck.bin: write of the temporary file failed: File too large (the file size limit, ulimit -f, "
        "is 8 bytes: raise it, then run again) (nothing was published)\n"))
    assert _files(tmp_path) == before                  # earlier outputs intact, no .NAME.tmp-* left


@pytest.mark.parametrize("asked", [["--version"], ["--help"]])
def test_stdout_past_the_file_size_limit_is_said_exit_8(tmp_path, resume, asked):
    with open(tmp_path / "out.txt", "wb") as out:
        done = subprocess.run([str(resume), *asked], stdout=out, stderr=subprocess.PIPE, timeout=60,
                              preexec_fn=_limit(0))
    assert (done.returncode, done.stderr.decode()) == (8, (
        "native: cannot write to stdout: File too large (the file size limit, ulimit -f, is 0 bytes: raise it, then "
        "run again)\n"))
