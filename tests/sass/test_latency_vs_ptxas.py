"""The scheduler's fixed-latency stalls against ptxas's own, over the whole -O3 corpus.

ptxas is the oracle: for every producer -> reader pair in tests/sass/data/corpus-<target>.tsv
(-O3 streams) whose producer is fixed-latency in bobc's tables on that target and sets no write
scoreboard in ptxas's word, the issue distance is the sum of ptxas's stalls between the two
(within a block: no branch target or control transfer in between).  The pair's kind is (the
producer's opcode, with .MMA for HFMA2.MMA and .WIDE for a wide multiply; the reader's unit,
written here from the hardware's units, not from schedule.py; which register bank).
bobc's distance for each pair is what schedule() chooses for the corpus's own two instructions
alone.  It must be no less than ptxas's smallest distance of that kind on the same target.

KNOWN_BELOW lists the kinds where bobc is still below ptxas's minimum today (most from a single
ptxas placement with slack, not a latency); the test fails when a kind falls below that is not
listed (a table edit undercutting ptxas) and when a listed one no longer is (drop it).
"""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

import pytest

from bobc.sass import assemble
from bobc.sass.assembler import _guard, latency_key
from bobc.sass.encoder import Encoder
from bobc.sass.learn import read_corpus, streams
from bobc.sass.schedule import Item, ScheduleShortfall, expand, schedule
from bobc.sass.tables.arch import scheduling_facts
from bobc.sass.syntax import Control, Label, parse_instruction
from bobc.sass.tables.layouts import EXPLICIT_CONTROL, VARIABLE_LATENCY

TARGETS = ("sm_86", "sm_90")
TRANSFERS = {"BRA", "EXIT", "BSYNC", "BSSY", "CALL", "RET", "WARPSYNC", "BREAK", "BRX", "JMP", "JMX",
             "KILL", "BPT"}
# Reader units (NVIDIA's Ampere pipes, as NAK's sm80 tables name them)
FMA_UNIT = {"FFMA", "FADD", "FMUL", "IMAD", "HFMA2", "HADD2", "HMUL2"}
FP64_UNIT = {"DADD", "DMUL", "DFMA", "DSETP"}
MEMORY = {"LDG", "STG", "LDS", "STS", "LDL", "STL", "LD", "ST", "LDSM", "LDGSTS", "ATOMS", "ATOMG", "ATOM",
          "RED", "REDG", "SHFL", "LDC"}
CONVERSION_UNIT = {"MUFU", "F2I", "I2F", "F2F", "POPC", "FLO", "BREV", "R2UR"}
OWN_CLASS = {"HMMA", "BAR", "VOTE", "VOTEU", "RET", "BRA", "EXIT", "WARPSYNC", "BSSY", "BSYNC", "CALL"}


def reader_unit(opcode: str) -> str:
    if opcode in FMA_UNIT:
        return "fma"
    if opcode in FP64_UNIT:
        return "fp64"
    if opcode in MEMORY:
        return "memory"
    if opcode in CONVERSION_UNIT:
        return "conversion"
    if opcode in OWN_CLASS:
        return opcode
    if opcode.startswith("U") or opcode in EXPLICIT_CONTROL:
        return "uniform"
    return "alu"


def producer_kind(inst) -> str:
    return latency_key(inst) + (".WIDE" if "WIDE" in inst.modifiers else "")


def o3_streams(arch: str):
    """Each -O3 corpus kernel of `arch` as ([(row, instruction, placed operands, control)], the
    addresses branches name): what the distance tests here and in test_latency_probes.py walk."""
    for name, rows in streams(read_corpus(arch)).items():
        if ":-O3" not in name:
            continue
        encoder = Encoder(arch)
        stream = []
        for row in rows:
            inst = encoder.normalize(parse_instruction(row.text))
            stream.append((row, inst, encoder.place_operands(inst, row.offset), Control.from_word(row.word >> 64)))
        yield stream, {op.address for _, inst, _, _ in stream for op in inst.operands
                       if isinstance(op, Label) and op.address is not None}


