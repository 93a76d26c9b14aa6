"""The host buffer checks' edges (bobc.certify.buffers) that no earlier test held: each test kills
a hand-made mutant of buffers.py that passed the buffer and alias tests (session 47 mutants13; the
mutants and their runs: the session's probe notes).  The plan is the hand-built Bob plan with
Bob.Build.NativeHost's buffers (tests/images/synthetic_bob.py); the oracles are the rules
check_host_buffers' docstring and docs state -- every span half-open, [address, address + size),
a command buffer grown to its image and never shrunk, an alias inside exactly one other buffer --
applied by hand to the addresses below."""
from __future__ import annotations

import dataclasses

import pytest

import synthetic_bob as bob
from bobc.certify.buffers import check_host_buffers, host_buffer_extents
from bobc.nvidia.encode import RESERVED_GPU_RANGES, encode_images
from bobc.plan.model import HostBuffer
from bobc.targets import SM86


@pytest.fixture(scope="module")
def shipped():
    """(the plan with the host's buffers, its sm_86 images): encoded once and shared by the tests."""
    plan = bob.bob_plan(host_buffers=bob.host_buffers())
    return plan, encode_images(plan.program, SM86)


def found(shipped, *extra: HostBuffer, replaced=None, arena=None):
    plan, images = shipped
    buffers = tuple((replaced or {}).get(b.name, b) for b in plan.host_buffers) + extra
    plan = dataclasses.replace(plan, host_buffers=buffers, arena=arena or plan.arena)
    return [(f.kind, f.message) for f in check_host_buffers(plan, SM86, images=images)]


def buffer(shipped, name: str) -> HostBuffer:
    return next(b for b in shipped[0].host_buffers if b.name == name)


def test_the_plan_certifies_as_these_tests_take_it_s47(shipped):
    assert found(shipped) == []


def test_an_alias_may_start_or_end_where_its_buffer_does_s47(shipped):
    # an alias lies wholly inside one buffer when address >= the buffer's and address + size <=
    # the buffer's end: its first and last page are inside, whole
    gpfifo = buffer(shipped, "gpfifo")
    end = gpfifo.gpu_address + gpfifo.size
    assert found(shipped, HostBuffer("first-alias", gpfifo.gpu_address, 0x200)) == []
    assert found(shipped, HostBuffer("last-alias", end - 0x200, 0x200)) == []
    assert found(shipped, HostBuffer("whole-alias", gpfifo.gpu_address, gpfifo.size)) == []
    assert [kind for kind, _ in found(shipped, HostBuffer("over-alias", end - 0x200, 0x201))] == ["host-overlap"]


def test_an_alias_inside_another_alias_has_one_home_s47(shipped):
    # an alias maps bytes of exactly one buffer that is no alias: a second alias over the same
    # bytes is no second home (docstring: "it must lie wholly inside one other buffer")
    gpfifo = buffer(shipped, "gpfifo")
    assert found(shipped, HostBuffer("outer-alias", gpfifo.gpu_address, 0x400),
                 HostBuffer("inner-alias", gpfifo.gpu_address + 0x100, 0x100)) == []


def test_an_alias_in_bytes_two_buffers_share_is_named_as_inside_two_s47(shipped):
    # a scratch buffer laid over the gpfifo's first page: the two overlap (one finding), and an
    # alias inside the shared bytes lies inside 2 buffers, which is not exactly one
    gpfifo = buffer(shipped, "gpfifo")
    messages = found(shipped, HostBuffer("scratch", gpfifo.gpu_address, 0x1000),
                     HostBuffer("both-alias", gpfifo.gpu_address + 0x100, 0x100))
    assert ("host-overlap", f"alias both-alias [{gpfifo.gpu_address + 0x100:#x}, {gpfifo.gpu_address + 0x200:#x}) "
                            f"lies inside 2 other buffers; an alias maps bytes of exactly one") in messages
    assert sum("overlap in the GPU address space" in m for _, m in messages) == 1


