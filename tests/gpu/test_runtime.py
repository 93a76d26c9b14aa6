"""The runtime_c shim on a real GPU: bring-up, a semaphore release through
the GPFIFO, the compute class bound, one V04_00 QMD launch of a
ptxas-compiled sm_90 kernel (runtime_c/tests/data/launch_sm90.bin, made by
runtime_c/tests/make_launch_bundle.py).  Skipped without /dev/nvidiactl."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import make_runtime

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "runtime_c"


@pytest.fixture(scope="module")
def built(runtime_build) -> Path:
    """runtime_c built into this run's own folder (tests/conftest.py runtime_build), not
    runtime_c/build, where a second suite on the same machine raced this one."""
    done = make_runtime(runtime_build, "all")
    assert done.returncode == 0, done.stdout + done.stderr
    return runtime_build


@pytest.mark.gpu
def test_gpu_smoke_bring_up_semaphore_compute_launch(built):
    bundle = RUNTIME / "tests" / "data" / "launch_sm90.bin"
    run = subprocess.run([str(built / "gpu_smoke"), "--bundle", str(bundle), "--repeat", "20"],
                         capture_output=True, text=True, timeout=120)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log
    assert "bring-up OK" in log
    assert "compute object accepted" in log
    assert "kernel output correct" in log
    assert "gpu_smoke: PASS" in log


@pytest.mark.gpu
def test_gpu_open_close_repeatedly(built):
    """Bring-up after a full teardown works again (nothing left behind)."""
    for _ in range(2):
        run = subprocess.run([str(built / "rt_tool"), "gpu-open", "sm_90"], capture_output=True, text=True,
                             timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.stdout.startswith("ok driver 580."), run.stdout


@pytest.mark.gpu
def test_wrong_target_is_refused_by_class(built):
    """sm_86's AMPERE_COMPUTE_B is not on an H200: refused by name, exit 6."""
    run = subprocess.run([str(built / "rt_tool"), "gpu-open", "sm_86"], capture_output=True, text=True,
                         timeout=60)
    log = run.stdout + run.stderr
    if "does not list" not in log:
        pytest.skip(f"this GPU lists the sm_86 classes: {log[-300:]}")
    assert run.returncode == 6, log
    assert "AMPERE_COMPUTE_B" in log
