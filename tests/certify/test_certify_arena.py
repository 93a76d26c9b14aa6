"""The certifier admits a sound Bob plan and refuses each kind of broken one with a message that says where."""
import dataclasses

import pytest

import synthetic_bob as bob
from bobc.certify import CertificationError, certify, findings
from bobc.errors import BobcError
from bobc.plan.model import HostBuffer, Phase
from bobc.targets import SM86, SM90


@pytest.fixture(scope="module")
def plan():
    return bob.bob_plan()


def replace_resident(plan, name, **changes):
    residents = tuple(dataclasses.replace(r, **changes) if r.name == name else r for r in plan.arena.globals)
    return dataclasses.replace(plan, arena=dataclasses.replace(plan.arena, globals=residents))


def replace_patch(plan, launch_index, argument, value):
    program = plan.program
    launch = program.launches[launch_index]
    word = bob.ARGUMENT0 + argument
    patches = tuple(dataclasses.replace(p, value=value) if p.word == word else p for p in launch.patches)
    launches = list(program.launches)
    launches[launch_index] = dataclasses.replace(launch, patches=patches)
    return dataclasses.replace(plan, program=dataclasses.replace(program, launches=tuple(launches)))


def messages(plan, target=SM90, needs=None):
    return [f.message for f in findings(plan, target, needs)]


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_the_sound_bob_plan_certifies(plan, target):
    assert findings(plan, target) == []
    certify(plan, target, needs={"bob-row-gather": 24, "bob-loss-gradient": 30, "bob-adamw": 32})
    certify(bob.bob_plan(host_buffers=bob.host_buffers()), target)


def test_overlapping_moments_are_refused_naming_both_and_the_bytes(plan):
    # the second moments start 4 KiB early: inside the first moments
    broken = replace_resident(plan, "second-moments", address=bob.SECOND_MOMENTS - 4096)
    second = bob.SECOND_MOMENTS - 4096
    with pytest.raises(CertificationError) as error:
        certify(broken, SM90)
    expected = (f"residents first-moments [{bob.FIRST_MOMENTS:#x}, {bob.SECOND_MOMENTS:#x}) and second-moments "
                f"[{second:#x}, {second + bob.TABLE:#x}) overlap by 4096 bytes at [{second:#x}, {bob.SECOND_MOMENTS:#x})")
    assert expected in [f.message for f in error.value.findings]
    assert isinstance(error.value, BobcError) and expected in error.value.message


def test_a_pointer_one_byte_past_a_table_is_refused(plan):
    # the training-loss launch's loss block pointer (argument 3) one byte in: its 1024 bytes overrun by one
    broken = replace_patch(plan, 8, 3, bob.TRAINING_LOSS + 1)
    assert messages(broken) == [
        f"launch 8 (bob-loss-gradient) argument 3 (word 47, the loss block (256 binary32)) writes 1,024 bytes at "
        f"{bob.TRAINING_LOSS + 1:#x}: [{bob.TRAINING_LOSS + 1:#x}, {bob.TRAINING_LOSS + 1025:#x}) runs 1 byte "
        f"past training-loss [{bob.TRAINING_LOSS:#x}, {bob.TRAINING_LOSS + 1024:#x})"]


def test_a_pointer_just_past_a_resident_is_a_stray_pointer(plan):
    address = bob.TRAINING_LOSS + bob.ROW          # the first byte after training-loss, in the page gap
    broken = replace_patch(plan, 8, 3, address)
    assert messages(broken) == [
        f"launch 8 (bob-loss-gradient) argument 3 (word 47, the loss block (256 binary32)): address {address:#x} "
        f"lies in no resident; nearest: training-loss [{bob.TRAINING_LOSS:#x}, {address:#x}), the address 0 "
        f"bytes past its end"]


