"""Probe s33 docs33 finding 3: `bobc run --reference` out of memory while importing the reference
runner (its safe_io among them) says one line with the memory limit, exit 1 (the host's "internal
error (out of memory)"), never a traceback: the handler once imported safe_io again to say it, and
that import ran out of memory too."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]

# every import of the reference runner's modules runs out of memory, as under `ulimit -v`
STARVED = """
import sys
from importlib.abc import MetaPathFinder

class Starved(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith("bobc.reference."):
            raise MemoryError
        return None

sys.meta_path.insert(0, Starved())
from bobc.cli import main
sys.exit(main(sys.argv[1:]))
"""

ARGUMENTS = ["run", "--reference", "LinReg/Build/NativeHost.bob", "train", "--target", "sm_86", "--input",
             "record.bin", "--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"]


def _folder(tmp_path: Path) -> dict:
    shutil.copytree(REPOSITORY / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    (tmp_path / "record.bin").write_bytes(b"")
    return {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "BOBC_CACHE_DIR": "off",
            "TMPDIR": str(tmp_path)}


def test_the_import_that_ran_out_of_memory_is_not_made_again_to_say_so(tmp_path):
    env = _folder(tmp_path)
    done = subprocess.run([sys.executable, "-c", STARVED, *ARGUMENTS], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "During handling" not in done.stderr, done.stderr
    assert done.stderr.startswith("bobc run: error: out of memory: the memory limit (ulimit -v) is "), done.stderr
    assert done.stderr.count("\n") == 2 and "\nhint: free memory or raise the memory limit" in done.stderr
    assert not any((tmp_path / name).exists() for name in ("c.bin", "p.bin", "r.bin"))
