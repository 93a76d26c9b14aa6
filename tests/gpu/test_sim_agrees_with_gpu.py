"""The simulator against the H200 itself: the same sm_90 images, the same inputs.

Runs Bob's sm_90 host on the GPU over the vendored PyTorch case
(tests/data/shared/data/bob-reference) and the functional simulator (bobc.sim) over the same
images and inputs, and compares the three output files: predictions byte for
byte, losses, logit rows and planes with the tolerances tests/sim and
tests/gpu/test_bob_host.py use (MUFU approximations differ from the
simulator's correctly rounded values by their documented ulps).  The largest
differences are printed, so the log records how close the two are.  Needs
nvdisasm (the nvidia-cuda-nvdisasm wheel, or BOBC_NVDISASM) on the GPU machine.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))

from bob_model import formats  # noqa: E402
from bob_model.model import BobConfig  # noqa: E402

pytestmark = pytest.mark.gpu

DATA = REPO / "tests" / "data" / "shared" / "data" / "bob-reference"
LOSS_RTOL, LOSS_ATOL = 1e-4, 1e-5
PLANE_RTOL, PLANE_ATOL = 1e-3, 1e-6
SECOND_MOMENT_RTOL, SECOND_MOMENT_ATOL = 1e-3, 1e-12


def test_the_simulators_sm90_outputs_agree_with_the_h200s(tmp_path):
    from bobc import pipeline
    from bobc.host import generate
    from bobc.nvtools import nvdisasm
    from bobc.sim.host_adapter import host_plan
    from bobc.sim.invocation import simulate
    from bobc.targets import SM90

    assert nvdisasm(), "the simulator needs nvdisasm: pip install nvidia-cuda-nvdisasm (or set BOBC_NVDISASM)"
    inputs = np.load(DATA / "case.npz")
    record = formats.encode_input_record(formats.InputRecord(inputs["targets"], inputs["prompts"]))
    config = BobConfig()
    start = formats.encode_checkpoint(config.contract, formats.Checkpoint(inputs["P"], inputs["M"], inputs["V"],
                                                                         int(inputs["step"])))
    (tmp_path / "record.bin").write_bytes(record)
    (tmp_path / "start.ckpt").write_bytes(start)

    built = pipeline.compile_plan(REPO / "examples/bob/Bob/Build/NativeHost.bob", SM90)
    host = tmp_path / "bob-host"
    generate.build_host(built, SM90, host)
    run = subprocess.run([str(host), "train", "--input", str(tmp_path / "record.bin"), "--checkpoint",
                          str(tmp_path / "start.ckpt"), "--checkpoint-out", str(tmp_path / "gpu.ckpt"),
                          "--predictions", str(tmp_path / "gpu.pred"), "--result", str(tmp_path / "gpu.result")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr

    sim = simulate(host_plan(built.plan, built.images, SM90, built.program.search_path), built.images, "train", record, start)
    assert sim.predictions == (tmp_path / "gpu.pred").read_bytes()
    gpu_state = formats.decode_checkpoint((tmp_path / "gpu.ckpt").read_bytes(), config.contract)
    sim_state = formats.decode_checkpoint(sim.checkpoint, config.contract)
    gpu_result = formats.decode_result((tmp_path / "gpu.result").read_bytes())
    sim_result = formats.decode_result(sim.result)
    for name, g, s in (("initial loss", gpu_result[0], sim_result[0]), ("training loss", gpu_result[1], sim_result[1]),
                       ("logit rows", gpu_result[2], sim_result[2]), ("P", gpu_state.P, sim_state.P),
                       ("M", gpu_state.M, sim_state.M), ("V", gpu_state.V, sim_state.V)):
        print(f"{name}: max |gpu - sim| = {float(np.max(np.abs(g.astype('f8') - s.astype('f8')))):.3g}, "
              f"bit-identical values {np.mean(g.view('u4') == s.view('u4')):.4f}")
    np.testing.assert_allclose(sim_result[0], gpu_result[0], rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_allclose(sim_result[1], gpu_result[1], rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_allclose(sim_result[2], gpu_result[2], rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(sim_state.P, gpu_state.P, rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(sim_state.M, gpu_state.M, rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(sim_state.V, gpu_state.V, rtol=SECOND_MOMENT_RTOL, atol=SECOND_MOMENT_ATOL)
    assert sim_state.step == gpu_state.step == 10
