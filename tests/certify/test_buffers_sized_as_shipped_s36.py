"""The certifier holds the host buffers to the images the build writes (probe s36 encodeonce
finding 2): a build orders a submission's launches by their kernels' footprints, sending launches
that touch disjoint bytes beside the chain (bobc.nvidia.launch_order), which changes how long the
pushbuffer is; the certifier sized the buffers from images ordered as one chain per submission, so
the extents it held disjoint were not the ones the host maps."""
from __future__ import annotations

import dataclasses

import pytest

import synthetic_bob as bob
from bobc.certify import findings
from bobc.certify.buffers import host_buffer_extents
from bobc.certify.footprints import program_conflicts
from bobc.nvidia.encode import encode_images
from bobc.plan.model import HostBuffer
from bobc.targets import SM86, SM90

# a first submission whose launches' footprints let some run beside the chain: its pushbuffer
# segment sends more (or fewer) QMDs than one chain's (the two lengths differ: asserted below)
FORKED = [(SM90, (0, 1, 4, 7)), (SM86, (0, 1, 3, 5))]


def _program(launches):
    program = bob.bob_whole_program_plan()
    first = dataclasses.replace(program.submissions[0], launches=launches)
    return dataclasses.replace(program, submissions=(first, *program.submissions[1:]))


def _shipped(program, target):
    """The build's images (bobc.pipeline.encode)."""
    return encode_images(program, target, program_conflicts(program, target))


@pytest.mark.parametrize("target,launches", FORKED, ids=lambda v: getattr(v, "name", str(v)))
def test_the_certifiers_pushbuffer_is_the_shipped_one(target, launches):
    program = _program(launches)
    shipped = _shipped(program, target)
    chained = encode_images(program, target, contracts=program_conflicts(program, target).contracts)
    assert len(shipped.push) != len(chained.push), "the case forks: its order changes the pushbuffer"
    contracts = program_conflicts(program, target).contracts
    sized = host_buffer_extents(bob.bob_plan(program), target, contracts)
    assert sized["pushbuffer"] == (program.pushbuffer_base, len(shipped.push))
    assert sized["program"] == (program.program_base, len(shipped.program))


def test_a_buffer_over_the_shipped_pushbuffers_end_is_refused():
    """A buffer declared right after the pushbuffer one chain would fill, inside the pushbuffer
    the build writes, overlaps what the host maps: refused."""
    target, launches = FORKED[0]
    program = _program(launches)
    shipped = len(_shipped(program, target).push)
    chained = len(encode_images(program, target).push)
    assert shipped > chained
    buffers = [b for b in bob.host_buffers(program) if b.name != "pushbuffer"]
    buffers += [HostBuffer("pushbuffer", program.pushbuffer_base, chained),
                HostBuffer("staging", program.pushbuffer_base + chained, 0x1000)]
    plan = bob.bob_plan(program, host_buffers=buffers)
    faults = [f for f in findings(plan, target) if "staging" in f.message]
    assert faults and "pushbuffer" in faults[0].message, [f.message for f in findings(plan, target)]


def test_images_kept_for_another_target_or_search_path_are_not_handed_over():
    """The certifier's images go to a build of the same plan, target and kernel search path only."""
    from bobc.certify import certify, shipped_images_of

    plan = bob.bob_plan(host_buffers=bob.host_buffers())
    certify(plan, SM90)
    assert shipped_images_of(plan, SM86) is None
    assert shipped_images_of(plan, SM90, ("/elsewhere",)) is None
    kept = shipped_images_of(plan, SM90)
    assert kept is not None and kept.manifest["target"] == "sm_90"
    assert shipped_images_of(plan, SM90) is None
