"""The pointer checks' edges (bobc.certify.pointers) that no earlier test held: each test kills a
hand-made mutant of pointers.py that passed every certify test (session 47 mutants13; the
mutants and their runs: the session's probe notes).  The oracles are hand-derived from the
rules the module's docstrings and docs state, worked by hand, never bobc's own output."""
from __future__ import annotations

import dataclasses

from bobc.certify.footprints import launch_footprint
from bobc.certify.pointers import _nearest, check_pointers, declared_maps, pointer_extent
from bobc.plan.model import ParameterPatch, Resident
from tests.certify.test_conditional_extents import BASE, FIRST, contract_of, hand_plan


def _resident(name: str, address: int, size: int) -> Resident:
    return Resident(name, address, size, 1)


# ---- _nearest: the resident nearest a stray address, by the distance to its nearest byte ----

def test_the_nearest_resident_is_the_one_whose_nearest_byte_is_nearer_s47():
    # a [0x1000, 0x1010): its last byte is 0x100f; b [0x1020, 0x1030): its first byte 0x1020.
    # Address 0x1018 is 9 bytes from a's last byte and 8 from b's first: b is the nearer, though
    # the message's own counts are 8 and 8 (0x1018 - 0x1010 past a's end, 0x1020 - 0x1018 below
    # b's start).  (A distance counted from a's end, 0x1010, ties them and names a.)
    a, b = _resident("a", 0x1000, 0x10), _resident("b", 0x1020, 0x10)
    for order in ((a, b), (b, a)):
        assert _nearest(order, 0x1018) == "nearest: b [0x1020, 0x1030), the address 8 bytes below its start"


def test_an_address_equally_near_two_residents_names_the_first_listed_s47():
    # 0x1018 is 9 bytes from a's last byte (0x100f) and 9 from c's first (0x1021): a tie, which
    # the plan's order breaks (the first resident listed), whichever way round they are listed
    a, c = _resident("a", 0x1000, 0x10), _resident("c", 0x1021, 0x10)
    assert _nearest((a, c), 0x1018) == "nearest: a [0x1000, 0x1010), the address 8 bytes past its end"
    assert _nearest((c, a), 0x1018) == "nearest: c [0x1021, 0x1031), the address 9 bytes below its start"


def test_an_address_at_a_residents_end_is_0_bytes_past_it_s47():
    # docs/simulator.md: "..., 0 bytes past its end" -- the first byte after a resident
    a = _resident("a", 0x1000, 0x10)
    assert _nearest((a,), 0x1010) == "nearest: a [0x1000, 0x1010), the address 0 bytes past its end"
    assert _nearest((a,), 0x1011) == "nearest: a [0x1000, 0x1010), the address 1 byte past its end"
    assert _nearest((a,), 0xfff) == "nearest: a [0x1000, 0x1010), the address 1 byte below its start"
    assert _nearest((), 0x1010) == "no residents are declared"


# ---- pointer_extent: a `resident` extent outside every resident ----

def test_a_resident_extent_outside_every_resident_is_unknown_not_a_range_s47(tmp_path):
    # kernels.Argument.extent_for: a `resident` extent runs to the end of its resident; outside
    # every resident there is no end to run to, so the extent is unknown (None, and why) --
    # pointer_extent's docstring -- and the launch's footprint is unknown (docs/launch-order.md:
    # a launch whose footprint cannot be known conflicts with everything), never the range
    # [address, 0 - address) of a resident ending at 0
    contract = contract_of(tmp_path, "k", "//@ param 0 pointer write resident the rows\n")
    plan = hand_plan((("k", {0: BASE + 0x100}),), (("rows", BASE, 0x100),), ("k",))
    argument = contract.argument(0)
    assert pointer_extent(plan.arena.globals, argument, BASE + 0x100, {}) == (
        None, None, "its extent runs to the end of its resident, and it lies in no resident")
    assert pointer_extent(plan.arena.globals, argument, BASE + 0x40, {}) == (plan.arena.globals[0], 0xc0, "")
    assert launch_footprint(plan, 0, contract, FIRST) is None
    inside = hand_plan((("k", {0: BASE + 0x40}),), (("rows", BASE, 0x100),), ("k",))
    assert launch_footprint(inside, 0, contract, FIRST).writes == ((BASE + 0x40, BASE + 0x100),)


