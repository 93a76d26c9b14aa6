"""Bob's invocation in NumPy: the independent reference for the native host.

Same schedule as the host (../shared/docs/bob.md): initial loss and
gradients, the three predictions, and for `train` ten AdamW updates each
followed by the loss launch, then the predictions again.  The arithmetic is
chosen to be the *intended* math, not a copy of the kernels:

- row losses and softmax gradients are computed in binary64 from the binary32
  table and rounded once to binary32 (the kernels use ex2/lg2 in binary32; the
  tests compare with tolerances);
- AdamW is elementwise binary32 with one rounding per operation, exactly the
  efficient form of docs/formats.md, with alpha_t / epsilon_t from
  formats.adamw_scalars (binary64 rounded to binary32), as a GPU kernel does it.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np

from bobc.errors import BobcError, NotYetAvailable
from bobc.plan.model import CheckpointContract
from .formats import (PARAMETERS, PREDICTION_BYTES, PROMPTS, RECORD_BYTES, RECORD_MAGIC,
                      RECORD_PROMPTS_OFFSET, RECORD_TARGETS_OFFSET, RECORD_VERSION,
                      RESULT_BYTES, VOCABULARY, AdamWScalars,
                      Checkpoint, Hyperparameters, InputRecord, adamw_scalars,
                      encode_checkpoint, encode_predictions, encode_result, fresh_parameters)

SEED_IDENTITY = b"bob-seed-v1"
UPDATES_PER_INVOCATION = 10
SCHEMA_IDENTITY = b"bob-raw-pmv-f32-v1|parameter-order:p-then-m-then-v"
DATA_IDENTITY = b"raw-byte-sequence"
# Bob.Learner's bobObjectiveIdentity and bobLearnerIdentity (examples/bob/Bob/
# Learner.bob), used when no plan is given (fixtures, tests, benchmarks); a run
# from a plan takes its contract from the plan.
OBJECTIVE_IDENTITY = b"objective:next-byte-cross-entropy|reduction:mean-over-rows"
LEARNER_IDENTITY = b"optimizer:adamw|weight-decay:decoupled|bias-correction:step-size"
OPERATIONS = ("train", "predict")


def _part(name: bytes, value: int) -> bytes:
    """bobIdentityPart: b"|name=" and naturalDecimalBytesWithin 24 (24 digits, zero-padded)."""
    return b"|" + name + b"=" + f"{value:024d}".encode()


def bob_contract(hyper: Hyperparameters = Hyperparameters(), *,
                 objective: bytes = OBJECTIVE_IDENTITY, learner: bytes = LEARNER_IDENTITY,
                 seed: bytes = SEED_IDENTITY, updates: int = UPDATES_PER_INVOCATION
                 ) -> CheckpointContract:
    """The contract Bob.TrainingRun's bobCheckpointContract builds, byte for byte."""
    payload = 3 * 4 * PARAMETERS
    return CheckpointContract(
        schema=SCHEMA_IDENTITY + _part(b"payload", payload),
        learner=objective + b"|" + learner + b"|" + hyper.encode(),
        data=DATA_IDENTITY + _part(b"vocabulary", VOCABULARY) + _part(b"prompts", PROMPTS)
        + _part(b"record", RECORD_BYTES),
        seed=seed, payload_bytes=payload, chunk_bytes=4 * PARAMETERS,
        updates_per_invocation=updates)


