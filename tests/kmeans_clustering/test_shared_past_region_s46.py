"""`bobc sim` holds a kernel's shared accesses to the bytes its region gives, not only to the QMD's
rounded SHARED_MEMORY_SIZE (probe s46 newuser11).  Before, tests/kmeans_clustering's kmeans-assign cut
from `.shared 0x408` to `.shared 0x404` -- its warp 1 storing its sum at 0x404..0x407 -- ran through
`bobc sim` on sm_86 with "no out-of-bounds access" and the right bytes: the region gives 1028 bytes, the
QMD rounds them up to a granule, and the store lands inside the rounding.  A GPU runs it too, but the code
reaches bytes its contract does not declare (a later region placed there, or another granule, breaks
it).  Expected values: 0x404 + 4 > 1028 = 0x404; the store is the source's `STS [R1+0x400]` of lane 0
of warp 1 (R1 = 4 x warp)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import importlib.util

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def _bobc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})


def _outputs(name):
    return ["--checkpoint-out", f"{name}-c.bin", "--predictions", f"{name}-p.bin", "--result", f"{name}-r.bin"]


def _record(folder):
    spec = importlib.util.spec_from_file_location("newuser11_make_record", HERE / "make_record.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    (folder / "record.bin").write_bytes(make.record_bytes(make.make()))


def test_sim_refuses_shared_access_past_the_region_within_the_qmd_rounding_s46(tmp_path):
    """kmeans-assign declaring `.shared 0x404` while warp 1's lane 0 stores its sum at 0x404: the region
    gives 1028 bytes, the QMD rounds them up to a granule (so a GPU runs it and so did `bobc sim`,
    silently), but the code reaches past its declaration; sim now stops at that store."""
    shutil.copytree(HERE / "KMeans", tmp_path / "KMeans")
    kernel = tmp_path / "KMeans/kernels/kmeans-assign.sass"
    kernel.write_text(kernel.read_text().replace("\n.shared 0x408\n", "\n.shared 0x404\n"))
    _record(tmp_path)
    done = _bobc("sim", "KMeans/Build/NativeHost.bob", "train", "--target", "sm_86", "--input", "record.bin",
                 *_outputs("x"), cwd=tmp_path)
    assert done.returncode == 7, done.stderr
    first = done.stderr.splitlines()[0]
    store = next(n for n, text in enumerate(kernel.read_text().splitlines(), 1) if "STS [R1+0x400]" in text)
    assert first.startswith(f"bobc sim: KMeans/kernels/kmeans-assign.sass:{store}:5: error: launch 0 (kmeans-assign)")
    assert "shared-memory access at 0x404 (4 bytes) lies outside the block's 1028 bytes of shared memory" in first
    assert "region kmeans-assign's shared bytes (1,028, given at KMeans/Build/NativeHost.bob:" in first
    assert not (tmp_path / "x-c.bin").exists()
