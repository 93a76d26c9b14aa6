"""Probe s37 quoting, left over: the host generator's refusals and the simulator's GPU-side faults
(bobc's own messages, which no C host repeats) named a plan's identities and names raw -- a
newline or ESC in a buffer, resident or launch name split the message and drove the terminal.
They show them as every other bobc message does (bobc.errors.shown_plan_text, docs/formats.md):
as themselves when plain, else as the plan's byte-string literal.  The host's run-time messages
(an AssertWord's identity, a record check's name) keep the hosts' '?' rule, unchanged."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from bobc.host import generate
from bobc.language.parse import decode_byte_string
from bobc.errors import Span
from bobc.sim.host_adapter import host_plan
from bobc.sim.memory import Buffer, Memory, Resident
from bobc.targets import SM86

HOSTILE = "L\n\x1b[31mG"
LITERAL = r'b"L\n\x1b[31mG"'


def _one_line(message: str) -> None:
    assert "\n" not in message and "\x1b" not in message, message


def test_the_literal_reads_back_to_the_name():
    assert decode_byte_string(LITERAL, Span("<test>", 1, 1)) == HOSTILE.encode()


def test_c_string_refusal_shows_the_plans_literal():
    with pytest.raises(generate.HostGenerationError) as caught:
        generate.c_string(HOSTILE.encode() + b"\0")
    _one_line(caught.value.message)
    assert r'the string b"L\n\x1b[31mG\x00" holds a zero byte' in caught.value.message


def test_the_generators_buffer_refusals_show_the_plans_literal(all_steps):
    built, _ = all_steps
    buffers = built.plan.host.buffers
    hostile = tuple(dataclasses.replace(b, name=HOSTILE, host=b.gpu + 4096) if i == 0 else b
                    for i, b in enumerate(buffers))
    plan = dataclasses.replace(built.plan, host=dataclasses.replace(built.plan.host, buffers=hostile))
    with pytest.raises(generate.HostGenerationError) as caught:
        generate._buffers(plan, built.images)
    _one_line(caught.value.message)
    assert caught.value.message.startswith(f"buffer {LITERAL}: host address"), caught.value.message


def test_the_simulators_memory_faults_show_the_plans_literal():
    data = np.zeros(64, dtype=np.uint8)
    with pytest.raises(Exception) as caught:
        Memory([Buffer("arena", 0x1000, data)], [Resident(HOSTILE, 0x9000, 8)])
    _one_line(caught.value.message)
    assert caught.value.message.startswith(f"resident {LITERAL} [0x9000, +8)"), caught.value.message
    memory = Memory([Buffer("arena", 0x1000, data)], [Resident(HOSTILE, 0x1000, 8)])
    said = memory.resident_of(0x1004)
    assert said == f"in {LITERAL}, 4 bytes in"


def test_the_simulators_launch_names_show_the_plans_literal(all_steps, monkeypatch):
    from bobc.sim import host_adapter
    from bobc.sim.contracts import ContractsMissing

    built, _ = all_steps
    images = copy.copy(built.images)
    manifest = copy.deepcopy(built.images.manifest)
    manifest["launches"][0]["identity"] = HOSTILE
    object.__setattr__(images, "manifest", manifest)
    # no kernel has that identity, so there is no contract to hold its launch to: refused, in one line
    with pytest.raises(ContractsMissing) as caught:
        host_plan(built.plan, images, SM86, built.program.search_path)
    _one_line(caught.value.message)
    assert f"cannot hold these kernels to their contracts: {LITERAL} (no source of it in " in caught.value.message
    monkeypatch.setattr(host_adapter, "launch_contracts", lambda *args: None)
    names = host_plan(built.plan, images, SM86, built.program.search_path).launch_names
    shown = names[manifest["launches"][0]["qmd_address"]]
    _one_line(shown)
    assert shown == f"launch 0 ({LITERAL})"