def test_buffers_sharing_one_byte_overlap_and_touching_ones_do_not_s47(shipped):
    # [gpfifo end - 1, +0x1000) shares the gpfifo's last byte; [gpfifo end, +0x1000) only touches it
    gpfifo = buffer(shipped, "gpfifo")
    end = gpfifo.gpu_address + gpfifo.size
    assert found(shipped, HostBuffer("after", end, 0x1000)) == []
    assert found(shipped, HostBuffer("after", end - 1, 0x1000)) == [(
        "host-overlap", f"gpfifo [{gpfifo.gpu_address:#x}, {end:#x}) and after [{end - 1:#x}, {end + 0xfff:#x}) "
                        f"overlap in the GPU address space at [{end - 1:#x}, {end:#x})")]


def test_a_command_buffer_mapped_below_its_image_is_refused_s47(shipped):
    # the images place the QMD table at the plan's base: mapped a page lower (or higher) it is refused
    qmd = buffer(shipped, "qmd")
    for moved in (qmd.gpu_address - 0x1000, qmd.gpu_address + 0x1000):
        assert ("host-buffer", f"host buffer qmd is mapped at {moved:#x} but the images place it at "
                               f"{qmd.gpu_address:#x}") in found(shipped, replaced={"qmd": dataclasses.replace(
                                   qmd, gpu_address=moved)})


def test_a_window_over_the_gpfifo_ring_is_refused_s47(shipped):
    # COMMAND_BUFFERS: the gpfifo is a command buffer though no image sizes it; a window over its
    # last byte overlaps it in the GPU address space, a window just past it does not
    gpfifo = buffer(shipped, "gpfifo")
    end = gpfifo.gpu_address + gpfifo.size
    plan = shipped[0]
    for start, overlaps in ((end - 1, True), (end, False)):
        window = dataclasses.replace(plan.arena.windows[0], name="ring-window", address=start, size=0x100)
        arena = dataclasses.replace(plan.arena, windows=plan.arena.windows + (window,))
        ring = [m for kind, m in found(shipped, arena=arena) if kind == "host-overlap"]
        assert ring == ([f"gpfifo [{gpfifo.gpu_address:#x}, {end:#x}) and window ring-window [{start:#x}, "
                         f"{start + 0x100:#x}) overlap in the GPU address space at [{end - 1:#x}, {end:#x})"]
                        if overlaps else []), start


def test_a_window_ending_where_its_buffer_ends_is_mapped_s47(shipped):
    # a window lies in a host buffer when address >= the buffer's and its end <= the buffer's end
    arena_buffer = buffer(shipped, "arena")
    plan = shipped[0]
    end = arena_buffer.gpu_address + arena_buffer.size
    window = dataclasses.replace(plan.arena.windows[0], name="last-page", address=end - 0x1000, size=0x1000)
    assert found(shipped, arena=dataclasses.replace(plan.arena, windows=plan.arena.windows + (window,))) == []
    over = dataclasses.replace(window, size=0x1001)
    assert [kind for kind, _ in found(shipped, arena=dataclasses.replace(
        plan.arena, windows=plan.arena.windows + (over,)))] == ["host-buffer"]


def test_a_buffer_touching_a_reserved_range_is_taken_and_one_sharing_its_first_byte_refused_s47(shipped):
    # encode.RESERVED_GPU_RANGES: the shim's objects [0xFC_0000_0000, 0xFE_0000_0000), then the
    # shared- and local-memory windows, 4 GiB each, up to 2^40 (the ranges restated by hand here)
    assert [(low, high) for _, low, high in RESERVED_GPU_RANGES] == [
        (0xFC_0000_0000, 0xFE_0000_0000), (0xFE_0000_0000, 0xFF_0000_0000), (0xFF_0000_0000, 1 << 40)]
    below = 0xFC_0000_0000 - 0x1000
    assert found(shipped, HostBuffer("below", below, 0x1000)) == []
    assert found(shipped, HostBuffer("above", 1 << 40, 0x1000)) == []
    assert found(shipped, HostBuffer("below", below, 0x1001)) == [(
        "host-reserved", f"below [{below:#x}, 0xfc00000001) overlaps the driver shim's own objects "
                         f"[0xfc00000000, 0xfe00000000), which the host and the GPU use for themselves")]
    last = (1 << 40) - 0x1000
    assert found(shipped, HostBuffer("last", last, 0x1000)) == [(
        "host-reserved", f"last [{last:#x}, 0x10000000000) overlaps the local-memory window "
                         f"[0xff00000000, 0x10000000000), which the host and the GPU use for themselves")]


