"""Every launch of Coppelius's graph (coppelius_model.graph, word for word the plan's:
test_plan_agrees.py) touches, by its kernels' contracts, only bytes inside the arena's
residents or the staging buffer: each active pointer's whole extent, every batch, evaluated
by the certifier's own rule (bobc.certify.pointers.check_pointers) on a plan built from the
specification's launches and residents.  The product kernels declare their operands' true
extents (rowstride (rows - 1) + columns), so a launch whose matrix overran its resident
would be refused here; and every launch has a footprint (bobc.certify.footprints)."""
from __future__ import annotations

import pytest

from bobc.certify.footprints import launch_footprints
from bobc.certify.kernels import parse_contract
from bobc.certify.pointers import check_pointers
from bobc.plan.model import DeviceArena, Launch, ParameterPatch, Plan, Region, Resident, WholeProgramPlan
from bobc.targets import SM86

from coppelius_model import graph, layout
from coppelius_model.config import LARGE, SMALL

from .conftest import EXAMPLE

SOURCES = EXAMPLE / "Realization" / "Nvidia" / "SM86"


def spec_plan(config) -> Plan:
    """A Plan holding the specification's launches (parameter words from SM86's base) and
    its residents: the arena's, the staging buffer as one resident, and the residents of the
    checkpoint's payload as one (the chunk copies move the payload's bytes across its
    residents' boundaries: to them it is one array)."""
    launches = [launch for piece in graph.pieces(config) for launch in piece.launches]
    kernels = sorted({launch.kernel for launch in launches})
    regions = tuple(Region(kernel, b"", 96, 128, 0, 0) for kernel in kernels)
    first = SM86.parameter_base // 8
    planned = tuple(Launch(l.kernel, kernels.index(l.kernel), 0, l.grid, (l.block, 1, 1), 8 * len(l.words),
                           tuple(ParameterPatch(first + i, w) for i, w in enumerate(l.words)))
                    for l in launches)
    program = WholeProgramPlan("all", 0x86, 0xC7C0, 0x86, 0, 0, 0, 0, 256, 0, regions, planned, len(planned),
                               0, (), 0, 0)
    arena, staging = layout.arena_bytes(config), layout.staging_bytes(config)
    windows = (Resident("arena", layout.ARENA_BASE, arena, 256),
               Resident("staging", layout.STAGING_BASE, staging, 256))
    payload = (layout.ARENA_BASE, layout.ARENA_BASE + layout.checkpoint_payload_bytes(config))
    inside = [r for r in layout.arena(config).values() if payload[0] <= r.address < payload[1]]
    assert inside and max(r.end for r in inside) <= payload[1]
    residents = (Resident("checkpoint payload", payload[0], payload[1] - payload[0], 1),) + tuple(
        Resident(r.name, r.address, r.bytes, 1) for r in layout.arena(config).values() if r not in inside)
    return Plan(program, DeviceArena(windows, residents + windows[1:], ()))


def contracts(plan: Plan) -> dict:
    return {r.identity: parse_contract(SOURCES / f"{r.identity}.sass", r.identity) for r in plan.program.regions}


@pytest.mark.parametrize("config", [SMALL, LARGE], ids=["small", "large"])
def test_every_launchs_declared_extents_lie_in_its_residents(config):
    plan = spec_plan(config)
    found = contracts(plan)
    assert any(a.condition for c in found.values() for a in c.arguments)
    assert [f.message for f in check_pointers(plan, found)] == []
    footprints = launch_footprints(plan, found)
    assert None not in footprints and all(f.writes for f in footprints)


def test_a_submissions_pairwise_conflicts_are_some_but_not_all():
    """The large configuration's biggest submission (the update's 244 launches): every pair
    checked, as a scheduler ordering its launches would (sorted, merged intervals).  How long
    that takes is bench/footprint_bench.py's measure (bench/results/footprint-conflicts.json)."""
    plan = spec_plan(LARGE)
    footprints = launch_footprints(plan, contracts(plan))
    start, biggest = 0, None
    for piece in graph.pieces(LARGE):
        if biggest is None or len(piece.launches) > biggest[1] - biggest[0]:
            biggest = (start, start + len(piece.launches))
        start += len(piece.launches)
    chosen = footprints[biggest[0]:biggest[1]]
    # the update: 7 L + 4 forward (embedding; ln1, qkv, attention, proj, ln2, fc, fcproj a layer;
    # lnf, head, cross-entropy), 12 L + 7 backward (4 before the layers; 12 a layer: 4 MLP
    # products, ln2's backward, 2 projection products, the attention backward and its dv, dk, 2 qkv
    # products, ln1's backward; the 2 batched gain/bias launches, the embedding's), then the check,
    # 2 AdamW, the loss copy and the row losses' copy
    assert len(chosen) == (7 * LARGE.layers + 4) + (12 * LARGE.layers + 7) + 5 == 244
    conflicts = sum(a.conflicts(b) for i, a in enumerate(chosen) for b in chosen[:i])
    assert 0 < conflicts < len(chosen) * (len(chosen) - 1) // 2
