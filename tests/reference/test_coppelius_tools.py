"""Coppelius's example tools (write_stream.py, coppelius_host.checkpoint, coppelius_model.graph)
refuse bad arguments and files in one line, never with a traceback, and publish their outputs
atomically, never through a symlink or over their own input (probe s26: probe-coppelius 8, 9)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COPPELIUS = REPO / "examples" / "coppelius"


def tool(*args, cwd=COPPELIUS):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "compiler"), str(COPPELIUS)]))
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def test_write_stream_publishes_and_refuses_its_input_and_symlinks(tmp_path):
    script = COPPELIUS / "write_stream.py"
    text = tmp_path / "t.txt"
    text.write_bytes(b"hello")
    done = tool(script, text, "-o", tmp_path / "t.stream")
    assert done.returncode == 0 and "wrote" in done.stdout and "5 tokens" in done.stdout
    assert len((tmp_path / "t.stream").read_bytes()) == 64 + 4 * 5
    done = tool(script, text, "-o", text)
    assert done.returncode == 8 and "an output never replaces an input" in done.stderr
    assert text.read_bytes() == b"hello"
    (tmp_path / "link.stream").symlink_to(tmp_path / "target")
    done = tool(script, text, "-o", tmp_path / "link.stream")
    assert done.returncode == 8 and "symbolic link" in done.stderr and not (tmp_path / "target").exists()
    done = tool(script, "/dev/zero", "-o", tmp_path / "z.stream")
    assert done.returncode == 2 and "not a regular file" in done.stderr and not (tmp_path / "z.stream").exists()
    sparse = tmp_path / "sparse"
    with open(sparse, "wb") as handle:
        handle.truncate(1 << 30)
    done = tool(script, sparse, "-o", tmp_path / "s.stream")
    assert done.returncode == 2 and "more than the host reads" in done.stderr
    assert all("Traceback" not in d for d in (done.stderr,))


@pytest.mark.parametrize("args,code,said", [
    (["--seed", "-1"], 2, "--seed: -1 is outside"),
    (["--updates-per-invocation", "-5"], 2, "outside 1.."),
    (["--updates-per-invocation", "99999999999999999999"], 2, "outside 1.."),
    (["--updates-per-invocation", "0"], 2, "outside 1.."),
    (["--config", "tiny"], 2, "no host serves configuration tiny"),
])
def test_checkpoint_fresh_refuses_bad_arguments_in_one_line(tmp_path, args, code, said):
    done = tool("-m", "coppelius_host.checkpoint", "fresh", "-o", tmp_path / "x.ckpt", *args)
    assert done.returncode == code and said in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x.ckpt").exists()


def test_checkpoint_fresh_output_refusals_exit_8(tmp_path):
    for output in (tmp_path, tmp_path / "absent" / "x.ckpt"):
        done = tool("-m", "coppelius_host.checkpoint", "fresh", "-o", output)
        assert done.returncode == 8 and "cannot write output (-o)" in done.stderr and "Traceback" not in done.stderr


def test_graph_of_an_unknown_config_is_one_line():
    done = tool("-m", "coppelius_model.graph", "bogus")
    assert done.returncode == 2 and "no Coppelius configuration 'bogus'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_host_build_tool_writes_a_relative_output_where_it_runs(tmp_path):
    """`python -m coppelius_host.build sm_90 -o HOST` runs bobc from the repository: a relative
    -o landed there (`-o pyproject.toml` replaced the repository's), not where the tool ran."""
    before = (REPO / "pyproject.toml").read_bytes()
    done = tool("-m", "coppelius_host.build", "sm_90", "-o", "pyproject.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "pyproject.toml").read_bytes()[:4] == b"\x7fELF"
    assert (REPO / "pyproject.toml").read_bytes() == before


@pytest.mark.parametrize("arguments, says", [
    (["/nonexistent", "s", "c", "--out", "runs"], "/nonexistent is not a file"),
    (["HOST", "s", "c", "--out", "runs", "--poison", "zz"], "--poison 'zz' is not hex bytes")])
def test_sim_compare_refuses_bad_arguments_in_one_line(tmp_path, arguments, says):
    (tmp_path / "HOST").write_bytes(b"not used")
    done = tool("-m", "coppelius_host.sim_compare", *arguments, cwd=tmp_path)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("config, says", [
    ("1x320x128", "width (coppeliusShapeWidth) 320 is not a multiple of 128"),
    ("0x256x128", "layers (coppeliusShapeLayers) 0 is not at least 1"),
    ("1x256x192", "context (coppeliusShapeContext) 192 is not 128 or 256")])
def test_checkpoint_fresh_refuses_a_shape_no_host_serves_by_the_plans_rules(tmp_path, config, says):
    done = tool("-m", "coppelius_host.checkpoint", "fresh", "-o", tmp_path / "f.ckpt", "--config", config,
                cwd=tmp_path)
    assert done.returncode == 2 and f"no host serves configuration {config}: " in done.stderr, done.stderr
    assert says in done.stderr and not (tmp_path / "f.ckpt").exists()
