"""The simulator's own latency rules for the control-code checker.

Source: the register scheduling information NVIDIA provided for Ampere and
Ada, as published in Mesa's NAK compiler (src/nouveau/compiler/nak/
sm80_instr_latencies.rs: RegLatencySM80, PredLatencySM80, URegLatencySM80),
reduced to the classes the simulated kernels use (the examples' and the one-kernel API's).  Hopper shares the Volta+ issue
model; the same rules are applied to sm_90 (its published table is not
public; ptxas's sm_90 code meets these rules, tests/sim checks that).

Coupled (fixed-latency) producers need the consumer to issue at least
RAW[reader][writer] cycles later, counted from the stall fields alone;
decoupled (variable-latency) producers need a scoreboard the consumer waits on.
This is deliberately not bobc.sass.schedule's table: that one is what the
scheduler assumes, this one is what the checker holds it to.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..targets import target_row

# Writer classes of a GPR result, by base opcode (RegLatencySM80::op_category).  Uniform-datapath
# opcodes (UIADD3, ULOP3, ...) are classed by their base opcode; their uniform results all follow
# UNIFORM_RAW.
COUPLED_ALU = frozenset({"IADD3", "LOP3", "ISETP", "LEA", "SHF", "MOV", "SEL", "FSEL", "FMNMX", "FSETP",
                         "PLOP3", "IMNMX", "VIMNMX", "IABS", "PRMT", "P2R", "R2P", "VOTE", "CS2R", "UMOV",
                         "F2FP", "I2FP",           # I2FP: not in the table; ALU as its sibling F2FP
                         # I2I, BMSK, SGXT: integer ALU ops ptxas times without a scoreboard (math_forms.ptx)
                         "I2I", "BMSK", "SGXT",
                         # I2IP (cvt.pack.sat): ptxas sets no write scoreboard on it either (probe s45 simint,
                         # both targets); ALU as its sibling I2I
                         "I2IP",
                         # ptxas sets no write scoreboard on these (tools/ptx_corpus/int_forms.ptx, both
                         # targets, tests/sass/data corpus-sm_*.tsv): F2IP.U8.F32 (NAK has no row) is read
                         # 4 cycles on by a LOP3 -- the ALU's latency, where an FMA-pipe result needs 5;
                         # VABSDIFF / VABSDIFF4 (no NAK row) are the integer |a - b| (+ c) of the video
                         # family VIMNMX belongs to, read 9 cycles on at the earliest (by an STG)
                         "F2IP", "VABSDIFF", "VABSDIFF4",
                         # FSET.BF (set.<cmp>.f32.f32): NAK's FSet row is CoupledAlu, as FSETP's; ptxas sets
                         # no write scoreboard on it (tools/ptx_corpus/warp_forms.ptx, both targets)
                         "FSET",
                         # sm_90's VIADDMNMX (IMNMX of a sum): ptxas sets no write scoreboard on it and reads
                         # it 4 cycles on, by a VIMNMX (div.rn.f64's slow path: tests/sass/test_f64_division_s43.py)
                         "VIADDMNMX"})
COUPLED_FMA = frozenset({"FFMA", "FADD", "FMUL", "IMAD",
                         "VIADD",    # sm_90's VIADD: ptxas reads it 4 cycles on from an IMAD (FMA pipe)
                         # IDP.4A / IDP.2A: NAK's IDp4 row (CoupledFMA); ptxas sets no write scoreboard
                         # on it and reads it 5 cycles on at the earliest, by an STG (int_forms.ptx
                         # dot_products, both targets): an FMA result's latency to the address unit
                         "IDP"})
FP16 = frozenset({"HADD2", "HMUL2", "HFMA2", "HMNMX2"})           # FP16 / FP16_Alu / FP16_F32 rows agree
DECOUPLED = frozenset({"S2R", "S2UR", "LDC", "MUFU", "LDG", "SHFL", "LDS", "LDSM", "ATOMS", "ATOMG", "ATOM",
                       "LDL", "LD", "F2F", "F2I", "I2F", "POPC", "FLO", "BREV",
                       "B2R",                      # B2R: DecoupledAgu in NAK's (commented) row
                       "FRND",                     # ptxas sets a write scoreboard on every FRND (math_forms.ptx)
                       "SYNCS",                    # sm_90's mbarrier unit: its predicate on a scoreboard
                       "MATCH",                    # ptxas sets a write scoreboard on every MATCH (warp_forms.ptx)
                       # sm_90's register reallocation: ptxas sets a write scoreboard on
                       # USETMAXREG.TRY_ALLOC's predicate and its reader waits on it, 2 cycles on
                       # (tests/sass/data corpus-sm_90.tsv, sm90_async pipelined_product)
                       "USETMAXREG",
                       # REDUX: NAK's URegLatencySM80 classes its uniform result ToUr, which needs a scoreboard
                       # (SM80Latency::needs_scoreboards); ptxas sets a write scoreboard on every -O3 REDUX (both
                       # targets, tests/sass/data corpus-sm_*.tsv: atomic_loops, shfl_loaded_mask, tile_ballot,
                       # warp_forms.ptx) and its reader waits on it
                       "REDUX"})
# The FP64 unit is "redirected": coupled or decoupled by SM.  A producer that sets a write scoreboard
# is held to it (decoupled); one that sets none is timed by the RedirectedFP64 column.
FP64 = frozenset({"DADD", "DMUL", "DFMA", "DSETP"})
TENSOR = frozenset({"HMMA"})          # MMA_2x_collect (HMMA.16816) / MMA_1x_collect (HMMA.1688), coupled
UNIFORM_LOAD = frozenset({"ULDC"})
KNOWN_BASES = COUPLED_ALU | COUPLED_FMA | FP16 | DECOUPLED | FP64 | TENSOR | {"R2UR"}
# Readers whose register operands go through the address unit (DecoupledAgu).
AGU_READERS = frozenset({"LDG", "STG", "SHFL", "LDS", "STS", "LDSM", "ATOMS", "ATOMG", "ATOM", "RED", "REDG",
                         "LDGSTS", "LDL", "STL", "LD", "ST"})
DECOUPLED_READERS = frozenset({"S2R", "LDC", "MUFU", "BRA", "EXIT", "F2F", "I2F", "F2I", "POPC", "FLO", "BREV",
                               # RET.REL.NODEC reads its return address as a branch does: ptxas issues it 4
                               # cycles after the IMAD.MOV.U32 that writes the pair's high word (the div.rn.f32
                               # and 64-bit division slow paths, both targets; probe s42 ptxcover)
                               "RET",
                               # R2UR / REDUX read their register in the decoupled unit (NAK's RegLatencySM80: `Op::R2UR
                               # | Op::Redux => if reader Decoupled`), 4 cycles after an ALU or FMA result: ptxas's
                               # `IMAD.IADD R2, R6, 0x1, R3` then `REDUX.MAX UR4, R2` 4 cycles on (user_forms.ptx
                               # atomic_loops, both targets; its FMA -> ALU 5 refused ptxas's code before s44)
                               "R2UR", "REDUX", "FRND",
                               # sm_90's mbarrier unit: ptxas reads SYNCS's address and data registers
                               # 4 cycles after an ALU or FMA result, never 5 (8 placements in
                               # tests/sass/data corpus-sm_90.tsv, sm90_async / sm90_hgmma_product)
                               "SYNCS"})

# RAW[reader][writer] in cycles (sm80_instr_latencies.rs read_after_write).  Writers: alu
# (CoupledAlu), fma (CoupledFMA), wide_lo / wide_hi (IMADWideWriteDL / DH), fp16 (FP16), hfma2_mma
# (HFMA2_MMA), fp64 (RedirectedFP64 without a scoreboard), mma1x / mma2x (MMA_1x / 2x_collect).
_SLOW = ("hfma2_mma", "fp64", "mma1x", "mma2x")
# Fixed-latency results slow enough that a later fixed-latency write of the register could land before them
# (bobc.sim.hazards: the write-after-write rule)
SLOW_RESULTS = frozenset(_SLOW)


def _row(alu, fma, wide_lo, wide_hi, fp16, slow):
    return {"alu": alu, "fma": fma, "wide_lo": wide_lo, "wide_hi": wide_hi, "fp16": fp16, **dict(zip(_SLOW, slow))}


RAW = {
    "alu": _row(4, 5, 3, 5, 5, (10, 10, 13, 17)),
    "fma": _row(5, 4, 2, 4, 5, (10, 10, 13, 17)),
    "wide_ab": _row(5, 4, 4, 6, 5, (10, 10, 13, 17)),
    "wide_ch": _row(3, 2, 2, 2, 3, (8, 8, 11, 15)),
    # FP16 after FP16: NVIDIA's table says 4 (NAK notes it, and uses 5 for two Vulkan tests);
    # ptxas's sm_86 code issues HMUL2 4 cycles after the HADD2 it reads (tests/sim)
    "fp16": _row(5, 5, 3, 5, 4, (10, 10, 13, 17)),
    "fp64": _row(6, 6, 6, 6, 6, (6, 6, 13, 17)),                 # also HFMA2.MMA's reads
    "mma": _row(7, 7, 7, 7, 7, (11, 11, 14, 18)),                # MMA_2x_collect reader (HMMA)
    "decoupled": _row(4, 4, 4, 4, 4, (6, 6, 11, 15)),
    "agu": _row(5, 5, 5, 5, 5, (7, 7, 12, 16)),
}
# sm_90 (Hopper): the FP64 unit is coupled (sass-facts.md: "DADD/DMUL are ... fixed-latency on
# sm_90").  ptxas's sm_90 code never issues an FP64 reader of an FP64 result fewer than 8 cycles
# after it (DFMA -> DADD / DFMA / DMUL, DADD -> DMUL / DFMA: 8 in tests/sass/data/corpus-sm_90.tsv),
# where the Ampere table says 6: the checker holds sm_90 code to ptxas's minimum.
RAW_SM90 = {**RAW, "fp64": {**RAW["fp64"], "fp64": 8}}


def raw_table(arch: str) -> dict:
    """The RAW table of a target (nvdisasm's SM86 / SM90 spelling; ARCHES)."""
    return arch_latencies(arch).raw


# Predicates: PREDICATE_RAW[reader][writer] (PredLatencySM80: Coupled / FMA readers; Guard,
# Decoupled and Disp_Alu (VOTE) readers as "guard" / "decoupled").  Writers: alu (Coupled,
# Disp_Alu), fma (IMAD's carry-out: PredLatencySM80 FMA, read 4 cycles on by an FMA-pipe reader as
# ptxas's IMAD.WIDE.U32 P0 -> IMAD.X is, 5 by an ALU one; tests/sass/test_latency_probes.py),
# fp16 (HSETP2 ...), fp64 (DSETP: RedirectedFP64), udp (a uniform-datapath instruction's uniform
# predicate, UPredLatencySM80 Udp: a uniform reader 4, a vector reader 6, a guard 11 (UGuard: the guard row,
# any instruction's @UPn), a branch 9 and an LDC / MMA operand 11 -- the decoupled row's 13 covers both; ptxas
# guards `@UP1 UIADD3` 12 cycles after the UISETP.GE.AND.EX that writes UP1 (user_forms.ptx param_compares, both
# targets: 12, 12, 14, 16; the guard row's 13 refused it before s44) -- a run of S02 uniform instructions, where 11
# cannot occur -- and `@!UP0 ULDC` 11 cycles after its UISETP on sm_90 (ptxas 13: probe s46 leftovers8,
# tests/sim/test_uniform_guard_latency_s46.py), so 11 is ptxas's minimum too) and voteu (VOTEU's uniform
# predicate, UPredLatencySM80 VoteU: a vector or uniform operand 1, a guard 5, a branch 2, an
# LDC/MMA 5 -- the guard/decoupled rows' 5 cover both; ptxas's sm_90 code guards a uniform
# instruction 5 cycles after the VOTEU.ALL that writes its predicate, tests/sass/data corpus
# sm90_async.ptx).
PREDICATE_RAW = {
    "coupled": {"alu": 4, "fma": 5, "fp16": 5, "fp64": 6, "udp": 6, "voteu": 1},
    "fma": {"alu": 5, "fma": 4, "fp16": 5, "fp64": 6, "udp": 6, "voteu": 1},
    "guard": {"alu": 13, "fma": 13, "fp16": 13, "fp64": 14, "udp": 11, "voteu": 5},
    "decoupled": {"alu": 13, "fma": 13, "fp16": 13, "fp64": 14, "udp": 13, "voteu": 5},
    "udp": {"alu": 4, "fma": 5, "fp16": 5, "fp64": 6, "udp": 4, "voteu": 1},
}


def predicate_writer_class(opcode: str) -> str:
    if opcode == "VOTEU":
        return "voteu"       # UPredLatencySM80 VoteU (a V, not a U, opens its name)
    if opcode.startswith("U"):
        return "udp"
    if opcode == "DSETP":
        return "fp64"
    if opcode in ("HSETP2", "HMNMX2"):
        return "fp16"
    if opcode == "IMAD":
        return "fma"
    return "alu"


# Uniform registers: UNIFORM_RAW[reader][writer] (URegLatencySM80::read_after_write).  Writers:
# udp (a uniform-datapath instruction: UIADD3, ULOP3, ULEA, USHF, UIMAD ...), umov (UMOV), uldc
# (ULDC), voteu (VOTEU); REDUX and sm_86's R2UR (NAK's ToUr, which needs a scoreboard) are variable
# latency, held to their write scoreboard, not timed (DECOUPLED; ARCHES.r2ur_reads_at_issue).  Readers:
# udp (a uniform instruction), umov (UMOV, VOTEU), uldc (ULDC's c[..][URn] index), coupled (a
# vector fixed-latency instruction), decoupled (a vector variable-latency or address-unit one).
# ptxas's -O3 corpus (tests/sass/data) meets every entry with equality where it has a sample:
# UIADD3 / ULOP3 / ULEA / USHF -> uniform reader 4, UIADD3 / ULEA -> IMAD / LEA 6, ULEA -> STS /
# SYNCS 9, UIADD3 -> UMOV 7, UMOV / ULDC -> any reader 2.
# r2ur: sm_90's R2UR, which ptxas times rather than scoreboards (ARCHES: r2ur_reads_at_issue): ptxas never
# reads its result sooner than 13 cycles on (24 placements in tests/sass/data corpus-sm_90.tsv, 5 at
# 13; bobc.sass.tables.arch's SchedulingFacts.fixed_latency gives 13): the checker holds sm_90 code to ptxas's minimum, as
# it does sm_90's FP64 results (RAW_SM90).  Hopper's table is not public.
_U = ("udp", "umov", "uldc", "voteu", "r2ur")
UNIFORM_RAW = {
    "coupled": dict(zip(_U, (6, 2, 2, 2, 13))),
    "decoupled": dict(zip(_U, (9, 2, 2, 2, 13))),
    "uldc": dict(zip(_U, (12, 5, 5, 5, 13))),
    "udp": dict(zip(_U, (4, 2, 2, 2, 13))),
    "umov": dict(zip(_U, (7, 2, 2, 2, 13))),
}


def uniform_writer_class(opcode: str, arch: str) -> str:
    if opcode == "R2UR" and arch_latencies(arch).r2ur_reads_at_issue:
        return "r2ur"
    if opcode == "UMOV":
        return "umov"
    if opcode == "VOTEU":
        return "voteu"
    if opcode in UNIFORM_LOAD or not opcode.startswith("U"):
        return "uldc"                  # ULDC (R2UR on sm_86, REDUX and S2UR are variable latency: never timed)
    return "udp"


def uniform_reader_class(opcode: str, modifiers: tuple[str, ...]) -> str:
    if opcode in UNIFORM_LOAD:
        return "uldc"
    if opcode in ("UMOV", "VOTEU"):
        return "umov"
    if opcode.startswith("U"):
        return "udp"
    return "decoupled" if reader_class(opcode, modifiers) in ("decoupled", "agu") else "coupled"


def fp64_conversion(opcode: str, modifiers: tuple[str, ...]) -> bool:
    """A conversion to or from binary64 (F2F / I2F / F2I .F64): the FP64 unit's operand class, and variable latency
    whether or not it sets a scoreboard (bobc.sim.hazards; probe s47 simgaps2): ptxas -O3 sets a write scoreboard on
    every one whose result it reads other than through the conversion queue's order (QUEUES "xu": an unscored one
    is read only after a later conversion's scoreboard is waited on) -- tests/sass/data/corpus-sm_86.tsv /
    corpus-sm_90.tsv; its -O0 code issues them under a stall of 0.  Timed as the FP64 unit's result (RAW fp64)
    before session 47, though no ptxas code relies on a timing."""
    return opcode in ("I2F", "F2I", "F2F") and "F64" in modifiers


def wide_integer_conversion(opcode: str, modifiers: tuple[str, ...]) -> bool:
    """A conversion to or from a 64-bit integer (I2F / F2I .S64, .U64) runs on the FP64 unit as well, variable
    latency as fp64_conversion's: ptxas's unscored I2F.U64 (param_shapes.ptx convs, both targets) is read only
    after the wait on a later conversion's scoreboard (`F2F.F64.F32 R2, R0` on SB0 there), which completes it."""
    return opcode in ("I2F", "F2I") and ("S64" in modifiers or "U64" in modifiers)


_fp64_conversion, _wide_integer_conversion = fp64_conversion, wide_integer_conversion


def writer_class(opcode: str, modifiers: tuple[str, ...]) -> str | None:
    """The class of `opcode`'s register results: a key of a RAW row, 'wide' (IMAD.WIDE: lo/hi per
    register), 'decoupled', 'fp64' (decoupled when it sets a scoreboard), 'uldc', or None."""
    if opcode in UNIFORM_LOAD:
        return "uldc"
    if opcode.startswith("U") and opcode[1:] in DECOUPLED:
        # the uniform datapath's FLO / POPC / BREV are timed: NAK's URegLatencySM80 classes every
        # uniform instruction's result Udp, and ptxas sets no scoreboard on UFLO (tests/sass/data,
        # both targets), reading it 4 cycles on from a uniform instruction (sm_86 param_shapes.ptx)
        return "udp"
    if opcode.startswith("U") and opcode[1:] in KNOWN_BASES:
        return writer_class(opcode[1:], modifiers)
    if opcode == "IMAD" and "WIDE" in modifiers:
        return "wide"
    if opcode == "HFMA2" and "MMA" in modifiers:
        return "hfma2_mma"
    if opcode == "FRND" and "F16" in modifiers:
        # the binary16 rounding: ptxas sets no scoreboard on FRND.F16 (tools/ptx_corpus/math_forms2.ptx
        # half_forms2, both targets), where every other FRND gets one -- timed as the FP16 unit's results
        return "fp16"
    if _fp64_conversion(opcode, modifiers) or _wide_integer_conversion(opcode, modifiers):
        return "fp64"
    if opcode in COUPLED_ALU:
        return "alu"
    if opcode in COUPLED_FMA:
        return "fma"
    if opcode in FP16:
        return "fp16"
    if opcode in DECOUPLED:
        return "decoupled"
    if opcode in FP64:
        return "fp64"
    if opcode in TENSOR:
        return "mma2x" if "16816" in modifiers else "mma1x"
    return None


def reader_class(opcode: str, modifiers: tuple[str, ...]) -> str:
    if opcode.startswith("U") and opcode[1:] in KNOWN_BASES and opcode not in UNIFORM_LOAD:
        opcode = opcode[1:]
    if opcode in AGU_READERS:
        return "agu"
    if opcode in DECOUPLED_READERS:
        return "decoupled"
    if opcode in TENSOR:
        return "mma"
    if opcode in FP64 or (opcode == "HFMA2" and "MMA" in modifiers) or _fp64_conversion(opcode, modifiers):
        return "fp64"
    if opcode in FP16:
        return "fp16"
    if opcode in COUPLED_FMA:
        return "fma"
    return "alu"


def predicate_reader_class(opcode: str) -> str:
    if opcode == "VOTEU":
        # VOTEU's vector predicate operand: NAK's PredLatencySM80 classes every Op::Vote, uniform or not, as
        # Disp_Alu (read at dispatch, 13 cycles after an ISETP), and ptxas leaves 13 ISETP -> VOTEU (corpus);
        # classed by its U prefix as a uniform-datapath read, 5 cycles passed the checker (probe s45 mutants11)
        return "guard"
    if opcode == "BAR":
        # BAR.RED's predicate operand is read as early: ptxas leaves 13 cycles ISETP -> BAR.RED in the corpus
        # (bobc.sass.schedule PREDICATE_READ_AT_DISPATCH); as a coupled ALU read, 5 passed the checker
        return "decoupled"
    if opcode.startswith("U") and opcode not in ("UTMALDG", "UTMASTG"):
        return "udp"         # UPredLatencySM80 Udp reader (UISETP, UPLOP3, USEL ...)
    if opcode == "VOTE":
        return "guard"       # PredLatencySM80: Vote reads its predicate at dispatch (Disp_Alu), 13 cycles
    if opcode in DECOUPLED_READERS or opcode in AGU_READERS:
        return "decoupled"
    return "fma" if opcode in COUPLED_FMA else "coupled"


# Variable-latency units whose results return in issue order (ptxas leaves the earlier of two
# back-to-back LDSM without a scoreboard and waits on the later one's): a result that set no
# scoreboard is complete once a later instruction of its queue has completed.
#
# The multi-function queue ("xu"): ptxas's -O3 code (tests/sass/data/corpus-sm_*.tsv, both targets)
# reads an unscoreboarded result of one of these after waiting only on a later one's scoreboard:
# POPC then FLO (int_math: `POPC R4, R0` without a scoreboard, `FLO.U32 R5, R5` on SB0, the
# reader of R4 waits SB0), FLO then BREV (sm_90 int_math), MUFU then MUFU (float_math:
# MUFU.LG2 unscored, MUFU.EX2 on SB0), MUFU.RCP then FLO (div.u32 beside clz), I2F then F2I and
# F2I then F2I (conversions), I2F.S16 then F2F.BF16.F32 (sm_86 param_shapes.ptx convs: the I2F's
# result read after waiting only on the F2F's scoreboard).  So they return in issue order through one
# queue.
# The FP64 unit where it is variable latency (sm_86): ptxas's sm_86 code reads an unscored DSETP's
# predicate after waiting on a later DFMA's scoreboard, and an unscored DMUL's result after a later
# DADD's (corpus3.ptx double_math) -- results in issue order.  (F64 and 64-bit integer conversions, which run
# on the FP64 unit too, return through the conversion queue "xu": fp64_conversion.)
# SHFL shares the shared-memory queue: ptxas's sm_90 code reads two unscored LDS results after
# waiting only on a later SHFL's scoreboard (corpus.ptx shared_and_shuffle).
QUEUES = {"LDS": "shared", "LDSM": "shared", "ATOMS": "shared", "SHFL": "shared", "LDG": "global", "LDL": "global",
          "ATOMG": "global", "ATOM": "global", "LD": "global", "LDC": "constant",
          "POPC": "xu", "FLO": "xu", "BREV": "xu", "MUFU": "xu", "I2F": "xu", "F2I": "xu", "F2F": "xu",
          "DADD": "fp64", "DMUL": "fp64", "DFMA": "fp64", "DSETP": "fp64"}


def queue_of(opcode: str) -> str:
    return QUEUES.get(opcode, opcode)


# ARCHES.fp64_decoupled: whether the FP64 unit (DADD / DMUL / DFMA / DSETP) is variable latency: every result needs
# a scoreboard (sass-facts.md "DADD/DMUL are scoreboarded on sm_86"; NAK's needs_scoreboards is
# true for RedirectedFP64 on Ampere; ptxas's sm_86 code sets one on every FP64 instruction but an
# earlier one of an in-order pair, QUEUES).  GA10x's FP64 rate is 1/64 of FP32's.


# ARCHES.r2ur_reads_at_issue: whether R2UR reads its register at issue: on sm_90 ptxas sets no scoreboard on any R2UR
# (28 of 28 in tests/sass/data corpus-sm_90.tsv) and overwrites its source the very next cycle
# (sm90_hgmma_product.ptx: `R2UR UR23, R5` then `IMAD.MOV.U32 R5, RZ, RZ, 0x3fff`, stall 1), as
# it does a fixed-latency instruction's.  Where it does not (sm_86), R2UR is NAK's: a Decoupled reader and a
# variable-latency writer of its uniform register and its predicate (URegLatencySM80 ToUr, which needs a
# scoreboard; PredLatencySM80: R2UR => Decoupled), held to its write scoreboard, not timed -- ptxas 13's sm_86
# `R2UR P0, URZ, R7` (is the member mask uniform) sets one and `@!P0 BRA.CONV UR6` waits on it 2 cycles on
# (user_forms.ptx shfl_loaded_mask W4 / wait SB4, tile_ballot W0 / wait SB0; the checker timed the
# predicate as an ALU result's 13 before s44), and its -O0 `R2UR UR4, R8` sets none but stalls 0.


@dataclass(frozen=True)
class ArchLatencies:
    """The checker's rules that differ between targets: one row per target (ARCHES)."""

    raw: dict                    # RAW[reader][writer]: RAW (Ampere's) or RAW_SM90
    fp64_decoupled: bool         # the FP64 unit's results are scoreboarded, not timed
    r2ur_reads_at_issue: bool    # R2UR reads its source at issue and is timed (UNIFORM_RAW's r2ur); else
                                 # it is variable latency: its results held to its write scoreboard


# One row per target, by nvdisasm's name for it (bobc.targets Target.nvdisasm_arch, the name the
# simulator knows an architecture by); a target without a row is refused (arch_latencies)
ARCHES = {
    "SM86": ArchLatencies(raw=RAW, fp64_decoupled=True, r2ur_reads_at_issue=False),
    "SM90": ArchLatencies(raw=RAW_SM90, fp64_decoupled=False, r2ur_reads_at_issue=True),
}


def arch_latencies(arch: str) -> ArchLatencies:
    """The checker's row for the target nvdisasm calls `arch`; MissingTargetFact without one."""
    return target_row(ARCHES, arch, "bobc.sim.latencies.ARCHES", "hazard-checker latencies")

# A variable-latency instruction that sets no read scoreboard: ptxas's -O3 code (both targets) never
# overwrites one of its source registers fewer than 3 cycles after it issued (SHFL on sm_86 3, LDG on
# sm_90 4, STS / STL 6); at 2 cycles it always sets a read scoreboard and the writer waits on it
# (LDG / STG / STL / STS / F2I).  The checker refuses an overwrite sooner than this; a later one is
# not checked (the hardware's read time is not published).
WAR_UNSCORED = 3
