"""bench/cold_build_bench.py builds each tree's own plans with that tree's bobc: every command runs
in the tree (the plans are relative paths), so two trees whose examples differ build different hosts.
It once ran every tree's bobc in this checkout, on this checkout's examples."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO

# a stand-in `bobc`: what `-o` gets is the folder the command ran in and the plan file's text there
STUB = '''import os, sys
from pathlib import Path
args = sys.argv[1:]
if "-o" in args:
    plan = Path(args[1])
    Path(args[args.index("-o") + 1]).write_text(os.getcwd() + "\\n" + (plan.read_text() if plan.is_file() else "none"))
sys.exit(1 if args[0] == "diff" else 0)     # bobc diff of two hosts that differ
'''


def stub_tree(root, label):
    tree = root / label
    (tree / "compiler" / "bobc").mkdir(parents=True)
    (tree / "compiler" / "bobc" / "__init__.py").write_text("")
    (tree / "compiler" / "bobc" / "__main__.py").write_text(STUB)
    for plan in ("examples/bob/Bob/Build/NativeHost.bob", "examples/coppelius/Coppelius/Build/DirectArtifact.bob"):
        (tree / plan).parent.mkdir(parents=True, exist_ok=True)
        (tree / plan).write_text(f"{label}'s {plan}\n")
    return tree


def test_each_tree_builds_its_own_examples(tmp_path):
    a, b = stub_tree(tmp_path, "a"), stub_tree(tmp_path, "b")
    out = tmp_path / "out"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "bench/cold_build_bench.py", "--tree", f"a={a}", "--tree", f"b={b}",
                           "--rounds", "1", "--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1, done.stderr        # the hosts differ between the trees: exit 1, said so
    assert "DIFFERENT between the trees" in done.stdout
    (report,) = out.glob("cold-build-*.json")
    hosts = json.loads(report.read_text())["hosts_sha256"]
    import hashlib
    for label, tree in (("a", a), ("b", b)):
        expected = hashlib.sha256(f"{tree}\n{label}'s examples/bob/Bob/Build/NativeHost.bob\n".encode()).hexdigest()
        assert hosts[label]["bob-sm_90"] == expected