@lru_cache(maxsize=None)
def corpus_pairs(arch: str):
    """[(kind, ptxas distance, producer row, reader row, (producer, placed), (reader, placed))]."""
    out = []
    fixed_here = scheduling_facts(arch).fixed_latency
    for stream, targets in o3_streams(arch):
        cycles, cycle = [], 0
        for *_, control in stream:
            cycles.append(cycle)
            cycle += control.stall
        for i, (row, inst, placed, control) in enumerate(stream):
            if inst.opcode in TRANSFERS or inst.opcode in EXPLICIT_CONTROL or control.write_barrier != 7:
                continue
            if inst.opcode in VARIABLE_LATENCY and inst.opcode not in fixed_here:
                continue
            live = expand(placed.writes)
            for row2, inst2, placed2, _ in stream[i + 1:]:
                if row2.offset in targets or not live:
                    break
                reads, guard = expand(placed2.reads), _guard(inst2)
                hit = {r for r in live if r in reads or r == guard}
                for reg in hit:
                    role = reg[0]
                    kind = (producer_kind(inst), reader_unit(inst2.opcode), role)
                    out.append((kind, cycles[stream.index((row2, inst2, placed2, _))] - cycles[i], row, row2,
                                (inst, placed), (inst2, placed2)))
                live -= hit | expand(placed2.writes)
                if inst2.opcode in TRANSFERS:
                    break
    return out


def bobc_distance(arch: str, pair) -> int:
    """Cycles bobc's scheduler puts between the two instructions, alone in a stream."""
    items = [Item(inst.opcode, expand(placed.reads), expand(placed.writes), None, wide="WIDE" in inst.modifiers,
                  guard=_guard(inst), latency_key=latency_key(inst)) for inst, placed in pair]
    items.append(Item("EXIT", set(), set(), None))
    try:
        return schedule(items, arch)[0].stall
    except ScheduleShortfall as short:   # more than one stall's 15 cycles
        return 15 + short.deficit


