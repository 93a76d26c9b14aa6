"""Bob's native host on a real GPU, against math none of its parts wrote.

The host is the one `bobc build --target sm_90` makes (BOB_HOST names a
prebuilt one; else it is built here).  Its outputs are compared with the
independent PyTorch case (../shared/data/bob-reference, or BOB_REFERENCE_DATA)
and with the NumPy reference runner, with the tolerances stated below:
binary32 kernels (ex2/lg2-based softmax, MUFU rsqrt) differ from PyTorch's
CUDA kernels in the last bits, which AdamW's 10 steps amplify a little.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))

from bob_model import formats  # noqa: E402
from bob_model.model import BobConfig, run_invocation  # noqa: E402

pytestmark = pytest.mark.gpu

LOSS_RTOL, LOSS_ATOL = 1e-4, 1e-5        # row losses
PLANE_RTOL, PLANE_ATOL = 1e-3, 1e-6      # P, M after 10 updates
SECOND_MOMENT_RTOL, SECOND_MOMENT_ATOL = 1e-3, 1e-12


def reference_data() -> Path:
    for candidate in (os.environ.get("BOB_REFERENCE_DATA"), REPO / "tests/data/shared/data/bob-reference",
                      REPO.parent / "shared" / "data" / "bob-reference",
                      REPO / ".device" / "bob-reference"):
        if candidate and (Path(candidate) / "case.npz").is_file():
            return Path(candidate)
    pytest.skip("the PyTorch reference case (bob-reference/case.npz) is not here")


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    data = reference_data()
    folder = tmp_path_factory.mktemp("case")
    inputs = np.load(data / "case.npz")
    record = formats.InputRecord(inputs["targets"], inputs["prompts"])
    (folder / "record.bin").write_bytes(formats.encode_input_record(record))
    config = BobConfig()
    state = formats.Checkpoint(inputs["P"], inputs["M"], inputs["V"], int(inputs["step"]))
    (folder / "start.ckpt").write_bytes(formats.encode_checkpoint(config.contract, state))
    return folder, record, np.load(data / "expected-1.npz"), np.load(data / "expected-2.npz")


def invoke(host, folder: Path, operation: str, checkpoint: str | None, tag: str, timing: Path | None = None,
           extra_env: dict | None = None, stderr_to: list | None = None):
    args = [str(host), operation, "--input", str(folder / "record.bin"),
            "--checkpoint-out", str(folder / f"{tag}.ckpt"),
            "--predictions", str(folder / f"{tag}.pred"), "--result", str(folder / f"{tag}.result")]
    if checkpoint:
        args += ["--checkpoint", str(folder / checkpoint)]
    env = dict(os.environ)
    if timing:
        env["BOBC_HOST_TIMING"] = str(timing)
    env.update(extra_env or {})
    run = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, f"{operation} exited {run.returncode}: {run.stderr}"
    if stderr_to is not None:
        stderr_to.append(run.stderr)
    config = BobConfig()
    state = formats.decode_checkpoint((folder / f"{tag}.ckpt").read_bytes(), config.contract)
    tokens, valid = formats.decode_predictions((folder / f"{tag}.pred").read_bytes())
    initial, training, rows = formats.decode_result((folder / f"{tag}.result").read_bytes())
    return {"state": state, "tokens": tokens, "valid": valid, "initial": initial, "training": training,
            "rows": rows}


def assert_matches(out, expected, step):
    np.testing.assert_allclose(out["initial"], expected["initial_loss"], rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_allclose(out["training"], expected["training_loss"], rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_array_equal(out["tokens"], expected["tokens"])
    np.testing.assert_array_equal(out["valid"], expected["valid"])
    np.testing.assert_allclose(out["rows"].reshape(3, 256), expected["logit_rows"].reshape(3, 256),
                               rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(out["state"].P, expected["P"].reshape(-1), rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(out["state"].M, expected["M"].reshape(-1), rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(out["state"].V, expected["V"].reshape(-1), rtol=SECOND_MOMENT_RTOL,
                               atol=SECOND_MOMENT_ATOL)
    assert out["state"].step == step


def test_fresh_train_then_resume_in_a_new_process_match_pytorch(host, case):
    folder, _, expected1, expected2 = case
    first = invoke(host, folder, "train", "start.ckpt", "first", timing=folder / "timing-first.txt")
    assert_matches(first, expected1, 10)
    assert first["training"].mean() < first["initial"].mean() - 1.0, "the loss must fall"
    second = invoke(host, folder, "train", "first.ckpt", "second")
    assert_matches(second, expected2, 20)


def test_two_identical_invocations_are_bit_identical(host, case):
    folder = case[0]
    invoke(host, folder, "train", "start.ckpt", "again-a")
    invoke(host, folder, "train", "start.ckpt", "again-b")
    for suffix in ("ckpt", "pred", "result"):
        assert (folder / f"again-a.{suffix}").read_bytes() == (folder / f"again-b.{suffix}").read_bytes(), suffix


def test_a_traced_invocation_says_where_its_time_goes_and_computes_the_same(host, case):
    """BOBC_GPU_TRACE=1 prints each step with its milliseconds on stderr, in order, from the
    bring-up to the closed descriptors, and changes nothing in the outputs."""
    folder = case[0]
    invoke(host, folder, "train", "start.ckpt", "untraced")
    said = []
    invoke(host, folder, "train", "start.ckpt", "traced", extra_env={"BOBC_GPU_TRACE": "1"}, stderr_to=said)
    lines = [l for l in said[0].splitlines() if l.startswith("rt-gpu:")]
    times = [float(l.split()[1]) for l in lines]
    assert times == sorted(times) and times[0] < 1.0
    text = "\n".join(lines)
    for step in ("mapping: RM", "channel up", "host: buffers allocated", "host: submissions 0..",
                 "host: schedule carried out", "host: outputs published", "close: root client freed",
                 "close: descriptors closed"):
        assert step in text, step
    assert "UVM" not in text.replace("mapping: RM (NV50_MEMORY_VIRTUAL + NV_ESC_RM_MAP_MEMORY_DMA; no UVM)", "")
    for suffix in ("ckpt", "pred", "result"):
        assert (folder / f"untraced.{suffix}").read_bytes() == (folder / f"traced.{suffix}").read_bytes(), suffix


def test_both_bring_ups_compute_the_same_bytes(host, case):
    """Bob needs no UVM, so its host maps through the RM (the default); the UVM bring-up (what a
    plan with a UVM external range gets, BOBC_GPU_MAPPING=uvm here) must give the same outputs,
    and each trace says which bring-up ran, ioctl by ioctl with BOBC_GPU_TRACE=ioctl."""
    folder = case[0]
    said = {}
    for mapping in ("rm", "uvm"):
        stderr = []
        invoke(host, folder, "train", "start.ckpt", mapping, stderr_to=stderr,
               extra_env={"BOBC_GPU_MAPPING": mapping, "BOBC_GPU_TRACE": "ioctl"})
        said[mapping] = stderr[0]
    assert "mapping: RM" in said["rm"] and "RM_MAP_MEMORY_DMA" in said["rm"] and "UVM ioctl" not in said["rm"]
    assert "GPU registered with UVM" in said["uvm"] and "UVM ioctl" in said["uvm"]
    assert "RM_MAP_MEMORY_DMA" not in said["uvm"]
    for suffix in ("ckpt", "pred", "result"):
        assert (folder / f"rm.{suffix}").read_bytes() == (folder / f"uvm.{suffix}").read_bytes(), suffix


def test_an_unknown_bring_up_is_a_usage_error(host, case):
    folder = case[0]
    run = subprocess.run([str(host), "train", "--input", str(folder / "record.bin"), "--checkpoint-out",
                          str(folder / "x.ckpt"), "--predictions", str(folder / "x.pred"), "--result",
                          str(folder / "x.result")], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "BOBC_GPU_MAPPING": "fast"})
    assert run.returncode == 2 and "BOBC_GPU_MAPPING=fast: expected rm or uvm" in run.stderr


def test_predict_from_a_trained_checkpoint_gives_the_trained_predictions(host, case):
    folder, _, expected1, _ = case
    invoke(host, folder, "train", "start.ckpt", "trained")
    predicted = invoke(host, folder, "predict", "trained.ckpt", "predicted")
    np.testing.assert_array_equal(predicted["tokens"], expected1["tokens"])
    assert predicted["state"].step == 10
    assert (folder / "predicted.ckpt").read_bytes() == (folder / "trained.ckpt").read_bytes()
    assert not predicted["training"].any(), "predict trains nothing: its training loss block is zeros"


def test_fresh_initialization_agrees_with_the_reference_runner(host, case):
    """No checkpoint: both sides draw W from the documented generator (docs/formats.md)."""
    folder, record, _, _ = case
    out = invoke(host, folder, "train", None, "fresh")
    ref = run_invocation(BobConfig(), "train", record, None)
    np.testing.assert_allclose(out["initial"], ref.initial_loss, rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_allclose(out["training"], ref.training_loss, rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_allclose(out["state"].P, ref.checkpoint.P, rtol=PLANE_RTOL, atol=PLANE_ATOL)


@pytest.mark.parametrize("damage", ["corrupt", "foreign"])
def test_bad_checkpoints_are_refused_on_the_gpu_machine(host, case, damage):
    folder = case[0]
    data = bytearray((folder / "start.ckpt").read_bytes())
    if damage == "corrupt":
        data[len(data) // 2] ^= 0x40
        expected_code, word = 4, "CRC"
    else:
        config = BobConfig()
        import dataclasses
        foreign = dataclasses.replace(config.contract, data=config.contract.data.replace(b"prompts", b"prompt5"))
        inputs = np.load(reference_data() / "case.npz")
        data = formats.encode_checkpoint(foreign, formats.Checkpoint(inputs["P"], inputs["M"], inputs["V"], 0))
        expected_code, word = 5, "data"
    (folder / f"{damage}.ckpt").write_bytes(bytes(data))
    run = subprocess.run([str(host), "train", "--input", str(folder / "record.bin"), "--checkpoint",
                          str(folder / f"{damage}.ckpt"), "--checkpoint-out", str(folder / f"{damage}-out.ckpt"),
                          "--predictions", str(folder / f"{damage}.pred"), "--result", str(folder / f"{damage}.res")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == expected_code, run.stderr
    assert word in run.stderr
    assert not (folder / f"{damage}-out.ckpt").exists()
