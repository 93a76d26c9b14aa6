"""The notice of a completed interrupted publication is the C host's, byte for byte after the
name each prints before it (probe s28 docs, finding 7): the reference runner separated the
destinations with ", ", runtime_c/host_io.c with " ", the authority."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_safe_io_journal import interrupted, tool  # noqa: E402, F401 -- tool: the rt_tool fixture


def _c_notice(tool, folder, paths) -> str:  # noqa: F811
    done = subprocess.run([str(tool), "outputs", *paths], cwd=folder, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "completed an interrupted publication" in line]
    assert len(lines) == 1 and lines[0].startswith("host: "), done.stderr
    return lines[0][len("host: "):]


def _reference_notice(folder, paths) -> str:
    code = ("import sys\nfrom bobc.reference import safe_io\nsafe_io.recover(sys.argv[1:])\n")
    done = subprocess.run([sys.executable, "-c", code, *paths], cwd=folder, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bobc: "), done.stderr
    return lines[0][len("bobc: "):]


def test_the_notice_is_the_c_hosts(tool, tmp_path):  # noqa: F811
    notices = {}
    for side in ("c", "r"):
        folder = tmp_path / side
        inner = folder / "sub"
        inner.mkdir(parents=True)
        paths = [f"sub/{name}" for name in interrupted(inner)]
        notices[side] = (_c_notice(tool, folder, paths) if side == "c" else _reference_notice(folder, paths))
        notices[side] = notices[side].replace(str(folder.resolve()), "<F>")
        assert not (inner / ".c.bin.bob-journal").exists()
    assert notices["r"] == notices["c"]
    assert notices["c"] == ("completed an interrupted publication from sub/.c.bin.bob-journal: <F>/sub/p.bin "
                            "<F>/sub/r.bin <F>/sub/c.bin")
