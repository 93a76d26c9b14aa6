"""The scheduler against ptxas on dependencies the committed corpus shows too rarely (session 36).

Small PTX kernels, each a chain with nothing else to issue, are compiled by the pinned ptxas at
-O3 for sm_86 and sm_90; ptxas's distance between the producer and its reader (the sum of its
stalls, from its own listing, assemble_listing) is the oracle, and bobc's distance for the same
two instructions alone in a stream must be no shorter.  NVIDIA's Ampere tables (Mesa NAK
sm80_instr_latencies.rs) give the same numbers:

- a uniform-ALU result (ULOP3, USHF, UIADD3, ULEA: NAK's Udp) read by a variable-latency
  (decoupled) instruction: 9 cycles (bobc gave 6);
- a DSETP's predicate guarding an instruction on sm_90, where DSETP is fixed-latency: 14 cycles
  (NAK: RedirectedFP64 -> Guard 14; bobc gave 13, an ALU's).

And the write-after-read of the variable-latency instructions whose register sources are not
read-scoreboarded (MUFU, F2I, I2F, F2F, DSETP, BREV, FLO, POPC): every overwrite of such a source
that ptxas protects in the corpus (tests/sass/data, -O3) by waiting a scoreboard of that
instruction, bobc's schedule of the same two instructions protects too (bobc waited nothing: a
`FADD R2` one cycle after `MUFU.EX2 R8, R2` could feed the MUFU its own result).
"""
from __future__ import annotations

import re

import pytest

from bobc.sass import assemble
from bobc.sass.assembler import assemble_listing
from bobc.sass.assembler import _guard
from bobc.errors import BobcError
from bobc.sass.oracle import parse_hex_listing
from bobc.sass.learn import read_corpus, streams
from bobc.sass.schedule import Item, expand, schedule
from bobc.sass.syntax import Control, parse_instruction
from bobc.targets import TARGETS
from tests.sass.test_latency_vs_ptxas import o3_streams  # the -O3 corpus kernels, walked once

ARCHES = ("sm_86", "sm_90")

_HEAD = ".version 8.0\n.target sm_86\n.address_size 64\n"


def _unary(name: str, uniform_op: str, body: str, out_type: str = "u32") -> str:
    """A kernel: a uniform ALU op of two parameters, then `body` reading its result %r3 into %o."""
    return f"""
.visible .entry {name}(.param .u64 out, .param .u32 a, .param .u32 b)
{{
  .reg .u32 %r<8>; .reg .f32 %f<4>; .reg .f64 %d<4>; .reg .u64 %rd<4>; .reg .{out_type} %o;
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [a]; ld.param.u32 %r2, [b];
  {uniform_op} %r3, %r1, %r2;
  {body}
  cvta.to.global.u64 %rd2, %rd1;
  st.global.{out_type} [%rd2], %o;
  ret;
}}
"""


UNIFORM_TO_DECOUPLED = _HEAD + "".join([
    _unary("popc_of_uniform", "xor.b32", "popc.b32 %o, %r3;"),
    _unary("flo_of_uniform", "or.b32", "bfind.u32 %o, %r3;"),
    _unary("f2f_of_uniform", "and.b32", "mov.b32 %f1, %r3; cvt.f64.f32 %o, %f1;", "f64"),
    _unary("i2f_of_uniform", "add.s32", "cvt.rn.f64.s32 %o, %r3;", "f64"),
])

# (kernel, producer pattern, reader pattern) in ptxas's listing
UNIFORM_PAIRS = [
    ("popc_of_uniform", r"^ULOP3", r"^POPC .*UR"),
    ("flo_of_uniform", r"^ULOP3", r"^FLO\.U32 .*UR"),
    ("f2f_of_uniform", r"^ULOP3", r"^F2F\.F64\.F32 .*UR"),
    ("i2f_of_uniform", r"^UIADD3", r"^I2F\.F64 .*UR"),
]