# ---- declared_maps: a tensor map whose condition cannot be judged ----

MAP_CONTRACT = ("//@ param 0 pointer write 4096 rows\n"
                "//@ param 5 scalar flags\n"
                "//@ tensormap 3 of 0 binary32 dims (256, 1) strides (1024) box (64, 1) swizzle none "
                "when lo[5]&4 the row\n")


def test_a_map_whose_condition_names_an_unset_word_is_kept_as_unknown_s47(tmp_path):
    # declared_maps' docstring: inactive maps are left out; one whose activity cannot be known
    # (its `when` names word 5, which the launch does not set) is not inactive: it is kept, with
    # no extent and the reason, so check_pointers refuses the launch by that reason and its
    # footprint is unknown (docs/launch-order.md: it conflicts with everything) -- a map left out
    # would let the TMA touch bytes no check or ordering saw
    contract = contract_of(tmp_path, "k", MAP_CONTRACT)
    plan = hand_plan((("k", {0: BASE}),), (("rows", BASE, 0x1000),), ("k",))
    why = "its condition when lo[5]&4 names parameter word 5, which the launch does not set"
    (mapped,) = declared_maps(0, plan.program.launches[0], contract, FIRST)
    assert (mapped.address, mapped.extent, mapped.problem) == (BASE, None, why)
    assert [(f.kind, f.message) for f in check_pointers(plan, {"k": contract})] == [
        ("extent", f"launch 0 (k) tensor map word 3 (of argument 0, the row): {why}")]
    assert launch_footprint(plan, 0, contract, FIRST) is None
    # set, the condition is judged: bit 2 clear leaves the map out, set keeps it with its extent
    # (4 + (256 - 1) x 4 + (1 - 1) x 1024 = 1,024 bytes: docs/kernel-contracts.md's map extent)
    off = hand_plan((("k", {0: BASE, 5: 0}),), (("rows", BASE, 0x1000),), ("k",))
    assert declared_maps(0, off.program.launches[0], contract, FIRST) == []
    on = hand_plan((("k", {0: BASE, 5: 4}),), (("rows", BASE, 0x1000),), ("k",))
    (mapped,) = declared_maps(0, on.program.launches[0], contract, FIRST)
    assert (mapped.address, mapped.extent, mapped.problem) == (BASE, 1024, "")


# ---- window_addresses: rule (b), a value inside a window, the window half-open ----

def test_a_window_holds_its_first_byte_and_not_its_end_s47(tmp_path):
    # check_pointers' rule (b): an undeclared word whose value lies inside a window is an
    # address.  A window is [address, address + size) as every span is shown: its first byte is
    # inside, its end is not.  Window [BASE, BASE + 0x200) around resident [BASE, BASE + 0x100).
    from bobc.certify.pointers import window_addresses

    contract = contract_of(tmp_path, "k", "//@ param 0 pointer write 16 rows\n")
    plan = hand_plan((("k", {0: BASE}),), (("rows", BASE, 0x100), ("tail", BASE + 0x1f0, 0x10)), ("k",))
    (window,) = plan.arena.windows
    assert (window.address, window.size) == (BASE, 0x200)
    launch = plan.program.launches[0]
    for value, inside in ((BASE - 1, False), (BASE, True), (BASE + 0x1ff, True), (BASE + 0x200, False)):
        probe = dataclasses.replace(launch, patches=launch.patches + (ParameterPatch(FIRST + 3, value),))
        assert window_addresses(probe, contract, FIRST, plan.arena.windows) == (
            [(FIRST + 3, value)] if inside else []), hex(value)


# ---- _check_address: overlapping residents, phases ----

