"""Every field an operand's value is packed into takes its range and no more (probe s28 asm: a
negative or too large value wrapped silently in a narrow field, `DEPBAR.LE SB0, -1` assembling as
63; probe s29 asmrange finding 1).  For each field: both ends assemble (and nvdisasm decodes them
to words that assemble back, where the tests have nvdisasm), one past each end is refused at the
operand's file:line:column, naming the operand, the field's range and the value.  The ranges are
the fields' widths as tables/layouts.py declares them (encoder.field_range), not a second table.
"""
from __future__ import annotations


import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.encoder import CONTROL_MASK, field_range
from bobc.sass.tables import layouts as L

BOTH = ("sm_86", "sm_90")
SM90 = ("sm_90",)
EXPLICIT = "[B------:R-:W-:-:S01] "     # sm_90's asynchronous opcodes need a written control code


def _hex(value: int) -> str:
    return "0" if value == 0 else f"{value:#x}"


def _field(slot: str) -> tuple[int, int]:
    spec = L.SLOTS[slot]
    if "split" in spec:
        return sum(width for _, width in spec["split"]), 0
    return spec["field"][1] if "field" in spec else spec["offset"][1], 0


# (case id, the slot or field it packs, the arches, the line with {v} where the value goes,
#  (width, signed, both) from the tables, the step between values (a constant offset: words),
#  a spelling of the value ("B{v}": a register), whether a value below 0 can be written at all)
def _cases():
    imm_b = L.IMM_B[1]
    const_offset, const_bank = L.CONST_OFFSET[1], L.CONST_BANK[1]
    cases = [
        ("Idep", "Idep", BOTH, "DEPBAR.LE SB0, {v}", (_field("Idep")[0], False, False)),
        ("Ibpt", "Ibpt", BOTH, "BPT.TRAP {v}", (_field("Ibpt")[0], False, False)),
        ("Ishift", "Ishift", BOTH, "LEA R1, P0, R2, R3, {v}", (_field("Ishift")[0], False, False)),
        ("Ilut", "Ilut", BOTH, "LOP3.LUT R1, R2, R3, RZ, {v}, !PT", (_field("Ilut")[0], False, False)),
        ("Iplut", "Iplut", BOTH, "PLOP3.LUT P0, PT, PT, PT, PT, {v}, 0x0", (_field("Iplut")[0], False, False)),
        ("Imask8", "Imask8", BOTH, "PLOP3.LUT P0, PT, PT, PT, PT, 0x80, {v}", (_field("Imask8")[0], False, False)),
        ("Ilane", "Ilane", BOTH, "SHFL.IDX PT, R1, R2, {v}, 0x1f", (_field("Ilane")[0], False, False)),
        ("Iclamp", "Iclamp", BOTH, "SHFL.IDX PT, R1, R2, 0x1, {v}", (_field("Iclamp")[0], False, False)),
        ("Ibar", "Ibar", BOTH, "BAR.SYNC.DEFER_BLOCKING {v}", (_field("Ibar")[0], False, False)),
        ("Icount", "Icount", BOTH, "BAR.SYNC.DEFER_BLOCKING 0x2, {v}", (_field("Icount")[0], False, False)),
        ("Iwg", "Iwg", SM90, EXPLICIT + "WARPGROUP.DEPBAR.LE gsb0, {v}", (_field("Iwg")[0], False, False)),
        ("Bar", "Bar", BOTH, "BSSY B{v}, 0x20", (_field("Bar")[0], False, False)),
        # address offsets: signed
        ("Mem", "Mem", BOTH, "LDS R1, [R2+{v}]", (_field("Mem")[0], True, False)),
        ("Mem.64", "Mem", BOTH, "LDG.E R1, [R2.64+{v}]", (_field("Mem")[0], True, False)),
        ("MemSt", "MemSt", BOTH, "STS [R2+{v}], R1", (_field("MemSt")[0], True, False)),
        ("MemCas", "MemCas", ("sm_86",), "ATOMG.E.CAS.STRONG.GPU PT, R0, [R4+{v}], R2, R3",
         (_field("MemCas")[0], True, False)),
        ("MemShared", "MemShared", BOTH, "LDGSTS.E.128 [R11+{v}], [R8.64+-0x800]", (_field("MemShared")[0], True, False)),
        ("MemGlobal", "MemGlobal", BOTH, "LDGSTS.E.128 [R11+0x800], [R8.64+{v}]", (_field("MemGlobal")[0], True, False)),
        ("MemSync", "MemSync", SM90, EXPLICIT + "SYNCS.ARRIVE.TRANS64 RZ, [UR16+{v}], R4",
         (_field("MemSync")[0], True, False)),
        ("MemUA", "MemUA", SM90, EXPLICIT + "SYNCS.EXCH.64 URZ, [UR10+{v}], UR4", (_field("MemUA")[0], True, False)),
        ("LD descriptorless", "DESCRIPTORLESS_OFFSET", SM90, "LD.E.64 R8, [R2+{v}]",
         (L.DESCRIPTORLESS_OFFSET["LD"][1], True, False)),
        # the 32-bit immediate: an integer opcode's signed or unsigned, a float opcode's bits unsigned
        ("IMM_B integer", "IMM_B", BOTH, "IADD3 R1, R2, {v}, RZ", (imm_b, False, True)),
        ("IMM_B integer LOP3", "IMM_B", BOTH, "LOP3.LUT R1, R2, {v}, RZ, 0xc0, !PT", (imm_b, False, True)),
        ("IMM_B float bits", "IMM_B", BOTH, "FADD R1, R2, {v}", (imm_b, False, False)),
        ("IMM_B binary64 high word", "IMM_B", BOTH, "DADD R2, R4, {v}", (imm_b, False, False)),
        ("binary16 half", "HALF_BITS", BOTH, "HADD2 R1, R2, {v}, 0x0", (16, False, False)),
        # the constant bank operand: its offset (both spellings, nvdisasm prints c[0x0][-0x4]) and bank
        ("CONST_OFFSET", "CONST_OFFSET", BOTH, "LDC R1, c[0x0][{v}]", (const_offset, False, True)),
        ("CONST_BANK", "CONST_BANK", BOTH, "LDC R1, c[{v}][0x0]", (const_bank, False, False)),
    ]
    return cases