DSETP_GUARD = _HEAD + """
.visible .entry dsetp_guard(.param .u64 out, .param .u64 in)
{
  .reg .f64 %d<8>; .reg .u64 %rd<6>; .reg .pred %p<3>; .reg .u32 %r<3>;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];
  cvta.to.global.u64 %rd3, %rd2; cvta.to.global.u64 %rd4, %rd1;
  ld.global.f64 %d1, [%rd3]; ld.global.f64 %d2, [%rd3+8];
  add.f64 %d3, %d1, %d2;
  setp.gt.f64 %p1, %d3, %d1;
  mov.b64 {%r2, %r1}, %d3;
  st.global.u32 [%rd4], %r1;
  st.global.u32 [%rd4+4], %r2;
  @%p1 st.global.f64 [%rd4+8], %d3;
  ret;
}
"""


def _text(inst) -> str:
    text = inst.text.strip()
    if text.startswith("["):
        text = text[text.index("]") + 1:].strip()
    return text.rstrip(";").strip()


def _ptxas_distance(kernel, producer: str, reader: str) -> tuple[int, str, str]:
    """(cycles from the first `producer` to the first `reader` after it, their texts)."""
    instructions = kernel.instructions
    start = next(i for i, inst in enumerate(instructions) if re.search(producer, _text(inst)))
    end = next(i for i in range(start + 1, len(instructions)) if re.search(reader, _text(instructions[i])))
    return (sum(inst.control.stall for inst in instructions[start:end]),
            _text(instructions[start]), _text(instructions[end]))


def _bobc_distance(producer: str, reader: str, arch: str) -> int:
    tail = "" if reader.split()[-1].startswith("EXIT") else "EXIT\n"
    return assemble(f"{producer}\n{reader}\n{tail}", arch).instructions[0].control.stall


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("kernel, producer, reader", UNIFORM_PAIRS)
def test_uniform_alu_result_to_a_decoupled_reader(ptxas_listing, arch, kernel, producer, reader):
    listing = assemble_listing(ptxas_listing(UNIFORM_TO_DECOUPLED, arch), TARGETS[arch])
    ptxas, first, second = _ptxas_distance(listing[kernel], producer, reader)
    assert ptxas >= 9, (arch, first, second, ptxas)   # the probe still shows the latency, not slack below it
    mine = _bobc_distance(first, second, arch)
    assert mine >= ptxas, f"{arch}: {first} -> {second}: bobc {mine} cycles, ptxas {ptxas}"


def test_uniform_alu_result_to_a_shared_store_address():
    """ptxas on sm_90: ULEA -> STS [R6+UR6] 9 cycles (tests/sass/data corpus3 atomics); NAK: Udp -> 9."""
    assert _bobc_distance("ULEA UR6, UR5, UR4, 0x18", "STS [R6+UR6], RZ", "sm_90") >= 9
    assert _bobc_distance("UIADD3 UR6, UR5, 0x10, URZ", "LDS R2, [R6+UR6]", "sm_90") >= 9


@pytest.mark.parametrize("arch", ARCHES)
def test_a_constant_or_move_to_a_decoupled_reader_stays_short(arch):
    """NAK: a ULDC's or UMOV's result reaches a decoupled reader 2 cycles on: the 9 is the ALU's alone."""
    assert _bobc_distance("ULDC UR4, c[0x0][0x168]", "POPC R5, UR4", arch) < 9
    assert _bobc_distance("UMOV UR4, 0x3f800000", "POPC R5, UR4", arch) < 9


def test_sm90_dsetp_predicate_guards_after_fourteen_cycles(ptxas_listing):
    listing = assemble_listing(ptxas_listing(DSETP_GUARD, "sm_90"), TARGETS["sm_90"])
    ptxas, first, second = _ptxas_distance(listing["dsetp_guard"], r"^DSETP", r"^@!?P\d ")
    assert ptxas >= 14, (first, second, ptxas)
    mine = _bobc_distance(first, second, "sm_90")
    assert mine >= ptxas, f"sm_90: {first} -> {second}: bobc {mine} cycles, ptxas {ptxas}"
    # a guarded ALU instruction and a VOTE (which reads its predicate as early) alike
    assert _bobc_distance("DSETP.GT.AND P0, PT, R6, R4, PT", "@P0 IADD3 R2, R2, 0x1, RZ", "sm_90") >= 14
    assert _bobc_distance("DSETP.GT.AND P0, PT, R6, R4, PT", "VOTE.ANY R4, PT, P0", "sm_90") >= 14


