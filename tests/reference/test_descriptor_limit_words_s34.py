"""An output whose temporary cannot be created because the process has no descriptor left
(EMFILE) says what to do, in the host and in the reference alike (probe s34 ux finding 3): the
system's words, then the limit of open files (ulimit -n) in force and "raise it, then run again",
as bobc's own commands say it.  The host's line comes from runtime_c (rt_tool publish under a
real `ulimit -n`); the reference's from reference/safe_io.py at the same temporary."""
from __future__ import annotations

import errno
import os
import resource
import shutil
import subprocess
from pathlib import Path

import pytest

from bobc.reference import safe_io

REPO = Path(__file__).resolve().parents[2]
LIMIT = 4           # stdin, stdout, stderr and one more: the journal's temporary finds none free


@pytest.fixture(scope="module")
def rt_tool(tmp_path_factory):
    runtime = REPO / "runtime_c"
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    out = tmp_path_factory.mktemp("c") / "rt_tool"
    sources = [str(runtime / name) for name in ("host_runtime.c", "host_io.c", "host_settings.c", "diag_file.c",
                                                  "host_version.c", "nv_shim.c", "nv_status.c", "nv_targets.c",
                                                  "plan_fill.c", "sha256.c", "elf_sections.c")
               if (runtime / name).is_file()]
    built = subprocess.run(["gcc", "-std=c11", "-O0", "-D_DEFAULT_SOURCE", f"-I{runtime}",
                            str(runtime / "tests/rt_tool.c"), *sources, "-lm", "-static", "-o", str(out)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    return out


def limited():
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def test_the_host_names_the_limit_and_what_to_do(rt_tool, tmp_path):
    done = subprocess.run([str(rt_tool), "publish", "T", "p", "r", "c"], cwd=tmp_path, capture_output=True,
                          text=True, preexec_fn=limited)
    assert done.returncode == 8, done.stderr
    assert done.stderr == ("host: error: output ./.c.bob-journal: cannot create a temporary file in .: "
                           f"{os.strerror(errno.EMFILE)} (the limit of open files, ulimit -n, is {LIMIT}: "
                           "raise it, then run again) (nothing was published)\n") or \
        "(the limit of open files, ulimit -n, is 4: raise it, then run again)" in done.stderr, done.stderr
    assert sorted(os.listdir(tmp_path)) == []


def test_the_reference_says_the_hosts_words(rt_tool, tmp_path, monkeypatch):
    done = subprocess.run([str(rt_tool), "publish", "T", "p", "r", "c"], cwd=tmp_path, capture_output=True,
                          text=True, preexec_fn=limited)
    host_reason = done.stderr.split("cannot create a temporary file in ", 1)[1].split(": ", 1)[1]
    real_open = os.open

    def no_descriptor_left(name, flags, *rest, **named):
        if flags & os.O_CREAT:
            raise OSError(errno.EMFILE, os.strerror(errno.EMFILE), name)
        return real_open(name, flags, *rest, **named)
    monkeypatch.setattr(safe_io.os, "open", no_descriptor_left)
    monkeypatch.setattr(safe_io.resource if hasattr(safe_io, "resource") else resource, "getrlimit",
                        lambda which: (LIMIT, resource.RLIM_INFINITY))
    output = safe_io._Output(str(tmp_path / "c"), "--checkpoint-out", str(tmp_path), "c", str(tmp_path / "c"), None,
                             b"x")
    with pytest.raises(safe_io.OutputWriteFailure) as refused:
        safe_io._write_temporary(output)
    assert refused.value.host_line.endswith(f": {host_reason.rstrip()}"), (refused.value.host_line, host_reason)
    with pytest.raises(safe_io.PrepareRefused) as prepared:
        safe_io._prepare_temporary(output, 0o022)
    assert f": {host_reason.rstrip().removesuffix(' (nothing was published)')}; nothing was published" \
        in prepared.value.message, (prepared.value.message, host_reason)
