"""Probe s43 newuser8: a host Read that places the input record in no resident was certified.

A new user's MLP read its input record 16 bytes past the address of the resident meant for it (a
wrong offset), and in a second try at another resident's address: `bobc check` certified both, since
a host step was held only to lie in a buffer (the arena's, page-rounded), and `bobc run --reference`
then trained on the zeros the kernels found in the record's resident, exit 0.  The kernels touch
residents only -- the certifier holds every pointer to one -- so bytes a host step writes into the
arena outside every resident are never a tensor a kernel reads.  Such a step is now refused, naming
the bytes that lie in no resident; one that spans adjacent residents (Bob's checkpoint read of P, M
and V) is not.

The expected ranges come from LinReg's own layout (LinReg.Model, LinReg.Build.NativeHost: each
tensor on its own 4 KiB page from 0x1100000000, the 2,064-byte record on the third), computed here
by hand, not from the certifier."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
READ = ("(constructor NvidiaPlanHostFile NvidiaPlanHostInput)\n"
        "    lrInputAddress linRegInputRecordBytes 0 0 0")
ARENA = 0x11_0000_0000
INPUT, RECORD = ARENA + 2 * 0x1000, 16 + 4 * 64 * 7 + 4 * 64        # the third page; 2,064 bytes
GRADIENT, PAYLOAD = ARENA + 0x1000, 4 * 8                            # the second page; W's 32 bytes


def check(tmp_path, address: str | None) -> subprocess.CompletedProcess:
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    if address is not None:
        text = plan.read_text()
        assert text.count(READ) == 1
        plan.write_text(text.replace(READ, READ.replace("lrInputAddress", address)))
    env = dict(os.environ, BOBC_CACHE_DIR="off", PYTHONPATH=str(REPO / "compiler"))
    return subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob", "--json"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


def test_linreg_as_shipped_is_certified(tmp_path):
    done = check(tmp_path, None)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("address, start, gap, resident", [
    # 16 bytes on: the record's last 16 bytes land past its resident
    ("(naturalAdd lrInputAddress 16)", INPUT + 16, (INPUT + RECORD, INPUT + RECORD + 16),
     f"input-record [{INPUT:#x}, {INPUT + RECORD:#x})"),
    # the gradient's address: 32 bytes of gradient, then 2,032 bytes of nothing
    ("lrGradientAddress", GRADIENT, (GRADIENT + PAYLOAD, GRADIENT + RECORD),
     f"gradient [{GRADIENT:#x}, {GRADIENT + PAYLOAD:#x})"),
])
def test_a_record_read_into_bytes_no_resident_holds_is_refused(tmp_path, address, start, gap, resident):
    done = check(tmp_path, address)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    error = json.loads(done.stdout)["error"]
    low, high = gap
    assert (f"the host's step 0 (read) writes [{start:#x}, {start + RECORD:#x}) ({RECORD:,} bytes) into the "
            f"arena, and [{low:#x}, {high:#x}) ({high - low:,} bytes, after resident {resident}) of it lie in "
            f"no resident") in error, error