# (target, producer, reader unit, bank) -> (ptxas's minimum, its samples): still below ptxas.
KNOWN_BELOW = {
    # many samples: candidates for a table fix that changes shipped images (not made here)
    # (sm_86 ULDC -> memory (UR), once 8: subword_params.ptx has ULDC.64 descriptor -> STG.E at 6)
    # (sm_86 MOV -> memory (R), once (6, 17): param_shapes.ptx has MOV -> STG at 5, bobc's)
    # (sm_86 / sm_90 SHF -> memory (R), (6, 7) / (6, 5): memory_forms.ptx has SHF.R.W.U32 -> STG at 5, bobc's)
    ("sm_90", "VIADD", "memory", "R"): (15, 5),      # bobc 7
    # (sm_90 F2FP -> memory (R), once (26, 32): param_shapes.ptx has F2FP.BF16.F32.PACK_AB -> STG at 7)
    # one or few ptxas placements far from any latency (bobc's value is ptxas's elsewhere)
    # (sm_86 I2FP -> memory (R), once 18: warp_forms.ptx has I2FP.F32.S32 R9, R9 -> STG.E.128 [R4.64], R8 at
    #  bobc's distance or fewer)
    # (sm_90 I2FP -> memory (R), once 15: the same warp_forms.ptx placement)
    # warp_forms.ptx float_sets: three FSET.BF write R8, R10, R11 of one STG.E.128, which waits for its last
    # source, an I2FP issued after them (slack); sm_86's same code has no FSET -> memory distance below bobc's 7
    ("sm_90", "FSET", "memory", "R"): (11, 3),
    # (sm_90 HFMA2.MMA -> memory (R), once (22, 5): math_forms2.ptx has HFMA2.MMA.RELU -> STG at 11 or fewer, bobc's)
    ("sm_86", "ISETP", "WARPSYNC", "P"): (45, 1),
    # (sm_86 ISETP -> conversion (P), (25, 1) until user_forms_s45.ptx: a placement there at bobc's distance or fewer)
    # (sm_90 ISETP -> VOTE (P), once 14: memory_forms.ptx has ISETP.NE.U32.AND P2 -> VOTE.ALL P2, P2 at 13, bobc's)
    ("sm_90", "ISETP", "uniform", "P"): (49, 1),
    ("sm_86", "SEL", "fp64", "R"): (16, 5),          # bobc 6 (MOV -> DADD: 6); (16, 3) until user_forms_s45.ptx
    ("sm_90", "SEL", "fp64", "R"): (12, 5),
    ("sm_90", "IADD3", "conversion", "R"): (6, 4),   # bobc 4: IADD3 -> R2UR ((10, 1) until user_forms_s45.ptx)
    ("sm_86", "SHF", "conversion", "R"): (19, 1),
    ("sm_90", "SHF", "conversion", "R"): (13, 1),
    ("sm_86", "UMOV", "conversion", "UR"): (7, 1),
    ("sm_90", "UMOV", "conversion", "UR"): (7, 1),
    ("sm_86", "USHF", "fma", "UR"): (15, 3),
    # subword_params.ptx: the IMAD also waits for S2R SR_TID.X (slack); sm_90's ULOP3 -> IMAD is 6
    ("sm_86", "ULOP3", "fma", "UR"): (17, 2),          # bobc 7
    ("sm_90", "USHF", "fma", "UR"): (15, 3),
    # (sm_90 MOV -> RET (R), (5, 1) until user_forms_s45.ptx: a placement there at bobc's distance or fewer)
    ("sm_90", "P2R", "alu", "R"): (128, 1),
    # UFLO (fixed-latency since session 36): one placement each, beside an atomic's scoreboard waits;
    # in a chain ptxas issues UFLO.U32 UR4, UR4 -> IADD3 R5, R5, UR4, R0 6 cycles on (bobc 6:
    # tests/sass/test_latency_probes.py, NAK's Udp -> coupled 6)
    # (sm_86 UFLO -> alu (UR), (9, 1), and sm_90's, (18, 1), until user_forms_s46.ptx: an atomic's UFLO there is read at
    #  bobc's distance or fewer)
    # user_forms.ptx u64_compare (session 44): one placement, USEL UR4, URZ, 0x1, UP0 -> IADD3 R4, R5, UR4, R0 19
    # cycles on, the IADD3 at the end of the kernel's compare chain (slack); USEL is the uniform datapath's, whose
    # result NAK's URegLatencySM80 gives a vector coupled reader 6 cycles on, bobc's
    ("sm_90", "USEL", "alu", "UR"): (19, 1),
    # param_shapes.ptx (session 35): one or few placements each, a kernel author's parameter shapes
    # (sm_86 F2FP -> memory (R), (12, 2) until wide_cover_forms.ptx: its F2FP.BF16.PACK_AB -> STG.E at 5, bobc 7)
    # (sm_86 HFMA2 -> memory (R), once (25, 1): math_forms2.ptx has HFMA2.RELU -> STG at 7, bobc's)
    # (sm_86 HMNMX2 -> alu (R), (12, 1) until wide_cover_forms.ptx: its HMNMX2 -> PRMT at 6, bobc's)
    # (sm_86 HMNMX2 -> memory (R), (14, 3) until bf16_forms.ptx: its HMNMX2.BF16_V2 -> STG.E.U16 at 5, bobc 7)
    # (sm_86 UIADD3 -> alu (UR), (56, 1) until address_forms.ptx: its UIADD3 UR6 -> ISETP.NE ... UR6 at 6, bobc's)
    # (sm_86 UIADD3 -> fma (UR), (10, 1) until user_forms_s46.ptx: a placement there at bobc's distance or fewer)
    ("sm_86", "ULOP3", "alu", "UR"): (13, 1),        # bobc 6
    ("sm_86", "UPRMT", "uniform", "UR"): (12, 1),    # bobc 6 (NAK's udp -> udp/umov: 4 / 2)
    ("sm_90", "UPRMT", "uniform", "UR"): (9, 2),     # bobc 6
    ("sm_90", "ULOP3", "alu", "UR"): (7, 1),         # bobc 6
    # (sm_90 HFMA2 -> memory (R), once (14, 1): math_forms2.ptx has HFMA2.SAT -> STG at 7, bobc's)
    # (sm_90 HMNMX2 -> memory (R), (11, 3) until bf16_forms.ptx: its HMNMX2.BF16_V2 -> STG.E.U16 at 5, bobc 7)
    # math_forms.ptx (session 36): a store or a PRMT waiting on several results at once (slack)
    ("sm_86", "BMSK", "memory", "R"): (21, 2),       # bobc 7
    ("sm_90", "BMSK", "memory", "R"): (23, 2),       # bobc 7
    # (sm_86 HFMA2 -> alu (R), (13, 2) until bf16_forms.ptx: its neg.bf16 HFMA2.BF16_V2 -> PRMT at 5, bobc 7)
    # (sm_90 HFMA2 -> alu (R), (13, 2) until bf16_forms.ptx: its neg.bf16 HFMA2.BF16_V2 -> PRMT at 5, bobc 7)
    # (sm_86 SEL -> memory (R), (8, 8): memory_forms.ptx has SEL R8, RZ, 0x1, !P0 -> STG.E.64 at 5, bobc's)
    # math_forms2.ptx (session 37): results gathered into one STG.E.128 (slack: ptxas waits for the last of four)
    # (sm_86 FMNMX -> memory (R), (9, 2) until address_forms.ptx: its relu FMNMX R11, RZ, R11, !PT -> STG.E at 5, bobc's)
    # (sm_90 FMNMX -> memory (R), (11, 2) until address_forms.ptx: its FMNMX R15, RZ, R8, !PT -> STG.E at 5, bobc's)
    # a carry-out IMAD.WIDE.U32 read by IADD3.X 9 cycles on in wide_products (slack: ptxas's tight chains
    # read it 5 on, tests/sass/test_latency_probes.py test_carry_out_of_a_wide_multiply_as_ptxas)
    ("sm_86", "IMAD.WIDE", "alu", "P"): (9, 6),      # (9, 1) until user_forms_s45.ptx
    # (sm_90 SEL -> memory (R), (13, 5): memory_forms.ptx / sign_forms.ptx have SEL -> STG at 5, bobc's)
    ("sm_90", "IABS", "memory", "R"): (11, 1),       # bobc 7
    # int_forms.ptx / sm90_int_forms.ptx (session 37, sassforms4): results gathered into two STG.E.128 (slack)
    ("sm_86", "VABSDIFF", "memory", "R"): (12, 6),   # bobc 7 ((12, 2) until wide_cover_forms.ptx's video_forms,
    #                                                  (12, 4) until user_forms_s46.ptx's sad.u32 / .s32)
    # (sm_86 VABSDIFF4 -> memory (R), (12, 2) until wide_cover_forms.ptx: VABSDIFF4.U8.ACC -> STG.E at 7, bobc's)
    # (sm_90 VABSDIFF / VABSDIFF4 / VIMNMX -> memory (R), (9, 2) / (9, 2) / (10, 6) until wide_cover_forms.ptx: its
    #  VABSDIFF.U32 -> STG.E at 5, VABSDIFF4.U8.ACC and VIMNMX.U32 -> STG.E at 7, bobc's or fewer)
    # wide_cover_forms.ptx (session 43, probe asmcover2): one theme a kernel, every result stored at the kernel's
    # end, so each store (or a reader issued after unrelated work) waits for the last of many (slack, not a latency):
    # the clock / vote reads are issued first and stored last, the others are one or few placements
    ("sm_86", "CS2R", "memory", "R"): (47, 11),      # bobc 7: CS2R R2, SR_CLOCKLO -> STG.E.64 (clock64)
    ("sm_90", "CS2R", "memory", "R"): (43, 11),     # ((105, 5) / (77, 5) until user_forms_s45.ptx)
    # (sm_86 VOTE -> memory (R), (159, 2) until user_forms_s45.ptx: a placement there at bobc's distance or fewer)
    # (sm_90 VOTE -> memory (R), (114, 2) until user_forms_s45.ptx: a placement there at bobc's distance or fewer)
    # (sm_86 HADD2 / HMUL2 -> memory (R), once (13, 5) / (19, 1): sim_forms_s44.ptx has HADD2.FTZ / HADD2.SAT /
    #  HMUL2.FTZ -> STG.E at 5, below bobc's 7)
    # (sm_86 IMNMX -> memory (R), (11, 6) until user_forms_s45.ptx: a placement there at bobc's distance or fewer)
    # (sm_90 DMUL -> memory (R), (25, 2) until user_forms_s45.ptx: a placement there at bobc's distance or fewer)
    # (sm_86 SEL -> conversion (R), (13, 1) until user_forms_s45.ptx: a placement there at bobc's distance or fewer)
    # (sm_90 SEL -> conversion (R), (13, 1) until user_forms_s45.ptx: a placement there at bobc's distance or fewer)
    # (sm_86 IABS -> conversion (R), (7, 1) until user_forms_s45.ptx: a placement there at bobc's distance or fewer)
    # rcp.rn.f64's slow path on sm_86 (mufu_forms): IADD3 R21, R5, -0x100000, RZ -> DFMA at 8, behind the DFMA
    # chain it waits on (sm_86's FP64 unit issues a DFMA every few cycles: throughput, not the IADD3's latency)
    # (sm_86 IADD3 -> fp64 (R), (8, 3) until user_forms_s45.ptx: a placement there at bobc's distance or fewer)
    # candidates for a look (fixed-latency FP64 on sm_90, SchedulingFacts.fixed_latency): not changed here
    ("sm_90", "DADD", "conversion", "R"): (15, 2),   # bobc 10: DADD R4, R4, UR4 -> F2F.F32.F64 R3, R4
    ("sm_90", "ULDC", "fp64", "UR"): (9, 3),         # bobc 8: ULDC.64 -> DADD R4, R4, UR4
    # user_forms_s45.ptx (session 45, probe s45 asmgaps4): one theme a kernel, results stored at its end (slack for
    # the stores)
    # (sm_86 / sm_90 IMAD -> alu (P), (9, 12), and IMAD -> fma (P), (8, 1), until user_forms_s46.ptx: ptxas read
    #  IMAD.HI.U32's carry-out in div / rem .s64 9 / 8 cycles on, behind the division's other work; with nothing else
    #  to issue (carry_hi_addc / _madc / _sel) it reads it 5 on in IADD3.X and SEL and 4 in IMAD.X, below bobc's 6 / 5:
    #  the 9 / 8 were slack, and bobc keeps its latencies, tests/sass/test_user_forms_s46.py)
    # rcp / div .r{z,m,p}.f64's slow path: ISETP.NE.AND.EX P0 -> DSETP.NE.OR P0, PT, R8, R4, P0 (an FP64 reader of
    # a predicate) and FSETP.GEU.AND P1 -> @!P1 DMUL (a guard), both behind FP64 work (slack or an FP64 issue rule)
    ("sm_86", "ISETP", "fp64", "P"): (13, 5),        # bobc 6
    ("sm_90", "ISETP", "fp64", "P"): (13, 5),        # bobc 5
    ("sm_86", "FSETP", "fp64", "P"): (17, 3),        # bobc 13
    # bfi.b32 (bitfields): one placement, BMSK -> LOP3.LUT 0xe2, the LOP3 also waiting on loads (slack)
    ("sm_86", "BMSK", "alu", "R"): (10, 1),          # bobc 6
    ("sm_90", "BMSK", "alu", "R"): (18, 1),          # bobc 6
    # clock64 read then subtracted (timers_and_sleep): CS2R R6, SR_CLOCKLO -> IADD3 / IMAD.X of the difference,
    # issued after a NANOSLEEP and the other special-register reads (slack)
    ("sm_86", "CS2R", "alu", "R"): (8, 4),           # bobc 6
    ("sm_90", "CS2R", "fma", "R"): (11, 2),          # bobc 7
    # user_forms_s46.ptx (session 46, probe s46 asmgaps5): one placement each.  cvt.rni.sat.u8.f32 (cvt_variants):
    # F2IP.U8.F32.NTZ R5, RZ, R3, RZ -> the STG.E.128 of four results, which waits for the last of them (slack)
    ("sm_86", "F2IP", "memory", "R"): (17, 1),       # bobc 7
    ("sm_90", "F2IP", "memory", "R"): (26, 1),
    # match_redux: the member mask from a kernel parameter, IMAD.MOV.U32 R0, RZ, RZ, c[0x0][0x170] ->
    # WARPSYNC.EXCLUSIVE R0, the kernel's first instructions issued around the loads' S2R (a candidate for a look:
    # one placement, no tight chain here)
    ("sm_86", "IMAD", "WARPSYNC", "R"): (10, 1),     # bobc 6
    # cp_async: ISETP -> LDGSTS.E.BYPASS.128.ZFILL's predicate operand (the zero-fill choice), one placement per
    # target at 23 (sm_86) / 21 (sm_90) cycles; the kind's 13 is ISETP -> a guarded memory instruction (a guard's
    # latency, bobc's too).  bobc times the operand 5, as any predicate operand: a candidate for a look (NAK counts
    # a decoupled reader's predicate as a guard's, 13), not changed here
    ("sm_86", "ISETP", "memory", "P"): (13, 15),     # bobc 5
    ("sm_90", "ISETP", "memory", "P"): (13, 16),
}