def test_an_access_inside_one_of_two_overlapping_residents_is_held_to_that_one_s47(tmp_path):
    # a [BASE, BASE + 0x100) and b [BASE + 0x80, BASE + 0x200) share bytes (refused on their own,
    # by check_residents); a pointer at BASE + 0x80 writing 0x100 bytes lies in both, and wholly
    # inside b: _check_address's rule holds it to the resident it lies wholly inside, so no
    # extent finding -- 0x80 bytes past a is an artefact of which resident was found first.
    # One of 388 bytes lies wholly inside neither (b ends at BASE + 0x200): it is held to the
    # first found, a, and runs 0x204 - 0x100 = 260 bytes past a's end.
    contract = contract_of(tmp_path, "k", "//@ param 0 pointer write 4*lo[1] rows\n//@ param 1 scalar count\n")
    residents = (("a", BASE, 0x100), ("b", BASE + 0x80, 0x180))
    inside = hand_plan((("k", {0: BASE + 0x80, 1: 0x40}),), residents, ("k",))
    assert check_pointers(inside, {"k": contract}) == []
    past = hand_plan((("k", {0: BASE + 0x80, 1: 0x61}),), residents, ("k",))
    assert [f.message for f in check_pointers(past, {"k": contract})] == [
        f"launch 0 (k) argument 0 (word {FIRST}, rows) writes 388 bytes (4*lo[1]) at {BASE + 0x80:#x}: "
        f"[{BASE + 0x80:#x}, {BASE + 0x204:#x}) runs 260 bytes past a [{BASE:#x}, {BASE + 0x100:#x})"]


def test_every_batch_of_a_batched_pointer_is_held_and_the_first_failing_named_s47(tmp_path):
    # check_pointers' docstring: a pointer the kernel moves per batch (`each COUNT by STRIDE`) is
    # held for every batch's address.  Three batches of 64 bytes, 64 apart, from BASE: batches 0
    # and 1 lie in [BASE, BASE + 0x80), batch 2 starts at BASE + 0x80, in no resident; with a
    # fourth batch (also outside) only the first failing one, batch 2, is named.
    contract = contract_of(tmp_path, "k", "//@ param 0 pointer write 64 each lo[1] by 64 rows\n"
                                          "//@ param 1 scalar batches\n")
    for count in (2, 3, 4):
        plan = hand_plan((("k", {0: BASE, 1: count}),), (("rows", BASE, 0x80), ("far", BASE + 0x1000, 0x10)), ("k",))
        found = [(f.kind, f.message) for f in check_pointers(plan, {"k": contract})]
        assert found == ([] if count == 2 else [(
            "stray-pointer", f"launch 0 (k) argument 0 (word {FIRST}, rows), batch 2 (+0x80): address "
                             f"{BASE + 0x80:#x} lies in no resident; nearest: rows [{BASE:#x}, {BASE + 0x80:#x}), "
                             f"the address 0 bytes past its end")]), count


# ---- _undeclared_patches: a zero patch is the unpatched word's own value ----

def test_a_zero_patch_of_an_undeclared_word_is_no_stray_patch_s47(tmp_path):
    # _undeclared_patches' docstring: a patched word the contract does not declare is refused
    # (the kernel never reads it), but a zero patch is the unpatched word's own value (a plan
    # filling a block's words up to a later one), so it is not one
    contract = contract_of(tmp_path, "k", "//@ param 0 pointer write 16 rows\n")
    zero = hand_plan((("k", {0: BASE, 3: 0}),), (("rows", BASE, 0x100),), ("k",))
    assert check_pointers(zero, {"k": contract}) == []
    five = hand_plan((("k", {0: BASE, 3: 5}),), (("rows", BASE, 0x100),), ("k",))
    assert [f.message.split(":")[0] for f in check_pointers(five, {"k": contract})] == [
        f"launch 0 (k) patches argument 3 (word {FIRST + 3}), which k's contract does not declare"]


# ---- _check_address: a phase that names what it reads and writes ----

