"""Bob's whole `train` invocation with its sm_86 and sm_90 images run by the simulator.

The outputs are held to the NumPy reference runner (bobc run --reference)
and to the independent PyTorch case the H200 host was held to
(tests/gpu/test_bob_host.py, same tolerances: binary32 kernels with ex2/lg2
and MUFU rcp/sqrt differ from binary64 math in the last bits, which AdamW's ten
steps amplify a little), with the control-code checker on.
"""
from __future__ import annotations


import numpy as np
import pytest

from bob_model import formats
from bob_model.model import run_invocation
from bobc.sim.host_adapter import host_plan
from bobc.sim.invocation import simulate

from .conftest import built_for

LOSS_RTOL, LOSS_ATOL = 1e-4, 1e-5        # row losses (tests/gpu/test_bob_host.py)
PLANE_RTOL, PLANE_ATOL = 1e-3, 1e-6      # P, M after 10 updates
SECOND_MOMENT_RTOL, SECOND_MOMENT_ATOL = 1e-3, 1e-12

def _decode(out, config):
    state = formats.decode_checkpoint(out.checkpoint, config.contract)
    tokens, valid = formats.decode_predictions(out.predictions)
    initial, training, rows = formats.decode_result(out.result)
    return state, tokens, valid, initial, training, rows.reshape(3, 256)


@pytest.mark.parametrize("target_name", ["sm_86", "sm_90"])
def test_train_on_the_simulator_matches_the_reference_runner_and_the_pytorch_case(target_name, case):
    record, checkpoint, expected, config = case
    built, target = built_for(target_name)
    out = simulate(host_plan(built.plan, built.images, target, built.program.search_path), built.images, "train", record, checkpoint)
    assert len(out.channel.log.launches) == 33 and len(out.channel.log.releases) == 33
    state, tokens, valid, initial, training, rows = _decode(out, config)

    ref = run_invocation(config, "train", formats.decode_input_record(record),
                         formats.decode_checkpoint(checkpoint, config.contract))
    assert out.predictions == ref.predictions_bytes()
    np.testing.assert_allclose(initial, ref.initial_loss, rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_allclose(training, ref.training_loss, rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_allclose(rows, ref.last.logit_rows, rtol=PLANE_RTOL, atol=PLANE_ATOL)
    for plane in ("P", "M"):
        np.testing.assert_allclose(getattr(state, plane), getattr(ref.checkpoint, plane),
                                   rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(state.V, ref.checkpoint.V, rtol=SECOND_MOMENT_RTOL, atol=SECOND_MOMENT_ATOL)
    assert state.step == ref.checkpoint.step == 10

    # the PyTorch case the H200's sm_90 host matched (tests/gpu/logs/2026-12-01-bob-host-sm_90.log)
    np.testing.assert_allclose(initial, expected["initial_loss"], rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_allclose(training, expected["training_loss"], rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_array_equal(tokens, expected["tokens"])
    np.testing.assert_array_equal(valid, expected["valid"])
    np.testing.assert_allclose(rows, expected["logit_rows"].reshape(3, 256), rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(state.P, expected["P"].reshape(-1), rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(state.M, expected["M"].reshape(-1), rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(state.V, expected["V"].reshape(-1), rtol=SECOND_MOMENT_RTOL,
                               atol=SECOND_MOMENT_ATOL)
    assert training.mean() < initial.mean() - 1.0, "the loss must fall"


def test_a_fresh_predict_on_the_simulator_gives_the_reference_runners_files(case):
    """From the fixture record with no checkpoint (the host's fresh initialization), predict
    writes predictions and a result matching the reference, and hands the state on unchanged."""
    record, _, _, config = case
    built, target = built_for("sm_86")
    out = simulate(host_plan(built.plan, built.images, target, built.program.search_path), built.images, "predict", record, None)
    assert len(out.channel.log.launches) == 7
    ref = run_invocation(config, "predict", formats.decode_input_record(record), None)
    assert out.predictions == ref.predictions_bytes()
    assert out.checkpoint == ref.checkpoint_bytes(config)       # byte for byte: nothing trained
    state, tokens, valid, initial, training, rows = _decode(out, config)
    np.testing.assert_allclose(initial, ref.initial_loss, rtol=LOSS_RTOL, atol=LOSS_ATOL)
    np.testing.assert_array_equal(training, np.zeros(256, dtype=np.float32))
    np.testing.assert_array_equal(rows, ref.last.logit_rows)    # a row copy is exact
