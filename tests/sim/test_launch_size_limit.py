"""A launch larger than the simulator holds is refused by name before anything is allocated
(probe s31 limits finding 3): a certified plan with a grid of 2^31 - 1 blocks made `bobc sim` fail
with a NumPy MemoryError traceback (512 GiB for one array).  Now: the launch, its shape, its
thread count and executor.MAX_THREADS, a hint that the plan is not at fault, exit 1."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import kernel  # noqa: E402

from bobc.sim import executor  # noqa: E402
from bobc.sim.kernel import run_kernel  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "linear_regression"


def test_run_kernel_refuses_a_grid_past_the_limit_before_allocating(monkeypatch):
    made = []
    real = np.arange
    monkeypatch.setattr(executor.np, "arange", lambda n, *a, **k: made.append(n) or real(min(n, 1), *a, **k))
    blocks = executor.MAX_THREADS // 64 + 1        # blocks of 64 threads: one block past the limit
    with pytest.raises(executor.LaunchTooLarge) as caught:
        run_kernel(kernel("block_reduce", "sm_90"), "sm_90", grid=(blocks, 1, 1), block=(64, 1, 1),
                   params=["out", "in"], buffers={"out": np.zeros(1, np.float32), "in": np.zeros(1, np.float32)})
    assert f"a grid of {blocks:,} x 1 x 1 blocks of 64 x 1 x 1 threads is {blocks * 64:,} threads" in \
        caught.value.message
    assert f"more than the {executor.MAX_THREADS:,} one launch may have in the simulator" in caught.value.message
    assert "the simulator is for small shapes" in caught.value.hint
    assert caught.value.exit_code == 1 and made == []


def test_bobc_sim_refuses_a_certified_plan_with_a_huge_grid_by_name(tmp_path):
    shutil.copytree(EXAMPLE / "LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    old = "(lrWord64 (naturalAdd lrProgramBase place)) 1 1 1 1 1 lrParameterBytes"
    text = plan.read_text(encoding="utf-8")
    assert text.count(old) == 1
    plan.write_text(text.replace(old, old.replace(" 1 1 1 1 1 ", " 2147483647 1 1 1 1 ")), encoding="utf-8")
    sys.path.insert(0, str(EXAMPLE))
    import make_record
    (tmp_path / "record.bin").write_bytes(make_record.record_bytes(*make_record.make(3)))
    env = {"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO / "compiler")}
    checked = subprocess.run([sys.executable, "-m", "bobc", "check", str(plan)], capture_output=True, text=True,
                             env=env, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr         # within the GPU's limits: certified
    done = subprocess.run([sys.executable, "-m", "bobc", "sim", str(plan), "train", "--input", "record.bin",
                           "--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.startswith("bobc sim: error: launch 0 (linreg-loss-grad): a grid of 2,147,483,647 x 1 x 1 "
                                  "blocks of 32 x 1 x 1 threads is 68,719,476,704 threads"), done.stderr
    assert "hint: the simulator is for small shapes" in done.stderr
    assert not (tmp_path / "p.bin").exists()
