"""Bob's plan carried out by the plan-driven reference host with Bob's NumPy
kernels (examples/bob/reference_kernels.py) writes the files Bob's whole-
invocation NumPy model (bob_model.model) writes: two models written apart,
one kernel by kernel through the plan's schedule, agreeing byte for byte."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "plan"))


@pytest.fixture(scope="module")
def plan():
    import plan_support
    from bobc.language import load_program
    from bobc.targets import SM86
    from bobc.plan.extract import extract_plan
    return extract_plan(load_program(plan_support.NATIVE_HOST, intrinsics=plan_support.fake_kernels(), target=SM86),
                        "bobNativeHost")


@pytest.fixture(scope="module")
def kernels():
    spec = importlib.util.spec_from_file_location("bob_reference_kernels",
                                                  REPO / "examples/bob/reference_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.KERNELS


@pytest.mark.parametrize("operation,start_step", [("predict", None), ("train", None), ("train", 30)])
def test_same_files_as_bobs_numpy_model(plan, kernels, operation, start_step):
    from bob_model import formats
    from bob_model.model import BobConfig, run_invocation
    from bobc.reference import envelope
    from bobc.reference.host import ReferenceHost

    config = BobConfig()
    record = formats.InputRecord((np.arange(256) * 5 + 1) % 256, [119, 116, 32])
    checkpoint = None
    if start_step is not None:
        rng = np.random.default_rng(start_step)
        P = (rng.standard_normal(65536) * 0.01).astype(np.float32)
        M = (rng.standard_normal(65536) * 1e-3).astype(np.float32)
        V = (rng.random(65536) * 1e-6).astype(np.float32)
        checkpoint = formats.Checkpoint(P, M, V, start_step)
    expected = run_invocation(config, operation, record, checkpoint)

    published = {}
    host = ReferenceHost(plan, kernels, publish_output=lambda name, data: published.__setitem__(name, data))
    state = None
    if checkpoint is not None:
        state = envelope.decode(formats.encode_checkpoint(config.contract, checkpoint), plan.checkpoint)
    outputs = host.run(operation, formats.encode_input_record(record), state)
    assert published["predictions"] == expected.predictions_bytes()
    assert published["result"] == expected.result_bytes()
    [(step, env)] = outputs.publications
    assert env == expected.checkpoint_bytes(config)


def test_bobc_run_with_the_models_kernels_writes_the_same_files(tmp_path):
    """`bobc run --reference --kernels examples/bob/reference_kernels.py` and `bobc run
    --reference` (the same file, found in the plan's root folder) carry out the plan's
    schedule step by step; both write the bytes of Bob's whole-invocation NumPy model
    (examples/bob/bob_model), and refuse a bad record with exit 3."""
    from bob_model import formats
    from bob_model.model import BobConfig
    from bob_model.runner import invoke_files
    from bobc import cli
    from bobc.reference.runner import OutputPaths

    plan = REPO / "examples/bob/Bob/Build/NativeHost.bob"
    record = tmp_path / "record.bin"
    record.write_bytes(formats.encode_input_record(formats.InputRecord((np.arange(256) * 3) % 256, [1, 2, 3])))

    def run(tag, *extra, input_path=record):
        return cli.main(["run", str(plan), "train", "--reference", *extra, "--input", str(input_path),
                         "--checkpoint-out", str(tmp_path / f"{tag}.ckpt"),
                         "--predictions", str(tmp_path / f"{tag}.pred"), "--result", str(tmp_path / f"{tag}.res")])

    assert run("steps", "--kernels", str(REPO / "examples/bob/reference_kernels.py")) == 0
    assert run("found") == 0
    invoke_files(BobConfig(), "train", record, None,
                 OutputPaths(*(tmp_path / f"model.{suffix}" for suffix in ("ckpt", "pred", "res"))))
    for suffix in ("ckpt", "pred", "res"):
        model = (tmp_path / f"model.{suffix}").read_bytes()
        assert (tmp_path / f"steps.{suffix}").read_bytes() == model, suffix
        assert (tmp_path / f"found.{suffix}").read_bytes() == model, suffix
    bad = tmp_path / "bad.bin"
    bad.write_bytes(record.read_bytes()[:-1])
    assert run("refused", "--kernels", str(REPO / "examples/bob/reference_kernels.py"), input_path=bad) == 3
    assert not (tmp_path / "refused.ckpt").exists()


def test_bobc_run_without_kernels_says_what_to_add(tmp_path, capsys):
    """A plan whose root folder holds no reference_kernels.py, run without --kernels: exit 2,
    and the message names the file to add and the option (no model's defaults)."""
    import shutil

    from bobc import cli

    root = tmp_path / "root"
    shutil.copytree(REPO / "examples/bob/Bob", root / "Bob")
    plan = root / "Bob/Build/NativeHost.bob"
    record = tmp_path / "record.bin"
    record.write_bytes(bytes(1564))
    code = cli.main(["run", str(plan), "train", "--reference", "--input", str(record),
                     "--checkpoint-out", str(tmp_path / "c"), "--predictions", str(tmp_path / "p"),
                     "--result", str(tmp_path / "r")])
    message = capsys.readouterr().err
    assert code == 2, message
    assert "--kernels FILE" in message and str(root / "reference_kernels.py") in message
    assert "Traceback" not in message and not (tmp_path / "c").exists()