CASES = _cases()
SPELLED = {"Bar": "B", "CONST_BANK": ""}     # written as B3 / c[0x3]: no value below 0 can be written
STEP = {"CONST_OFFSET": 4}                   # constant banks are read in whole words


def _ends(case):
    _, field, _, _, (width, signed, both) = case
    lo, hi = field_range(width, signed, both)
    step = STEP.get(field, 1)
    return lo + (-lo) % step, hi - hi % step, step


def _written(case, value: int) -> str:
    if case[1] == "Bar":
        return str(value)
    return _hex(value) if value >= 0 else f"-{_hex(-value)}"


def _line(case, value: int) -> str:
    return case[3].format(v=_written(case, value))


def test_every_packed_field_has_a_case():
    """A slot that packs a value (an immediate, a barrier, an address offset) is covered here:
    a new field comes with its range test."""
    packing = {name for name, spec in L.SLOTS.items() if "what" in spec or "offset" in spec}
    covered = {case[1] for case in CASES} | {"SBn", "Imaxreg"}   # their own tests below
    assert packing <= covered, sorted(packing - covered)
    assert {"IMM_B", "CONST_OFFSET", "CONST_BANK", "DESCRIPTORLESS_OFFSET", "HALF_BITS"} <= covered


PARAMS = [pytest.param(case, arch, id=f"{case[0]}-{arch}") for case in CASES for arch in case[2]]