# -- write after read -------------------------------------------------------------------------

ASYNC_READERS = {"MUFU", "F2I", "I2F", "F2F", "DSETP", "BREV", "FLO", "POPC"}
TRANSFERS = {"BRA", "EXIT", "BSYNC", "BSSY", "CALL", "RET", "WARPSYNC", "BREAK", "BRX", "JMP", "JMX", "KILL"}


def _protected_overwrites(arch: str):
    """[(reader, overwriter)] of the -O3 corpus: an overwrite of a register source of an
    ASYNC_READERS instruction, in the same block, that waits (itself or an instruction between)
    a scoreboard the reader set, the reader being of another opcode."""
    out = []
    for stream, targets in o3_streams(arch):
        for i, (row, inst, placed, control) in enumerate(stream):
            if inst.opcode not in ASYNC_READERS:
                continue
            sources = {r for r in expand(placed.reads) if r[0] == "R"}
            barriers = {b for b in (control.write_barrier, control.read_barrier) if b != 7}
            if not sources or not barriers:
                continue
            waited = False
            for row2, inst2, placed2, control2 in stream[i + 1:]:
                if row2.offset in targets or inst2.opcode in TRANSFERS:
                    break
                waited = waited or any(control2.wait_mask >> b & 1 for b in barriers)
                if expand(placed2.writes) & sources:
                    if waited and inst2.opcode != inst.opcode:
                        out.append(((inst, placed), (inst2, placed2), row, row2))
                    break
    return out


@pytest.mark.parametrize("arch", ARCHES)
def test_overwrite_of_an_asynchronous_source_waits_as_ptxas_does(arch):
    cases = _protected_overwrites(arch)
    assert cases, "the corpus has protected overwrites of such sources (param_shapes, corpus float_math, ...)"
    missing = []
    for reader, writer, row, row2 in cases:
        items = [Item(inst.opcode, expand(placed.reads), expand(placed.writes), guard=_guard(inst))
                 for inst, placed in (reader, writer)]
        items.append(Item("EXIT", set(), set()))
        controls = schedule(items, arch)
        mine = {b for b in (controls[0].write_barrier, controls[0].read_barrier) if b != 7}
        if not any(controls[1].wait_mask >> b & 1 for b in mine):
            missing.append(f"{row.text} -> {row2.text} ({row.reference})")
    assert not missing, f"{arch}: the overwrite does not wait for the reader:\n" + "\n".join(missing)


@pytest.mark.parametrize("arch", ARCHES)
def test_overwrite_of_a_mufu_source_right_after_it(arch):
    controls = [i.control for i in assemble("MUFU.EX2 R8, R2\nFADD R2, R4, R5\nSTG.E [R6.64], R8\nEXIT\n",
                                            arch).instructions]
    assert controls[0].write_barrier != 7
    assert controls[1].wait_mask >> controls[0].write_barrier & 1, controls
    # an instruction of the same unit, which completes in order, does not wait (Bob's loss kernel
    # writes MUFU.RCP R29, R26 then MUFU.LG2 R26, R26)
    controls = [i.control for i in assemble("MUFU.RCP R29, R26\nMUFU.LG2 R26, R26\nSTG.E [R6.64], R29\n"
                                            "STG.E [R6.64+0x4], R26\nEXIT\n", arch).instructions]
    assert controls[1].wait_mask == 0, controls


# -- memory fences ----------------------------------------------------------------------------

def _corpus_fences(arch: str):
    """[(fence row, its control, the next instruction's control)] of the -O3 corpus."""
    out = []
    for name, rows in streams(read_corpus(arch)).items():
        if ":-O3" not in name:
            continue
        for row, after in zip(rows, rows[1:]):
            opcode = parse_instruction(row.text).opcode
            if opcode in ("MEMBAR", "CGAERRBAR"):
                out.append((row, Control.from_word(row.word >> 64), Control.from_word(after.word >> 64)))
    return out


