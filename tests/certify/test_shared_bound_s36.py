"""A region's shared memory is bounded by what the card gives a block (probe s36 newuser2, finding 3).

The certifier refused a region of more than 49,152 bytes, "sm_86 allows 0..49152 per block": that
is ptxas's bound on a cubin's static `.shared`, which no QMD reads.  A region's shared bytes are
its launches' QMD SHARED_MEMORY_SIZE, the block's whole shared memory; the CUDA Programming Guide
("Technical Specifications per Compute Capability": maximum amount of shared memory per thread
block) gives 99 KB on compute capability 8.6 and 227 KB on 9.0 -- the numbers below, written from
the guide, not read from bobc.targets.  Coppelius's attention kernels take 100,352 bytes a block
through the same encoder and ran so on the H200 (docs/coppelius-kernels.md).
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "images"))
import synthetic_bob as bob  # noqa: E402
from bobc.certify import findings  # noqa: E402
from bobc.errors import BobcError  # noqa: E402
from bobc.nvidia.encode import encode_images  # noqa: E402
from bobc.targets import SM86, SM90  # noqa: E402

# the Programming Guide's maximum shared memory per block, as a region declares it: on sm_90 a block's
# shared memory begins with the system's 0x400 bytes (ptxas -arch=sm_90 places the first variable at
# 0x400; libcuda's SHARED_MEMORY_SIZE is the kernel's bytes + 0x400), so 227 KB of its own is 0x39000 (s42)
BLOCK_MOST = {"sm_86": 99 * 1024, "sm_90": 227 * 1024 + 0x400}
COPPELIUS_ATTENTION = 100352
WHY = {"sm_86": "the SM's 100 KiB carve-out less the 1024 bytes the system reserves per block",
       "sm_90": "232448 bytes of the block's own (the SM's 228 KiB carve-out less the 1024 bytes the system reserves "
                "per block) after the 0x400 bytes of that reserve, which a block's shared memory begins with here"}


def certified_with_shared(target, shared: int) -> list[str]:
    plan = bob.bob_plan()
    regions = tuple(dataclasses.replace(r, shared_bytes=shared) if r.identity == "bob-adamw" else r
                    for r in plan.program.regions)
    return [f.message for f in findings(dataclasses.replace(plan, program=dataclasses.replace(
        plan.program, regions=regions)), target)]


def encodes_with_shared(target, shared: int) -> bool:
    plan = bob.bob_whole_program_plan()
    index = next(i for i, r in enumerate(plan.regions) if r.identity == "bob-adamw")
    regions = list(plan.regions)
    regions[index] = dataclasses.replace(regions[index], shared_bytes=shared)
    try:
        encode_images(dataclasses.replace(plan, regions=tuple(regions)), target)
    except BobcError:
        return False
    return True


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_a_region_may_have_what_the_card_gives_a_block(target):
    most = BLOCK_MOST[target.name]
    for shared in (48 * 1024 + 4, COPPELIUS_ATTENTION if COPPELIUS_ATTENTION <= most else most, most):
        assert certified_with_shared(target, shared) == [], shared
        assert encodes_with_shared(target, shared), shared        # and the encoder lays it out


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_a_region_past_it_is_refused_saying_the_cards_bound(target):
    most = BLOCK_MOST[target.name]
    assert certified_with_shared(target, most + 1) == [
        f"region bob-adamw declares {most + 1} bytes of shared memory; a block on {target.name} has at most {most} "
        f"({WHY[target.name]})"]
    assert not encodes_with_shared(target, most + 256)   # the encoder's carve-out agrees (it rounds to 256)
