"""The simulator's host side: the lowered step list carried out as runtime_c/plan_host.c does.

Every step kind but Commands (its own test below), on Bob's real sm_86 images, through the
synthetic AllSteps host (tests/platform/Synthetic/AllSteps.bob: cursor,
identity, whole / cyclic / cursor reads, fill and asserted word, submissions
with stamps, stat, status, timestamps, writes, sync, close, operation, an
interval publication, the training submissions and a ring entry reissued three
times after them, and the last publication),
held to the plan-driven reference host (bobc.reference.host) running Bob's
NumPy kernels (examples/bob/reference_kernels.py): the files agree byte for
byte except the stamps (the reference writes the issue count, the simulator
its channel's clock) and the trained planes (kernel tolerances).  Scalar
fills are held to bob_model.formats.adamw_scalars (the whole-invocation
model's formula) and to C's binary64 rules; the shim's ring wraps; a step
kind with no handler is refused by name.
"""
from __future__ import annotations

import dataclasses
import struct

import numpy as np
import pytest

from bobc import pipeline
from bob_model import formats
from bobc.reference import envelope
from bobc.reference.host import ReferenceHost
from bobc.sim.faults import HostStepFault, SemaphoreNotReleased, SimulationFault, Unmodeled
from bobc.sim.host_adapter import HostFill, HostStep, host_plan
from bobc.sim.invocation import Ring, fill_bytes, simulate
from bobc.targets import SM86

from .conftest import REPO, built_for

PLANE_RTOL, PLANE_ATOL = 1e-3, 1e-6                   # as test_bob_invocation.py
SECOND_MOMENT_RTOL, SECOND_MOMENT_ATOL = 1e-3, 1e-12
# AllSteps' result: 3 cyclic reads of 2 bytes, the stat block up to the word recorded at
# its byte 4 (8 bytes), the status (3 u64), the stamp slots 0..2 (u64 each), the 8-byte
# input identity
STAMPS = slice(6 + 8 + 24, 6 + 8 + 24 + 24)
TICK = 1000            # the channel's clock: GPU ns per timestamped release (bobc.sim.channel)


def reference(plan, kernels, operation, record):
    interval = []
    outputs = ReferenceHost(plan, kernels, publish_checkpoint=interval.append).run(operation, record, None)
    return outputs, interval


def test_every_step_kind_on_bobs_images_gives_the_reference_hosts_files(all_steps, kernels, case):
    record, _, _, config = case
    built, host = all_steps
    kinds = {s.kind for s in host.steps}
    assert kinds >= {"cursor_from_checkpoint", "bind_input_identity", "read", "read_at_cursor", "cursor_advance",
                     "read_cyclic", "write", "fill", "assert_word", "submit", "stamp", "reissue", "record_stat",
                     "write_stat", "write_status", "write_timestamps", "write_input_identity", "write_at", "sync",
                     "data_sync", "close", "operation", "begin_checkpoint", "checkpoint_begin",
                     "checkpoint_publish", "scalar_fill"}
    interval = []
    out = simulate(host, built.images, "train", record, None, publish_checkpoint=interval.append)
    ref, ref_interval = reference(built.plan, kernels, "train", record)
    # 33 submissions and entry 0 three times again: 36 launches, as many releases
    assert len(out.channel.log.launches) == 36 and out.issued == 36

    assert out.predictions == ref.files["predictions"]
    assert out.result[:STAMPS.start] == ref.files["result"][:STAMPS.start]     # reads, stat, status
    assert out.result[STAMPS.stop:] == ref.files["result"][STAMPS.stop:]       # the input identity
    assert out.result[6:STAMPS.start] == struct.pack("<2I3Q", 0, 42, 0, 7, 0)      # the fill's 42; step, issued
    assert len(out.result) == STAMPS.stop + 8
    # slots 2 and 0: entry 0's semaphore after the first submission (the 1st release), both
    # stamped before the Reissues (which come after the Operation); slot 1 never stamped
    assert struct.unpack("<3Q", out.result[STAMPS]) == (1 * TICK, 0, 1 * TICK)

    # the interval publication (step 0, before the training submissions) went out when its
    # interval ended, byte for byte the reference's; the last one is handed back
    assert [step for step, _ in out.publications] == [0, 10]
    assert interval == ref_interval == [out.publications[0][1]]
    assert out.checkpoint == out.publications[-1][1]
    state = formats.decode_checkpoint(out.checkpoint, config.contract)
    expected = formats.decode_checkpoint(ref.publications[-1][1], config.contract)
    assert state.step == expected.step == 10
    for plane in ("P", "M"):
        np.testing.assert_allclose(getattr(state, plane), getattr(expected, plane), rtol=PLANE_RTOL, atol=PLANE_ATOL)
    np.testing.assert_allclose(state.V, expected.V, rtol=SECOND_MOMENT_RTOL, atol=SECOND_MOMENT_ATOL)