@pytest.mark.parametrize("arch", ARCHES)
def test_fence_stall_and_scoreboard_as_ptxas(arch):
    """ptxas gives MEMBAR (and sm_90's CGAERRBAR) a stall of 6 or more, and on sm_90 sets a MEMBAR.*.CTA a
    scoreboard the next instruction waits; bobc gave them a stall of 1 and no scoreboard."""
    fences = _corpus_fences(arch)
    assert any(parse_instruction(row.text).opcode == "MEMBAR" for row, *_ in fences)
    least = {}
    for row, theirs, _ in fences:
        opcode = parse_instruction(row.text).opcode
        least[opcode] = min(least.get(opcode, 15), theirs.stall)
    for row, theirs, next_theirs in fences:
        mine = [i.control for i in assemble(f"{row.text}\nIADD3 R3, R3, 0x1, RZ\nEXIT\n", arch).instructions]
        assert mine[0].stall >= least[parse_instruction(row.text).opcode], (arch, row.text, row.reference, mine[0])
        if theirs.read_barrier != 7 and next_theirs.wait_mask >> theirs.read_barrier & 1:
            assert mine[0].read_barrier != 7, (arch, row.text, row.reference, mine[0])
            assert mine[1].wait_mask >> mine[0].read_barrier & 1, (arch, row.text, row.reference, mine)


# -- uniform ALU -> UMOV ----------------------------------------------------------------------

UNIFORM_ALU = re.compile(r"^(@!?U?P\d )?U(IADD3|LOP3|SHF|LEA|PRMT|SEL|IMAD|SGXT|BMSK)\b")


@pytest.mark.parametrize("arch", ARCHES)
def test_uniform_alu_result_to_a_umov_as_ptxas(arch):
    """ptxas never issues a UMOV fewer than 7 cycles after the uniform ALU result it copies (UIADD3,
    UIADD3.X, ULOP3 -> UMOV 7 on sm_90; UPRMT -> UMOV 9, 12); NAK: Udp -> Umov 7.  bobc gave 6."""
    pairs = []
    for name, rows in streams(read_corpus(arch)).items():
        if ":-O3" not in name:
            continue
        for i, row in enumerate(rows):
            if not UNIFORM_ALU.match(row.text):
                continue
            written = re.match(r"^(?:@\S+ )?\S+ (UR\d+)", row.text).group(1)
            cycles = 0
            for later in rows[i:i + 8]:
                if later is not row and re.match(rf"^UMOV UR\d+, {written}\b", later.text):
                    pairs.append((row.text, later.text, cycles))
                    break
                cycles += Control.from_word(later.word >> 64).stall
    assert pairs or arch == "sm_86"      # sm_90's corpus has four within 8 instructions, sm_86's none
    least = min((theirs for *_, theirs in pairs), default=7)   # single placements above it may be slack
    assert least >= 7
    for first, second, _ in pairs:
        assert _bobc_distance(first, second, arch) >= least, (arch, first, second, least)
    assert _bobc_distance("UIADD3 UR6, UR19, UR8, URZ", "UMOV UR14, UR6", arch) >= 7
    assert _bobc_distance("ULOP3.LUT UR4, UR4, 0x80000, URZ, 0xfc, !UPT", "UMOV UR10, UR4", arch) >= 7



# -- VOTEU, UFLO, sm_90's R2UR: fixed-latency ----------------------------------------------------

UFLO_CHAIN = _HEAD + """
.visible .entry uflo_chain(.param .u64 out, .param .u32 a)
{
  .reg .u32 %r<8>; .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [out]; ld.param.u32 %r5, [a];
  cvta.to.global.u64 %rd2, %rd1;
  activemask.b32 %r2;
  bfind.u32 %r3, %r2;
  add.u32 %r6, %r3, %r5;
  mov.u32 %r4, %tid.x;
  add.u32 %r7, %r6, %r4;
  st.global.u32 [%rd2], %r7;
  ret;
}
"""