def test_a_gather_reading_the_prompt_past_the_record_is_refused(plan):
    address = bob.INPUT + bob.INPUT_RECORD - 2     # a u32 read of which 2 bytes lie past the record
    broken = replace_patch(plan, 5, 1, address)
    (message,) = messages(broken)
    assert message.startswith("launch 5 (bob-row-gather) argument 1 (word 45, the prompt's last byte (u32)) "
                              f"reads 4 bytes at {address:#x}")
    assert message.endswith(f"runs 2 bytes past input-record [{bob.INPUT:#x}, {bob.INPUT + bob.INPUT_RECORD:#x})")


def test_scalars_are_not_addresses_but_an_undeclared_word_in_a_window_is(plan):
    # a scalar slot holding a value inside the arena's window is still a scalar
    assert messages(replace_patch(plan, 0, 6, bob.INPUT + bob.INPUT_RECORD + 8)) == []
    # an unused pointer slot holding a window address in a gap is checked
    program = plan.program
    launch = program.launches[0]
    stray = bob.INPUT + bob.INPUT_RECORD + 8
    launches = (dataclasses.replace(launch, patches=launch.patches + (bob.ParameterPatch(bob.ARGUMENT0 + 4, stray),)),)
    broken = dataclasses.replace(plan, program=dataclasses.replace(program, launches=launches + program.launches[1:]))
    (message,) = messages(broken)
    assert message.startswith(f"launch 0 (bob-loss-gradient) argument 4 (word 48): address {stray:#x} lies in a "
                              "window but in no resident; nearest: input-record")


def test_a_misaligned_resident_is_refused(plan):
    broken = replace_resident(plan, "predictions", address=bob.PREDICTIONS + 8)
    assert f"resident predictions at {bob.PREDICTIONS + 8:#x} is not aligned to 256 bytes (it is 8 past)" \
        in messages(broken)


def test_a_resident_outside_its_window_is_refused(plan):
    broken = replace_resident(plan, "predictions", address=bob.PREDICTIONS + 4096)
    assert any(m.startswith(f"resident predictions [{bob.PREDICTIONS + 4096:#x}, {bob.PREDICTIONS + 4096 + 24:#x}) "
                            "lies outside every window") for m in messages(broken))


def test_a_kernel_over_its_register_budget_is_refused(plan):
    assert messages(plan, needs={"bob-adamw": 40}) == ["region bob-adamw needs 40 registers but declares 32 (its sm_90 code, "
                                                      "bob-adamw.sass)"]
    with pytest.raises(CertificationError, match="region bob-adamw needs 40 registers but declares 32"):
        certify(plan, SM86, needs={"bob-adamw": 40})


def test_a_declaration_the_hardware_cannot_hold_is_refused(plan):
    regions = list(plan.program.regions)
    regions[2] = dataclasses.replace(regions[2], registers=255)       # 256 x 256 fills the file exactly
    fits = dataclasses.replace(plan, program=dataclasses.replace(plan.program, regions=tuple(regions)))
    assert messages(fits) == []
    regions[2] = dataclasses.replace(regions[2], registers=257)
    regions[0] = dataclasses.replace(regions[0], registers=65, block_x=1024)   # 1024 x 72 allocated > 65536
    broken = dataclasses.replace(plan, program=dataclasses.replace(plan.program, regions=tuple(regions)))
    found = messages(broken)
    assert "region bob-adamw declares 257 registers; the hardware allows 1..255" in found
    assert ("region bob-row-gather: 1024 threads of 65 registers take 73,728 registers as sm_90 counts a block "
            "(32 warps of 2,304, rounded up to a multiple of its 4 sub-partitions), more than the 65,536 a block "
            "may have; declare fewer registers or launch smaller blocks") in found


def test_a_submission_referencing_a_missing_launch_is_refused(plan):
    program = plan.program
    submissions = list(program.submissions)
    submissions[30] = dataclasses.replace(submissions[30], launches=(99,))
    broken = dataclasses.replace(plan, program=dataclasses.replace(program, submissions=tuple(submissions)))
    assert "submission 30 (bob-submission) references launch 99; the plan has 27 launches (0..26)" \
        in messages(broken, SM86)