@dataclass(frozen=True)
class BobConfig:
    """Everything an invocation needs to know that is not in its input files."""

    contract: CheckpointContract = field(default_factory=bob_contract)
    hyper: Hyperparameters = Hyperparameters()
    vocabulary: int = VOCABULARY
    prompts: int = PROMPTS
    updates_per_invocation: int = UPDATES_PER_INVOCATION
    seed_identity: bytes = SEED_IDENTITY

    def __post_init__(self):
        if (self.vocabulary, self.prompts) != (VOCABULARY, PROMPTS):
            raise NotYetAvailable(
                f"the reference runner knows Bob's formats ({VOCABULARY}-byte vocabulary, "
                f"{PROMPTS} prompts), not vocabulary {self.vocabulary} with {self.prompts} prompts")
        if self.contract.payload_bytes != 3 * 4 * self.vocabulary ** 2:
            raise BobcError(f"the checkpoint contract's payload ({self.contract.payload_bytes} "
                            f"bytes) is not P, M, V of a {self.vocabulary}^2 table")
        stated = self.contract.learner[-20:]
        if len(self.contract.learner) >= 21 and self.contract.learner[-21] == ord("|") \
                and stated != self.hyper.encode():
            raise BobcError(f"the hyperparameters {Hyperparameters.decode(stated)} in the "
                            f"learner identity differ from the configured {self.hyper}")
        if self.seed_identity != self.contract.seed:
            raise BobcError(f"the initialization identity {self.seed_identity!r} differs from "
                            f"the checkpoint contract's seed {self.contract.seed!r}")
        if self.updates_per_invocation != self.contract.updates_per_invocation:
            raise BobcError(f"the plan makes {self.updates_per_invocation} updates per "
                            f"invocation, its checkpoint contract says "
                            f"{self.contract.updates_per_invocation}")

    @classmethod
    def from_plan(cls, plan, *, hyperparameters=None, vocabulary=None, prompts=None,
                  seed_identity=None, updates_per_invocation=None) -> "BobConfig":
        """Adapt an extracted Plan: the contract from plan.checkpoint, the rest from
        the contract's own identities, cross-checked with the typed host plan.

        The learner identity ends with b"|" and the five binary32 hyperparameters
        (lr, beta1, beta2, eps, weight decay; Bob.TrainingRun).  plan.host's record
        layout must be docs/formats.md's.  The keyword arguments state what a plan
        whose identities do not carry it leaves out (`hyperparameters`: a
        Hyperparameters or a mapping).
        """
        contract = plan.checkpoint
        if contract is None:
            raise BobcError("the plan declares no checkpoint contract; `bobc run` needs one")
        hyper = hyperparameters
        if hyper is None:
            hyper = _hyper_from_learner(contract.learner)
        elif not isinstance(hyper, Hyperparameters):
            hyper = Hyperparameters(**dict(hyper))
        host = getattr(plan, "host", None)
        if host is not None:
            _check_request(host.request)
        vocabulary = int(vocabulary if vocabulary is not None else _vocabulary_from(contract))
        prompts = int(prompts if prompts is not None else _prompts_from(contract.data))
        seed = bytes(seed_identity if seed_identity is not None else contract.seed)
        if seed != contract.seed:
            raise BobcError(f"the plan's initialization identity {seed!r} differs from its "
                            f"checkpoint contract's seed {contract.seed!r}")
        updates = contract.updates_per_invocation if updates_per_invocation is None else updates_per_invocation
        return cls(contract=contract, hyper=hyper, vocabulary=vocabulary, prompts=prompts,
                   updates_per_invocation=int(updates), seed_identity=seed)


def _hyper_from_learner(learner: bytes) -> Hyperparameters:
    """The learner identity ends with b"|" and the five binary32 hyperparameters."""
    if len(learner) < 21 or learner[-21] != ord("|"):
        raise BobcError("the plan states no hyperparameters: its learner identity does not end "
                        "with '|' and five binary32 values, and none were given")
    return Hyperparameters.decode(learner[-20:])


def _check_request(request) -> None:
    expected = {"input_magic": RECORD_MAGIC, "input_version": RECORD_VERSION,
                "input_record_bytes": RECORD_BYTES, "input_targets_offset": RECORD_TARGETS_OFFSET,
                "input_prompts_offset": RECORD_PROMPTS_OFFSET, "prompt_count": PROMPTS,
                "prediction_bytes": PREDICTION_BYTES // PROMPTS,
                "result_record_bytes": RESULT_BYTES, "result_initial_loss_offset": 0,
                "result_training_loss_offset": 4 * VOCABULARY,
                "result_logit_rows_offset": 8 * VOCABULARY}
    for key, value in expected.items():
        if getattr(request, key) != value:
            raise NotYetAvailable(f"the plan's request layout has {key} = {getattr(request, key)!r}; the "
                                  f"reference runner knows docs/formats.md's {value!r}")


def _vocabulary_from(contract: CheckpointContract) -> int:
    side = int(round((contract.payload_bytes / 12) ** 0.5))
    return side


def _prompts_from(data: bytes) -> int:
    found = re.search(rb"\|prompts=(\d+)", data)
    return int(found.group(1)) if found else PROMPTS


# ------------------------------------------------------------------- the math
def fresh_checkpoint(config: BobConfig) -> Checkpoint:
    """The state a run without a checkpoint starts from (step 0, M = V = 0)."""
    zeros = np.zeros(PARAMETERS, dtype=np.float32)
    return Checkpoint(fresh_parameters(config.seed_identity, PARAMETERS), zeros, zeros.copy(), 0)


