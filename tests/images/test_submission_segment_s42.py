"""A submission's pushbuffer segment and its semaphore (encode.submission_segment) at the cases
session 42's mutation testing (notes/s42/probe-mutants7.md) found no test held: a counting
submission (a Repeat of semaphore stride 0) and a semaphore at the edge of what SEM_ADDR_HI holds.

The expected dwords are worked by hand from open-gpu-doc classes/host/clc56f.h:
SEM_ADDR_LO 0x5C, SEM_ADDR_HI 0x60 (OFFSET_UPPER 7:0: address bits 39:32), SEM_PAYLOAD_LO/HI
0x64/0x68, SEM_EXECUTE 0x6C with OPERATION 2:0 (RELEASE 1, REDUCTION 6), RELEASE_WFI 20:20,
PAYLOAD_SIZE 24:24 (64BIT 1), RELEASE_TIMESTAMP 25:25, REDUCTION 30:27 (IADD 5),
REDUCTION_FORMAT 31:31 (UNSIGNED 1); and from the module's docstring: a counting submission
starts with the prologue's methods (any entry may be the first issued) and adds 1 to its
semaphore."""
from __future__ import annotations

import dataclasses

import pytest

import synthetic_bob as bob
from bobc.errors import BobcError
from bobc.nvidia import encode
from bobc.nvidia import pushbuffer as pb
from bobc.targets import SM86, SM90

RELEASE_AFTER_IDLE_WITH_TIMESTAMP = 1 | 1 << 20 | 1 << 24 | 1 << 25           # 0x03100001
ADD_ONE_AFTER_IDLE = 6 | 1 << 20 | 1 << 24 | 5 << 27 | 1 << 31                # 0xA9100006


@pytest.fixture(scope="module")
def program():
    return bob.bob_plan().program


def segment(program, target, counts=False, semaphore_base=None):
    submissions = list(program.submissions)
    submissions[0] = dataclasses.replace(submissions[0], counts=counts)
    plan = dataclasses.replace(program, submissions=tuple(submissions),
                               semaphore_base=program.semaphore_base if semaphore_base is None else semaphore_base)
    raw = encode.submission_segment(plan, encode.plan_layout(plan, target), 0).to_bytes()
    return plan, [(m.method, m.data) for m in pb.decode(raw)]


def semaphore_tail(plan):
    address = plan.semaphore_base + plan.submissions[0].semaphore_offset
    return [(0x5C, address & 0xFFFFFFFF), (0x60, address >> 32), (0x64, 1), (0x68, 0)]


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_a_submission_releases_its_semaphore_after_idle_with_a_timestamp(program, target):
    plan, writes = segment(program, target)
    assert writes[0] == (0x1698, 1 << 12)         # INVALIDATE_SHADER_CACHES_NO_WFI CONSTANT (clc7c0.h 12:12)
    assert writes[-5:] == semaphore_tail(plan) + [(0x6C, RELEASE_AFTER_IDLE_WITH_TIMESTAMP)]


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_a_counting_submission_opens_with_the_prologue_and_adds_one(program, target):
    plan, writes = segment(program, target, counts=True)
    prologue = [(m.method, m.data) for m in pb.decode(encode.prologue(target).to_bytes())]
    assert writes[:len(prologue)] == prologue                       # SET_OBJECT first: any entry may be first
    assert writes[0] == (0x0000, target.compute_class)
    # the prologue already dropped the constant cache: no second INVALIDATE_SHADER_CACHES_NO_WFI
    assert [w for w in writes[len(prologue):] if w[0] == 0x1698] == []
    assert writes[-5:] == semaphore_tail(plan) + [(0x6C, ADD_ONE_AFTER_IDLE)]


def test_a_semaphore_sem_addr_hi_cannot_hold_is_refused(program):
    # the last 16-byte semaphore below 2^40: SEM_ADDR_HI 0xFF
    below = (1 << 40) - 0x1000
    plan, writes = segment(program, SM86, semaphore_base=below)
    assert writes[-4] == (0x60, 0xFF)
    with pytest.raises(BobcError, match=r"semaphore 0x10000000000 is not below 2\^40"):
        segment(program, SM86, semaphore_base=(1 << 40) - plan.submissions[0].semaphore_offset)


def test_the_stage_is_sent_waited_for_and_its_old_bytes_dropped_from_every_cache():
    # bobc.nvidia.residence: the stage rewrites code, bank 0 and tensor maps, so the engine waits
    # for it and drops the instruction, global data and constant caches (clc7c0.h
    # INVALIDATE_SHADER_CACHES_NO_WFI INSTRUCTION 0:0, GLOBAL_DATA 4:4, CONSTANT 12:12: 0x1011);
    # SEND_PCAS_A 0x2B4 holds the QMD address >> 8, SEND_SIGNALING_PCAS2_B 0x2C0 the action
    from bobc.nvidia import residence

    push = pb.Pushbuffer()
    residence.stage_methods(push, 0x10_2000_0400, 1, 3)
    writes = [(m.subchannel, m.method, m.data) for m in pb.decode(push.to_bytes())]
    assert writes == [(1, 0x2B4, 0x10_2000_04), (1, 0x2C0, 3), (1, 0x110, 0), (1, 0x1698, 0x1011)]
