"""The synthetic host of every step kind (Synthetic/AllSteps.bob), carried out by
the plan-driven reference host with stub kernels, and built into a native host.

Expected outputs are worked out here from each step's documented meaning
(docs/host-steps.md), not read back from the interpreter."""
from __future__ import annotations

import dataclasses
import shutil
import struct
import subprocess

import numpy as np
import pytest

import synthetic_support

FORWARD_SUBMISSIONS = 7          # Bob's forward part (seed 001): loss, 3 x (gather, argmax)


@pytest.fixture(scope="module")
def loaded():
    return synthetic_support.load("AllSteps", "synAllStepsHost")


@pytest.fixture(scope="module")
def plan(loaded):
    return loaded[1]


def record_bytes() -> bytes:
    from bob_model.formats import InputRecord, encode_input_record
    return encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [97, 98, 99]))


class Stubs(dict):
    """A stub per Bob kernel: each call is logged with its launch and parameters."""

    def __init__(self, plan):
        super().__init__()
        self.calls = []
        for region in plan.program.regions:
            self[region.identity] = self._stub(region.identity)

    def _stub(self, identity):
        def kernel(memory, context):
            self.calls.append((identity, context.index, context.parameters))
        return kernel


def run(plan, operation, checkpoint=None):
    from bobc.reference.host import ReferenceHost
    stubs = Stubs(plan)
    published = {}
    host = ReferenceHost(plan, stubs, publish_output=lambda name, data: published.__setitem__(name, data))
    outputs = host.run(operation, record_bytes(), checkpoint)
    return outputs, published, stubs


def expected_outputs(step: int, issued: int, published: int, stamp: list[int]):
    record = record_bytes()
    cursor = 16 + 4 * step                                      # CursorFromCheckpoint 16 4
    scratch = record[cursor:cursor + 4] + record[cursor + 2:cursor + 6]   # two reads at the cursor
    predictions = bytearray(scratch)
    predictions[2:6] = struct.pack("<I", 42)                    # WriteAt predictions, the fill, at 2
    cyclic = b"".join(record[16 + (i % 3) * 2:18 + (i % 3) * 2] for i in (1, 2, 3))
    result = (cyclic + bytes(4) + struct.pack("<I", 42)          # the stat block: the fill at 4
              + struct.pack("<3Q", step, issued, published)      # the status
              + b"".join(struct.pack("<Q", s) for s in stamp)    # stamps 0..2
              + record[:8])                                      # the input identity
    return bytes(predictions), result


def test_every_step_kind_is_in_the_synthetic_plans(plan):
    """AllSteps.bob holds 27 kinds; Commands.bob the 28th (tests/platform/test_commands_step.py)."""
    from bobc.plan.host import STEP_KINDS

    def kinds(steps):
        for s in steps:
            yield s.kind.name
            if s.kind.name == "repeat":
                yield from kinds(s.body)
    used = set(kinds(plan.host.steps))
    commands = synthetic_support.load("Commands", "synCommandsHost")[1]
    declared = {k.name for k in STEP_KINDS if k.constructor}
    assert len(declared) == 27          # with NvidiaPlanHostStepsEnd, the family's 28 constructors
    assert declared - used == {"commands"}
    assert "commands" in set(kinds(commands.host.steps))


def test_predict_stops_at_the_operation(plan):
    from bobc.reference import envelope
    outputs, published, stubs = run(plan, "predict")
    # the forward entries issued; stamps 2 and 0 both after them (the Reissues come after the
    # Operation, past the last Submit)
    predictions, result = expected_outputs(0, FORWARD_SUBMISSIONS, 0, [FORWARD_SUBMISSIONS, 0,
                                                                       FORWARD_SUBMISSIONS])
    assert published["predictions"] == predictions and published["result"] == result
    assert outputs.stopped
    # nothing trained: the state handed on unchanged (the fresh one, at step 0)
    [(step, env)] = outputs.publications
    payload, decoded_step = envelope.decode(env, plan.checkpoint)
    assert step == decoded_step == 0
    from bob_model.formats import fresh_parameters
    assert payload[:4 * 65536] == fresh_parameters(b"bob-seed-v1").astype("<f4").tobytes()
    assert payload[4 * 65536:] == bytes(2 * 4 * 65536)
    # submission 0 (the loss launch) issued once: its three Reissues are a train's
    loss = [c for c in stubs.calls if c[0] == "bob-loss-gradient"]
    assert len(loss) == 1