def loss_and_gradients(W: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row losses l_b = logsumexp(W[b]) - W[b, t_b] and G = (softmax(W) - onehot(t)) / 256.

    Binary64 inside, each output rounded once to binary32 (1/256 is exact).
    """
    rows = np.arange(W.shape[0])
    with np.errstate(all="ignore"):
        wide = W.astype(np.float64)
        top = wide.max(axis=1, keepdims=True)
        e = np.exp(wide - top)
        total = e.sum(axis=1, keepdims=True)
        losses = (np.log(total) + top)[:, 0] - wide[rows, targets]
        softmax = e / total
        softmax[rows, targets] -= 1.0
        gradients = softmax.astype(np.float32) * np.float32(1.0 / W.shape[1])
    return losses.astype(np.float32), gradients


def adamw_update(W, G, M, V, s: AdamWScalars):
    """One bob-adamw launch, elementwise binary32, one rounding per operation."""
    with np.errstate(all="ignore"):
        W = W * s.decay
        M = s.beta1 * M + s.one_minus_beta1 * G
        V = s.beta2 * V + s.one_minus_beta2 * (G * G)
        W = W - s.alpha * M / (np.sqrt(V) + s.epsilon)
    return W, M, V


@dataclass(frozen=True)
class Prediction:
    """The 3 prompts' logit rows and their greedy tokens."""

    logit_rows: np.ndarray       # float32[3, 256]
    tokens: np.ndarray           # uint32[3]
    valid: np.ndarray            # uint32[3]: 1 when the row is all finite


def predict(W: np.ndarray, prompts: np.ndarray) -> Prediction:
    """Row gather then greedy argmax (first index of the maximum); a row holding
    NaN or Inf is invalid and its token is 0."""
    rows = W[np.asarray(prompts, dtype=np.int64)].astype(np.float32)
    valid = np.isfinite(rows).all(axis=1)
    tokens = np.where(valid, np.argmax(np.where(np.isfinite(rows), rows, -np.inf), axis=1), 0)
    return Prediction(rows, tokens.astype(np.uint32), valid.astype(np.uint32))


@dataclass(frozen=True)
class InvocationOutputs:
    """What one invocation produces, and the bytes of the three files it writes."""

    operation: str
    initial_loss: np.ndarray                  # float32[256]
    before: Prediction                        # predictions before training
    training_loss: np.ndarray                 # float32[256]; zeros for predict
    after: Prediction | None                  # predictions after training (train only)
    checkpoint: Checkpoint                    # the state to publish
    updates: tuple[AdamWScalars, ...] = ()    # each update's parameter block scalars

    @property
    def last(self) -> Prediction:
        return self.after if self.after is not None else self.before

    def predictions_bytes(self) -> bytes:
        return encode_predictions(self.last.tokens, self.last.valid)

    def result_bytes(self) -> bytes:
        return encode_result(self.initial_loss, self.training_loss, self.last.logit_rows)

    def checkpoint_bytes(self, config: BobConfig) -> bytes:
        return encode_checkpoint(config.contract, self.checkpoint)


def run_invocation(config: BobConfig, operation: str, record: InputRecord,
                   checkpoint: Checkpoint | None = None) -> InvocationOutputs:
    """One invocation of the native host's schedule, fresh when checkpoint is None."""
    if operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {OPERATIONS}, not {operation!r}")
    state = checkpoint if checkpoint is not None else fresh_checkpoint(config)
    if state.P.size != PARAMETERS:
        raise ValueError(f"planes hold {state.P.size} values, Bob's table {PARAMETERS}")
    shape = (VOCABULARY, VOCABULARY)
    targets = record.targets.astype(np.int64)
    W, M, V = (plane.reshape(shape).copy() for plane in (state.P, state.M, state.V))

    initial_loss, G = loss_and_gradients(W, targets)
    before = predict(W, record.prompts)
    if operation == "predict":
        return InvocationOutputs(operation, initial_loss, before,
                                 np.zeros(VOCABULARY, dtype=np.float32), None, state)

    scalars = tuple(adamw_scalars(config.hyper, state.step + k, PARAMETERS)
                    for k in range(1, config.updates_per_invocation + 1))
    training_loss = initial_loss
    for s in scalars:
        W, M, V = adamw_update(W, G, M, V, s)
        training_loss, G = loss_and_gradients(W, targets)
    after = predict(W, record.prompts)
    trained = Checkpoint(W.reshape(-1), M.reshape(-1), V.reshape(-1),
                         state.step + config.updates_per_invocation)
    return InvocationOutputs(operation, initial_loss, before, training_loss, after, trained,
                             scalars)