def _phased(tmp_path, reads, writes, at: str):
    """Launch k reading argument 0 and writing argument 1, over residents a and b, in a phase
    listing `reads` and `writes` (names); argument 0 at `at`'s start, argument 1 at b's."""
    from bobc.plan.model import Phase

    contract = contract_of(tmp_path, "k", "//@ param 0 pointer read 16 source\n//@ param 1 pointer write 16 sink\n")
    residents = (("a", BASE, 0x100), ("b", BASE + 0x100, 0x100))
    plan = hand_plan((("k", {0: BASE if at == "a" else BASE + 0x100, 1: BASE + 0x100}),), residents, ("k",))
    held = {r.name: r for r in plan.arena.globals}
    phase = Phase("k", tuple(held[n] for n in reads), tuple(held[n] for n in writes))
    plan = dataclasses.replace(plan, arena=dataclasses.replace(plan.arena, phases=(phase,)))
    return [f.message for f in check_pointers(plan, {"k": contract})]


def test_a_phase_lets_a_launch_read_what_it_reads_or_writes_and_write_only_what_it_writes_s47(tmp_path):
    # check_pointers' docstring: a phase that names what it reads/writes must list the resident a
    # pointer lies in -- a write among its writes, a read among its reads or its writes (what a
    # launch may write it may read); Phase: empty reads and writes mean every resident
    source = f"launch 0 (k) argument 0 (word {FIRST}, source)"
    sink = f"launch 0 (k) argument 1 (word {FIRST + 1}, sink)"
    assert _phased(tmp_path, ("a",), ("b",), "a") == []
    assert _phased(tmp_path, (), ("b",), "b") == []                  # b read: listed among the writes
    assert _phased(tmp_path, (), (), "a") == []                      # nothing listed: every resident
    assert _phased(tmp_path, (), ("b",), "a") == [
        f"{source} reads a, which phase k does not list among its reads"]
    assert _phased(tmp_path, ("a", "b"), (), "a") == [
        f"{sink} writes b, which phase k does not list among its writes"]


# ---- host fills against the bytes an extent and the code read ----

FILLED = ("//@ param 0 pointer write 4*hi[1] rows\n//@ param 1 scalar count\n//@ param 2 scalar scale\n"
          ".kernel k\n    LDC R2, c[0x0][param+0x14]\n    EXIT\n")


def _filled(tmp_path, words, offset: int, width: int = 4, source: str = FILLED) -> list[str]:
    """check_pointers on launch k (FILLED) with `words` and one 4-byte host fill at `offset` from
    the parameter base (a stand-in for plan.host: the fills are all check_pointers reads of it)."""
    from types import SimpleNamespace

    plan = hand_plan((("k", words),), (("rows", BASE, 0x1000),), ("k",))
    fill = SimpleNamespace(launch=0, offset=offset, width=width, at=None)
    plan = dataclasses.replace(plan, host=SimpleNamespace(fills=[fill]))
    return [f.message for f in check_pointers(plan, {"k": contract_of(tmp_path, "k", source)})]


def test_a_fill_of_the_half_an_extent_does_not_read_is_no_rewrite_s47(tmp_path):
    # pointer_words: hi[1] is bytes 4..7 of word 1 (its high half, docs/kernel-contracts.md), lo[1]
    # bytes 0..3; the extent 4*hi[1] reads only the high half, so a fill of bytes 0..3 (offset 8)
    # changes nothing the certifier evaluated, and one of bytes 4..7 (offset 12) does
    words = {0: BASE, 1: 4 << 32, 2: 1}
    assert _filled(tmp_path, words, 8) == []
    assert _filled(tmp_path, words, 12) == [
        f"launch 0 (k): host fill 0 rewrites bytes 4..7 of argument 1 (word {FIRST + 1}) each step, which k's "
        "contract reads as its extent 4*hi[1] of pointer argument 0 (rows; k.sass:1): the certifier checked the "
        "pointer on the launch's patched words, and the kernel would touch memory by the filled ones"]


