"""A scalar word a kernel's contract declares (its code reads it) that a launch never sets
(probe s31 kernel finding 2): the kernel read 0 and the build passed, where an unpatched
pointer is refused.  Now it is refused at the launch, naming the word and the kernel; a word
patched with 0, or written by a host fill each step, is set."""
from __future__ import annotations

import dataclasses

from bobc.certify.kernels import parse_contract
from bobc.certify.pointers import check_pointers
from bobc.errors import Span
from bobc.plan.host import Fill
from bobc.plan.model import DeviceArena, Launch, ParameterPatch, Plan, Region, Resident, WholeProgramPlan
from bobc.targets import SM86

FIRST = SM86.parameter_base // 8          # word 0 of the parameters in bank 0
BASE = 0x10_0000_0000


def contract_of(tmp_path, name: str, lines: str):
    source = tmp_path / f"{name}.sass"
    source.write_text(lines)
    return parse_contract(source, name)


def hand_plan(launches, residents, kernels) -> Plan:
    """(as tests/certify/test_conditional_extents.py's) a plan of `launches` ((kernel, {argument: value}), ...)
    over `residents` ((name, address, size), ...), one window around all of them."""
    regions = tuple(Region(kernel, b"", 32, 32, 0, 0) for kernel in kernels)
    planned = tuple(Launch(kernel, kernels.index(kernel), 0, (1, 1, 1), (32, 1, 1), 0x100,
                           tuple(ParameterPatch(FIRST + i, v) for i, v in sorted(words.items())))
                    for kernel, words in launches)
    program = WholeProgramPlan("all", 0x86, 0xC7C0, 0x86, 0, 0, 0, 0, 256, 0, regions, planned, len(planned),
                               0, (), 0, 0)
    held = tuple(Resident(name, address, size, 1) for name, address, size in residents)
    low, high = min(r.address for r in held), max(r.address + r.size for r in held)
    return Plan(program, DeviceArena((Resident("window", low, high - low, 1),), held, ()))


def pair(low: int, high: int) -> int:
    return low | high << 32

CONTRACT = ("//@ param 0 pointer read-write 4*lo[1] Y\n"
            "//@ param 1 scalar N, a\n"
            "//@ param 2 scalar b (binary32, lo)\n")
ARENA = [("y", BASE, 0x100)]


def test_a_declared_scalar_the_launch_never_sets_is_refused_at_the_launch(tmp_path):
    contract = contract_of(tmp_path, "axpy", CONTRACT)
    plan = hand_plan([("axpy", {0: BASE, 1: pair(16, 0)})], ARENA, ["axpy"])
    at = Span("Plan.bob", 12, 5)
    launch = dataclasses.replace(plan.program.launches[0], at=at)
    plan = dataclasses.replace(plan, program=dataclasses.replace(plan.program, launches=(launch,)))
    (found,) = check_pointers(plan, {"axpy": contract})
    assert found.at == at
    assert found.message.startswith("launch 0 (axpy) never sets argument 2 (word 46, b (binary32, lo); axpy.sass:3), "
                                    "which axpy's contract declares a scalar its code reads: the kernel would read 0")


def test_a_scalar_patched_with_zero_or_filled_by_the_host_is_set(tmp_path):
    contract = contract_of(tmp_path, "axpy", CONTRACT)
    assert check_pointers(hand_plan([("axpy", {0: BASE, 1: pair(16, 0), 2: 0})], ARENA, ["axpy"]),
                          {"axpy": contract}) == []
    plan = hand_plan([("axpy", {0: BASE, 1: pair(16, 0)})], ARENA, ["axpy"])
    host = type("Host", (), {"fills": (Fill(0, 20, 0, "binary32", 0),)})()    # bytes 20..23: word 2's high half
    assert check_pointers(dataclasses.replace(plan, host=host), {"axpy": contract}) == []


def test_a_word_an_extent_names_is_refused_once(tmp_path):
    contract = contract_of(tmp_path, "axpy", CONTRACT)
    (found,) = check_pointers(hand_plan([("axpy", {0: BASE, 2: 0})], ARENA, ["axpy"]), {"axpy": contract})
    assert "names parameter word 1, which the launch does not set" in found.message
