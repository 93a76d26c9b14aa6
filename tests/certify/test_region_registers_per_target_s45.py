"""A region's registers are one number for every target its plan is built for, while a kernel taken
from ptxas's listings has one source a target with its own register count (probe s45 newuser10: the
MLP's mlp-grad, 24 on sm_86 and 34 on sm_90).  A region short of the sm_90 source's count certified on
sm_86 and was refused on sm_90 with only "region mlp-grad needs 34 registers but declares 24": no
target, no source, no hint.  The refusal now names the target and the source it was assembled from,
and says to declare the most any target's source needs.  The expected counts are ptxas's own, read
from each listing's EIATTR_REGCOUNT record (nothing of bobc's)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MLP = REPO / "tests" / "mlp_classifier"


def _regcount(listing: Path) -> int:
    """ptxas's register count: the word after the kernel's index in the EIATTR_REGCOUNT record."""
    text = listing.read_text()
    record = re.search(r"EIATTR_REGCOUNT.*?\.word\s+index@\(\w+\)\s*\n\s*/\*[0-9a-f]+\*/\s+\.word\s+(0x[0-9a-f]+)",
                       text, re.S)
    return int(record.group(1), 16)


def test_a_region_short_of_one_targets_source_names_it_and_says_what_to_give(tmp_path):
    kernels = MLP / "Mlp" / "kernels"
    sm86, sm90 = _regcount(kernels / "mlp-grad.sass"), _regcount(kernels / "mlp-grad.sm_90.sass")
    assert (sm86, sm90) == (24, 34)            # the premise: one kernel, two counts
    shutil.copytree(MLP / "Mlp", tmp_path / "Mlp")
    host = tmp_path / "Mlp" / "Build" / "NativeHost.bob"
    text = host.read_text()
    assert "mpGradBytes 40 32" in text
    host.write_text(text.replace("mpGradBytes 40 32", f"mpGradBytes {sm86} 32"))
    done = subprocess.run([sys.executable, "-m", "bobc", "check", "Mlp/Build/NativeHost.bob", "--target", "sm_90",
                           "--json"], capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})
    assert done.returncode == 1, done.stderr
    refusal = json.loads(done.stdout)
    assert (f"region mlp-grad needs {sm90} registers but declares {sm86} (its sm_90 code, mlp-grad.sm_90.sass)"
            in refusal["error"]), refusal
    assert refusal["hint"].startswith(f"declare at least {sm90} registers for region mlp-grad"), refusal
    assert "every target the plan is built for" in refusal["hint"]
    assert "Traceback" not in done.stderr
