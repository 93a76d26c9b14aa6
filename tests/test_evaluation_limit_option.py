"""`--max-evaluation-steps N` (docs/limits.md): a plan meant to take more evaluation steps than
bobc's default says so on the command line; a plan past the limit in force is refused naming it,
the definition and the option; and what the cache keeps under one limit is not answered under
another (a check passed with the default is still refused under a lower limit, warm)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOB = REPO / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"


def bobc(*arguments, cache):
    return subprocess.run([sys.executable, "-m", "bobc", *arguments], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": str(cache),
                               "PYTHONPATH": str(REPO / "compiler")}, cwd=REPO)


def test_a_check_past_the_limit_is_refused_naming_it_and_the_option_and_a_warm_pass_does_not_hide_it(tmp_path):
    low = bobc("check", str(BOB), "--max-evaluation-steps", "1000", cache=tmp_path)
    assert low.returncode == 1
    assert "evaluation steps: more than the limit of 1,000 (docs/limits.md), in definition " in low.stderr
    assert "--max-evaluation-steps N" in low.stderr and "Traceback" not in low.stderr
    assert bobc("check", str(BOB), cache=tmp_path).returncode == 0          # the default: passes, stored
    again = bobc("check", str(BOB), "--max-evaluation-steps", "1,000", cache=tmp_path)
    assert again.returncode == 1 and "more than the limit of 1,000" in again.stderr
    assert bobc("check", str(BOB), "--max-evaluation-steps", "40_000_000", cache=tmp_path).returncode == 0


def test_the_option_is_refused_when_it_is_not_a_positive_whole_number(tmp_path):
    for bad in ("0", "-5", "lots"):
        done = bobc("check", str(BOB), "--max-evaluation-steps", bad, cache=tmp_path)
        assert done.returncode == 2 and "--max-evaluation-steps" in done.stderr, bad


def test_commands_that_evaluate_nothing_do_not_take_it(tmp_path):
    done = bobc("asm", "--max-evaluation-steps", "5", "x.sass", "-o", str(tmp_path / "x.bin"), cache=tmp_path)
    assert done.returncode == 2 and "unrecognized arguments: --max-evaluation-steps" in done.stderr