@pytest.mark.parametrize("case,arch", PARAMS)
def test_each_end_of_a_field_assembles(case, arch):
    lo, hi, _ = _ends(case)
    for value in (lo, hi):
        if value < 0 and case[1] in SPELLED:
            continue
        assemble(f"{_line(case, value)}\nEXIT\n", arch, source_name="k.sass")


@pytest.mark.parametrize("case,arch", PARAMS)
def test_one_past_each_end_is_refused_at_the_operand(case, arch):
    lo, hi, step = _ends(case)
    width, signed, both = case[4]
    field_lo, field_hi = field_range(width, signed, both)
    for value in (lo - step, hi + step):
        if value < 0 and case[1] in SPELLED:
            continue
        line = _line(case, value)
        with pytest.raises(BobcError) as info:
            assemble(f"NOP\n  {line}\nEXIT\n", arch, source_name="k.sass")
        e = info.value
        written = _written(case, value)
        spelled = (f"B{field_lo}..B{field_hi}" if case[1] == "Bar" else f"{_hex(field_lo)}..{_hex(field_hi)}")
        assert f"does not fit in {width}{' signed' if signed else ''} bits ({spelled})" in e.message, e.message
        assert (f"B{written}" if case[1] == "Bar" else written) in e.message, e.message
        # the caret is under the operand that holds the value
        assert (e.span.path, e.span.line) == ("k.sass", 2)
        operand = line[e.span.column - 3:]
        assert written in operand.split(",")[0] or written in operand.split("]")[0], (line, e.span.column)
        assert e.span.column > 3 + line.index(" ")


def test_the_probe_line_is_refused_not_wrapped():
    """probe s28 asm: `DEPBAR.LE SB0, -1` assembled as DEPBAR.LE SB0, 0x3f."""
    for arch in BOTH:
        with pytest.raises(BobcError) as info:
            assemble("    DEPBAR.LE SB0, -1\nEXIT\n", arch, source_name="k.sass")
        assert info.value.message == "DEPBAR's count -1 does not fit in 6 bits (0..0x3f)"
        assert str(info.value.span) == "k.sass:1:20"


@pytest.mark.parametrize("arch", BOTH)
def test_depbar_scoreboards_are_those_of_the_wait_mask(arch):
    """The field has room for 7; nvdisasm decodes 6 and 7 as INVALID6/INVALID7."""
    last = L.SCOREBOARDS - 1
    for n in range(L.SCOREBOARDS):
        assemble(f"DEPBAR.LE SB{n}, 0x1\nEXIT\n", arch)
    for n in (last + 1, 7):
        with pytest.raises(BobcError) as info:
            assemble(f"  DEPBAR.LE SB{n}, 0x1\nEXIT\n", arch, source_name="k.sass")
        assert info.value.message.startswith(f"DEPBAR's scoreboard SB{n} does not exist (SB0..SB{last}")
        assert str(info.value.span) == "k.sass:1:13"


@pytest.mark.parametrize("value", ["-1", "-0x8", "0x400", "0x408"])
def test_setmaxnreg_outside_its_field_is_refused_before_its_rule(value):
    with pytest.raises(BobcError) as info:
        assemble(f"{EXPLICIT}USETMAXREG.DEALLOC.CTAPOOL {value}\nEXIT\n", "sm_90", source_name="k.sass")
    width = L.SLOTS["Imaxreg"]["field"][1]
    assert info.value.message == (f"USETMAXREG's register count {value} does not fit in {width} bits "
                                  f"(0..{(1 << width) - 1:#x})")


@pytest.mark.parametrize("control,message", [
    ("[B------:R-:W-:-:S16]", "stall S16 does not fit in 4 bits (S00..S15)"),
    ("[B------:R-:W-:-:S99]", "stall S99 does not fit in 4 bits (S00..S15)"),
    ("[B------:R-:W6:-:S01]", "write barrier W6 is no scoreboard (0..5, or W- for none)"),
    ("[B------:R7:W-:-:S01]", "read barrier R7 is no scoreboard (0..5, or R- for none)"),
])
def test_control_code_fields_out_of_range_are_refused(control, message):
    for arch in BOTH:
        with pytest.raises(BobcError) as info:
            assemble(f"NOP\n{control} NOP\nEXIT\n", arch, source_name="k.sass")
        assert info.value.message.startswith(message), info.value.message
        assert str(info.value.span) == "k.sass:2:1"