def below(arch: str) -> dict:
    pairs = corpus_pairs(arch)
    minimum, count = {}, defaultdict(int)
    for kind, distance, *_ in pairs:
        count[kind] += 1
        minimum[kind] = min(minimum.get(kind, distance), distance)
    out = {}
    for kind, _, row, row2, *pair in pairs:
        mine = bobc_distance(arch, pair)
        if mine < minimum[kind] and kind not in out:
            out[kind] = (minimum[kind], count[kind], mine, row, row2)
    return out


@pytest.mark.parametrize("arch", TARGETS)
def test_no_fixed_latency_stall_below_ptxas(arch):
    found = below(arch)
    known = {k[1:]: v for k, v in KNOWN_BELOW.items() if k[0] == arch}
    new = [f"{arch}: {p} -> {unit} ({bank}): bobc {mine} cycles, ptxas never fewer than {m} (n={n}); "
           f"e.g. {row.text} -> {row2.text} at {row.reference}"
           for (p, unit, bank), (m, n, mine, row, row2) in sorted(found.items())
           if known.get((p, unit, bank)) != (m, n)]
    assert not new, ("the scheduler chooses a shorter distance than ptxas ever does: raise the latency in "
                     "compiler/bobc/sass/schedule.py (or, where ptxas's placement is slack, list the kind "
                     "in KNOWN_BELOW with its evidence)\n" + "\n".join(new))
    gone = sorted(set(known) - set(found))
    assert not gone, f"{arch}: no longer below ptxas, drop from KNOWN_BELOW: {gone}"


