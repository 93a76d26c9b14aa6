"""A reference kernel that fails is pinned to the file that defines it: with no --kernels given (the
plan's own reference_kernels.py), the hint said "fix the kernel in the --kernels file", naming an
option the user never gave (probe s36 exitcodes finding 6).  The hint names the file, shown as bobc
shows a source file (relative to the working folder under it)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "bob"))

GOOD = ["--input", "record.bin", "--checkpoint-out", "c", "--predictions", "p", "--result", "r"]


def test_a_failing_kernel_of_the_plans_own_kernels_file_names_that_file_not_an_option(tmp_path):
    from bob_model.formats import InputRecord, encode_input_record

    shutil.copytree(REPO / "examples/bob/Bob", tmp_path / "bob/Bob")
    source = (REPO / "examples/bob/reference_kernels.py").read_text()
    head = "def row_gather(memory, launch):\n"
    assert source.count(head) == 1
    (tmp_path / "bob/reference_kernels.py").write_text(source.replace(head, head + "    raise ValueError('boom')\n"))
    (tmp_path / "record.bin").write_bytes(
        encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [119, 116, 32])))
    done = subprocess.run([sys.executable, "-m", "bobc", "run", "bob/Bob/Build/NativeHost.bob", "train",
                           "--reference", *GOOD], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "the reference kernel bob-row-gather failed at launch" in done.stderr
    assert "--kernels" not in done.stderr, done.stderr
    assert done.stderr.endswith("hint: fix the kernel in bob/reference_kernels.py; nothing was published\n"), done.stderr
    assert not any((tmp_path / name).exists() for name in ("c", "p", "r"))
