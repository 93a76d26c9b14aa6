"""Probe s33 docs33 finding 4: `bobc run --reference` whose stdout is past `ulimit -f` words the
failure as the host does (safe_io.write_failure: the limit and its value); the outputs were
published, so the exit code stays 0 (README: 8 is an output not written)."""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def test_stdout_past_the_file_size_limit_names_the_limit(tmp_path):
    shutil.copytree(REPOSITORY / "examples/linear_regression", tmp_path / "lr")
    subprocess.run([sys.executable, "lr/make_record.py", "-o", "record.bin"], cwd=tmp_path, check=True,
                   capture_output=True)
    out = tmp_path / "big.txt"
    out.write_bytes(bytes(3000))
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "BOBC_CACHE_DIR": "off"}
    with out.open("ab") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "bobc", "run", "--reference", "lr/LinReg/Build/NativeHost.bob", "train",
             "--target", "sm_86", "--input", "record.bin", "--checkpoint-out", "c.bin", "--predictions",
             "p.bin", "--result", "r.bin"], cwd=tmp_path, env=env, stdout=stdout, stderr=subprocess.PIPE,
            text=True, timeout=300,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.RLIM_INFINITY)))
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("bobc run: the output was written, but its message could not be printed on "
                                  "stdout (File too large (the file size limit, ulimit -f, is 1024 bytes: "
                                  "raise it, then run again)): train: "), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert all((tmp_path / name).exists() for name in ("c.bin", "p.bin", "r.bin"))