def test_control_code_fields_at_their_ends_assemble():
    text = "[B012345:R0:W5:Y:S15] NOP\n[B------:R5:W0:Y:S00] NOP\nEXIT\n"
    for arch in BOTH:
        first, second = assemble(text, arch).instructions[:2]
        assert (first.control.stall, first.control.read_barrier, first.control.write_barrier,
                first.control.wait_mask, first.control.yield_bit) == (15, 0, 5, 63, 0)
        assert (second.control.stall, second.control.read_barrier, second.control.write_barrier) == (0, 5, 0)


def _listing(lines, words) -> str:
    """nvdisasm's lines with their words, as `nvdisasm -hex` prints them: assembled as a listing,
    each must give back its word (NaN payloads from the words, as for any listing)."""
    return "".join(f"{text} ; /* {word & (1 << 64) - 1:#018x} */\n /* {word >> 64:#018x} */\n"
                   for text, word in zip(lines, words))


@pytest.mark.parametrize("case,arch", PARAMS)
def test_each_end_round_trips_through_nvdisasm(case, arch, needs_nvdisasm):
    from bobc.sass.oracle import disassemble
    from bobc.targets import target_named

    lo, hi, _ = _ends(case)
    values = [v for v in (lo, hi) if not (v < 0 and case[1] in SPELLED)]
    words = [assemble(f"{_line(case, v)}\nEXIT\n", arch).instructions[0].word for v in values]
    decoded = disassemble(b"".join(w.to_bytes(16, "little") for w in words), target_named(arch).nvdisasm_arch)
    assert not decoded.errors, decoded.errors
    texts = [d.text for d in decoded.lines]
    back = []
    for value, text, word in zip(values, texts, words):
        if case[1] == "Ibpt" and value == 0:
            assert text == "BPT.TRAP"           # nvdisasm prints no code 0
        elif case[1] == "HALF_BITS" and "NAN" in text.upper():
            assert text.startswith("HADD2 R1, R2, ")   # a binary16 NaN's payload is not printed
        else:
            back.append((text, word))
    # the listing nvdisasm printed assembles back to its words (in order: branch targets are absolute)
    if back and not case[3].startswith("["):
        again = assemble(_listing(*zip(*back)) + "EXIT\n", arch)
        assert [i.word & ~CONTROL_MASK for i in again.instructions[:-1]] == \
            [word & ~CONTROL_MASK for _, word in back], back


# ptxas 13 for sm_90: ld.shared::cluster.u32 at [mapa'd address + -16] and + -4096 (a peer's shared
# memory through the shared window): the descriptor-less LD's offset is 32 signed bits from bit 32
# (bits 56..63 were taken for fixed bits: [R4+-0x10] assembled as [R4+0xfffff0], 16 MiB away)
@pytest.mark.parametrize("text,word", [
    ("LD.E R0, [R4+-0x10]", 0x000ea80000100900fffffff004007980),
    ("LD.E R7, [R4+-0x1000]", 0x000ea20000100900fffff00004077980),
])
def test_descriptorless_ld_negative_offsets_are_ptxas_words(text, word):
    lo, hi = word & (1 << 64) - 1, word >> 64
    assert assemble(f"{text} /* {lo:#018x} */\n /* {hi:#018x} */\n", "sm_90").instructions[0].word == word


