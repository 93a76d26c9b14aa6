"""Probe s34 netfuzz note: each artifacts.load left a pair-probe-* folder with a PairProbe.bob in
TMPDIR; a plan folder holding TMPDIR then failed its next build with a duplicate module."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "examples/partitioned_regression"))


def test_load_leaves_nothing_in_the_temporary_folder(tmp_path, monkeypatch):
    from partitioned_regression import artifacts

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    program = artifacts.load("def answer : Nat = 42\n")
    assert program.value("answer").value == 42
    assert list(scratch.iterdir()) == []