def test_corpus_has_the_pairs_the_fixes_rest_on():
    """The evidence: ALU -> FP64 reader 6, HFMA2.MMA -> any ALU/FMA reader 10, FP64 -> ALU 10 (sm_90)."""
    sm90 = defaultdict(lambda: 99)
    mufu = defaultdict(lambda: 99)
    for (p, unit, bank), d, row, row2, *_ in corpus_pairs("sm_90"):
        # the FP64 -> conversion fix rests on F2I / F2F / I2F readers; ptxas's MUFU.RCP64H / .RSQ64H read a DMUL's
        # high word 6 cycles on (wide_cover_forms.ptx mufu_forms, session 43: the scaling of rcp.rn.f64 /
        # rsqrt.approx.f64's slow paths), where bobc's 10 is longer than needed, never shorter
        table = mufu if "MUFU." in row2.text else sm90
        table[(p, unit)] = min(table[(p, unit)], d)
    assert sm90[("MOV", "fp64")] == 6 and sm90[("FSEL", "fp64")] == 6
    assert sm90[("HFMA2.MMA", "fma")] == 10 and sm90[("HFMA2.MMA", "alu")] == 10
    assert sm90[("DADD", "alu")] == 10 and sm90[("DMUL", "conversion")] == 10
    assert mufu[("DMUL", "conversion")] == 6