def test_the_bytes_an_ldc_reads_are_its_width_from_its_offset_s47(tmp_path):
    # _bytes_read: LDC (32 bits) at param+0x14 reads bytes 0x14..0x17, word 2's bytes 4..7; a fill
    # of bytes 0..3 of unpatched word 2 leaves all four the code reads 0, and of patched word 2
    # writes none the code reads
    assert _filled(tmp_path, {0: BASE, 1: 4 << 32}, 16) == [
        f"launch 0 (k) sets only part of argument 2 (word {FIRST + 2}, scale; k.sass:3), a scalar of k's contract: "
        "host fill 0 writes its bytes 0..3, but its code reads bytes 4..7 (LDC R2, c[0x0][param+0x14] at k.sass:5): "
        "the kernel would read 0 in its bytes 4..7"]
    assert _filled(tmp_path, {0: BASE, 1: 4 << 32, 2: 1}, 16) == [
        f"launch 0 (k): host fill 0 writes bytes 0..3 of argument 2 (word {FIRST + 2}), a scalar of k's contract "
        "(scale; k.sass:3) whose code reads only its bytes 4..7 (LDC R2, c[0x0][param+0x14] at k.sass:5): the "
        "kernel never reads the fill's value, and runs on the word the plan baked"]


def test_a_fill_of_a_word_a_tensor_map_is_built_from_is_refused_whichever_bytes_s47(tmp_path):
    # a map's dims name word 7 (hi[7]/256): a fill of any byte of word 7 -- all eight (offset 56,
    # 8 bytes) or its high half alone (offset 60, 4 bytes) -- would leave the map, built at build
    # time, stale; a fill of word 6 (offset 48, 8 bytes: bytes 48..55) touches no byte of word 7
    source = ("//@ param 0 pointer read resident rows\n//@ param 6 scalar other\n//@ param 7 scalar count\n"
              "//@ tensormap 3 of 0 binary32 dims (256, hi[7]/256) strides (1024) box (32, 8) swizzle none the map\n")
    words = {0: BASE, 6: 1, 7: 512 << 32}            # dims (256, 2): 4 + 255 x 4 + 1 x 1024 = 2,048 bytes
    stale = ("launch 0 (k): host fill 0 rewrites argument 7 each step, from which tensor map word 3 is built at "
             "build time (tensormap 3 of 0 binary32 dims (256, hi[7]/256) strides (1024) box (32, 8) swizzle none): the "
             "map would go stale")
    assert _filled(tmp_path, words, 56, 8, source) == [stale]
    assert _filled(tmp_path, words, 60, 4, source) == [stale]
    assert _filled(tmp_path, words, 48, 8, source) == []


def test_a_window_address_below_the_parameters_is_held_to_the_residents_too_s47(tmp_path):
    # rule (b) is "whatever the slot": a patched bank 0 word below the parameter base (word
    # FIRST - 2, named by its bank 0 word alone) whose value lies in the window [BASE, BASE + 0x300)
    # but in neither resident is a stray address, as one in a parameter word is
    contract = contract_of(tmp_path, "k", "//@ param 0 pointer write 16 rows\n")
    residents = (("a", BASE, 0x100), ("b", BASE + 0x200, 0x100))
    gap = BASE + 0x180
    # (b's first byte is 0x80 bytes away, a's last byte 0x81: b is the nearer)
    nearest = f"nearest: b [{BASE + 0x200:#x}, {BASE + 0x300:#x}), the address 128 bytes below its start"
    below = hand_plan((("k", {0: BASE, -2: gap}),), residents, ("k",))
    assert [(f.kind, f.message) for f in check_pointers(below, {"k": contract})] == [
        ("stray-pointer", f"launch 0 (k) word {FIRST - 2}: address {gap:#x} lies in a window but in no resident; {nearest}")]
    above = hand_plan((("k", {0: BASE, 3: gap}),), residents, ("k",))
    assert ("stray-pointer", f"launch 0 (k) argument 3 (word {FIRST + 3}): address {gap:#x} lies in a window but in "
                             f"no resident; {nearest}") in [(f.kind, f.message) for f in check_pointers(above, {"k": contract})]