def test_a_predict_request_stops_at_its_operation_and_hands_the_state_on(all_steps, kernels, case):
    record = case[0]
    built, host = all_steps
    interval = []
    out = simulate(host, built.images, "predict", record, None, publish_checkpoint=interval.append)
    ref, ref_interval = reference(built.plan, kernels, "predict", record)
    assert interval == ref_interval == [] and out.publications == []
    assert len(out.channel.log.launches) == 7           # the forward entries only (the reissues are a train's)
    assert out.predictions == ref.files["predictions"]
    assert out.checkpoint == ref.publications[-1][1]     # the fresh state, step 0
    assert envelope.decode(out.checkpoint, built.plan.checkpoint)[1] == 0


def test_a_failed_assert_word_stops_the_run_with_the_gpu_fault_code(all_steps, case):
    built, host = all_steps
    steps = tuple(dataclasses.replace(s, values={**s.values, "expected": 43}) if s.kind == "assert_word" else s
                  for s in host.steps)
    with pytest.raises(SimulationFault) as caught:
        simulate(dataclasses.replace(host, steps=steps), built.images, "predict", case[0])
    assert caught.value.exit_code == 7
    assert caught.value.message.startswith("the fill: the word at") and "is 42, expected 43" in caught.value.message


def test_a_write_outside_every_buffer_is_the_hosts_internal_error(all_steps, case):
    built, host = all_steps
    steps = (HostStep("write", {"file": "result", "host": 0x1000, "extent": 4}, "write result"),) + host.steps
    with pytest.raises(HostStepFault) as caught:
        simulate(dataclasses.replace(host, steps=steps), built.images, "predict", case[0])
    assert caught.value.exit_code == 1
    assert "a write's source at 0x1000 (4 bytes) lies in no buffer the host maps" in caught.value.message


@pytest.mark.parametrize("input_step", [0, 30, 2 ** 31])
def test_bobs_fills_are_the_adamw_scalars_of_the_whole_invocation_model(input_step):
    """Alpha (parameter byte 32), epsilon (36) and the step (64) of each AdamW launch's block:
    formats.adamw_scalars packs them from byte 32 after the four pointers."""
    built, target = built_for("sm_86")
    host = host_plan(built.plan, built.images, target, built.program.search_path)
    hyper = formats.Hyperparameters()
    assert len(host.fills) == 30
    for fill, plan_fill in zip(host.fills, built.plan.host.fills):
        block = formats.adamw_scalars(hyper, input_step + fill.step).pack()
        assert fill_bytes(fill, input_step) == block[plan_fill.offset - 32:plan_fill.offset - 28], fill.note


def _fill(terms, encoding="binary32"):
    return HostFill(0, 0, encoding, tuple(terms), "test fill")


@pytest.mark.parametrize("terms, bits", [
    ([("constant", 1.0), ("constant", 0.0), ("divide", 0.0)], 0x7F800000),              # 1/0: +inf
    ([("constant", -1.0), ("constant", 0.5), ("power", 0.0)], None),                      # pow(-1, .5): NaN
    ([("constant", -4.0), ("sqrt", 0.0)], None),                                          # sqrt(-4): NaN
    ([("constant", 1e39)], 0x7F800000),                                                   # past binary32: inf
    # (1 + 2^-24) + 2^-24 is 1 + 2^-23 in binary64; binary32 steps would tie to even twice: 1.0
    ([("constant", 1.0), ("constant", 2 ** -24), ("add", 0.0), ("constant", 2 ** -24), ("add", 0.0)], 0x3F800001),
    # 1 + (2^-24 + 2^-60): binary64 loses the 2^-60, leaving a tie that rounds to even: 1.0
    ([("constant", 1.0), ("constant", 2 ** -24 + 2 ** -60), ("add", 0.0)], 0x3F800000),
])
def test_a_fill_is_computed_in_binary64_and_rounded_once_as_c_does(terms, bits):
    word = struct.unpack("<I", fill_bytes(_fill(terms), 0))[0]
    if bits is None:
        assert word & 0x7F800000 == 0x7F800000 and word & 0x7FFFFF, f"{word:#x} is not a NaN"
    else:
        assert word == bits


@pytest.mark.parametrize("value", [2.0 ** 32, 3.5, -1.0])
def test_a_word32_fill_that_is_no_natural_below_2_32_is_refused(value):
    with pytest.raises(HostStepFault, match="no natural below 2\\^32"):
        fill_bytes(_fill([("constant", value)], "word32"), 0)
    assert fill_bytes(_fill([("step", 0.0), ("constant", 1.0), ("add", 0.0)], "word32"), 41) == struct.pack("<I", 42)


def test_the_shims_ring_wraps_and_the_channel_fetches_every_entry_in_order():
    class Fetches:
        def __init__(self):
            self.seen = []

        def run_entry(self, raw, label):
            self.seen.append((raw, label))

    channel = Fetches()
    ring = Ring(channel, entries=4)
    entries = [struct.pack("<Q", 0x1000 + i) for i in range(10)]
    for i, entry in enumerate(entries):
        ring.issue(entry, i)
    assert channel.seen == list(zip(entries, range(10)))
    assert ring.put == ring.get == 10 % 4
    assert ring.slots == [entries[8], entries[9], entries[6], entries[7]]