def _stalls(text: str, arch: str) -> list[int]:
    return [i.control.stall for i in assemble(text, arch).instructions]


@pytest.mark.parametrize("arch", TARGETS)
def test_fp64_reader_takes_operands_late(arch):
    """Probe s33 finding: MOV -> DADD 5 cycles apart; ptxas never fewer than 6."""
    stalls = _stalls("MOV R2, 0x0\nMOV R3, 0x3ff00000\nDADD R4, R2, R2\nEXIT\n", arch)
    assert stalls[1] >= 6, stalls
    stalls = _stalls("MOV R2, 0x0\nFSEL R3, R2, R2, PT\nDSETP.GEU.AND P0, PT, R2, R2, PT\nEXIT\n", arch)
    assert stalls[1] >= 6, stalls


@pytest.mark.parametrize("arch", TARGETS)
@pytest.mark.parametrize("reader", ["FFMA R7, R6, R6, R6", "IADD3 R7, R6, 0x1, RZ", "IMAD.HI.U32 R7, R3, R9, R6",
                                    "PRMT R7, R6, 0x654, R2"])
def test_hfma2_mma_result_after_ten_cycles(arch, reader):
    """Probe s33 finding: HFMA2.MMA -> FFMA 6 cycles apart; ptxas never fewer than 10."""
    stalls = _stalls(f"HFMA2.MMA R6, -RZ, RZ, 1.875, 0\n{reader}\nEXIT\n", arch)
    assert stalls[0] >= 10, stalls


def test_sm90_fp64_result_to_an_alu_reader_after_ten_cycles():
    """ptxas 13 on sm_90: DADD -> FSEL and DMUL -> F2I 10 cycles apart (8 to the next FP64 reader)."""
    stalls = _stalls("MOV R2, 0x0\nMOV R3, 0x3ff00000\nDADD R4, R2, 1\nFSEL R6, R4, R2, PT\nEXIT\n", "sm_90")
    assert stalls[2] >= 10, stalls
    stalls = _stalls("MOV R2, 0x0\nMOV R3, 0x3ff00000\nDADD R4, R2, 1\nDMUL R6, R4, R2\nEXIT\n", "sm_90")
    assert stalls[2] == 8, stalls
