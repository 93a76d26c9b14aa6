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


def test_a_file_it_cannot_compare_is_one_line_exit_2_never_a_traceback_or_a_hang(tmp_path):
    """A missing file, a folder, a device, a FIFO (never waited on) or a file of another format
    is one line naming it, exit 2 -- 1 means "they differ" (probe s34 paths finding 8)."""
    import os

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "other.bin").write_bytes(b"not a record")
    folder = str(tmp_path)
    for given, said in ((["absent", "c", "p", "r"], "record absent: cannot open: No such file or directory"),
                        ([folder, "c", "p", "r"], f"record {folder}: a folder, not a regular file"),
                        (["/dev/null", "c", "p", "r"], "record /dev/null: a device, not a regular file"),
                        ([str(tmp_path / "fifo")] * 4, f"record {tmp_path / 'fifo'}: a FIFO, not a regular file"),
                        ([str(tmp_path / "other.bin")] * 4,
                         f"record {tmp_path / 'other.bin'}: not a LinReg input record (make_record.py writes one)"),
                        (["new\nline", "c", "p", "r"], "record new?line: cannot open: No such file or directory")):
        done = script(*given)
        assert done.returncode == 2 and done.stderr == f"numpy_model.py: error: {said}\n", done.stderr
