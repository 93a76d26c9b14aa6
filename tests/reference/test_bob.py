"""The reference runner against math it did not write.

The PyTorch case (../shared/data/bob-reference, torch.optim.AdamW and
cross-entropy on an H200) for whole invocations, and values derived by hand
for the pieces: a zero table's loss and gradient, AdamW's first step, argmax
ties and non-finite rows.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from bobc.errors import BobcError, NotYetAvailable
from bobc.plan.model import Plan
from bob_model.model import (BobConfig, adamw_update, bob_contract, fresh_checkpoint,
                                loss_and_gradients, predict, run_invocation)
from bob_model.formats import (Checkpoint, Hyperparameters, InputRecord, adamw_scalars,
                                    fresh_parameters)

LOSS = dict(rtol=1e-4, atol=1e-6)


def assert_planes(ours: Checkpoint, expected: dict):
    """Planes within relative 1e-4 (M and V are tiny: their absolute floor is tinier)."""
    np.testing.assert_allclose(ours.P, expected["P"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ours.M, expected["M"], rtol=1e-4, atol=1e-10)
    np.testing.assert_allclose(ours.V, expected["V"], rtol=1e-4, atol=1e-16)
    assert ours.step == int(expected["step"])


def assert_matches(out, expected: dict):
    np.testing.assert_allclose(out.initial_loss, expected["initial_loss"], **LOSS)
    np.testing.assert_allclose(out.training_loss, expected["training_loss"], **LOSS)
    np.testing.assert_allclose(out.last.logit_rows, expected["logit_rows"], rtol=1e-4, atol=1e-6)
    assert out.before.tokens.tolist() == expected["tokens_before"].tolist()
    assert out.before.valid.tolist() == expected["valid_before"].tolist()
    assert out.last.tokens.tolist() == expected["tokens"].tolist()
    assert out.last.valid.tolist() == expected["valid"].tolist()
    assert_planes(out.checkpoint, expected)


# ------------------------------------------------------------- PyTorch case
def test_fresh_train_matches_pytorch(bob_case, config, case_record, state_of):
    out = run_invocation(config, "train", case_record, state_of(bob_case["case"]))
    assert_matches(out, bob_case["expected-1"])


def test_resumed_train_matches_pytorch(bob_case, config, case_record, state_of):
    out = run_invocation(config, "train", case_record, state_of(bob_case["expected-1"]))
    assert_matches(out, bob_case["expected-2"])
    assert [s.step for s in out.updates] == list(range(11, 21))


def test_two_invocations_chain_like_one_resume(bob_case, config, case_record, state_of):
    first = run_invocation(config, "train", case_record, state_of(bob_case["case"]))
    second = run_invocation(config, "train", case_record, first.checkpoint)
    assert_matches(second, bob_case["expected-2"])


def test_mean_losses_from_the_readme(bob_case, config, case_record, state_of):
    first = run_invocation(config, "train", case_record, state_of(bob_case["case"]))
    second = run_invocation(config, "train", case_record, first.checkpoint)
    means = [float(x.astype(np.float64).mean()) for x in
             (first.initial_loss, first.training_loss, second.training_loss)]
    assert [round(m, 3) for m in means] == [5.546, 3.581, 1.787]
    for mean, readme in zip(means, (5.5457, 3.5807, 1.7867)):
        assert abs(mean - readme) < 5e-4


def test_predict_from_trained_state(bob_case, config, case_record, state_of):
    state = state_of(bob_case["expected-1"])
    out = run_invocation(config, "predict", case_record, state)
    assert out.last.tokens.tolist() == [97, 32, 116]        # 'a', ' ', 't' (README)
    assert out.last.valid.tolist() == [1, 1, 1]
    np.testing.assert_allclose(out.initial_loss, bob_case["expected-1"]["training_loss"], **LOSS)
    assert not out.training_loss.any()
    # the row gather is a copy: logit rows are the table's rows, bit for bit
    table = bob_case["expected-1"]["P"].reshape(256, 256)
    assert out.last.logit_rows.tobytes() == table[[119, 116, 32]].tobytes()
    # predict changes nothing in the state it publishes
    assert out.checkpoint.step == 10
    assert out.checkpoint.P.tobytes() == state.P.tobytes()
    assert out.checkpoint.V.tobytes() == state.V.tobytes()
    assert out.updates == ()


def test_predict_before_training_matches_pytorch(bob_case, config, case_record, state_of):
    out = run_invocation(config, "predict", case_record, state_of(bob_case["case"]))
    assert out.last.tokens.tolist() == [98, 180, 92]


def test_invocations_are_deterministic(bob_case, config, case_record, state_of):
    a = run_invocation(config, "train", case_record, state_of(bob_case["case"]))
    b = run_invocation(config, "train", case_record, state_of(bob_case["case"]))
    assert a.result_bytes() == b.result_bytes()
    assert a.predictions_bytes() == b.predictions_bytes()
    assert a.checkpoint_bytes(config) == b.checkpoint_bytes(config)


# ------------------------------------------------------------ fresh state
def test_fresh_run_starts_from_the_generator_and_learns(bob_case, config, case_record):
    out = run_invocation(config, "train", case_record, None)
    start = fresh_checkpoint(config)
    assert start.step == 0 and not start.M.any() and not start.V.any()
    assert start.P.tobytes() == fresh_parameters(b"bob-seed-v1").tobytes()
    # |w| <= 0.01, so every row loss is within 0.02 of ln 256
    assert np.abs(out.initial_loss.astype(np.float64) - math.log(256)).max() <= 0.02
    assert out.checkpoint.step == 10
    assert out.training_loss.mean() < out.initial_loss.mean() - 1.0


# -------------------------------------------------------------- hand-derived
def test_zero_table_loss_and_gradient():
    targets = np.arange(256)[::-1].copy()
    losses, G = loss_and_gradients(np.zeros((256, 256), np.float32), targets)
    assert losses.dtype == np.float32 and G.dtype == np.float32
    assert (losses == np.float32(math.log(256))).all()
    expected = np.full((256, 256), 1 / 65536, np.float32)          # (1/256) / 256
    expected[np.arange(256), targets] = np.float32(-255 / 65536)   # (1/256 - 1) / 256
    assert G.tobytes() == expected.tobytes()


def test_one_hot_row_loss():
    # row b: W[b, t] = x, rest 0: loss = log(255 + e^x) - x
    W = np.zeros((256, 256), np.float32)
    W[3, 7] = 2.0
    losses, _ = loss_and_gradients(W, np.full(256, 7))
    assert losses[3] == np.float32(math.log(255 + math.e ** 2) - 2)


def test_first_adamw_step_moves_each_weight_by_lr_against_the_gradient():
    # from M = V = 0: alpha_1 m / (sqrt(v) + eps_1) with m = (1-b1) g, v = (1-b2) g^2,
    # alpha_1 = lr sqrt(1-b2)/(1-b1), eps_1 = eps sqrt(1-b2) is exactly lr g / (|g| + eps)
    rng = np.random.default_rng(5)
    G = (rng.standard_normal((256, 256)) * 1e-3).astype(np.float32)
    W0 = (rng.standard_normal((256, 256)) * 0.01).astype(np.float32)
    zeros = np.zeros_like(W0)
    s = adamw_scalars(Hyperparameters(), 1)
    W, M, V = adamw_update(W0, G, zeros, zeros, s)
    g = G.astype(np.float64)
    np.testing.assert_allclose(W, W0 * 0.999 - 0.1 * g / (np.abs(g) + 1e-8), rtol=0, atol=1e-7)
    assert (np.sign(W - W0 * np.float32(0.999)) == -np.sign(G)).all()
    np.testing.assert_allclose(M, 0.1 * G, rtol=1e-6)
    np.testing.assert_allclose(V, 0.001 * G.astype(np.float64) ** 2, rtol=2e-5)


def test_efficient_form_agrees_with_torch_form_over_many_steps():
    # torch.optim.AdamW's own formula, in binary64: p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps)
    rng = np.random.default_rng(7)
    W = (rng.standard_normal((256, 256)) * 0.1).astype(np.float32)
    M = np.zeros_like(W)
    V = np.zeros_like(W)
    w, m, v = W.astype(np.float64), 0.0 * W, 0.0 * W
    lr, b1, b2, eps, wd = 0.1, 0.9, 0.999, 1e-8, 0.01
    for t in range(1, 31):
        G = (rng.standard_normal(W.shape) * 1e-2).astype(np.float32)
        W, M, V = adamw_update(W, G, M, V, adamw_scalars(Hyperparameters(), t))
        g = G.astype(np.float64)
        w = w * (1 - lr * wd)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr / (1 - b1 ** t) * m / (np.sqrt(v) / math.sqrt(1 - b2 ** t) + eps)
    np.testing.assert_allclose(W, w, rtol=1e-4, atol=1e-5)


def test_argmax_takes_the_first_maximum_and_refuses_non_finite_rows():
    W = np.zeros((256, 256), np.float32)
    W[10, [5, 9]] = 3.0                  # tie: first index
    W[11, 200] = np.nan
    W[11, 3] = 7.0
    W[12, 0] = np.inf
    W[13, 255] = -1.0                    # all zero but one: first zero, index 0
    p = predict(W, [10, 11, 12])
    assert p.tokens.tolist() == [5, 0, 0]
    assert p.valid.tolist() == [1, 0, 0]
    assert predict(W, [13, 13, 10]).tokens.tolist() == [0, 0, 5]


def test_operation_is_checked(config):
    record = InputRecord(np.arange(256), [1, 2, 3])
    with pytest.raises(ValueError):
        run_invocation(config, "evaluate", record, None)


# ------------------------------------------------------------------ from_plan
def hand_plan(contract, request=None):
    """A Plan with only a contract and, when given, a host plan with this record layout
    (the rest of the host plan is not read)."""
    from bobc.plan.host import HostPlan
    host = None
    if request is not None:
        host = HostPlan(identity="hand", device_hazard=0, buffers=(), request=request, initializers=(), fills=(),
                        forward_launches=0, semaphore_stride=16, steps=())
    return Plan(program=None, arena=None, checkpoint=contract, host=host)


def _bob_request(**changes):
    from bobc.plan.host import RecordLayout
    values = dict(input_magic=b"BOBINPUT", input_version=1, input_record_bytes=1564,
                  input_targets_offset=528, input_prompts_offset=1552, prompt_count=3,
                  prediction_bytes=8, result_record_bytes=5120, result_initial_loss_offset=0,
                  result_training_loss_offset=1024, result_logit_rows_offset=2048)
    values.update(changes)
    return RecordLayout(**values)


BOB_REQUEST = _bob_request()


def test_from_plan_reads_the_contract():
    contract = bob_contract(Hyperparameters(lr=0.05, weight_decay=0.0), seed=b"bob-seed-x",
                            updates=4)
    config = BobConfig.from_plan(hand_plan(contract))
    assert config.contract == contract
    assert config.hyper.lr == float(np.float32(0.05)) and config.hyper.weight_decay == 0.0
    assert config.hyper.beta2 == float(np.float32(0.999))
    assert config.seed_identity == b"bob-seed-x" and config.updates_per_invocation == 4
    record = InputRecord(np.arange(256), [1, 2, 3])
    out = run_invocation(config, "train", record, None)
    assert out.checkpoint.step == 4
    assert fresh_checkpoint(config).P.tobytes() == fresh_parameters(b"bob-seed-x").tobytes()


def test_from_plan_takes_what_the_identities_leave_out():
    import dataclasses
    contract = dataclasses.replace(bob_contract(), learner=b"opaque-learner-identity")
    config = BobConfig.from_plan(hand_plan(contract), hyperparameters={
        "lr": 0.2, "beta1": 0.8, "beta2": 0.99, "eps": 1e-6, "weight_decay": 0.0},
        vocabulary=256, prompts=3)
    assert config.hyper.beta1 == float(np.float32(0.8))


def test_from_plan_refusals():
    import dataclasses
    with pytest.raises(BobcError, match="no checkpoint contract"):
        BobConfig.from_plan(hand_plan(None))
    with pytest.raises(BobcError, match="hyperparameters"):
        BobConfig.from_plan(hand_plan(dataclasses.replace(bob_contract(), learner=b"x")))
    with pytest.raises(NotYetAvailable):
        BobConfig.from_plan(hand_plan(bob_contract()), vocabulary=512)
    with pytest.raises(BobcError, match="differ"):
        BobConfig.from_plan(hand_plan(bob_contract()), hyperparameters=Hyperparameters(lr=0.3))
    with pytest.raises(BobcError, match="seed"):
        BobConfig.from_plan(hand_plan(bob_contract()), seed_identity=b"other")


def test_from_plan_checks_the_extracted_request():
    config = BobConfig.from_plan(hand_plan(bob_contract(), request=BOB_REQUEST))
    assert config == BobConfig()
    with pytest.raises(NotYetAvailable, match="input_record_bytes"):
        BobConfig.from_plan(hand_plan(bob_contract(), request=_bob_request(input_record_bytes=2048)))


def test_default_contract_is_the_one_the_plan_evaluates(repo):
    """BobConfig() (fixtures, benchmarks) writes checkpoints the built host accepts."""
    from bobc import pipeline
    from bobc.plan import extract
    from bobc.targets import target_named
    program = pipeline.load(repo / "examples/bob/Bob/TrainingRun.bob", target_named("sm_86"), ())
    contract = extract.extract_contract(program, program.value("bobCheckpointContract"))
    assert contract == BobConfig().contract
