"""bench/coppelius_host/sim_variant.py checks its arguments before it builds anything (a simulated
update takes minutes a side): `--help` prints its own usage and stops, a misspelt change is refused,
variant_tree.py's --split / --empty pass through; and the trees and outputs it makes are removed."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "bench" / "coppelius_host" / "sim_variant.py"


def load():
    spec = importlib.util.spec_from_file_location("sim_variant_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*args, tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    return subprocess.run([sys.executable, str(SCRIPT), *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_help_prints_this_scripts_usage_and_builds_nothing(tmp_path):
    done = run("--help", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: sim_variant.py"), done.stdout
    assert "fusedadamw" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_misspelt_change_is_refused_before_anything_is_built(tmp_path):
    done = run("fusedadamv", tmp_path=tmp_path)
    assert done.returncode == 2
    assert "unknown change fusedadamv" in done.stderr and "fusedadamw" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_variant_trees_options_pass_through():
    module = load()
    assert module.arguments(["leaftree", "--split", "4,12", "--empty", "a*", "--empty", "b*"]) == \
        ["leaftree", "--split", "4,12", "--empty", "a*", "--empty", "b*"]
    with pytest.raises(SystemExit):
        module.arguments([])


def test_the_variant_tree_is_removed_after_the_comparison(tmp_path, monkeypatch):
    module = load()
    made = []

    def fake_run(command, **kwargs):          # variant_tree.py TREE CHANGE...: the tree is made
        tree = Path(command[2])
        tree.mkdir(parents=True)
        made.append(tree)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(module.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(module.subprocess, "run", fake_run)
    monkeypatch.setattr(module, "digests", lambda tree: {"out.ckpt": "same"})
    assert module.main(["leaftree"]) == 0
    assert made and not made[0].exists()
    assert list(tmp_path.iterdir()) == []
