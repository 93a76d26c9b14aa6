"""docs/kernel-contracts.md said a pointer's `each COUNT by STRIDE` batches "must lie in a resident of
its own", which a new user (probe s46 newuser11) read as one resident per batch, and was about to give
each of k-means' K centroid rows a resident.  The certifier (bobc.certify.pointers: each batch's extent
checked with _check_address, which asks for one resident holding it) lets batches share one: the page
now says so, and this holds the certifier to it -- tests/kmeans_clustering's kmeans-update writes one
row a block (`each lo[4] by 4*hi[3]`) into the one 32-byte `centroids` resident and certifies, and the
same contract with a stride of 8*hi[3] puts batch 2 at +32, past that resident (the next one begins a
page later), and is refused naming the batch."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KMEANS = REPO / "tests/kmeans_clustering"


def _check(root):
    return subprocess.run([sys.executable, "-m", "bobc", "check", "KMeans/Build/NativeHost.bob"], cwd=root,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})


def test_the_page_says_batches_may_share_a_resident_s46():
    text = " ".join((REPO / "docs/kernel-contracts.md").read_text().split())
    paragraph = text[text.index("`each COUNT by STRIDE` (expressions as above)"):]
    paragraph = paragraph[:paragraph.index("The certifier checks every batch")]
    assert "of its own" not in paragraph
    assert "within one resident: batches may share one" in paragraph


def test_batches_sharing_one_resident_certify_and_one_past_it_is_refused_s46(tmp_path):
    done = _check(KMEANS)
    assert done.returncode == 0, done.stderr
    shutil.copytree(KMEANS / "KMeans", tmp_path / "KMeans")
    kernel = tmp_path / "KMeans/kernels/kmeans-update.sass"
    kernel.write_text(kernel.read_text().replace("each lo[4] by 4*hi[3]", "each lo[4] by 8*hi[3]"))
    done = _check(tmp_path)
    assert done.returncode != 0
    assert re.search(r"argument 2.*batch 2 \(\+0x20\)", done.stderr), done.stderr