def test_a_declared_buffer_larger_than_its_image_keeps_its_size_s47(shipped):
    # host_buffer_extents' docstring: a command buffer grows to its image when the image is larger;
    # one declared larger keeps its declared size (the host maps what the plan declares)
    plan, images = shipped
    program = buffer(shipped, "program")
    assert images.manifest["sizes"]["program"] < program.size + 0x10000
    grown = dataclasses.replace(plan, host_buffers=tuple(
        dataclasses.replace(b, size=b.size + 0x10000) if b.name == "program" else b for b in plan.host_buffers))
    assert host_buffer_extents(grown, SM86, images=images)["program"] == (program.gpu_address, program.size + 0x10000)
    small = dataclasses.replace(plan, host_buffers=tuple(
        dataclasses.replace(b, size=0x1000) if b.name == "program" else b for b in plan.host_buffers))
    assert host_buffer_extents(small, SM86, images=images)["program"] == (
        program.gpu_address, max(0x1000, images.manifest["sizes"]["program"]))


def test_a_buffer_past_the_declared_program_overlaps_the_program_grown_for_sm90_s47(shipped):
    # the plan's buffers are sized for sm_86; sm_90's parameter blocks are twice as large, so its
    # program image outgrows the declared buffer (host_buffer_extents: a command buffer grows to
    # its image), and a buffer placed at the declared end shares the grown program's bytes
    from bobc.targets import SM90

    plan = shipped[0]
    program = buffer(shipped, "program")
    grown = encode_images(plan.program, SM90).manifest["sizes"]["program"]
    assert grown > program.size                  # (the sizes this test takes: not asserted elsewhere)
    start, end = program.gpu_address, program.gpu_address + program.size
    placed = dataclasses.replace(plan, host_buffers=plan.host_buffers + (HostBuffer("after", end, 0x1000),))
    assert [(f.kind, f.message) for f in check_host_buffers(placed, SM86)] == []
    assert [(f.kind, f.message) for f in check_host_buffers(placed, SM90)] == [(
        "host-overlap", f"program [{start:#x}, {start + grown:#x}) (grown to the sm_90 image) and after "
                        f"[{end:#x}, {end + 0x1000:#x}) overlap in the GPU address space at "
                        f"[{end:#x}, {min(start + grown, end + 0x1000):#x})")]


def test_an_overlap_is_placed_at_the_buffer_that_starts_inside_the_other_s47(shipped):
    # as residents.py says of two residents: the one that starts inside the other is where it was
    # placed wrong, most likely -- the finding points at that buffer's `gpu` field, whichever
    # of the two the plan lists first.  The plan's typed buffers (plan.host.buffers, one for one
    # with plan.host_buffers) carry where each field was written; here a stand-in per buffer.
    from types import SimpleNamespace

    plan = shipped[0]
    gpfifo = buffer(shipped, "gpfifo")
    late = HostBuffer("late", gpfifo.gpu_address + gpfifo.size - 1, 0x1000)
    for buffers in (plan.host_buffers + (late,), (late,) + plan.host_buffers):
        typed = SimpleNamespace(buffers=[SimpleNamespace(at={"gpu": f"{b.name}'s gpu"}) for b in buffers])
        placed = dataclasses.replace(plan, host_buffers=buffers, host=typed)
        (overlap,) = [f for f in check_host_buffers(placed, SM86, images=shipped[1]) if f.kind == "host-overlap"]
        assert overlap.at == "late's gpu"
