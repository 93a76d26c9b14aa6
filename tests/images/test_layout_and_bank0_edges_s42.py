"""A launch's bank 0 image (encode.parameter_block) and the layout's checks (encode.plan_layout)
at the edges session 42's mutation testing (notes/s42/probe-mutants7.md) found no test held.  The synthetic Bob plan declares sm_86
(parameters from 0x160 = word 44) with 512-byte blocks: word 63 is the block's last 8 bytes
(63 x 8 = 504), word 64 starts at byte 512, past it.  A word patched twice has no one value."""
from __future__ import annotations

import dataclasses
import struct

import pytest

import synthetic_bob as bob
from bobc.errors import BobcError
from bobc.nvidia.encode import parameter_block
from bobc.plan.model import ParameterPatch
from bobc.targets import SM86, SM90


@pytest.fixture(scope="module")
def program():
    return bob.bob_plan().program


def with_patches(program, *patches):
    launches = list(program.launches)
    launches[0] = dataclasses.replace(launches[0], patches=tuple(launches[0].patches) + patches)
    return dataclasses.replace(program, launches=tuple(launches))


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_the_blocks_last_word_is_written_where_the_target_reads_it(program, target):
    block = parameter_block(with_patches(program, ParameterPatch(63, 0x1122_3344_5566_7788)), 0, target)
    # sm_86 reads it at 504; sm_90's parameters start 0x210 - 0x160 = 176 bytes later: 680
    at = 63 * 8 + target.parameter_base - 0x160
    assert struct.unpack_from("<Q", block, at)[0] == 0x1122_3344_5566_7788


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_a_word_past_the_plans_block_is_refused_as_such(program, target):
    with pytest.raises(BobcError, match="parameter word 64 lies past the plan's 512-byte block"):
        parameter_block(with_patches(program, ParameterPatch(64, 1)), 0, target)


def test_a_word_patched_twice_is_refused(program):
    word = program.launches[0].patches[0].word
    with pytest.raises(BobcError, match=f"parameter word {word} is patched twice"):
        parameter_block(with_patches(program, ParameterPatch(word, 7)), 0, SM86)


def test_a_word_past_the_targets_block_is_refused_by_name(program):
    # a plan block of 1024 bytes holds word 64, but sm_86's 512-byte block ends at 0x200
    launches = list(program.launches)
    launches[0] = dataclasses.replace(launches[0], parameter_bytes=1024,
                                      patches=tuple(launches[0].patches) + (ParameterPatch(64, 1),))
    plan = dataclasses.replace(program, launches=tuple(launches))
    with pytest.raises(BobcError, match="parameter word 64 lands at bank 0 offset 0x200, past sm_86's 512-byte"):
        parameter_block(plan, 0, SM86)


def test_a_value_is_a_64_bit_word(program):
    block = parameter_block(with_patches(program, ParameterPatch(63, (1 << 64) - 1)), 0, SM86)
    assert block[504:512] == b"\xff" * 8
    with pytest.raises(BobcError, match="parameter word 63 value 0x10000000000000000 is not a 64-bit word"):
        parameter_block(with_patches(program, ParameterPatch(63, 1 << 64)), 0, SM86)


def test_a_gpfifo_of_one_entry_a_submission_is_enough_and_one_less_refused(program):
    from bobc.nvidia.encode import plan_layout

    count = program.submission_count
    plan_layout(dataclasses.replace(program, gpfifo_entries=count), SM86)
    with pytest.raises(BobcError, match=f"the plan's GPFIFO has {count - 1} entries for {count} submissions"):
        plan_layout(dataclasses.replace(program, gpfifo_entries=count - 1), SM86)


def test_a_plan_for_a_later_parameter_base_is_not_moved_below_it(program):
    # a plan declaring sm_90 writes its parameters from 0x210; sm_86 reads them from 0x160, 176
    # bytes lower, where sm_90's launch words would land on sm_86's: refused, never shifted down
    plan = dataclasses.replace(program, architecture=SM90.sm, compute_class=SM90.compute_class)
    with pytest.raises(BobcError, match=r"parameter base 0x160 is not a whole number of words past the plan's 0x210"):
        parameter_block(plan, 0, SM86)


@pytest.mark.parametrize("alignment", [64, 192])
def test_a_region_alignment_of_no_multiple_of_128_is_refused(program, alignment):
    from bobc.nvidia.encode import plan_layout

    with pytest.raises(BobcError, match=f"region alignment {alignment} is not a positive multiple of 128 bytes"):
        plan_layout(dataclasses.replace(program, region_alignment=alignment), SM86)


def test_a_semaphore_off_16_bytes_is_refused(program):
    # each semaphore is a 64-bit payload then the 64-bit release timestamp (clc56f.h SEM_EXECUTE
    # PAYLOAD_SIZE_64BIT with RELEASE_TIMESTAMP): 16 bytes, on a 16-byte boundary
    from bobc.nvidia.encode import plan_layout

    submissions = list(program.submissions)
    submissions[0] = dataclasses.replace(submissions[0], semaphore_offset=submissions[0].semaphore_offset + 8)
    with pytest.raises(BobcError, match=r"semaphore offset 0x[0-9a-f]+ is not 16-byte aligned"):
        plan_layout(dataclasses.replace(program, submissions=tuple(submissions)), SM86)
