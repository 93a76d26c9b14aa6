"""Files in, files out: `bobc run --reference` on Bob's plan, its outputs held to the
PyTorch reference case (the plan's own steps with examples/bob/reference_kernels.py,
found by the plan-root convention).

Exit codes are the native host's: 3 bad record, 4 bad checkpoint, 5 foreign
checkpoint, 8 output write failure; a refused invocation writes nothing, and
a failed write leaves the previous file intact.
"""
from __future__ import annotations

import dataclasses
import os
import struct
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import reachable_folder

from bobc import cli
from bobc.commands import run as run_command
from bobc.reference import publish as publish_module
from bob_model.model import bob_contract
from bobc.reference.errors import OutputWriteFailure
from bob_model.formats import (decode_checkpoint, decode_predictions, decode_result,
                                    encode_checkpoint, encode_input_record)
from bobc.reference.publish import publish


@pytest.fixture
def files(tmp_path, repo, bob_case, case_record, config, state_of):
    """A record and the case's step-0 checkpoint on disk, and the output paths."""
    record = tmp_path / "record.bin"
    record.write_bytes(encode_input_record(case_record))
    start = tmp_path / "start.ckpt"
    start.write_bytes(encode_checkpoint(config.contract, state_of(bob_case["case"])))
    return dict(plan=repo / BOB_PLAN, record=record, start=start, out=tmp_path / "out.ckpt",
                predictions=tmp_path / "pred.bin", result=tmp_path / "result.bin")


BOB_PLAN = "examples/bob/Bob/Build/NativeHost.bob"
_LOADED = {}


@pytest.fixture
def bobc_run(monkeypatch, repo):
    """`bobc run` through the real CLI on Bob's plan (extracted once for these tests)."""
    if not _LOADED:
        _LOADED["plan"] = run_command.load_plan(repo / BOB_PLAN)
    monkeypatch.setattr(run_command, "load_plan", lambda *args, **kwargs: _LOADED["plan"])

    def invoke(f, operation="train", checkpoint=None, **overrides):
        paths = dict(f, **overrides)
        argv = ["run", str(paths["plan"]), operation, "--reference", "--input",
                str(paths["record"]), "--checkpoint-out", str(paths["out"]),
                "--predictions", str(paths["predictions"]), "--result", str(paths["result"])]
        if checkpoint is not None:
            argv += ["--checkpoint", str(checkpoint)]
        return cli.main(argv)
    return invoke


def outputs_of(f, config):
    tokens, valid = decode_predictions(Path(f["predictions"]).read_bytes())
    initial, training, rows = decode_result(Path(f["result"]).read_bytes())
    state = decode_checkpoint(Path(f["out"]).read_bytes(), config.contract, f["out"])
    return tokens, valid, initial, training, rows, state


