"""Probe s31 today finding 1: `bobc run PLAN native ...`'s own options (--reference, --entry, --target,
-I) may stand before the plan, between the plan and `native`, or after it: the program gets its
words as given, in order, and judges them as the C host does (`--entry DEF native --version` was
taken for a plan host's command line)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from native_helpers import PLANS, request_command, request_environment, request_host, request_stream


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    path = request_host(tmp_path_factory)
    path.parent.chmod(0o755)
    return path


OUT = ["--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]
PLAN = str(PLANS / "Native" / "Request.bob")
OWN = ["--reference", "--entry", "requestProgram", "--target", "sm_86", "-I", "."]
PLACED = {"before the plan": lambda words: [*OWN, PLAN, "native", *words],
          "between the plan and native": lambda words: [PLAN, *OWN, "native", *words],
          "after native": lambda words: [PLAN, "native", *OWN, *words],
          "among the program's words": lambda words: [PLAN, "native", *words[:2], *OWN, *words[2:]]}


@pytest.mark.parametrize("placement", sorted(PLACED))
@pytest.mark.parametrize("arguments", [
    ["train", "--inp", "s.bin", *OUT],
    ["train", "--input=-s.bin", *OUT, "--checkpoint=-nope"],
    ["train", "--input", "", *OUT],
    ["--version", "train"],
], ids=["shortened-input", "dash-value", "empty-value", "version-beside"])
def test_a_request_gets_its_words_wherever_bobcs_options_stand(tmp_path, host, arguments, placement):
    (tmp_path / "-s.bin").write_bytes(request_stream(list(range(60))))
    native = subprocess.run(request_command("c", host, *arguments), cwd=tmp_path, env=request_environment(),
                            capture_output=True, timeout=300)
    reference = subprocess.run([sys.executable, "-m", "bobc", "run", *PLACED[placement](arguments)], cwd=tmp_path,
                               env=request_environment(), capture_output=True, timeout=300)
    assert native.returncode in (2, 4), native.stderr
    assert (reference.returncode, reference.stderr) == (native.returncode, native.stderr)
    assert not any((tmp_path / n).exists() for n in ("ck.bin", "p.bin", "r.bin"))


@pytest.mark.parametrize("placement", sorted(PLACED))
def test_a_request_runs_wherever_bobcs_options_stand(tmp_path, host, placement):
    words = ["train", "--input", "s.bin", *OUT]
    said = {}
    for side in ("c", "reference"):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "s.bin").write_bytes(request_stream(list(range(60))))
        command = request_command("c", host, *words) if side == "c" else \
            [sys.executable, "-m", "bobc", "run", *PLACED[placement](words)]
        done = subprocess.run(command, cwd=folder, env=request_environment(), capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr
        said[side] = [(folder / n).read_bytes() for n in ("ck.bin", "p.bin", "r.bin")]
    assert said["reference"] == said["c"]