CLUSTER_LOADS = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .u32 %r<12>;
  .reg .u64 %rd<4>;
  .shared .align 4 .b8 buf[1024];
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  mov.u32 %r6, %ctaid.x;
  and.b32 %r6, %r6, 1;
  shl.b32 %r7, %r1, 2;
  mov.u32 %r2, buf;
  add.u32 %r2, %r2, %r7;
  mapa.shared::cluster.u32 %r3, %r2, %r6;
  ld.shared::cluster.u32 %r4, [%r3+-16];
  ld.shared::cluster.u32 %r5, [%r3+-8388612];
  add.u32 %r4, %r4, %r5;
  st.global.u32 [%rd1], %r4;
  ret;
}
"""


def test_ptxas_descriptorless_loads_with_negative_offsets_assemble_back(ptxas_listing):
    from bobc.sass.assembler import assemble_listing

    listing = ptxas_listing(CLUSTER_LOADS, "sm_90")
    assert "[R" in listing and "+-0x10]" in listing
    assemble_listing(listing, "sm_90")       # each word equals the one ptxas wrote, or it is refused


# The stall (105..108) and bit 109 ('-' sets it, 'Y' clears it) are one field to the hardware: with
# bit 109 set only stalls 1..11 encode an instruction (session 36: `[B------:R-:W-:-:S15] IADD3 ...`
# assembled to a word nvdisasm refuses, "undefined value 0x1f for table 'TABLES_opex_1'").
YIELD_PROBES = ["NOP", "IADD3 R2, R2, 0x1, RZ", "LDG.E R4, [R2.64]", "STG.E [R2.64], R4", "MUFU.EX2 R4, R2",
                "BAR.SYNC.DEFER_BLOCKING 0x0", "FFMA R4, R2, R2, R2", "S2R R0, SR_TID.X", "DEPBAR.LE SB0, 0x0",
                "ISETP.GE.AND P0, PT, R2, RZ, PT", "SHFL.BFLY PT, R5, R8, 0x10, 0x1f", "ERRBAR", "BRA 0x0", "EXIT",
                "ULDC UR4, c[0x0][0x160]"]


@pytest.mark.parametrize("arch", BOTH)
def test_bit_109_with_stall_0_or_12_to_15_decodes_as_no_instruction(arch, needs_nvdisasm):
    """The oracle for the refusal below: nvdisasm decodes every probe opcode with bit 109 set and
    a stall of 1..11, and none of them with 0 or 12..15 (the words made by hand here)."""
    from bobc.sass.oracle import disassemble
    from bobc.targets import target_named

    for stall in range(16):
        words = []
        for text in YIELD_PROBES:
            word = assemble(f"[B------:R-:W-:Y:S01] {text}\nEXIT\n", arch).instructions[0].word
            word = word & ~(0x1f << 105) | (stall | 1 << 4) << 105      # the stall, bit 109 set
            words.append(word.to_bytes(16, "little"))
        decoded = disassemble(b"".join(words), target_named(arch).nvdisasm_arch)
        if 1 <= stall <= 11:
            assert not decoded.errors and len(decoded.lines) == len(YIELD_PROBES), (stall, decoded.errors)
        else:
            assert not decoded.lines and len(decoded.errors) == len(YIELD_PROBES), (stall, decoded.lines)


@pytest.mark.parametrize("arch", BOTH)
@pytest.mark.parametrize("stall", ["00", "12", "13", "14", "15"])
def test_yield_dash_with_stall_0_or_12_to_15_is_refused(arch, stall):
    with pytest.raises(BobcError) as info:
        assemble(f"NOP\n[B------:R-:W-:-:S{stall}] IADD3 R2, R2, 0x1, RZ\nEXIT\n", arch, source_name="k.sass")
    assert info.value.message.startswith(f"stall S{stall} takes the yield flag 'Y'"), info.value.message
    assert str(info.value.span) == "k.sass:2:1"
    word = assemble(f"[B------:R-:W-:Y:S{stall}] IADD3 R2, R2, 0x1, RZ\nEXIT\n", arch).instructions[0].word
    assert (word >> 105 & 0xf, word >> 109 & 1) == (int(stall), 0)
