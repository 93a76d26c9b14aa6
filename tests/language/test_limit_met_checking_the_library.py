"""A --max-evaluation-steps too low for the library's own check was reported inside
specs/Std/Natural.bob "in definition naturalDecimalBytesWithin", with nothing about which of the
plan's definitions led there -- none did: the whole program's check checks the library's modules
first.  The message now says so, and the hint what to do (probe s32 errors finding 10; minor
finding 5).  A limit met under a plan definition still names that definition."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


def bobc(*arguments, cache, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, arguments)], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": str(cache),
                               "PYTHONPATH": str(REPO / "compiler")}, cwd=cwd, timeout=600)


def test_a_limit_met_checking_the_library_says_so(tmp_path):
    for command in (["check", LINREG], ["build", LINREG, "-o", tmp_path / "host"]):
        done = bobc(*command, "--max-evaluation-steps", "100", cache=tmp_path / "cache")
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        first = done.stderr.splitlines()[0]
        assert first.endswith("evaluation steps: more than the limit of 100 (docs/limits.md), in definition "
                              "naturalDecimalBytesWithin, while checking the library module Std.Natural, "
                              "before any of the plan's own definitions"), first
        assert ("hint: the limit is below what checking the library itself takes (the default is 32,000,000): "
                "raise it with --max-evaluation-steps N") in done.stderr


def test_a_limit_met_under_a_plan_definition_names_it(tmp_path):
    (tmp_path / "Lim.bob").write_text(
        "module Lim\n\nimport Std.Natural\n\n"
        "def proof : (equal Bytes (naturalDecimalBytesWithin 300 (nat-power 7 300)) "
        "(naturalDecimalBytesWithin 300 (nat-power 7 300))) = "
        "(refl Bytes (naturalDecimalBytesWithin 300 (nat-power 7 300)))\n")
    done = bobc("check", tmp_path / "Lim.bob", "--max-evaluation-steps", "1000", cache=tmp_path / "cache", cwd=tmp_path)
    assert done.returncode == 1
    assert "more than the limit of 1,000 (docs/limits.md), in definition proof; met in the library at" in done.stderr
    assert "while checking the library" not in done.stderr
