"""The Bob seeds evaluate against the specs library.

Expected values come from the seeds' own comments and ../shared/docs/bob.md
(786432 = 256 * 256 * 3 * 4; the 1564-byte input record; 1/256 as binary32
is 0x3b800000; the forward pass is 1 loss launch + 3 prompts x 2 launches,
each of the 10 training steps is AdamW + loss).
"""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import Intrinsics, load_program
from bobc.targets import SM86

from .conftest import REPOSITORY

TRAINING_RUN = REPOSITORY / "examples/bob/Bob/TrainingRun.bob"
PHYSICAL = REPOSITORY / "examples/bob/Bob/Build/PhysicalComponents.bob"


def load(path):
    # no encoders registered: anything that needs machine code fails loudly
    return load_program(path, intrinsics=Intrinsics(), target=SM86)


def value(program, name):
    return program.value(name).value


def test_training_run_values():
    program = load(TRAINING_RUN)
    assert value(program, "bobCheckpointPayloadByteCount") == 256 * 256 * 3 * 4
    assert value(program, "bobInputRecordBytes") == 1564
    assert value(program, "bobInputTargetsOffset") == 16 + 2 * 256
    schema = program.value("bobCheckpointSchema")
    assert (schema.family, schema.constructor) == ("BobCheckpointTransportSchema",
                                                   "BobCheckpointTransportSchemaValue")
    assert program.field(schema, "bobCheckpointOrderingIdentity").value == \
        b"parameter-order:p-then-m-then-v"
    assert program.field(schema, "bobCheckpointPayloadBytes").value == 786432


def test_physical_components_counts_without_machine_code():
    program = load(PHYSICAL)
    assert value(program, "bobInverseRows") == 0x3B800000
    assert value(program, "bobForwardLaunches") == 1 + 3 * 2
    assert value(program, "bobStepLaunches") == 2
    assert value(program, "bobLaunchCount") == 7 + 10 * 2
    assert value(program, "bobSubmissionCount") == 27 + 3 * 2
    # the code's extent needs the kernels' machine code: no encoder, so it fails
    with pytest.raises(BobcError) as caught:
        program.value("bobCodeExtent")
    assert "no compiler-native-encode handler" in caught.value.render()


def test_schedule_is_a_tree_of_launches():
    program = load(PHYSICAL)
    schedule = program.value("bobLaunchSchedule")
    assert schedule.family == "NvidiaLaunchSchedule"
    assert schedule.constructor == "NvidiaLaunchScheduleAppend"
    # walk the leaves left to right and read each launch's identity
    identities = []
    stack = [schedule]
    while stack:
        node = program.force(stack.pop())
        if node.constructor == "NvidiaLaunchScheduleAppend":
            stack.extend([node.fields[1], node.fields[0]])
        elif node.constructor == "NvidiaLaunchScheduleOne":
            template = program.force(node.fields[0])
            identities.append(program.force(template.fields[0]).value)
    assert identities[:3] == [b"bob-loss-gradient", b"bob-row-gather", b"bob-greedy-argmax"]
    assert identities[7:9] == [b"bob-adamw", b"bob-loss-gradient"]
    assert len(identities) == 27


def test_seeds_type_check():
    for path in (TRAINING_RUN, PHYSICAL):
        load(path).check()


def test_a_false_constant_breaks_the_seed_proof(tmp_path):
    import shutil
    shutil.copytree(REPOSITORY / "examples/bob", tmp_path / "bob")
    plan = tmp_path / "bob/Bob/Build/PhysicalComponents.bob"
    text = plan.read_text(encoding="utf-8")
    assert "def bobInverseRows : Nat = 0x3b800000" in text
    plan.write_text(text.replace("def bobInverseRows : Nat = 0x3b800000",
                                 "def bobInverseRows : Nat = 0x3b800001"), encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(plan, target=SM86).check()
    rendered = caught.value.render()
    assert "the equality bobInverseRowsDerived claims does not hold" in rendered
    assert "left:  998244353 (0x3b800001)" in rendered
    assert "right: 998244352 (0x3b800000)" in rendered


def test_seeds_are_the_given_files_byte_for_byte(shared):
    """Seeds 000 and 001 are used exactly as given (../shared/seeds)."""
    for number, path in (("000", TRAINING_RUN), ("001", PHYSICAL)):
        given = sorted((shared / "seeds").glob(f"{number}_*.txt"))
        assert len(given) == 1, f"seed {number}: {given}"
        assert path.read_bytes() == given[0].read_bytes(), f"{path} differs from {given[0]}"
