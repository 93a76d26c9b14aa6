"""`bobc dump`'s text for a SEM_EXECUTE names the reduction and its format (probe s42 mutants7,
observation): the counting release 0xA9100006 was shown "REDUCTION|RELEASE_WFI|PAYLOAD_SIZE_64BIT",
the same as an IMIN, IMAX or DEC on signed payloads -- a reader of a dump could not tell what the
engine does to the semaphore.  Expected names and positions from open-gpu-doc classes/host/clc56f.h
(NVC56F_SEM_EXECUTE_*): OPERATION 2:0 (REDUCTION 6), RELEASE_WFI 20:20, PAYLOAD_SIZE 24:24 (64BIT 1),
REDUCTION 30:27 (IMIN 0, IMAX 1, IXOR 2, IAND 3, IOR 4, IADD 5, INC 6, DEC 7), REDUCTION_FORMAT
31:31 (SIGNED 0, UNSIGNED 1); the dwords are made by hand from those positions."""
from __future__ import annotations

import dataclasses

import pytest

import synthetic_bob as bob
from bobc.nvidia import encode
from bobc.nvidia import pushbuffer as pb
from bobc.targets import SM86, SM90

# clc56f.h NVC56F_SEM_EXECUTE_REDUCTION_* values, by name
CLC56F_REDUCTIONS = {"IMIN": 0, "IMAX": 1, "IXOR": 2, "IAND": 3, "IOR": 4, "IADD": 5, "INC": 6, "DEC": 7}


def shown(data: int) -> str:
    (method,) = pb.decode(pb.Pushbuffer().inc(0, 0x6C, data).to_bytes())
    assert method.name == "SEM_EXECUTE"
    return method.meaning


@pytest.mark.parametrize("reduction", sorted(CLC56F_REDUCTIONS))
@pytest.mark.parametrize("unsigned", [0, 1], ids=["SIGNED", "UNSIGNED"])
def test_every_reduction_and_format_is_named(reduction, unsigned):
    data = 6 | 1 << 20 | 1 << 24 | CLC56F_REDUCTIONS[reduction] << 27 | unsigned << 31
    fmt = "UNSIGNED" if unsigned else "SIGNED"
    assert shown(data) == f"REDUCTION|REDUCTION_{reduction}|REDUCTION_FORMAT_{fmt}|RELEASE_WFI|PAYLOAD_SIZE_64BIT"


def test_reductions_that_differ_are_shown_differently():
    texts = {shown(6 | value << 27 | fmt << 31) for value in range(16) for fmt in (0, 1)}
    assert len(texts) == 32              # values 8..15 are no reduction of clc56f.h: shown by number
    assert shown(6 | 9 << 27) == "REDUCTION|REDUCTION_9|REDUCTION_FORMAT_SIGNED|PAYLOAD_SIZE_32BIT"


def test_other_operations_show_no_reduction():
    """REDUCTION and its format are the REDUCTION operation's fields: a release says only its own."""
    assert shown(1 | 1 << 20 | 1 << 24 | 1 << 25) == "RELEASE|RELEASE_WFI|PAYLOAD_SIZE_64BIT|RELEASE_TIMESTAMP"


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_a_counting_submission_is_shown_adding_unsigned(target):
    """What dump prints for a counting submission's last method (nvidia/decode.push_lines shows
    Method.meaning): docs/partitioned-regression.md, "adding 1 to the one semaphore (SEM_EXECUTE
    REDUCTION IADD, 64-bit unsigned, after the engine is idle)"."""
    program = bob.bob_plan().program
    submissions = list(program.submissions)
    submissions[0] = dataclasses.replace(submissions[0], counts=True)
    plan = dataclasses.replace(program, submissions=tuple(submissions))
    methods = pb.decode(encode.submission_segment(plan, encode.plan_layout(plan, target), 0).to_bytes())
    assert (methods[-1].name, methods[-1].data) == ("SEM_EXECUTE", 0xA9100006)
    assert methods[-1].meaning == "REDUCTION|REDUCTION_IADD|REDUCTION_FORMAT_UNSIGNED|RELEASE_WFI|PAYLOAD_SIZE_64BIT"
