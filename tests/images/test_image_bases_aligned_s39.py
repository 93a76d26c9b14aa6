"""The image layout (compiler/bobc/nvidia/encode.py plan_layout) refuses bases the hardware
cannot address: cases session 39's mutation testing (notes/s39/probe-mutants.md) found no test
held.  SEND_PCAS_A takes the QMD address >> 8 (clc7c0.h / clcbc0.h QMD_ADDRESS_SHIFTED8), so a
QMD sits on a 256-byte boundary; a GPFIFO entry's GET is address bits 31:2 (clc56f.h
NVC56F_GP_ENTRY0_GET), so a pushbuffer segment is dword aligned; a Volta-and-later SASS
instruction is 16 bytes, so a region's code is a whole number of them."""
from __future__ import annotations

import dataclasses

import pytest

import synthetic_bob as bob
from bobc.errors import BobcError
from bobc.nvidia.encode import plan_layout
from bobc.targets import SM86


@pytest.fixture(scope="module")
def program():
    return bob.bob_plan().program


def test_the_sound_layout_is_accepted(program):
    plan_layout(program, SM86)


@pytest.mark.parametrize("field, name, need", [("qmd_base", "QMD", 256), ("pushbuffer_base", "pushbuffer", 4)])
def test_a_base_off_its_boundary_is_refused(program, field, name, need):
    broken = dataclasses.replace(program, **{field: getattr(program, field) + need // 2})
    with pytest.raises(BobcError, match=f"the {name} base .* is not {need}-byte aligned"):
        plan_layout(broken, SM86)


def test_code_of_part_of_an_instruction_is_refused(program):
    regions = list(program.regions)
    regions[0] = dataclasses.replace(regions[0], code=regions[0].code + bytes(8))
    with pytest.raises(BobcError, match="is not a whole, non-empty number of 16-byte instructions"):
        plan_layout(dataclasses.replace(program, regions=tuple(regions)), SM86)
