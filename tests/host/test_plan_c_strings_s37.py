"""A string the plan host carries as a C string (its identity, a record check's name, a buffer's
name, the checkpoint contract's four identities, an initializer's seed) cannot hold a zero byte:
a C string ends at its first.  `bobc check`, `bobc run --reference` and `bobc sim` took such a
plan (the reference published a checkpoint whose schema held the zero byte, which no built host
could read or write) and only `bobc build` refused it, with no place and calling every such
string an "identity" (probe s37 cinject finding 4).  Each is refused where the plan wrote it,
by every command."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODULE = "LinReg/Build/NativeHost.bob"

# the byte string replaced, and the words a refusal names it by
FIELDS = {
    "host identity": (b'b"linreg-native-host-v1"', "the host's identity"),
    "check name": (b'b"magic"', "input check 0's name"),
    "buffer name": (b'(lrBuffer b"arena"', "buffer 5's identity"),
    "schema": (b'b"linreg-w-then-b-f32-v1|features=7"', "the schema identity"),
    "seed": (b'b"linreg-zero-v1"', "the seed identity"),
}


def _plan(tmp_path: Path, old: bytes, new: bytes) -> Path:
    folder = tmp_path / "plan"
    shutil.copytree(REPO / "examples/linear_regression/LinReg", folder / "LinReg")
    module = folder / MODULE
    text = module.read_bytes()
    assert text.count(old) == 1
    module.write_bytes(text.replace(old, new))
    return module


def _bobc(*args, cwd=None) -> subprocess.CompletedProcess:
    environment = dict(os.environ, BOBC_CACHE_DIR="off")
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          env=environment, timeout=600, cwd=cwd)


@pytest.mark.parametrize("field", FIELDS)
def test_a_zero_byte_in_a_c_string_of_the_plan_host_is_refused_where_it_was_written(tmp_path, field):
    old, named = FIELDS[field]
    new = old.replace(b'b"', b'b"nul\\0', 1)            # the plan's own escape for a zero byte
    module = _plan(tmp_path, old, new)
    checked = _bobc("check", module)
    assert checked.returncode != 0, checked.stdout
    assert named in checked.stderr and "zero byte" in checked.stderr, checked.stderr
    assert re.search(re.escape(str(module)) + r":\d+:\d+: error:", checked.stderr), checked.stderr


def test_the_reference_publishes_no_checkpoint_the_built_host_cannot_carry(tmp_path):
    old, _ = FIELDS["schema"]
    module = _plan(tmp_path, old, old.replace(b'b"', b'b"nul\\0', 1))
    record = tmp_path / "record.bin"
    subprocess.run([sys.executable, str(REPO / "examples/linear_regression/make_record.py"), "-o", str(record)],
                   check=True, capture_output=True, timeout=120)
    out = tmp_path / "ckpt.bin"
    ran = _bobc("run", module, "train", "--reference", "--input", record, "--checkpoint-out", out,
                "--predictions", tmp_path / "p.bin", "--result", tmp_path / "r.bin")
    assert ran.returncode != 0 and "zero byte" in ran.stderr, (ran.returncode, ran.stderr)
    assert not out.exists()