def test_train_then_resume_from_files(files, bobc_run, bob_case, config, capsys):
    assert bobc_run(files, "train", files["start"]) == 0
    assert "holds step 10" in capsys.readouterr().out
    tokens, valid, initial, training, rows, state = outputs_of(files, config)
    e1 = bob_case["expected-1"]
    assert tokens.tolist() == [97, 32, 116] and valid.tolist() == [1, 1, 1]
    np.testing.assert_allclose(initial, e1["initial_loss"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(training, e1["training_loss"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(rows, e1["logit_rows"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(state.P, e1["P"], rtol=1e-4, atol=1e-6)
    assert state.step == 10
    # resume in place: the output checkpoint is also the input
    assert bobc_run(files, "train", files["out"]) == 0
    *_, training, rows, state = outputs_of(files, config)
    e2 = bob_case["expected-2"]
    np.testing.assert_allclose(training, e2["training_loss"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(state.V, e2["V"], rtol=1e-4, atol=1e-16)
    assert state.step == 20


def test_fresh_predict_writes_zero_training_block(files, bobc_run, config):
    assert bobc_run(files, "predict") == 0
    tokens, valid, initial, training, rows, state = outputs_of(files, config)
    assert not training.any() and valid.tolist() == [1, 1, 1]
    assert state.step == 0 and np.abs(state.P).max() <= 0.01
    assert rows.tobytes() == state.P.reshape(256, 256)[[119, 116, 32]].tobytes()


def test_predicts_summary_says_the_checkpoint_was_handed_on_not_that_none_was_written(files, bobc_run, capsys):
    """probe s32 checkpoint finding 9: predict said "0 checkpoint publication(s)" although it wrote
    --checkpoint-out (its input checkpoint, handed on unchanged)."""
    out = str(files["out"])
    assert bobc_run(files, "train", files["start"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"train: 1 checkpoint publication(s); {out} holds step 10"
    trained = files["out"].read_bytes()
    handed = files["out"].with_name("handed.ckpt")
    handed.write_bytes(trained)
    assert bobc_run(files, "predict", handed) == 0
    assert capsys.readouterr().out.splitlines()[-1] == \
        f"predict: the input checkpoint handed on unchanged; {out} holds step 10"
    assert files["out"].read_bytes() == trained
    assert bobc_run(files, "predict") == 0
    assert capsys.readouterr().out.splitlines()[-1] == \
        f"predict: the fresh checkpoint handed on unchanged; {out} holds step 0"


def test_identical_invocations_write_identical_files(files, bobc_run, tmp_path):
    assert bobc_run(files, "train", files["start"]) == 0
    first = [Path(files[k]).read_bytes() for k in ("out", "predictions", "result")]
    assert bobc_run(files, "train", files["start"]) == 0
    assert first == [Path(files[k]).read_bytes() for k in ("out", "predictions", "result")]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["record.bin", "start.ckpt", "out.ckpt", "pred.bin", "result.bin"])


def corrupt(path: Path, offset: int) -> Path:
    data = bytearray(path.read_bytes())
    data[offset] ^= 1
    bad = path.with_name("bad-" + path.name)
    bad.write_bytes(bytes(data))
    return bad


@pytest.mark.parametrize("case, code", [
    ("record-size", 3), ("record-pairs", 3), ("record-missing", 3),
    ("checkpoint-truncated", 4), ("checkpoint-crc", 4), ("checkpoint-missing", 4),
    ("checkpoint-foreign", 5), ("same-output-twice", 2),
])
def test_refusals_exit_with_the_host_codes_and_write_nothing(
        case, code, files, bobc_run, config, bob_case, state_of, tmp_path, capsys):
    f = dict(files)
    checkpoint = files["start"]
    if case == "record-size":
        f["record"] = tmp_path / "short.bin"
        f["record"].write_bytes(files["record"].read_bytes()[:-4])
    elif case == "record-pairs":
        f["record"] = corrupt(files["record"], 17)
    elif case == "record-missing":
        f["record"] = tmp_path / "nothing.bin"
    elif case == "checkpoint-truncated":
        checkpoint = tmp_path / "cut.ckpt"
        checkpoint.write_bytes(files["start"].read_bytes()[:5000])
    elif case == "checkpoint-crc":
        checkpoint = corrupt(files["start"], 4000)
    elif case == "checkpoint-missing":
        checkpoint = tmp_path / "nothing.ckpt"
    elif case == "checkpoint-foreign":
        checkpoint = tmp_path / "foreign.ckpt"
        other = dataclasses.replace(config.contract, seed=b"bob-seed-v2")
        checkpoint.write_bytes(encode_checkpoint(other, state_of(bob_case["case"])))
    elif case == "same-output-twice":
        f["result"] = f["predictions"]
    assert bobc_run(f, "train", checkpoint) == code
    message = capsys.readouterr().err
    assert message.count("\n") <= 2 and "Traceback" not in message
    for key in ("out", "predictions", "result"):
        assert not Path(f[key]).exists(), key


def test_unwritable_output_exits_8_and_keeps_the_old_checkpoint(files, bobc_run, tmp_path):
    old = b"the previous checkpoint"
    files["out"].write_bytes(old)
    missing = tmp_path / "no-such-folder" / "pred.bin"
    assert bobc_run(files, "train", files["start"], predictions=missing) == 8
    assert files["out"].read_bytes() == old


# ----------------------------------------------------------- atomic publish
def test_publish_replaces_whole_files(tmp_path):
    target = tmp_path / "x.bin"
    publish(target, b"first")
    publish(target, b"second, longer")
    assert target.read_bytes() == b"second, longer"
    assert [p.name for p in tmp_path.iterdir()] == ["x.bin"]


def test_failed_rename_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "ckpt.bin"
    target.write_bytes(b"old state")

    def refuse(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(publish_module.os, "replace", refuse)
    with pytest.raises(OutputWriteFailure) as caught:
        publish(target, b"new state" * 1000)
    assert caught.value.exit_code == 8 and "ckpt.bin" in str(caught.value)
    assert target.read_bytes() == b"old state"
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.bin"]


def test_failed_write_midway_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "ckpt.bin"
    target.write_bytes(b"old state")

    def fail(fd):
        raise OSError(5, "Input/output error")
    monkeypatch.setattr(publish_module.os, "fsync", fail)
    with pytest.raises(OutputWriteFailure):
        publish(target, b"new")
    assert target.read_bytes() == b"old state"
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.bin"]


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o002, 0o664)])
def test_published_mode_follows_the_umask_as_the_host_does(tmp_path, mask, mode):
    """runtime_c's rt_publish_atomic: mode 0666 & ~umask (docs/runtime.md)."""
    previous = os.umask(mask)
    try:
        publish(tmp_path / "out.bin", b"x")
    finally:
        os.umask(previous)
    assert (tmp_path / "out.bin").stat().st_mode & 0o777 == mode


def test_read_only_folder(tmp_path):
    if os.geteuid() == 0:  # root writes into read-only folders: publish as nobody instead
        return _read_only_folder_as_nobody()
    target = tmp_path / "ckpt.bin"
    target.write_bytes(b"old")
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(OutputWriteFailure):
            publish(target, b"new")
        assert target.read_bytes() == b"old"
    finally:
        tmp_path.chmod(0o755)


def _read_only_folder_as_nobody():
    """The same refusal from a forked child that dropped to uid/gid 65534 (nobody)."""
    folder = reachable_folder("bobc-readonly-")
    try:
        target = folder / "ckpt.bin"
        target.write_bytes(b"old")
        target.chmod(0o644)
        folder.chmod(0o555)
        child = os.fork()
        if child == 0:
            code = 1
            try:
                os.setgid(65534)
                os.setuid(65534)
                publish(target, b"new")
            except OutputWriteFailure:
                code = 3
            finally:
                os._exit(code)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 3
        assert target.read_bytes() == b"old"
    finally:
        folder.chmod(0o755)
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()


def test_output_is_a_folder(tmp_path):
    with pytest.raises(OutputWriteFailure):
        publish(tmp_path, b"x")


# --------------------------------------------------------------- the real plan
def test_bobc_run_with_the_bundled_plan(repo, tmp_path, bob_case, case_record):
    """End to end through the language and plan extraction."""
    plan = repo / "examples/bob/Bob/Build/NativeHost.bob"
    loaded = run_command.load_plan(plan)
    assert loaded.checkpoint is not None
    assert loaded.checkpoint.seed == b"bob-seed-v1"
    assert loaded.checkpoint.schema == bob_contract().schema
    assert loaded.checkpoint.data == bob_contract().data
    record = tmp_path / "record.bin"
    record.write_bytes(encode_input_record(case_record))
    out = {k: tmp_path / k for k in ("ckpt", "pred", "res")}
    code = cli.main(["run", str(plan), "train", "--reference", "--input", str(record),
                     "--checkpoint-out", str(out["ckpt"]), "--predictions", str(out["pred"]),
                     "--result", str(out["res"])])
    assert code == 0
    assert struct.unpack("<6I", out["pred"].read_bytes())[1::2] == (1, 1, 1)