def test_launches_submitted_out_of_order_are_refused(plan):
    program = plan.program
    submissions = list(program.submissions)
    submissions[3], submissions[4] = submissions[4], submissions[3]
    broken = dataclasses.replace(plan, program=dataclasses.replace(program, submissions=tuple(submissions)))
    assert messages(broken) == ["submission 3 (bob-submission) first submits launch 4 (bob-greedy-argmax) before "
                                "launch 3 (bob-row-gather) was ever submitted"]


def test_a_launch_never_submitted_and_a_shared_semaphore_are_refused(plan):
    program = plan.program
    submissions = list(program.submissions)
    submissions[26] = dataclasses.replace(submissions[26], launches=(25,), semaphore_offset=25 * 16)
    broken = dataclasses.replace(plan, program=dataclasses.replace(program, submissions=tuple(submissions)))
    found = messages(broken)
    assert "launches never submitted: 26 (bob-loss-gradient)" in found
    assert "submission 26 (bob-submission) releases the semaphore at +0x190, already submission 25's" in found


def test_overlapping_host_buffers_are_refused(plan):
    # the gpfifo ring mapped 4 KiB into the semaphores' page
    buffers = [HostBuffer("gpfifo", bob.SEMAPHORE_BASE + 0x800, 0x1000) if b.name == "gpfifo" else b
               for b in bob.host_buffers()]
    broken = dataclasses.replace(plan, host_buffers=tuple(buffers))
    assert messages(broken, SM86) == [
        f"semaphores [{bob.SEMAPHORE_BASE:#x}, {bob.SEMAPHORE_BASE + 0x1000:#x}) and gpfifo "
        f"[{bob.SEMAPHORE_BASE + 0x800:#x}, {bob.SEMAPHORE_BASE + 0x1800:#x}) overlap in the GPU address space at "
        f"[{bob.SEMAPHORE_BASE + 0x800:#x}, {bob.SEMAPHORE_BASE + 0x1000:#x})"]


def test_command_buffers_grow_to_the_sm90_images_before_the_overlap_check(plan):
    # the QMD buffer placed right after the plan's (sm_86-sized) program buffer: fine for sm_86,
    # but sm_90's program image (1024-byte parameter blocks) runs into it
    buffers = list(bob.host_buffers())
    program_pages = buffers[0].size
    buffers[1] = HostBuffer("qmd", bob.PROGRAM_BASE + program_pages, buffers[1].size)
    moved = dataclasses.replace(plan.program, qmd_base=bob.PROGRAM_BASE + program_pages)
    broken = dataclasses.replace(plan, program=moved, host_buffers=tuple(buffers))
    assert messages(broken, SM86) == []
    (message,) = messages(broken, SM90)
    assert message.startswith(f"program [{bob.PROGRAM_BASE:#x}, ") and "(grown to the sm_90 image)" in message
    assert f"overlap in the GPU address space at [{bob.PROGRAM_BASE + program_pages:#x}," in message


def test_a_buffer_away_from_its_images_base_and_an_unmapped_window_are_refused(plan):
    buffers = [HostBuffer("pushbuffer", bob.PUSHBUFFER_BASE + 0x1000, b.size) if b.name == "pushbuffer" else b
               for b in bob.host_buffers() if b.name != "arena"]
    broken = dataclasses.replace(plan, host_buffers=tuple(buffers))
    found = messages(broken)
    assert f"host buffer pushbuffer is mapped at {bob.PUSHBUFFER_BASE + 0x1000:#x} but the images place it at " \
        f"{bob.PUSHBUFFER_BASE:#x}" in found
    assert any(m.startswith("window arena [") and m.endswith("lies in no host buffer: the kernels would touch "
                                                             "unmapped memory") for m in found)


def test_derived_host_buffers_are_checked_against_the_arena(plan):
    # the arena's window moved onto the QMD table
    window = dataclasses.replace(plan.arena.windows[0], address=bob.QMD_BASE, size=0x100000)
    broken = dataclasses.replace(plan, arena=dataclasses.replace(plan.arena, windows=(window,)))
    assert any(m.startswith(f"qmd [{bob.QMD_BASE:#x}, {bob.QMD_BASE + 27 * 512:#x}) and window arena "
                            f"[{bob.QMD_BASE:#x}, {bob.QMD_BASE + 0x100000:#x}) overlap") for m in messages(broken, SM90))


