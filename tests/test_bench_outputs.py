"""`make bench` (bench/run.py) leaves the tree as it found it: results go to out/bench/,
which is not version controlled, never over bench/results/ (the published H200 results)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def git_status() -> str:
    done = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=all"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_quick_bench_run_changes_no_tracked_file_and_leaves_no_untracked_one():
    before = git_status()
    done = subprocess.run([sys.executable, "bench/run.py", "--quick", "--skip-eval"], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    written = [line.split(" ", 1)[1] for line in done.stdout.splitlines() if line.startswith("wrote ")]
    assert len(written) == 1 and written[0].startswith(str(REPO / "out" / "bench")), done.stdout
    try:
        assert git_status() == before
        # bench/README.md says where: the folder it names is the one written to
        said = re.search(r"Each `bench/run.py` run writes `([^`<]+)/<cpu\|gpu>-<UTC time>\.json`",
                         (REPO / "bench" / "README.md").read_text(encoding="utf-8"))
        assert said and str(REPO / said.group(1)) == str(Path(written[0]).parent), said
    finally:
        (REPO / written[0][len(str(REPO)) + 1:]).unlink()
