"""`bobc sim` from the command line: the reference runner's files, and a fault as one message."""
from __future__ import annotations

import struct


from bobc.cli import main
from bobc.nvidia.encode import write_images
from bob_model import formats
from bob_model.model import run_invocation

from .conftest import PLAN, REPO, built_for


def _arguments(folder, operation="predict"):
    return [str(PLAN), operation, "--target", "sm_86", "--input", str(folder / "record.bin"),
            "--checkpoint-out", str(folder / "out.ckpt"), "--predictions", str(folder / "out.pred"),
            "--result", str(folder / "out.result")]


def test_bobc_sim_predict_writes_the_files_bobc_run_reference_writes(tmp_path, case, capsys):
    (tmp_path / "record.bin").write_bytes(case[0])
    assert main(["sim", *_arguments(tmp_path)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("sim sm_86: predict: 7 launches, 7 semaphore releases; no control-code hazard, "
                           "no unordered launches, no out-of-bounds access")
    config = case[3]
    reference = run_invocation(config, "predict", formats.decode_input_record(case[0]), None)
    # predictions, and the fresh state handed on, byte for byte (what `bobc run --reference` writes)
    assert (tmp_path / "out.pred").read_bytes() == reference.predictions_bytes()
    assert (tmp_path / "out.ckpt").read_bytes() == reference.checkpoint_bytes(config)
    assert len((tmp_path / "out.result").read_bytes()) == 5120


def test_bobc_sim_without_the_order_check_says_so(tmp_path, case, capsys):
    """--no-order-check (docs/simulator.md, "Launch order"): the summary no longer claims it."""
    (tmp_path / "record.bin").write_bytes(case[0])
    assert main(["sim", *_arguments(tmp_path), "--no-order-check"]) == 0
    said = capsys.readouterr().out
    assert "no control-code hazard, no out-of-bounds access" in said and "unordered" not in said


def test_bobc_sim_reports_a_fault_in_given_images_as_one_message_with_the_gpu_fault_code(tmp_path, case, capsys):
    (tmp_path / "record.bin").write_bytes(case[0])
    built, _ = built_for("sm_86")
    images = write_images(built.images, tmp_path / "images")
    ring = bytearray((images / "gpfifo.bin").read_bytes())
    dword1 = struct.unpack_from("<I", ring, 4)[0]
    struct.pack_into("<I", ring, 4, dword1 - (6 << 10))          # entry 0 loses its semaphore release
    (images / "gpfifo.bin").write_bytes(bytes(ring))
    assert main(["sim", *_arguments(tmp_path), "--images", str(images)]) == 7
    err = capsys.readouterr().err
    assert err.startswith("bobc sim: error: GPFIFO entry 0 finished without releasing its semaphore")
    assert "Traceback" not in err
    assert not (tmp_path / "out.pred").exists()


def test_bobc_sim_carries_out_another_plans_host_with_its_own_files(tmp_path, case, capsys):
    """The synthetic AllSteps host (Bob's program, a schedule of every step kind), predict: its
    8-byte predictions as AllSteps.bob's steps make them (the input's bytes 16..19 and, after the
    cursor moves 2, 18..21; then the filled word 42 written over bytes 2..5), the bound input
    identity ending the result, the fresh state handed on."""
    from bobc.reference import envelope

    (tmp_path / "record.bin").write_bytes(case[0])
    plan = REPO / "tests/platform/Synthetic/AllSteps.bob"
    arguments = _arguments(tmp_path)
    arguments[0] = str(plan)
    assert main(["sim", *arguments, "--entry", "synAllStepsHost", "-I", str(REPO / "examples/bob")]) == 0
    said = capsys.readouterr().out
    # the 7 forward entries: the three reissues come after the Operation (a train's)
    assert said.startswith("sim sm_86: predict: 7 launches, 7 semaphore releases; no control-code hazard")
    assert "0 checkpoint publication(s); predictions 8 bytes" in said
    record = case[0]
    assert (tmp_path / "out.pred").read_bytes() == record[16:18] + struct.pack("<I", 42) + record[20:22]
    built, _ = built_for("sm_86")
    assert envelope.decode((tmp_path / "out.ckpt").read_bytes(), built.plan.checkpoint)[1] == 0
    assert (tmp_path / "out.result").read_bytes()[-8:] == case[0][:8]      # the bound input identity


def test_bobc_sim_refuses_a_shortened_host_option_as_the_host_does(tmp_path, case, capsys):
    """`--inp` is not --input: the host and `bobc run --reference` refuse it (probe s31 hostexe
    finding 1), and so does `bobc sim`, before anything runs, in their words: an unknown option
    named as given (probe s31 today finding 10), not argparse's "required: --input"."""
    (tmp_path / "record.bin").write_bytes(case[0])
    words = [w if w != "--input" else "--inp" for w in _arguments(tmp_path)]
    assert main(["sim", *words]) == 2
    err = capsys.readouterr().err
    assert err == "bobc sim: error: unknown option '--inp' (see --help)\n"
    assert not (tmp_path / "out.pred").exists()
