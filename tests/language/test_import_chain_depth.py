"""An import chain thousands of modules deep loads (probe s31 limits finding 1): the module
loader keeps its own stack, so no command fails with a RecursionError traceback, and a cycle at
the bottom of such a chain is still refused with its chain and the import's place."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bobc.language import load_program
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
DEPTH = 1_500                   # past Python's default recursion limit of 1,000


def chain(root: Path, depth: int = DEPTH, last: str = "def deepest : Nat = 7\n") -> Path:
    folder = root / "Chain"
    folder.mkdir(parents=True)
    for i in range(depth):
        text = f"module Chain.C{i}\n" + (f"import Chain.C{i + 1}\n" if i + 1 < depth else last)
        (folder / f"C{i}.bob").write_text(text, encoding="utf-8")
    return folder / "C0.bob"


def bobc(*arguments, cache):
    return subprocess.run([sys.executable, "-m", "bobc", *arguments], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": str(cache),
                               "PYTHONPATH": str(REPO / "compiler")}, cwd=REPO)


def test_a_chain_of_1500_imports_checks_in_order(tmp_path, monkeypatch):
    monkeypatch.setenv("BOBC_SPECS", str(tmp_path / "no-specs"))
    program = load_program(chain(tmp_path), target=SM86)
    assert program.module_order == [f"Chain.C{i}" for i in reversed(range(DEPTH))]


def test_check_and_check_json_load_a_chain_of_1500_imports(tmp_path):
    plan = chain(tmp_path / "plans")
    done = bobc("check", str(plan), cache=tmp_path / "cache")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "well typed (1500 modules" in done.stdout and "Traceback" not in done.stderr
    done = bobc("check", "--json", str(plan), cache="off")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["ok"] and report["modules"] == DEPTH


def test_a_cycle_at_the_bottom_of_a_deep_chain_is_refused_with_its_chain(tmp_path):
    plan = chain(tmp_path, last="import Chain.C1498\n")
    done = bobc("check", str(plan), cache="off")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    first = done.stderr.splitlines()[0]
    assert first.endswith("error: import cycle: Chain.C1498 -> Chain.C1499 -> Chain.C1498"), first
    assert "C1499.bob:2:" in first
