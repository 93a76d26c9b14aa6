"""`python -m coppelius_host.outputs show` reads a request's predictions and result as
docs/coppelius-host.md gives them (probe s29 nits finding 4): the most likely next bytes of the
256 binary32 logits, the result's forward record; a file of another shape refused by name."""
from __future__ import annotations

import math
import os
import struct
import subprocess
import sys

import numpy as np

from .conftest import EXAMPLE, REPOSITORY


def show(*args, cwd) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(EXAMPLE), str(REPOSITORY / "compiler")])
    return subprocess.run([sys.executable, "-m", "coppelius_host.outputs", "show", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path})


def test_show_lists_the_likeliest_next_bytes_and_the_forward_record(tmp_path):
    logits = np.zeros(256, "<f4")
    logits[ord("e")], logits[ord(" ")], logits[10] = 3.0, 2.0, 1.0
    (tmp_path / "p.bin").write_bytes(logits.tobytes())
    summary = struct.pack("<fIII", math.log(256), 1, 200, 3)
    (tmp_path / "r.bin").write_bytes(b"COPPELIUS-RESULT" + summary + bytes(40))
    done = show("--predictions", "p.bin", "--result", "r.bin", "--top", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    total = math.exp(3) + math.exp(2) + math.exp(1) + 253
    p_lines = done.stdout.splitlines()
    assert p_lines[0] == (f"p.bin: next byte 'e' (logit 3, p {math.exp(3) / total:.4f}), ' ' (logit 2, p "
                          f"{math.exp(2) / total:.4f}), '\\n' (logit 1, p {math.exp(1) / total:.4f})")
    loss = struct.unpack("<f", struct.pack("<f", math.log(256)))[0]
    assert p_lines[1] == (f"r.bin: forward record: mean loss {loss:.6g}, skipped 1, updates issued 200, updates "
                          "skipped 3; 40 bytes follow it (docs/coppelius-host.md, \"The result file\")")


def test_non_finite_logits_are_said_not_ranked(tmp_path):
    logits = np.zeros(256, "<f4")
    logits[:2] = np.nan
    (tmp_path / "p.bin").write_bytes(logits.tobytes())
    done = show("--predictions", "p.bin", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "p.bin: 2 of 256 logits are not finite (NaN or Inf): no prediction\n"


def test_files_of_another_shape_are_refused_by_name(tmp_path):
    (tmp_path / "p.bin").write_bytes(bytes(1000))
    (tmp_path / "r.bin").write_bytes(b"NOT-A-RESULT" + bytes(40))
    done = show("--predictions", "p.bin", cwd=tmp_path)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr == ("python -m coppelius_host.outputs: error: predictions p.bin: 1000 bytes, not 1024 (the last "
                           "position's 256 logits, binary32: docs/coppelius-host.md)\n")
    done = show("--result", "r.bin", cwd=tmp_path)
    assert done.returncode == 3 and "result r.bin: does not start with the 32-byte forward record" in done.stderr
    assert "Traceback" not in done.stderr
    done = show("--result", "missing.bin", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("python -m coppelius_host.outputs: error: cannot read "
                                                           "missing.bin"), done.stderr
    done = show(cwd=tmp_path)
    assert done.returncode == 2 and "show needs --predictions FILE, --result FILE or both" in done.stderr
