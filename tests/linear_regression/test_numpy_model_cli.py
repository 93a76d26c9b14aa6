"""examples/linear_regression/numpy_model.py from the command line (probe s28 docs, finding 7):
`--help` says what it takes (it was a traceback: "not enough values to unpack"), and wrong
arguments are one usage line, exit 2."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "examples/linear_regression/numpy_model.py"


def script(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_help_says_what_it_takes():
    done = script("--help")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith("usage: numpy_model.py [-h] record checkpoint predictions result [resumed_from]")


def test_too_few_arguments_are_a_usage_error_not_a_traceback():
    done = script("record.bin")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.endswith("numpy_model.py: error: the following arguments are required: checkpoint, "
                                "predictions, result\n"), done.stderr
