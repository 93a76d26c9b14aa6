"""The three synthetic hosts the GPU tests run (tests/gpu/test_platform_steps.py),
carried out first by the reference host with stub kernels: a ring entry issued
10,000 times again, a 1,000,123-byte payload staged through 64 KiB, two interval
publications."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import synthetic_support
from test_reference_steps import Stubs, record_bytes


def run(name, entry, operation="train", checkpoint=None):
    from bobc.reference.host import ReferenceHost
    _, plan = synthetic_support.load(name, entry)
    stubs, published = Stubs(plan), {}
    host = ReferenceHost(plan, stubs, publish_output=lambda n, d: published.__setitem__(n, d))
    return plan, host.run(operation, record_bytes(), checkpoint), published, stubs


def test_a_ring_entry_issued_ten_thousand_times_again():
    plan, outputs, published, stubs = run("Reissue", "synReissueHost")
    assert published["result"] == struct.pack("<3Q", 0, 10001, 0)      # step, entries issued, publications
    assert sum(1 for c in stubs.calls if c[0] == "bob-loss-gradient") == 10001


def test_a_payload_of_any_size_moves_through_the_staging_buffer():
    from bobc.reference import envelope
    payload = np.random.default_rng(1).integers(0, 256, 1_000_123, dtype=np.uint8).tobytes()
    plan, outputs, _, _ = run("Staging", "synStagingHost", checkpoint=(payload, 41))
    assert plan.checkpoint.payload_bytes == 1_000_123 and plan.checkpoint.chunk_bytes == 34_487
    [(step, env)] = outputs.publications
    assert envelope.decode(env, plan.checkpoint) == (payload, 42)


def test_each_interval_is_published():
    from bobc.reference import envelope
    plan, outputs, _, _ = run("Interval", "synIntervalHost")
    assert [step for step, _ in outputs.publications] == [1, 10]     # the last: Bob's updates per invocation
    first, second = (envelope.decode(env, plan.checkpoint)[0] for _, env in outputs.publications)
    assert first == second                       # stubs change nothing between the two


@pytest.mark.parametrize("name,entry", [("Reissue", "synReissueHost"), ("Interval", "synIntervalHost")])
def test_reissued_entries_are_the_targets_ring_image(name, entry):
    """A Reissue's entry (synRingEntry 0, from the plan's own images) is the word the
    generated host embeds as ring entry 0, for the target the build encodes for."""
    from bobc import pipeline
    from bobc.targets import SM90

    built = pipeline.compile_plan(synthetic_support.SYNTHETIC / f"{name}.bob", SM90,
                                  include=[synthetic_support.plan_support.BOB.parent], entry=entry)
    reissues = [s for s in built.plan.host.steps if s.kind.name == "repeat"][0].body
    assert reissues[0].entry == struct.unpack_from("<Q", built.images.gpfifo, 0)[0]


def test_the_plans_own_functions_see_the_same_schedules():
    """Platform.Linux.Nvidia.PlanHost's nvidiaPlanHostFileReadsTile and nvidiaPlanHostStepSubmissions
    over the synthetic schedules: the staged reads tile exactly 1,000,123 bytes (not one fewer), and
    the reissued entry takes the ring order to 10,001 entries."""
    from bobc.language import VNat

    program, _ = synthetic_support.load("Staging", "synStagingHost")
    tile = program.value("Platform.Linux.Nvidia.PlanHost.nvidiaPlanHostFileReadsTile")
    steps, checkpoint_in = program.value("synStagingSteps"), program.value("Synthetic.Common.synCheckpointIn")
    assert program.apply(tile, checkpoint_in, VNat(1_000_123), steps).value == 1
    assert program.apply(tile, checkpoint_in, VNat(1_000_122), steps).value == 0
    program, _ = synthetic_support.load("Reissue", "synReissueHost")
    issued = program.value("Platform.Linux.Nvidia.PlanHost.nvidiaPlanHostStepSubmissions")
    assert program.apply(issued, program.value("synReissueSteps")).value == 10_001


def test_reissues_are_admitted_only_against_their_ring_table():
    """nvidiaPlanHostReissuesAdmitted: the reissued entry (ring image word 0; the fake images hold
    zero entries) matches a zero table, not one whose word 0 differs."""
    from bobc.language import VBytes

    program, _ = synthetic_support.load("Reissue", "synReissueHost")
    admitted = program.value("Platform.Linux.Nvidia.PlanHost.nvidiaPlanHostReissuesAdmitted")
    steps = program.value("synReissueSteps")
    assert program.apply(admitted, VBytes(bytes(8)), steps).value == 1
    assert program.apply(admitted, VBytes(struct.pack("<Q", 0x1234)), steps).value == 0


@pytest.mark.parametrize("name,steps", [("AllSteps", "synAllSteps"), ("Staging", "synStagingSteps")])
def test_the_plans_unrolling_agrees_with_the_hosts(name, steps):
    """nvidiaPlanHostStepsUnrolled (the language's) and bobc.plan.schedule.unroll (the hosts')
    give the same steps, strides applied (the language's sets each stride to 0)."""
    from bobc.plan.extract import extract_steps
    from bobc.plan.schedule import unroll

    program, plan = synthetic_support.load(name, name.join(("syn", "Host")))
    unrolled = program.apply(program.value("Platform.Linux.Nvidia.PlanHost.nvidiaPlanHostStepsUnrolled"),
                             program.value(steps))
    language = [(s.kind.name, {f.name: getattr(s, f.name) for f in s.kind.fields})
                for s in extract_steps(program, unrolled)]
    hosts = []
    for kind, values in unroll(extract_steps(program, program.value(steps))):
        hosts.append((kind.name, {k: (0 if any(f.name == k and f.stride_of for f in kind.fields) else v)
                                  for k, v in values.items()}))
    assert "repeat" not in [k for k, _ in language]
    assert language == hosts