def test_a_phase_that_names_its_residents_limits_the_pointers(plan):
    residents = {r.name: r for r in plan.arena.globals}
    phases = tuple(Phase(p.identity) if p.identity != "bob-greedy-argmax" else
                   Phase(p.identity, reads=(residents["logit-rows"],), writes=(residents["logit-rows"],))
                   for p in plan.arena.phases)
    broken = dataclasses.replace(plan, arena=dataclasses.replace(plan.arena, phases=phases))
    found = messages(broken)
    assert len(found) == 3 and all("writes predictions, which phase bob-greedy-argmax does not list" in m
                                   for m in found)


def test_an_alignment_that_is_no_power_of_two_is_refused(plan):
    broken = replace_resident(plan, "predictions", alignment=3)
    assert "resident predictions declares alignment 3: an alignment is a power of two (1, 2, 4, ..., 256, ...)" \
        in messages(broken)


def test_two_residents_of_one_name_are_refused(plan):
    residents = tuple(dataclasses.replace(r, name="logit-rows") if r.name == "predictions" else r
                      for r in plan.arena.globals)
    broken = dataclasses.replace(plan, arena=dataclasses.replace(plan.arena, globals=residents))
    assert any(m.startswith("residents logit-rows [") and m.endswith("share the name logit-rows: phases and messages "
                                                                      "name a resident, so give each its own")
               for m in messages(broken)), messages(broken)


def test_a_phase_must_list_the_arenas_own_residents(plan):
    """A phase's residents are matched by name; one the arena lacks, or one of the arena's names
    at another address, would make the phase check read names, not bytes."""
    residents = {r.name: r for r in plan.arena.globals}
    ghost = dataclasses.replace(residents["logit-rows"], name="ghost")
    moved = dataclasses.replace(residents["predictions"], address=residents["predictions"].address + 256)
    phases = tuple(Phase(p.identity) if p.identity != "bob-greedy-argmax" else
                   Phase(p.identity, reads=(residents["logit-rows"], ghost), writes=(moved,))
                   for p in plan.arena.phases)
    found = messages(dataclasses.replace(plan, arena=dataclasses.replace(plan.arena, phases=phases)))
    assert any(m.startswith("phase bob-greedy-argmax reads ghost [") and "which is no resident of the arena" in m
               for m in found), found
    assert any(m.startswith("phase bob-greedy-argmax writes predictions [") and
               "but the arena's resident predictions is predictions [" in m for m in found), found


def test_every_fault_is_listed_at_once(plan):
    broken = replace_resident(replace_patch(plan, 8, 3, bob.TRAINING_LOSS + 1), "predictions",
                              address=bob.PREDICTIONS + 8)
    with pytest.raises(CertificationError) as error:
        certify(broken, SM90, needs={"bob-adamw": 40})
    kinds = sorted(f.kind for f in error.value.findings)
    assert {"extent", "misaligned", "registers"} <= set(kinds)
    assert "3 faults" in error.value.message or len(kinds) > 3


def test_a_phase_that_names_its_residents_limits_the_pointers_read_too(plan):
    """s39 mutation testing: the read half of the rule above.  The argmax reads logit-rows and
    writes predictions; a phase listing only predictions leaves the read of logit-rows refused."""
    residents = {r.name: r for r in plan.arena.globals}
    phases = tuple(Phase(p.identity) if p.identity != "bob-greedy-argmax" else
                   Phase(p.identity, writes=(residents["predictions"],))
                   for p in plan.arena.phases)
    broken = dataclasses.replace(plan, arena=dataclasses.replace(plan.arena, phases=phases))
    found = messages(broken)
    assert found and all("reads logit-rows, which phase bob-greedy-argmax does not list among its reads" in m
                         for m in found), found