def test_sm90_uflo_chain_as_ptxas(ptxas_listing):
    """ptxas on sm_90: VOTEU.ANY UR4 -> UFLO.U32 UR4, UR4 -> IADD3 R5, R5, UR4, R0, no scoreboard on either;
    bobc's distances for the same instructions are no shorter, and it sets none either."""
    kernel = assemble_listing(ptxas_listing(UFLO_CHAIN, "sm_90"), TARGETS["sm_90"])["uflo_chain"]
    for producer, reader in ((r"^VOTEU", r"^UFLO"), (r"^UFLO", r"^IADD3 .*UR4")):
        theirs, first, second = _ptxas_distance(kernel, producer, reader)
        assert _bobc_distance(first, second, "sm_90") >= theirs, (first, second, theirs)
    assert all(i.control.write_barrier == 7 for i in kernel.instructions if i.text.split()[0].split(".")[0]
               in ("VOTEU", "UFLO"))


@pytest.mark.parametrize("arch", ARCHES)
def test_coupled_uniform_writers_get_no_scoreboard(arch):
    """ptxas never sets VOTEU, UFLO (or, on sm_90, R2UR) a write scoreboard and times their readers by
    stalls: VOTEU.ALL UP0 -> @!UP0 UIADD3 5 cycles, R2UR -> its reader 13 at the least.  bobc set them a
    scoreboard and issued the reader 2 cycles on; the H200 holds no reader on the scoreboard of a
    fixed-latency instruction (tables.arch SchedulingFacts.fixed_latency, DADD)."""
    text = "VOTEU.ANY UR7, UP0, P0\n@!UP0 UIADD3 UR4, -UR5, 0x100000, URZ\nUFLO.U32 UR6, UR7\nIADD3 R5, R5, UR6, R0\nEXIT\n"
    controls = [i.control for i in assemble(text, arch).instructions]
    assert controls[0].write_barrier == 7 and controls[2].write_barrier == 7, controls
    assert controls[0].stall >= 5 and controls[2].stall >= 6, controls
    if arch == "sm_90":
        controls = [i.control for i in assemble("R2UR UR6, R2\nIMAD.U32 R3, RZ, RZ, UR6\nEXIT\n", arch).instructions]
        assert controls[0].write_barrier == 7 and controls[0].stall >= 13, controls


@pytest.mark.parametrize("arch", ARCHES)
def test_overwrite_of_a_source_of_a_hand_coded_mufu_waits_its_scoreboard(arch):
    """A MUFU written with its own control code (a write scoreboard, no read scoreboard, as ptxas
    writes most) still has its source read late: the scheduled overwrite waits that scoreboard."""
    text = "[B------:R-:W4:-:S02] MUFU.EX2 R8, R2\nFADD R2, R4, R5\nSTG.E [R6.64], R8\nEXIT\n"
    controls = [i.control for i in assemble(text, arch).instructions]
    assert controls[1].wait_mask >> 4 & 1, controls


# -- IMAD.HI / IMAD.WIDE carry-out -> its reader --------------------------------------------------

