"""Probe s31 hostexe: `bobc run PLAN native ... --reference` hands a request program its words as
given, so it refuses a shortened option as the host does (finding 1) and reads `--input=-x` as
one word (finding 2); the native host's --version to a full stdout exits 8 (finding 7), and an
execute-only native host says it cannot read itself, exit 1, not 9 "damaged" (finding 8)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from native_helpers import request_command, request_environment, request_host, request_stream


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    path = request_host(tmp_path_factory)
    path.parent.chmod(0o755)
    return path


OUT = ["--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]


@pytest.mark.parametrize("arguments", [
    ["train", "--inp", "s.bin", *OUT],
    ["train", "--input", "s.bin", "--checkpoint-o", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"],
    ["train", "--input=-s.bin", *OUT, "--checkpoint=-nope"],
], ids=["shortened-input", "shortened-output", "dash-value"])
def test_a_request_gets_its_words_as_given(tmp_path, host, arguments):
    (tmp_path / "-s.bin").write_bytes(request_stream(list(range(60))))
    said = []
    for side in ("c", "reference"):
        done = subprocess.run(request_command(side, host, *arguments), cwd=tmp_path, env=request_environment(),
                              capture_output=True, timeout=300)
        said.append((done.returncode, done.stderr))
    assert said[0] == said[1], said
    assert said[0][0] in (2, 4), said
    assert not any((tmp_path / n).exists() for n in ("ck.bin", "p.bin", "r.bin"))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_version_to_a_full_stdout_exits_8(host):
    with open("/dev/full", "wb") as full:
        done = subprocess.run([str(host), "--version"], stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert (done.returncode, done.stderr) == (8, b"native: cannot write to stdout: No space left on device\n")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_an_execute_only_host_says_it_cannot_read_itself(host, tmp_path):
    folder = tmp_path / "x"
    folder.mkdir(mode=0o755)
    tmp_path.chmod(0o755)
    xonly = folder / "xonly"
    shutil.copy(host, xonly)
    xonly.chmod(0o711)
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(xonly), "--version"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr == (f"native: cannot read its own file {xonly}: Permission denied; the host reads its device "
                           f"images from it: make it readable (chmod +r {xonly})\n")