@pytest.mark.parametrize("entry", ["synCommandsHost", "synCommandsFailHost"])
def test_commands_steps_run_on_the_simulators_buffers_as_on_the_reference_host(case, entry):
    """The 28th kind (tests/platform/Synthetic/Commands.bob): the same files, or the same
    status and message, as the reference host (tests/platform/test_commands_step.py)."""
    from bobc.reference.host import CommandsFailed
    from bobc.sim.invocation import CommandsFault

    built = pipeline.compile_plan(REPO / "tests/platform/Synthetic/Commands.bob", SM86, [REPO / "examples/bob"],
                                  entry)
    host = host_plan(built.plan, built.images, SM86, built.program.search_path)
    published = {}
    stubs = {region.identity: (lambda memory, context: None) for region in built.plan.program.regions}
    reference = ReferenceHost(built.plan, stubs, publish_output=lambda name, data: published.__setitem__(name, data))
    if entry == "synCommandsFailHost":
        with pytest.raises(CommandsFailed) as expected:
            reference.run("train", case[0], None)
        with pytest.raises(CommandsFault) as caught:
            simulate(host, built.images, "train", case[0])
        assert caught.value.exit_code == expected.value.exit_code == 42
        assert caught.value.message == expected.value.message
        return
    reference.run("train", case[0], None)
    out = simulate(host, built.images, "train", case[0])
    assert out.result == published["result"] and len(out.result) == 88


def test_a_step_kind_without_a_handler_is_refused_by_name_before_anything_runs(case):
    built, target = built_for("sm_86")
    host = host_plan(built.plan, built.images, target, built.program.search_path)
    host = dataclasses.replace(host, steps=host.steps + (HostStep("write_hologram", {}, "write_hologram"),))
    with pytest.raises(Unmodeled) as caught:
        simulate(host, built.images, "train", case[0])
    assert "write_hologram" in caught.value.message and "does not model" in caught.value.message



def test_a_reissued_entry_that_releases_nothing_is_caught_not_satisfied_by_the_first_release(all_steps, case):
    """The reissue resets its piece's semaphore first (plan_host.c step_reissue), so a reissued
    word whose segment lost its semaphore release (GPFIFO LENGTH, entry dword 1 bits 30:10, six
    dwords short: SEM_ADDR_LO..SEM_EXECUTE, clc56f.h) times out although entry 0's first issue
    released the same semaphore."""
    built, host = all_steps
    word = struct.unpack_from("<Q", built.images.gpfifo, 0)[0]
    length = word >> 42 & ((1 << 21) - 1)
    short = word & ~(((1 << 21) - 1) << 42) | (length - 6) << 42
    steps = tuple(dataclasses.replace(s, values={**s.values, "entry": short}) if s.kind == "reissue" else s
                  for s in host.steps)
    assert any(s.kind == "reissue" and s.values["entry"] == word for s in host.steps)
    with pytest.raises(SemaphoreNotReleased) as caught:
        simulate(dataclasses.replace(host, steps=steps), built.images, "train", case[0])
    assert caught.value.message.startswith("GPFIFO entry 0 (reissued) finished without releasing its semaphore")


@pytest.mark.parametrize("identity, shown", [(b"the\nfill\x1b[31m\x00\x7f", "the?fill?[31m??"),
                                             (b"caf\xc3\xa9 \xff", "caf\u00e9 \udcff")])
def test_a_failed_assert_words_identity_is_one_line_as_the_c_host_shows_it(all_steps, case, identity, shown):
    """probe s37 cinject 3: the identity's control characters (NUL included) as '?', its other
    bytes kept (a byte not UTF-8 as itself, os.fsdecode's surrogate), as runtime_c/plan_host.c
    step_assert_word shows them -- not decoded with U+FFFD for a byte that is not UTF-8."""
    built, host = all_steps
    steps = tuple(dataclasses.replace(s, values={**s.values, "expected": 43, "identity": identity})
                  if s.kind == "assert_word" else s for s in host.steps)
    with pytest.raises(SimulationFault) as caught:
        simulate(dataclasses.replace(host, steps=steps), built.images, "predict", case[0])
    assert caught.value.message.startswith(f"{shown}: the word at"), caught.value.message


@pytest.mark.parametrize("identity, shown", [(b"the\nfill\x1b[31m\x00\x7f", "the?fill?[31m??"),
                                             (b"caf\xc3\xa9 \xff", "caf\u00e9 \udcff")])
def test_the_reference_shows_a_failed_assert_words_identity_as_the_simulator(all_steps, kernels, case,
                                                                            monkeypatch, identity, shown):
    import bobc.reference.host as reference_host

    built, _ = all_steps
    lowered = reference_host.lower

    def lower(plan):
        return [dataclasses.replace(s, values={**s.values, "expected": 43, "identity": identity})
                if getattr(s.kind, "name", s.kind) == "assert_word" else s for s in lowered(plan)]

    monkeypatch.setattr(reference_host, "lower", lower)
    with pytest.raises(Exception) as caught:
        reference(built.plan, kernels, "predict", case[0])
    assert caught.value.message.startswith(f"{shown}: the word at"), caught.value.message