def test_train_from_a_checkpoint_publishes_twice(plan):
    from bobc.reference import envelope
    rng = np.random.default_rng(7)
    payload = rng.standard_normal(3 * 65536).astype("<f4").tobytes()
    outputs, published, stubs = run(plan, "train", (payload, 5))
    issued = FORWARD_SUBMISSIONS            # the status and stamps are written before the Operation
    predictions, result = expected_outputs(5, issued, 0, [issued, 0, FORWARD_SUBMISSIONS])
    assert published["predictions"] == predictions and published["result"] == result
    assert [step for step, _ in outputs.publications] == [5, 15]
    for step, env in outputs.publications:
        assert envelope.decode(env, plan.checkpoint) == (payload, step)   # stubs change nothing
    # submission 0 (the loss launch) issued three times again after the last Submit: the last calls
    assert [c[:2] for c in stubs.calls[-3:]] == [("bob-loss-gradient", 0)] * 3
    # update k's AdamW launch saw its fills for global step 5 + k + 1
    adamw = [c for c in stubs.calls if c[0] == "bob-adamw"]
    assert [c[1] for c in adamw] == [7 + 2 * k for k in range(10)]
    for k, (_, _, parameters) in enumerate(adamw):
        assert struct.unpack_from("<I", parameters, 64)[0] == 5 + k + 1


def test_a_failed_assertion_is_named(plan):
    from bobc.plan.host import AssertWordStep
    from bobc.reference.host import ReferenceHost, ReferenceHostError
    steps = tuple(dataclasses.replace(s, expected=43) if isinstance(s, AssertWordStep) else s
                  for s in plan.host.steps)
    bad = dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=steps))
    with pytest.raises(ReferenceHostError, match="the fill: .* is 42, expected 43") as caught:
        ReferenceHost(bad, Stubs(bad)).run("predict", record_bytes(), None)
    # the host's and the simulator's status for it (docs/host-steps.md: "stop with exit 7"),
    # not the reference's own internal error 1 (probe s37 stepfuzz finding 1)
    assert caught.value.exit_code == 7


def test_a_bad_record_is_refused_by_the_plans_check(plan):
    from bobc.reference.errors import BadInputRecord
    from bobc.reference.host import ReferenceHost
    record = bytearray(record_bytes())
    record[1552] = 0
    record[1553] = 1                      # prompt 0 = 256
    with pytest.raises(BadInputRecord, match="prompt 0 at byte 1552 is 256, not below 256"):
        ReferenceHost(plan, Stubs(plan)).run("train", bytes(record), None)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_native_host_of_every_step_kind_builds_and_checks_its_input(loaded, tmp_path):
    """Every kind compiles into a generated host; without a GPU it checks the record first."""
    from bobc.host import generate
    from bobc.nvidia.encode import encode_images
    from bobc.pipeline import Built
    from bobc.targets import SM90

    program, plan = loaded
    host = tmp_path / "all-steps"
    generate.build_host(Built(program, plan, encode_images(plan.program, SM90)), SM90, host)
    (tmp_path / "record.bin").write_bytes(record_bytes())
    (tmp_path / "bad.bin").write_bytes(record_bytes()[:-1])
    args = ["--checkpoint-out", "c", "--predictions", "p", "--result", "r"]
    bad = subprocess.run([str(host), "train", "--input", "bad.bin", *args], cwd=tmp_path, capture_output=True,
                         text=True)
    assert bad.returncode == 3 and "1,563 bytes" in bad.stderr   # grouped (s42 recordoffset)
    good = subprocess.run([str(host), "train", "--input", "record.bin", *args], cwd=tmp_path, capture_output=True,
                          text=True)
    assert good.returncode in (0, 6), good.stderr        # 6: no GPU here