# Extended-precision multiply-add chains (mad.lo.cc / madc.hi / addc, mul.hi.u64, mad.wide.u32 then
# a 64-bit multiply): ptxas writes IMAD.HI.U32 / IMAD.WIDE.U32 with a carry-out predicate and reads
# it in IMAD.X, IADD3.X or SEL.  Session 36's sassforms probe saw ptxas read such a carry 7 to 15
# cycles on in its 64-bit division (finding 16) and asked whether bobc's 5
# (schedule.PREDICATE_OPERAND_LATENCY) was short: in these tight chains ptxas reads it 4 cycles on
# (-> IMAD.X) and 5 (-> IADD3.X, SEL) on both targets, so the division's distances were slack.
# bobc's distance for the same two instructions is held to ptxas's least for each reader.
CARRY_CHAINS = _HEAD + """
.visible .entry madcc(.param .u64 out, .param .u32 a, .param .u32 b, .param .u32 c, .param .u32 d)
{
  .reg .u32 %r<12>; .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [a]; ld.param.u32 %r2, [b]; ld.param.u32 %r3, [c];
  ld.param.u32 %r4, [d];
  mad.lo.cc.u32 %r5, %r1, %r2, %r3;
  madc.hi.cc.u32 %r6, %r1, %r2, %r4;
  addc.u32 %r7, 0, 0;
  mad.hi.cc.u32 %r8, %r1, %r3, %r5;
  madc.lo.u32 %r9, %r2, %r4, %r6;
  cvta.to.global.u64 %rd2, %rd1;
  st.global.v4.u32 [%rd2], {%r5, %r6, %r7, %r8};
  st.global.u32 [%rd2+16], %r9;
  ret;
}
.visible .entry carry_sel(.param .u64 out, .param .u32 a, .param .u32 b)
{
  .reg .u32 %r<8>; .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [a]; ld.param.u32 %r2, [b];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r3, %tid.x;
  mad.hi.cc.u32 %r5, %r1, %r2, %r3;
  addc.u32 %r7, 0, 0;
  st.global.u32 [%rd2], %r7;
  ret;
}
.visible .entry mulhi64(.param .u64 out, .param .u64 a, .param .u64 b)
{
  .reg .u64 %rd<8>;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [a]; ld.param.u64 %rd3, [b];
  mul.hi.u64 %rd4, %rd2, %rd3;
  cvta.to.global.u64 %rd5, %rd1;
  st.global.u64 [%rd5], %rd4;
  ret;
}
.visible .entry mul128(.param .u64 out, .param .u64 a, .param .u64 b)
{
  .reg .u64 %rd<10>;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [a]; ld.param.u64 %rd3, [b];
  mul.lo.u64 %rd4, %rd2, %rd3;
  mul.hi.u64 %rd5, %rd2, %rd3;
  mul.hi.u64 %rd6, %rd5, %rd4;
  cvta.to.global.u64 %rd7, %rd1;
  st.global.v2.u64 [%rd7], {%rd4, %rd6};
  ret;
}
"""

_CARRY_OUT = re.compile(r"^(?:@!?P\d )?IMAD\.(?:HI|WIDE)\S* R(?:\d+|Z), (P\d),")


def _carry_pairs(listing_text: str):
    """[(cycles, producer, reader)] of an `nvdisasm -hex` listing: each carry-out IMAD.HI / .WIDE and
    the first instruction of its kernel after it that names its predicate, with the sum of ptxas's
    stalls between (read from its control words, not re-encoded: some of its forms take a
    constant-bank operand in a shape bobc has not learned)."""
    kernels, out = [], []
    for decoded in parse_hex_listing(listing_text):
        if decoded.offset == 0:
            kernels.append([])
        kernels[-1].append((decoded.text, Control.from_word(decoded.hi).stall))
    for rows in kernels:
        for i, (text, _) in enumerate(rows):
            match = _CARRY_OUT.match(text)
            if not match:
                continue
            for j in range(i + 1, len(rows)):
                if re.search(rf"(?<![U\w]){match.group(1)}\b", rows[j][0]):
                    out.append((sum(stall for _, stall in rows[i:j]), text, rows[j][0]))
                    break
    return out


@pytest.mark.parametrize("arch", ARCHES)
def test_carry_out_of_a_wide_multiply_as_ptxas(ptxas_listing, arch):
    pairs = _carry_pairs(ptxas_listing(CARRY_CHAINS, arch))
    readers = {second.split()[0] for _, _, second in pairs}
    assert {"IMAD.X", "IADD3.X", "SEL"} <= readers, (arch, pairs)
    least = {reader: min(c for c, _, s in pairs if s.split()[0] == reader) for reader in readers}
    # the chains are tight: ptxas's floor, not the division's 7..15
    assert least["IMAD.X"] <= 4 and least["IADD3.X"] <= 5 and least["SEL"] <= 5, (arch, least)
    checked = 0
    for theirs, first, second in pairs:
        try:
            mine = _bobc_distance(first, second, arch)
        except BobcError as error:     # a constant-bank / uniform form bobc has not learned
            assert "encoding for" in str(error), error
            continue
        checked += 1
        floor = least[second.split()[0]]      # a single placement above it may be slack
        assert mine >= floor, f"{arch}: {first} -> {second}: bobc {mine} cycles, ptxas {floor}"
    assert checked, (arch, pairs)
