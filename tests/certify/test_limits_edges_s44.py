"""certify/limits.py's fill, schedule, step-field and shown-value bounds, edge by edge (session 44
mutants10: each mutant named below survived the certify tests that exercise limits.py).

The expected values come from the stated bounds, not from limits.py's output:
- a fill's step is the host's `uint32_t` step (docs/limits.md's row for a fill's step: 2^32 - 1;
  runtime_c/host_io.h RT_IO_STEP_LIMIT 0xFFFFFFFF);
- a kernel reads its 32-bit parameter scalars at multiples of 4 (LDC of a 4-byte word), so a fill
  (4 bytes) at an offset that is no multiple of 4 straddles two scalars;
- a fill's bytes lie inside its launch's parameter block (docs/limits.md): with a block of B bytes
  past the parameter base, a 4-byte fill may start at 0..B - 4 (hand arithmetic);
- host schedule steps, repeats unrolled: at most 1,048,576 (docs/limits.md);
- a SplitMix64 initializer's denominator: 1 .. 2^64 - 1 (docs/limits.md);
- a step field the generated C declares `uint32_t` holds 0..2^32 - 1, a `uint64_t` one 0..2^64 - 1;
- a fault shows a natural of 40 digits and an address of 40 hex digits whole, and cuts past them
  (docs/limits.md's row for a value a fault prints).
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from bobc.certify.limits import check_limits, shown, shown_hex
from bobc.plan.host import Fill, Initializer, Scalar, make_step
from bobc.targets import SM86


@dataclasses.dataclass
class _Request:
    words: int = 0


def _launch(parameter_bytes):
    return SimpleNamespace(identity="k", grid=(1, 1, 1), block=(32, 1, 1), parameter_bytes=parameter_bytes,
                           patches=(), at=None)


def messages(fills=(), steps=(), launches=(), request=None, initializers=()):
    program = SimpleNamespace(launches=tuple(launches), launch_count=len(launches), submissions=(),
                              submission_count=0, gpfifo_entries=1, program_base=0, qmd_base=0, pushbuffer_base=0,
                              semaphore_base=0, program_bytes=0, qmd_table_bytes=0, region_alignment=256, at=None,
                              architecture=SM86.sm, compute_class=SM86.compute_class)
    host = SimpleNamespace(buffers=(), fills=tuple(fills), initializers=tuple(initializers), steps=tuple(steps), semaphore_stride=0,
                           forward_launches=0, request=request or _Request())
    return [f.message for f in check_limits(SimpleNamespace(program=program, host=host, checkpoint=None), SM86)]


def fill(offset=0, step=0, launch=0):
    return Fill(launch, offset, step, "binary32", Scalar("constant", value=1.0))


# ---- a fill's step: the host's u32 (L21 refused 2^32 - 1, L22 accepted 2^32)

def test_a_fill_step_of_2_to_the_32_less_1_is_accepted_and_2_to_the_32_refused():
    assert not any("step is" in m for m in messages([fill(step=2 ** 32 - 1)]))
    said = messages([fill(step=2 ** 32)])
    assert any("fill 0's step is 4,294,967,296: outside 0..4,294,967,295" in m for m in said), said


# ---- a fill's offset: a multiple of 4 (L23 checked it against 2)

def test_a_fill_at_an_offset_of_2_straddles_two_scalars():
    assert not any("no multiple" in m for m in messages([fill(offset=4)]))
    said = messages([fill(offset=2)])
    assert any("fill 0 writes bytes 2..5" in m and "no multiple of 4" in m for m in said), said


# ---- two fills of one launch writing one byte (L24 missed a fill whose last byte is another's first)

def test_a_fill_whose_last_byte_is_an_earlier_fills_first_is_refused():
    # fill 0 writes bytes 4..7, fill 1 bytes 1..4: byte 4 is both's
    said = messages([fill(offset=4), fill(offset=1)])
    assert any("fill 1 writes bytes 1..4 of launch 0's parameters, which fill 0 writes too" in m for m in said), said


def test_fills_of_adjacent_words_are_not_one_byte():
    assert not any("writes too" in m for m in messages([fill(offset=0), fill(offset=4), fill(offset=8)]))


# ---- a fill past its launch's parameter block: the offsets that fit (L28 said one too few)

def test_a_fill_past_the_block_names_the_offsets_that_fit():
    block = 16                          # bytes past the parameter base: a 4-byte fill may start at 0..12
    launch = _launch(SM86.parameter_base + block)
    assert not any("past its" in m for m in messages([fill(offset=12)], launches=[launch]))
    said = messages([fill(offset=16)], launches=[launch])
    assert any("past its 16-byte parameter block: give an offset below 13" in m for m in said), said


def test_a_launch_without_parameter_bytes_gets_no_offset_advice():
    # a launch whose parameter bytes end at the base has no parameter word (the layout check refuses
    # that); no offset fits, so "give an offset below -3" (16 - 16 - 4 + 1) would be no advice (L27)
    launch = _launch(SM86.parameter_base)
    assert not any("past its" in m for m in messages([fill(offset=0)], launches=[launch]))


# ---- the unrolled schedule (L31 stopped counting at exactly the bound)

def _submit():
    return make_step("submit", gp_put=1, stride=0)


def test_the_bound_of_steps_is_accepted_and_one_step_after_it_refused():
    bound = 1 << 20                     # docs/limits.md: host schedule steps, repeats unrolled
    repeat = make_step("repeat", count=bound, body=(_submit(),))
    assert not any("schedule" in m for m in messages(steps=[repeat]))
    said = messages(steps=[repeat, _submit()])
    assert any("the host's schedule (steps once repeats are unrolled) is 1,048,577: outside 0..1,048,576" in m
               for m in said), said


def test_a_step_after_the_bound_still_has_its_fields_checked():
    repeat = make_step("repeat", count=1 << 20, body=(_submit(),))
    said = messages(steps=[repeat, make_step("submit", gp_put=2 ** 64, stride=0)])
    assert any("gp_put is 18,446,744,073,709,551,616" in m for m in said), said


# ---- a step field's C type: its largest value is accepted (L35 refused it)

def _read(tolerate_empty=0, offset=0):
    return make_step("read", file="input", host=0x7000000, extent=4, offset=offset, stride=0,
                     tolerate_empty=tolerate_empty)


def test_a_uint32_field_of_2_to_the_32_less_1_and_a_uint64_field_of_2_to_the_64_less_1_are_accepted():
    assert not any("generated C" in m for m in messages(steps=[_read(tolerate_empty=2 ** 32 - 1,
                                                                     offset=2 ** 64 - 1)]))
    said = messages(steps=[_read(tolerate_empty=2 ** 32)])
    assert any("tolerate_empty is 4,294,967,296: outside 0..4,294,967,295, the generated C's uint32_t" in m
               for m in said), said


# ---- the request layout's integers: the C host's u64 (L45 refused 2^64 - 1)

def test_a_request_layout_word_of_2_to_the_64_less_1_is_accepted():
    assert not any("request layout" in m for m in messages(request=_Request(2 ** 64 - 1)))
    said = messages(request=_Request(2 ** 64))
    assert any("the plan's request layout holds 18,446,744,073,709,551,616" in m for m in said), said


# ---- a SplitMix64 initializer's denominator: 1 .. 2^64 - 1 (docs/limits.md's initializer row; the C
# host divides by it as a uint64_t).  The plan reader refuses 0 but not 2^64 (L39 accepted it)

def test_an_initializer_denominator_of_2_to_the_64_is_refused():
    def init(denominator):
        return Initializer("splitmix64", b"seed", 40, 0, denominator)
    assert not any("denominator" in m for m in messages(initializers=[init(2 ** 64 - 1)]))
    said = messages(initializers=[init(2 ** 64)])
    assert any("denominator is 18,446,744,073,709,551,616: outside 1..18,446,744,073,709,551,615" in m
               for m in said), said


# ---- shown values: 40 digits whole, past them cut (L40 cut 40 digits, L47 kept 41; L43 cut 40 hex digits)

def test_a_natural_of_40_digits_is_shown_whole_and_one_of_41_cut():
    forty = 10 ** 40 - 1                # forty nines
    assert shown(forty) == f"{forty:,}"          # whole, grouped by threes as every count a fault shows
    assert shown(forty, commas=False) == "9" * 40
    assert shown(10 ** 40).endswith("...(41 digits)")
    assert shown(-(10 ** 40)).startswith("-") and shown(-(10 ** 40)).endswith("...(41 digits)")


def test_an_address_of_40_hex_digits_is_shown_whole_and_one_of_41_cut():
    assert shown_hex(16 ** 40 - 1) == "0x" + "f" * 40
    assert shown_hex(16 ** 40).endswith("...(41 hex digits)")
