"""Automatic control codes: stalls, yield, scoreboards and wait masks from data dependencies.

Correctness first, speed second (sass-facts.md "Control codes and latencies"):
- a fixed-latency result is ready the opcode's latency after issue
  (FIXED_LATENCIES: the stalls ptxas itself puts in dependent chains; an
  opcode not in the table gets DEFAULT_LATENCY; predicates PREDICATE_LATENCY);
  a consumer, or a later writer of the same register, issues no earlier, by
  lengthening the stall of the instruction before it; a variable-latency
  writer of such a register issues no sooner than DECOUPLED_OVERWRITE (6)
  cycles after the fixed-latency writer;
- every variable-latency instruction gets a write scoreboard; its consumers,
  and any later writer of its destination, wait on it;
- memory/shuffle instructions that read registers late also get a read
  scoreboard that any later writer of those registers waits on;
- at a branch and at a label everything outstanding is drained (all
  scoreboards waited, all fixed latencies covered), so no path can see a
  value early -- except that in a program whose only control flow is BRA, EXIT and
  BAR a forward branch hands its scoreboards to its target (FORWARD_BRANCH);
  a block barrier (BAR) waits the scoreboards only (BARRIER_DRAIN);
  a loop's back edge (a BRA to an earlier instruction) covers a
  fixed latency only as far as the loop needs it: the result must be ready
  when each of its readers (and its first writer) after the loop's label
  issues, counting the cycles the loop spends before it (BACK_EDGE below);
- explicit control codes are kept as written and their effects tracked.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .syntax import Control
from .tables.arch import scheduling_facts
from .tables.layouts import DEFAULT_LATENCY, EXPLICIT_CONTROL, READS_LATE, VARIABLE_LATENCY

# Cycles from issue until a fixed-latency result may be read, by opcode: the
# stalls ptxas chooses in dependent chains on sm_86 and sm_90 (sass-facts.md,
# "Control codes and latencies"); IMAD.WIDE's high half is ready a cycle after
# its low half, so a wide multiply counts WIDE_LATENCY for both.
FIXED_LATENCIES = {
    "FFMA": 4, "FADD": 4, "FMUL": 4, "FMNMX": 4, "FSEL": 4,
    "IADD3": 4, "LOP3": 4, "LEA": 5, "SHF": 4, "MOV": 4, "SEL": 4, "IMNMX": 4,
    "IMAD": 5, "I2FP": 5,
    # HMMA.16816 (fixed latency, no scoreboard): NVIDIA's Ampere tables (Mesa NAK
    # sm80_instr_latencies.rs, MMA_2x_collect) give 17 cycles to an ALU reader and 18 to
    # the next HMMA on the same accumulator; ptxas waits 23-26 cycles after it in the
    # corpus on both targets (Hopper's table is not public): the longest is taken.
    "HMMA": 26,
    # HFMA2.MMA (the binary16 FMA issued to the tensor pipe; ptxas uses it as a move of a
    # constant): ptxas 13's sm_90 code reads its result 10 cycles on at the earliest, from an
    # IMAD, a PRMT, an FSEL and an HFMA2 alike (tests/sass/data corpus-sm_90); the sm_86 corpus
    # has none, and NVIDIA's Ampere tables (Mesa NAK sm80_instr_latencies.rs, HFMA2_MMA) give
    # 10 too.  Keyed by latency_key (the opcode with .MMA).
    "HFMA2.MMA": 10,
    # I2I (cvt.sat to an 8- or 16-bit integer): ptxas 13's sm_86 code reads it 8 cycles on at the
    # earliest (I2I.S16.S32.SAT -> PRMT 0x9910, tools/ptx_corpus/math_forms.ptx), sm_90's 6: the longer
    "I2I": 8,
}
# An HMMA reads a fixed-latency (coupled) result later than the ALUs do: NAK gives 7
# cycles from an ALU/FMA writer to an MMA reader where an ALU reader needs 4.
MMA_OPERAND_DELAY = 3
WIDE_LATENCY = 6
# sm_90's asynchronous units (TMA, mbarriers, warpgroup MMA: tables.layouts.EXPLICIT_CONTROL) read
# uniform registers later than the uniform ALU delivers them to its own consumers: ptxas leaves at
# least 9 cycles between a uniform ALU write (UIADD3, ULOP3, ULEA, USHF) and an HGMMA, SYNCS or
# UTMALDG reading it (the sm_90 corpus and the product probe's listings), and an SYNCS.ARRIVE 6
# cycles after the UIADD3 of its mbarrier address failed on the H200 ("Unknown Error" at the
# arrive: bench/results/sm90-gemm-h200.md).  (UMOV -> UTMALDG is as short as 2 in ptxas's code;
# the rule takes 9 for every uniform producer.)
ASYNC_UNIFORM_READ = 9
# The other variable-latency (decoupled) instructions read a uniform register as late, when the
# uniform datapath's ALU wrote it: NVIDIA's Ampere tables (Mesa NAK sm80_instr_latencies.rs,
# URegLatencySM80: Udp writer -> Decoupled reader 9, where a coupled reader needs 6 and a ULDC's
# or UMOV's result is ready to either after 2), and ptxas 13 leaves exactly 9 cycles from a
# ULOP3 / USHF / UIADD3 to the MUFU, POPC, FLO, F2F, I2F reading it (sm_86 and sm_90, with nothing
# else to issue: tests/sass/test_latency_probes.py) and from a ULEA to an STS addressing [R+UR]
# (sm_90, tests/sass/data corpus3 atomics).  Issued 6 cycles on, such a reader may take the
# register's previous value.  The FP64 unit counts as one (NAK: a decoupled UR reader; sm_90's
# fixed-latency DADD is no exception the tables or ptxas show).  UNIFORM_UNIT_WRITERS_EXCEPT: the
# U-opcodes whose results are not the uniform ALU's.
UNIFORM_UNIT_WRITERS_EXCEPT = {"ULDC", "UMOV", "VOTEU"}
# A branch reads its uniform register (sm_86's `BRA.CONV URn` / `BRA.DIV URn`, the member mask) as such a reader
# too: NAK's Decoupled reader row (BRA is one), which bobc.sim's checker holds it to since s45; ptxas 13 feeds it
# from a REDUX alone, on a scoreboard it waits on (user_forms.ptx shfl_loaded_mask, tile_ballot), so no sample
# times a uniform-datapath result to it.
UNIFORM_DECOUPLED_BRANCHES = {"BRA"}
# A UMOV reads such a result later than the uniform ALU itself does: 7 cycles (NAK's
# URegLatencySM80: Udp writer -> Umov reader 7, a Udp reader 4); ptxas 13 never issues a UMOV fewer
# than 7 cycles after the UIADD3 / ULOP3 / UPRMT it copies (tests/sass/data corpus, sm_90), and
# bobc.sim's checker, which holds code to NAK's table, refused bobc's 6.
UNIFORM_MOVE_READ = 7
# Memory and shuffle instructions (the ones that read their registers late,
# READS_LATE) take their register operands a cycle sooner than the ALUs do:
# ptxas never issues LDG/STG/LDS/STS/SHFL fewer than 5 cycles after the 4-cycle
# IADD3/LOP3/FADD that feeds them, on either architecture (tests/sass/data).  Reading
# an address a cycle early gave a stale high word and an MMU fault on the H200.
EARLY_OPERAND_FETCH = 1
# Fixed-latency instructions run on two pipes, the FMA pipe (FP32 arithmetic,
# IMAD) and the ALU pipe (integer/logic, FMNMX, FSEL, compares, moves); a result
# crossing from one to the other arrives a cycle later: ptxas keeps 4 cycles
# FADD->FADD and FMNMX->FMNMX but 5 FMNMX->FADD, FADD->FMNMX/FSEL/FSETP,
# IADD3/LEA/SEL->IMAD (tests/sass/data, both architectures).  A FADD issued 4
# cycles after the FMNMX it read saw the value before it on the H200.
FMA_PIPE = {"FADD", "FMUL", "FFMA", "IMAD", "HFMA2", "HADD2", "HMUL2"}
CROSS_PIPE = 1
# DEFAULT_LATENCY (tables/layouts.py): anything else fixed-latency, the longest ALU chain ptxas uses
# The FP64 unit (DADD, DMUL, DFMA, DSETP) takes its register operands later than the ALUs do,
# on either target: ptxas 13 issues a DADD no sooner than 6 cycles after the MOV of one of its
# operands, a DSETP 6 after an FSEL (tests/sass/data, corpus3 double_math), where an ALU reader
# needs 4.  And on sm_90, where the FP64 results are timed (tables/arch.py SchedulingFacts.fixed_latency), a reader outside the
# FP64 unit gets them later than the next FP64 instruction does: ptxas leaves 10 cycles from
# DADD to FSEL and from DMUL to F2I (8 from DADD/DMUL/DFMA to the next FP64 reader); NVIDIA's
# Ampere tables (NAK: RedirectedFP64 -> an ALU/FMA reader) give 10 as well.  A memory
# instruction's late-read operands (STG's data) are taken at 7 by ptxas, within the 8.
# Kernels built under these delays ran bit for bit on an H100 in session 34 (tests/gpu/logs/2026-12-06-s34-*).
FP64_UNIT = {"DADD", "DMUL", "DFMA", "DSETP"}
FP64_OPERAND_DELAY = 2
FP64_RESULT_DELAY = 2
# HFMA2.MMA (keyed by latency_key) takes its register operands as late as the FP64 unit does: NVIDIA's Ampere
# tables (Mesa NAK sm80_instr_latencies.rs) give it a reader class of its own (HFMA2_MMA) whose row is
# RedirectedFP64's, 6 cycles after an ALU / FMA / FP16 writer (bobc.sim.latencies RAW["fp64"], "also
# HFMA2.MMA's reads"), where the FMA pipe's own readers need 4 or 5: an IADD3 / LOP3 result read 5 cycles on
# (4 and CROSS_PIPE) was refused by bobc.sim's checker (probe s45 backedge).  ptxas only ever feeds it RZ and
# immediates (a move of a constant), so no corpus sample times it.
FP64_LIKE_READERS = {"HFMA2.MMA"}
# An HMMA reading an FP64 result (sm_90, where it is timed) waits the later of the two delays, not their sum:
# NAK's MMA_2x_collect reader row gives 11 after a RedirectedFP64 writer, 10 for an ALU reader (FP64_RESULT_DELAY),
# 7 after an ALU writer (MMA_OPERAND_DELAY); bobc issued it 10 cycles on, which bobc.sim's checker refused.
# Opcodes that are fixed-latency on one architecture though VARIABLE_LATENCY lists them, and their
# latency there, and whether a MEMBAR completes on a scoreboard: per target, in its row of
# sass/tables/arch.py (ArchEncoding.scheduling; a target without one is refused, not given sm_86's
# scoreboard rule: tests/sass/test_schedule.py).
# A predicate is read early when it guards an instruction and late when it is an
# operand (SEL/FSEL's choice, IADD3.X's carry): ptxas waits 13 cycles from
# ISETP/FSETP to a guard and 4 to an operand (5 ahead of IMAD), in the sm_90
# corpus (tests/sass/data).
PREDICATE_LATENCY = 13     # -> an instruction it guards
# A predicate the FP64 unit wrote (a DSETP where it is fixed-latency: sm_90, SchedulingFacts.fixed_latency) guards a
# cycle later still: NVIDIA's Ampere tables (Mesa NAK sm80_instr_latencies.rs, PredLatencySM80:
# RedirectedFP64 writer -> Guard / Disp_Alu reader 14, a coupled writer 13), and ptxas 13 on sm_90
# leaves 14 cycles from DSETP to `@!P0 EXIT` and to `@P1 LOP3` (tests/sass/test_latency_probes.py,
# tests/sass/data corpus3 double_math), never 13.
FP64_PREDICATE_LATENCY = 14
PREDICATE_OPERAND_LATENCY = 5
# ... but HSETP2's (the binary16 unit's compare) 6: ptxas 13 never reads one sooner, on either target
# (HSETP2 -> SEL, 5 placements each, tools/ptx_corpus/math_forms.ptx, tests/sass/test_latency_vs_ptxas.py)
PREDICATE_OPERAND_LATENCIES = {"HSETP2": 6}
# A uniform predicate (UISETP, UPLOP3: the uniform datapath) reaches a vector instruction's
# operand 6 cycles after issue, a uniform one's 4 (NAK's UPredLatencySM80: Udp writer, Coupled
# reader 6, Udp reader 4; ptxas leaves 6 UISETP -> PLOP3): the longer is taken for both.
UNIFORM_PREDICATE_OPERAND_LATENCY = 6
# VOTE takes its predicate operand at dispatch, as early as a guard: NVIDIA's Ampere tables
# (Mesa NAK sm80_instr_latencies.rs, PredLatencySM80: Vote is a Disp_Alu reader, 13 cycles after
# an ISETP).  A VOTE.ANY 5 cycles after the ISETP it read balloted the predicate's previous value
# on the H200 (the kernel that voted summed rows its lanes had not chosen).
# BAR.RED's predicate operand and VOTEU's are read as early (NAK's PredLatencySM80: a Decoupled
# predicate reader, as BAR is, and Vote, VoteU's vector form, 13 after a coupled writer; ptxas
# leaves 13 cycles ISETP -> BAR.RED and -> VOTEU in the corpus, tests/sass/test_latency_vs_ptxas.py).
PREDICATE_READ_AT_DISPATCH = {"VOTE", "VOTEU", "BAR"}
BARRIER_SETTER_MIN_STALL = 2
# The other variable-latency instructions with register sources also read them after issue, in
# their own unit: NVIDIA's Ampere tables (Mesa NAK calc_instr_deps.rs: a scoreboarded
# instruction's sources get a read dependency a later writer waits on) and ptxas 13, which on
# both targets covers every overwrite of a MUFU / F2I / I2F / F2F / DSETP / BREV / FLO source
# issued within 16 cycles of it by a scoreboard wait (2 to 11 cycles on in the corpus; none
# unprotected under 16 but the next instruction of the same unit).  Without it `MUFU.EX2 R8, R2`
# then `FADD R2, ...` one cycle on may feed the MUFU the FADD's value.  A later writer of such a
# source waits the instruction's write scoreboard (done implies read); an instruction of the same
# opcode does not (its unit completes in order, as ptxas relies on: a MUFU, F2I or LDS with no
# scoreboard of its own is covered by the wait on a later one's, tests/sass/data).  ptxas sets no
# scoreboard on R2UR at all on sm_90 and overwrites its source a cycle later: not listed.
ASYNC_SOURCE_READERS = {"MUFU", "F2I", "I2F", "F2F", "POPC", "BREV", "FLO", "DSETP", "REDUX", "MATCH"}
# A variable-latency (decoupled, scoreboarded) instruction that overwrites a register a
# fixed-latency instruction wrote issues no sooner than DECOUPLED_OVERWRITE cycles after that
# writer, whatever the writer's own latency: the decoupled unit's write may otherwise land
# before the fixed pipe's write-back, which then leaves the older value.  ptxas 13 never leaves
# fewer than 6 cycles between such a pair on either target (the -O3 corpus, tests/sass/data:
# LDL 137 placements, LDG, LDC, LDS, MUFU, S2R all >= 6; `FADD R2, R2, c[..]` -> `F2I.U64.TRUNC
# R2, R2` 6 where `FADD R0` -> `F2I.U64.TRUNC R2, R0` is 4); NVIDIA's Ampere tables (Mesa NAK
# sm80_instr_latencies.rs, write_after_write: a coupled ALU/FMA writer, then a Decoupled writer)
# give 5, 6 when the first writer is predicated.  ptxas's 6 is taken for every pair
# (tests/sass/test_decoupled_overwrite_s37.py).
DECOUPLED_OVERWRITE = 6
CONTROL_FLOW_STALL = {"BRA": 5, "EXIT": 5, "BAR": 6}
# Memory fences: ptxas 13 gives every MEMBAR a stall of 6 (18 of 18 in the -O3 corpus, both targets)
# and sm_90's CGAERRBAR 6 or 8 (7 of 7); NVIDIA's tables (Mesa NAK sm70.rs exec_latency: MemBar 6 on
# sm_80 and later) say 6.  And on sm_90 a MEMBAR completes on a scoreboard the next instruction waits:
# ptxas sets a read scoreboard on each of its 7 MEMBAR.*.CTA and waits it at the very next instruction
# (an LEA, a FENCE.VIEW.ASYNC.S); its MEMBAR.*.GPU are followed by an ERRBAR instead.  bobc does the
# former for every MEMBAR on sm_90 (a wait more where ERRBAR would hold the warp anyway): its
# SchedulingFacts.membar_scoreboard (tables/arch.py).
FENCE_STALL = {"MEMBAR": 6, "CGAERRBAR": 6}
BARRIERS = range(6)
# Scoreboards by latency class.  A global load's result takes microseconds (over
# PCIe, for a host-mapped arena); shuffles, MUFU, constant and shared loads,
# and the register reads of stores take tens of cycles.  Each class has its
# own scoreboards, and when a class has none free the new operation joins the
# class's most recent one (a scoreboard counts its operations; a wait waits for
# all of them) instead of stalling until the oldest completes: so a burst of
# shuffles never waits on an outstanding prefetch, and several loads issued
# together stay in flight together.
LONG_LATENCY_RESULTS = {"LDG"}
LONG_BARRIERS = (0, 1, 2, 3)   # a row and what it needs next can be in flight at once
SHORT_BARRIERS = (4, 5)
# Asynchronous copies (LDGSTS) are counted in groups: LDGDEPBAR closes a group on
# scoreboard SB0 (ptxas's choice, corpus3 async_copy) and `DEPBAR.LE SB0, n` waits
# until at most n groups are outstanding.  The code waits explicitly, so that
# scoreboard is never allocated, put in a wait mask or drained at a branch: a
# pipelined loop keeps its copies in flight across its back edge.  In a program with
# LDGDEPBAR the global loads' results use the other long scoreboards.
ASYNC_COPY_BARRIER = 0
# DEPBAR's wait holds only what issues at least 4 cycles after it: ptxas gives every
# DEPBAR.LE a stall of 4 (7 once on sm_86) with the yield bit, in all 7 of the corpus
# (tests/sass/data listings, both targets).  With a stall of 1 the BAR.SYNC after it
# went through before the copies had landed: the tiled matrix products
# (bobc.sass.generate.gemm) read stages still being filled on the H200.
DEPBAR_STALL = 4


# BACK_EDGE.  A loop ends in a branch back to its label; draining there would stall every
# iteration until the last tensor-core product's result is ready (HMMA: 26 cycles), though
# the loop's first reader of that accumulator issues many cycles after the label.  On the
# taken path a fixed-latency result r need only be ready when each instruction from the
# label that reads r issues (with that reader's own delay, as straight-line code times it),
# up to the first that writes r: the branch's own issue and stall, plus the issue cycles
# from the label to that instruction, already fixed when the branch is scheduled (later
# scheduling only lengthens stalls, never shortens).  (Timed by the first instruction that
# touched r alone, a later reader that takes its operands later -- a DADD one cycle after an
# IADD3 of the same ALU result -- was up to 2 cycles short of this rule, covered only by the
# branch's stall; no shipped kernel's bytes depended on it: tests/sass/
# test_back_edge_every_reader_s46.py.)  The search stops at the first label or
# control-flow instruction after the loop's label (a shorter path may join or leave there):
# r, unless written before, must be ready by then for any reader.  (Only a branch or EXIT is needed there: a label joins paths, and the
# path from the loop's label issues the same instructions at the same offsets whoever else
# reaches it, so stopping at one is conservative.  And the needs are asked of the branch's own
# issue cycle, so its stall, at least 5, is a margin on top unless the branch holds the rest
# itself: tests/sass/test_back_edge_paths_checked_s45.py walks such loops through bobc.sim's
# checker on every path.)  Conversely a branch just after a loop waits out what the loop
# left in flight in its own stall, not in the loop's last stalls (paid on every trip).
# A BAR.SYNC is not such a place (every path goes through it, and
# it only ever delays).  Scoreboards are still drained, and the fall-through path keeps
# tracking r as any straight-line code does.
BACK_EDGE_STOPS = {"BRA", "EXIT"}

# BARRIER_DRAIN.  A BAR.SYNC waits every scoreboard (a thread's shared-memory loads and
# stores are complete before any thread passes: what the barrier exists for), but it is
# no join of paths: a fixed-latency result still in flight there (an HMMA's accumulator)
# stays tracked as in straight-line code and is waited for by its first reader after the
# barrier, not by the barrier.  Covering it at the barrier emptied the tensor pipe
# before every barrier of a pipelined loop (bobc.sass.generate.gemm, "Loop order").
SCOREBOARD_ONLY_DRAIN = {"BAR"}

# FORWARD_BRANCH.  Waiting every scoreboard at a forward branch makes the path that falls
# through wait too: a warp that loads its operands and then branches around work it may
# skip would take two global round trips where one would do (one operand's loads, then the
# next operand's after the branch, as Nsight Compute's stall samples showed).  Scoreboards
# are counters a wait empties, so a wait is correct on any path as long as it comes before the
# first reader; in a program whose control flow is only BRA (each to a known label), EXIT and
# BAR, a forward branch therefore waits nothing and its target label waits what was busy at
# each forward branch to it, while the path that falls through keeps tracking them as
# straight-line code does.  A label reached otherwise only by falling through and by back
# edges (which still drain) waits nothing.  Fixed latencies are covered at the branch as
# before.  Programs with other control flow (BSSY / BSYNC convergence, WARPSYNC, calls) drain.
CONVERGENCE_OPCODES = {"BSSY", "BSYNC", "WARPSYNC", "BREAK", "BRX", "JMP", "JMX", "CALL", "RET", "KILL"}

# UNSCORED.  An explicit control code may give a variable-latency instruction (VARIABLE_LATENCY, less the
# target's SchedulingFacts.fixed_latency and the form timed when unscored, Item.timed_unscored) no write
# scoreboard.  Its result lands when its unit returns it, which no stall covers: an automatically scheduled
# instruction that reads it (its guard included), or overwrites it other than by a later variable-latency write
# of the same in-order queue, is refused (UnscoredResult) unless something before it has completed the result,
# as bobc.sim's checker (hazards.py _read / _write / _complete) holds code to:
# - a wait on a scoreboard a LATER instruction of the same in-order queue set (IN_ORDER_QUEUES: their results
#   return in issue order, and ptxas relies on it -- two LDS, the first unscored, the reader waiting on the
#   second's scoreboard); where that scoreboard is still outstanding the automatic reader waits on it itself;
# - an instruction with a stall of 0 (the interlocked encoding: ptxas -O0 sets no scoreboard at all);
# - the reader runs under the complement of the producer's guard, the predicate not rewritten between.
# Before session 46 such a producer was timed as a fixed-latency one (DEFAULT_LATENCY) and only the simulator
# refused the read (probe s46 varlat: tests/sass/test_unscored_variable_latency_s46.py).
# The in-order queues, as bobc.sim.latencies.QUEUES names them (an opcode outside them is a queue of its own;
# the FP64 unit's only where it is variable latency, sm_86 -- elsewhere SchedulingFacts.fixed_latency times it).
IN_ORDER_QUEUES = {"LDS": "shared", "LDSM": "shared", "ATOMS": "shared", "SHFL": "shared", "LDG": "global",
                   "LDL": "global", "ATOMG": "global", "ATOM": "global", "LD": "global", "LDC": "constant",
                   "POPC": "xu", "FLO": "xu", "BREV": "xu", "MUFU": "xu", "I2F": "xu", "F2I": "xu", "F2F": "xu",
                   "DADD": "fp64", "DMUL": "fp64", "DFMA": "fp64", "DSETP": "fp64"}

# UNWAITED.  The converse of UNSCORED: an instruction whose control code is written by hand (Item.explicit) reads, or
# overwrites, a register that an AUTOMATICALLY scheduled variable-latency instruction writes (or, a read scoreboard
# set, still reads) on a scoreboard the scheduler picked -- which the author cannot know -- and its wait mask does
# not wait on it.  The scheduler used to wait on it in its own books only (the explicit code is kept as written), so
# `bobc asm` accepted code whose reader runs before the result lands; only bobc.sim's checker refused it at run time
# ("reads R4 before waiting on scoreboard 0": probe s46 varlat, finding 2; probe s47 simgaps2).  Refused
# (UnwaitedScoreboard) at the reader, naming the scoreboard and the control code to write.  Accepted, as the checker
# (hazards.py _read / _write / _complete) accepts them: a wait on a scoreboard a LATER instruction of the same in-order
# queue set (IN_ORDER_QUEUES), an earlier instruction with a stall of 0 (the interlocked encoding), an overwrite by a
# variable-latency instruction of the same in-order queue, and an access under the complement of the producer's guard,
# the predicate not rewritten between.  A producer whose control code is written is the author's (its scoreboard is
# theirs to wait on), and a program with no automatic producer (an nvdisasm listing: every code written) is untouched.

# HANDSTALL.  The fixed-latency counterpart: an AUTOMATICALLY scheduled instruction reads (or overwrites) a
# fixed-latency result sooner than its latency (FIXED_LATENCIES, _consumer_delay) because the stall before it is
# written by hand.  Its own control code cannot delay it -- an instruction issues the stall of the one before it later,
# and no wait covers a result on no scoreboard -- and the scheduler lengthens only automatic stalls, so it used to keep
# the written one and accept the read ("the author's responsibility"): only bobc.sim's checker refused it at run time
# ("reads R5 4 cycles after its producer at 0x0070 issued; an FMA result needs 5": probe s47 simgaps2 finding 4).
# Refused (ShortWrittenStall) at the written instruction whose stall is to grow, the latest one between the producer
# and the reader (the producer itself, mostly), naming the reader and the stall to write.  A reader whose own control
# code is written is the author's, as before (an nvdisasm listing, every code written, is untouched), and so is what a
# branch or label drains after written codes.  Accepted, as the checker (hazards.py) accepts them: a stall of 0 between
# (the interlocked encoding waits for every result outstanding) and a MEMBAR between (a GPU- or system-scope fence
# holds the warp longer than any fixed latency; any MEMBAR is excused here, erring toward accepting).


@dataclass
class Item:
    opcode: str
    reads: set[tuple[str, int]]
    writes: set[tuple[str, int]]
    explicit: Control | None = None
    label_here: bool = False       # a branch may land on this instruction
    wide: bool = False             # a .WIDE multiply: two result registers, the high one later
    guard: tuple[str, int] | None = None   # the guard predicate, read early
    target: int | None = None      # a BRA's target instruction index
    latency_key: str = ""          # FIXED_LATENCIES' key where it is not the opcode (HFMA2.MMA)
    guard_negated: bool = False    # the guard is @!Pn
    timed_unscored: bool = False   # a VARIABLE_LATENCY form timed when it sets no scoreboard (UNSCORED)

    def __post_init__(self):
        if not self.latency_key:
            self.latency_key = self.opcode


_ZERO = {"R": 255, "UR": 63, "P": 7, "UP": 7}


def expand(refs) -> set[tuple[str, int]]:
    """(bank, first, count) references -> the set of single registers, zero registers left out."""
    out = set()
    for bank, first, count in refs:
        if first == _ZERO[bank]:
            continue
        for i in range(count):
            out.add((bank, first + i))
    return out


@dataclass
class _State:
    cycle: int = 0
    ready: dict = field(default_factory=dict)          # reg -> cycle its value is ready (same pipe)
    producer: dict = field(default_factory=dict)       # reg -> opcode of its fixed-latency producer
    producer_index: dict = field(default_factory=dict) # reg -> index of that producer
    written: dict = field(default_factory=dict)        # reg -> cycle its fixed-latency producer issued
    guard_ready: dict = field(default_factory=dict)    # predicate -> cycle it may guard
    pending_write: dict = field(default_factory=dict)  # reg -> barrier
    pending_read: dict = field(default_factory=dict)   # reg -> barriers of every access still reading it
    pending_source: dict = field(default_factory=dict) # reg -> {(write barrier, opcode)} of ASYNC_SOURCE_READERS
    busy: list = field(default_factory=list)           # barriers in use, oldest first
    unscored: dict = field(default_factory=dict)       # reg -> _Unscored: a variable-latency result on no scoreboard
    last_scored: dict = field(default_factory=dict)    # barrier -> {queue: index of its latest producer there}
    pred_version: dict = field(default_factory=dict)   # predicate -> how many writes of it so far
    auto_write: dict = field(default_factory=dict)     # reg -> _Automatic: its automatic producer's scoreboard (UNWAITED)
    auto_read: dict = field(default_factory=dict)      # reg -> [_Automatic]: automatic readers' read scoreboards

    def wait(self, barrier: int) -> None:
        self.pending_write = {r: b for r, b in self.pending_write.items() if b != barrier}
        self.pending_read = {r: bs - {barrier} for r, bs in self.pending_read.items() if bs - {barrier}}
        self.pending_source = {r: {e for e in es if e[0] != barrier} for r, es in self.pending_source.items()
                               if any(e[0] != barrier for e in es)}
        if barrier in self.busy:
            self.busy.remove(barrier)
        # UNSCORED: a result of an in-order queue is complete once a later one of the queue is
        done = self.last_scored.get(barrier, {})
        self.unscored = {r: e for r, e in self.unscored.items() if e.index >= done.get(e.queue, -1)}
        # UNWAITED: an automatic producer's access is complete on its own scoreboard or a later one of its queue
        def outstanding(e):
            return e.barrier != barrier and e.result != barrier and e.index >= done.get(e.queue, -1)
        self.auto_write = {r: e for r, e in self.auto_write.items() if outstanding(e)}
        self.auto_read = {r: kept for r, es in self.auto_read.items() if (kept := [e for e in es if outstanding(e)])}

    def allocate(self, opcode: str = "", result: bool = True, async_copies: bool = False) -> tuple[int, int]:
        """A scoreboard for a variable-latency operation's result (or its late register
        reads), from its latency class; (barrier, wait mask) -- the mask is always 0."""
        pool = LONG_BARRIERS if result and opcode in LONG_LATENCY_RESULTS else SHORT_BARRIERS
        if async_copies:
            pool = tuple(b for b in pool if b != ASYNC_COPY_BARRIER)
        for b in pool:
            if b not in self.busy:
                self.busy.append(b)
                return b, 0
        newest = next(b for b in reversed(self.busy) if b in pool)
        self.busy.remove(newest)
        self.busy.append(newest)
        return newest, 0


@dataclass(frozen=True)
class _Unscored:
    index: int                     # the producer
    queue: str                     # its in-order queue (IN_ORDER_QUEUES, else its opcode)
    guard: tuple[str, int] | None
    negated: bool
    version: int                   # writes of its guard predicate before it
    suggest: int                   # a scoreboard free when it issued, to name in the refusal


@dataclass(frozen=True)
class _Automatic:
    index: int                     # the automatically scheduled variable-latency instruction
    barrier: int                   # the scoreboard the scheduler gave it
    queue: str                     # its in-order queue (IN_ORDER_QUEUES, else its opcode)
    guard: tuple[str, int] | None
    negated: bool
    version: int                   # writes of its guard predicate before it
    result: int = 7                # a read scoreboard's instruction's write scoreboard: waiting on it completes
                                   # the reads too (the checker's Unread.wsb)


class UnwaitedScoreboard(Exception):
    """An instruction whose control code is written reads (`access` "reads"), overwrites ("overwrites") or overwrites
    before it is read ("overwrites before it reads") a register of an automatically scheduled variable-latency
    instruction's scoreboard, and its wait mask does not wait on it (UNWAITED)."""

    def __init__(self, consumer: int, producer: int, register: tuple[str, int], access: str, barrier: int,
                 read_barrier: bool):
        super().__init__(consumer, producer, register, access, barrier, read_barrier)
        self.consumer, self.producer, self.register, self.access, self.barrier, self.read_barrier = (
            consumer, producer, register, access, barrier, read_barrier)


class UnscoredResult(Exception):
    """An automatically scheduled instruction reads (or overwrites) the result of a variable-latency
    instruction whose explicit control code sets no write scoreboard (UNSCORED)."""

    def __init__(self, consumer: int, producer: int, register: tuple[str, int], read: bool, suggest: int):
        super().__init__(consumer, producer, register, read, suggest)
        self.consumer, self.producer, self.register, self.read, self.suggest = (
            consumer, producer, register, read, suggest)


class ShortWrittenStall(Exception):
    """An automatically scheduled instruction (`consumer`) reads or overwrites `register`, a fixed-latency result of
    `producer`, `deficit` cycles too early, and the stall that could delay it is written on `written` (HANDSTALL);
    `needed` cycles after the producer issues would do, `issued` is how many the stalls give, `room` how many more
    the written stalls between can hold (15 each); `read` False for an overwrite."""

    def __init__(self, consumer: int, producer: int, written: int, register: tuple[str, int], read: bool,
                 deficit: int, needed: int, issued: int, room: int):
        super().__init__(consumer, producer, written, register, read, deficit, needed, issued, room)
        self.consumer, self.producer, self.written, self.register = consumer, producer, written, register
        self.read = read
        self.deficit, self.needed, self.issued, self.room = deficit, needed, issued, room


class ScheduleShortfall(Exception):
    """A fixed latency that stalls cannot cover between its producer and its consumer."""

    def __init__(self, consumer: int, deficit: int, producer: int):
        super().__init__(consumer, deficit, producer)
        self.consumer, self.deficit, self.producer = consumer, deficit, producer


def schedule(items: list[Item], arch: str) -> list[Control]:
    """Control codes for `items` on `arch` (a target's name: its row of tables/arch.py, SchedulingFacts)."""
    facts = scheduling_facts(arch)
    fixed, membar_scoreboard = facts.fixed_latency, facts.membar_scoreboard
    controls: list[Control] = []
    issue: list[int] = []
    state = _State()
    async_copies = any(item.opcode == "LDGDEPBAR" for item in items)
    fence: int | None = None     # the scoreboard of a MEMBAR just issued (SchedulingFacts.membar_scoreboard)
    # FORWARD_BRANCH: target index -> scoreboards busy at a forward branch to it
    relaxed = not any(item.opcode in CONVERGENCE_OPCODES or (item.opcode == "BRA" and item.target is None)
                      for item in items)
    handed: dict[int, set[int]] = {}

    def require(cycle_needed: int, after: int, branch_holds: bool = False) -> int:
        """Delay the current instruction to `cycle_needed` by lengthening stalls of the
        instructions from index `after` (the constraining producer) to the previous one,
        latest first, each up to 15 cycles; later producers' ready cycles move with them.
        Returns the delay that could not be placed there (the caller refuses it or, at a
        branch, puts it in the branch's own stall); it is never dropped."""
        if not controls or cycle_needed <= state.cycle:
            return 0
        deficit = cycle_needed - state.cycle
        reserved = 0
        for k in range(len(controls) - 1, max(after, 0) - 1, -1):
            if deficit <= 0:
                break
            if not reserved and branch_holds and items[k].target is not None and items[k].target < k:
                # a loop's back edge: the branch after the loop holds what it can in its own
                # stall, paid once, before any stall inside the loop grows (BACK_EDGE)
                reserved = min(15, deficit)
                deficit -= reserved
                continue
            if items[k].explicit is not None:
                continue  # written by hand: kept as is
            prev = controls[k]
            stall = min(15, prev.stall + deficit)
            delta = stall - prev.stall
            if delta <= 0:
                continue
            controls[k] = _with_stall(prev, stall)
            deficit -= delta
            state.cycle += delta
            for j in range(k + 1, len(issue)):
                issue[j] += delta
            for reg, at in state.producer_index.items():
                if at > k:
                    if reg in state.ready:
                        state.ready[reg] += delta
                    if reg in state.written:
                        state.written[reg] += delta
                    if reg in state.guard_ready:
                        state.guard_ready[reg] += delta
        if any(items[k].explicit is not None for k in range(max(after, 0), len(controls))):
            return reserved  # hand-written control codes in the way: the author's responsibility
        return max(deficit, 0) + reserved

    def insist(cycle_needed: int, after: int) -> None:
        left = require(cycle_needed, after)
        if left:
            raise ScheduleShortfall(len(controls), left, after)

    def constraint(pairs) -> tuple[int, int]:
        """(cycle needed, producer index) of the latest-ready of (cycle, register) pairs."""
        best = (0, 0)
        for cycle, reg in pairs:
            if cycle > best[0]:
                best = (cycle, state.producer_index.get(reg, 0))
        return best

    def insist_automatic(pairs, item: Item) -> None:
        """insist, for an automatically scheduled reader: a shortfall left by written stalls is refused (HANDSTALL)."""
        insist(*constraint(pairs))
        for cycle_needed, reg in sorted(pairs, key=lambda pair: (-pair[0], pair[1])):
            deficit, after = cycle_needed - state.cycle, state.producer_index.get(reg, 0)
            if deficit <= 0:
                break
            between = range(after, len(controls))
            if any(controls[k].stall == 0 or items[k].opcode == "MEMBAR" for k in between):
                continue    # the interlocked encoding (or a fence) holds the warp until every result is written
            written = [k for k in between if items[k].explicit is not None]
            if not written:
                raise ScheduleShortfall(len(controls), deficit, after)
            room = sum(15 - controls[k].stall for k in written)
            raise ShortWrittenStall(len(controls), after, written[-1], reg, reg in item.reads or reg == item.guard,
                                    deficit, cycle_needed - issue[after], state.cycle - issue[after], room)

    for index, item in enumerate(items):
        if item.explicit is not None and (state.auto_write or state.auto_read):
            _unwaited(state, item, index, fixed)    # before the scheduler's own books wait on anything
        drain = item.label_here or item.opcode in CONTROL_FLOW_STALL
        wait_mask = 0
        if drain:
            forward = item.opcode == "BRA" and item.target is not None and item.target > index
            arriving = handed.pop(index, set()) if item.label_here else set()
            if relaxed and (forward or (item.label_here and item.opcode not in CONTROL_FLOW_STALL)):
                waited = sorted(arriving)
            else:
                waited = [*state.busy, *sorted(arriving - set(state.busy))]
            for b in waited:
                wait_mask |= 1 << b
                state.wait(b)
            if relaxed and forward:
                handed.setdefault(item.target, set()).update(state.busy)
        if drain and item.opcode in SCOREBOARD_ONLY_DRAIN and not item.label_here:
            drain_left = 0
        elif drain:
            if item.target is not None and item.target < index and item.explicit is None:
                outstanding = _back_edge_needs(items, issue, state, item.target, index)
            else:
                outstanding = [*((c + CROSS_PIPE + EARLY_OPERAND_FETCH, r) for r, c in state.ready.items()),
                               *((c, r) for r, c in state.guard_ready.items())]
            drain_needed, drain_after = constraint(outstanding)
            left = require(drain_needed, drain_after,
                           branch_holds=item.opcode in CONTROL_FLOW_STALL and item.explicit is None)
            # What a branch (or barrier) leaves outstanding must be ready when the next
            # instruction, its target, issues: its own stall may hold the rest.
            if left > 15 or (left and (item.label_here or item.opcode not in CONTROL_FLOW_STALL
                                       or item.explicit is not None)):
                raise ScheduleShortfall(len(controls), left, drain_after)
            drain_left = left
        else:
            drain_left = 0
        if fence is not None:
            wait_mask |= 1 << fence
            state.wait(fence)
            fence = None
        for reg in item.reads | item.writes:
            b = state.pending_write.get(reg)
            if b is not None:
                wait_mask |= 1 << b
                state.wait(b)
        for reg in item.writes:
            for b in sorted(state.pending_read.get(reg, ())):
                wait_mask |= 1 << b
                state.wait(b)
            for b, reader in sorted(state.pending_source.get(reg, ())):
                if reader != item.opcode:
                    wait_mask |= 1 << b
                    state.wait(b)
        if item.explicit is None and state.unscored:
            wait_mask |= _unscored_waits(state, item, index, fixed)
        pairs = [*((state.ready[r] + _consumer_delay(state, r, item), r) for r in item.reads if r in state.ready),
                 *((state.ready[r], r) for r in item.writes if r in state.ready)]
        if item.opcode in VARIABLE_LATENCY and item.opcode not in fixed:
            pairs += [(state.written[r] + DECOUPLED_OVERWRITE, r) for r in item.writes
                      if r in state.ready and r in state.written]
        if item.guard is not None and item.guard in state.guard_ready:
            pairs.append((state.guard_ready[item.guard], item.guard))
        if item.opcode in PREDICATE_READ_AT_DISPATCH:
            pairs += [(state.guard_ready[r], r) for r in item.reads if r in state.guard_ready]
        if item.explicit is None:
            insist_automatic(pairs, item)
        else:
            insist(*constraint(pairs))

        unscored_here = _variable_here(item, fixed) and bool(item.writes)
        if item.explicit is not None:
            control = item.explicit
            for b in BARRIERS:
                if control.wait_mask >> b & 1:
                    state.wait(b)
            for reg in item.writes:
                state.unscored.pop(reg, None)    # overwritten by hand: its ordering is the author's (UNSCORED)
                state.auto_write.pop(reg, None)  # its (checked) overwrite is the author's from here (UNWAITED)
                state.auto_read.pop(reg, None)
            if control.stall == 0:
                state.unscored.clear()           # the interlocked encoding waits for every result outstanding
                state.auto_write.clear()
                state.auto_read.clear()
            elif unscored_here and control.write_barrier == 7:
                pool = LONG_BARRIERS if item.opcode in LONG_LATENCY_RESULTS else SHORT_BARRIERS
                free = [b for b in (*pool, *BARRIERS)
                        if b not in state.busy and not (async_copies and b == ASYNC_COPY_BARRIER)]
                entry = _Unscored(index, _queue_of(item.opcode), item.guard, item.guard_negated,
                                  state.pred_version.get(item.guard, 0), free[0] if free else 0)
                for reg in item.writes:
                    state.unscored[reg] = entry
                    for table in (state.ready, state.guard_ready, state.written, state.producer,
                                  state.producer_index, state.pending_write):
                        table.pop(reg, None)
            if unscored_here and control.write_barrier != 7:
                state.last_scored.setdefault(control.write_barrier, {})[_queue_of(item.opcode)] = index
            if control.write_barrier != 7:
                for reg in item.writes:
                    state.pending_write[reg] = control.write_barrier
                if item.opcode in ASYNC_SOURCE_READERS and item.opcode not in fixed:
                    for reg in item.reads:
                        if reg[0] == "R":
                            state.pending_source.setdefault(reg, set()).add((control.write_barrier, item.opcode))
                if control.write_barrier not in state.busy:
                    state.busy.append(control.write_barrier)
            elif not (unscored_here and control.stall != 0):
                _record_fixed(state, item, index, fixed)
            if control.read_barrier != 7:
                for reg in item.reads:
                    state.pending_read.setdefault(reg, set()).add(control.read_barrier)
                if control.read_barrier not in state.busy:
                    state.busy.append(control.read_barrier)
        else:
            write_barrier = read_barrier = 7
            stall = max(CONTROL_FLOW_STALL.get(item.opcode, 1), drain_left)
            if item.opcode == "LDGDEPBAR":
                write_barrier = ASYNC_COPY_BARRIER
            elif item.opcode in VARIABLE_LATENCY and item.opcode not in fixed:
                if item.writes:
                    write_barrier, extra = state.allocate(item.opcode, async_copies=async_copies)
                    wait_mask |= extra
                    state.last_scored.setdefault(write_barrier, {})[_queue_of(item.opcode)] = index
                    entry = _Automatic(index, write_barrier, _queue_of(item.opcode), item.guard, item.guard_negated,
                                       state.pred_version.get(item.guard, 0))
                    for reg in item.writes:
                        state.pending_write[reg] = write_barrier
                        state.auto_write[reg] = entry
                        state.ready.pop(reg, None)
                        state.guard_ready.pop(reg, None)
                late = {r for r in item.reads if r[0] == "R"} if item.opcode in READS_LATE else set()
                if item.opcode in ASYNC_SOURCE_READERS:
                    sources = {r for r in item.reads if r[0] == "R"}
                    if write_barrier == 7:
                        late |= sources   # nothing written to wait for: a read scoreboard
                    for reg in sources if write_barrier != 7 else ():
                        state.pending_source.setdefault(reg, set()).add((write_barrier, item.opcode))
                if late:
                    read_barrier, extra = state.allocate(item.opcode, result=False)
                    wait_mask |= extra
                    entry = _Automatic(index, read_barrier, _queue_of(item.opcode), item.guard, item.guard_negated,
                                       state.pred_version.get(item.guard, 0), write_barrier)
                    for reg in late:
                        state.pending_read.setdefault(reg, set()).add(read_barrier)
                        state.auto_read.setdefault(reg, []).append(entry)
                stall = max(stall, BARRIER_SETTER_MIN_STALL)
            else:
                _record_fixed(state, item, index, fixed)
            if item.opcode == "DEPBAR":
                stall = max(stall, DEPBAR_STALL)
            stall = max(stall, FENCE_STALL.get(item.opcode, 1))
            if item.opcode == "MEMBAR" and membar_scoreboard:
                read_barrier, extra = state.allocate(item.opcode, result=False)
                wait_mask |= extra
                fence = read_barrier
            control = Control(stall=stall, yield_bit=1, write_barrier=write_barrier,
                              read_barrier=read_barrier, wait_mask=wait_mask)
            control = _with_stall(control, stall)
            if item.opcode == "DEPBAR":
                control = Control(stall=control.stall, yield_bit=0, write_barrier=control.write_barrier,
                                  read_barrier=control.read_barrier, wait_mask=control.wait_mask)
        for reg in item.writes:
            if reg[0] in ("P", "UP"):
                state.pred_version[reg] = state.pred_version.get(reg, 0) + 1
        controls.append(control)
        issue.append(state.cycle)
        state.cycle += control.stall
    return controls


def _unwaited(state: _State, item: Item, index: int, fixed) -> None:
    """UNWAITED: refuse `item` (its control code written) where it reads or overwrites a register an automatically
    scheduled variable-latency instruction has outstanding on a scoreboard its wait mask does not complete."""
    mask = item.explicit.wait_mask

    def waited(e: _Automatic) -> bool:
        if mask >> e.barrier & 1 or (e.result != 7 and mask >> e.result & 1):
            return True
        # a later producer of the same in-order queue on a waited scoreboard completes it (IN_ORDER_QUEUES)
        return any(mask >> b & 1 and state.last_scored.get(b, {}).get(e.queue, -1) > e.index for b in BARRIERS)

    def excused(e: _Automatic) -> bool:
        return waited(e) or (e.guard is not None and item.guard == e.guard and item.guard_negated != e.negated
                             and state.pred_version.get(e.guard, 0) == e.version)

    same_queue = _variable_here(item, fixed)
    reads = sorted(item.reads | ({item.guard} if item.guard is not None else set()))
    for reg in reads:
        e = state.auto_write.get(reg)
        if e is not None and not excused(e):
            raise UnwaitedScoreboard(index, e.index, reg, "reads", e.barrier, False)
    for reg in sorted(item.writes):
        e = state.auto_write.get(reg)
        if e is not None and not excused(e) and not (same_queue and _queue_of(item.opcode) == e.queue):
            raise UnwaitedScoreboard(index, e.index, reg, "overwrites", e.barrier, False)
        for e in state.auto_read.get(reg, ()):
            if not excused(e) and not (same_queue and _queue_of(item.opcode) == e.queue):
                raise UnwaitedScoreboard(index, e.index, reg, "overwrites before it reads", e.barrier, True)


def _queue_of(opcode: str) -> str:
    return IN_ORDER_QUEUES.get(opcode, opcode)


def _variable_here(item: Item, fixed) -> bool:
    """Whether `item`'s results are variable latency on this target (UNSCORED)."""
    return item.opcode in VARIABLE_LATENCY and item.opcode not in fixed and not item.timed_unscored


def _unscored_waits(state: _State, item: Item, index: int, fixed) -> int:
    """The wait mask an automatically scheduled `item` needs for the unscored variable-latency results it reads
    or overwrites (UNSCORED): a later producer's scoreboard of the same in-order queue; UnscoredResult where
    there is none."""
    mask = 0
    touched = sorted(item.reads | item.writes | ({item.guard} if item.guard is not None else set()))
    for reg in touched:
        e = state.unscored.get(reg)
        if e is None:
            continue
        if (e.guard is not None and item.guard == e.guard and item.guard_negated != e.negated
                and state.pred_version.get(e.guard, 0) == e.version):
            continue        # the complement of its guard: threads it does not write
        read = reg in item.reads or reg == item.guard
        if not read and _variable_here(item, fixed) and _queue_of(item.opcode) == e.queue:
            if item.guard is None or (item.guard == e.guard and item.guard_negated == e.negated):
                del state.unscored[reg]     # lands after it, in its queue's order
            continue
        later = [b for b in state.busy if state.last_scored.get(b, {}).get(e.queue, -1) > e.index]
        if not later:
            raise UnscoredResult(index, e.index, reg, read, e.suggest)
        mask |= 1 << later[0]
        state.wait(later[0])
    return mask


def _back_edge_needs(items: list[Item], issue: list[int], state: _State, label: int,
                     branch: int) -> list[tuple[int, tuple[str, int]]]:
    """(cycle the branch's target must issue no earlier than, register) for each outstanding
    fixed-latency result at a branch back to `label` (BACK_EDGE): its ready cycle, less the issue
    cycles from the label, at every instruction there that reads it (with that reader's own delay,
    _consumer_delay, as straight-line code times it) or writes it, up to its first writer; one not
    written before the search stops must be ready, for any reader, where it stops."""
    stop = branch
    for k in range(label + 1, branch):
        if items[k].label_here or items[k].opcode in BACK_EDGE_STOPS:
            stop = k
            break
    span_to_stop = (issue[stop] if stop < branch else state.cycle) - issue[label]
    needs = []
    worst = max(CROSS_PIPE + EARLY_OPERAND_FETCH, MMA_OPERAND_DELAY)

    def uses(reg, guards: bool):
        """(instruction, reads it, writes it) from the label to the stop, up to its first writer."""
        for k in range(label, stop):
            body = items[k]
            read = reg in body.reads if not guards else (
                body.guard == reg or (body.opcode in PREDICATE_READ_AT_DISPATCH and reg in body.reads))
            written = reg in body.writes
            if read or written:
                yield k, read, written
            if written:
                return
        yield None, False, False

    for reg, cycle in state.ready.items():
        for k, read, written in uses(reg, False):
            if k is None:
                needs.append((cycle + worst - span_to_stop, reg))
                continue
            delay = _consumer_delay(state, reg, items[k]) if read else 0
            needs.append((cycle + delay - (issue[k] - issue[label]), reg))
    for reg, cycle in state.guard_ready.items():
        for k, _, _ in uses(reg, True):
            needs.append((cycle - (span_to_stop if k is None else issue[k] - issue[label]), reg))
    return needs


def _consumer_delay(state: _State, reg: tuple[str, int], consumer: Item) -> int:
    """Cycles beyond the producer's latency before `consumer` may read `reg`."""
    if reg[0] not in ("R", "UR"):
        return 0
    if reg[0] == "UR" and consumer.opcode in EXPLICIT_CONTROL:
        return max(0, ASYNC_UNIFORM_READ - _latency_of(state.producer.get(reg, "")))
    producer = state.producer.get(reg, "")
    if (reg[0] == "UR" and producer.startswith("U") and producer not in UNIFORM_UNIT_WRITERS_EXCEPT
            and (consumer.opcode in VARIABLE_LATENCY or consumer.opcode in FP64_UNIT
                 or consumer.opcode in UNIFORM_DECOUPLED_BRANCHES)):
        return max(0, ASYNC_UNIFORM_READ - _latency_of(producer))
    if (reg[0] == "UR" and producer.startswith("U") and producer not in UNIFORM_UNIT_WRITERS_EXCEPT
            and consumer.opcode == "UMOV"):
        return max(0, UNIFORM_MOVE_READ - _latency_of(producer))
    if consumer.opcode in FP64_UNIT or consumer.latency_key in FP64_LIKE_READERS:
        return 0 if producer in FP64_UNIT else FP64_OPERAND_DELAY
    if producer in FP64_UNIT and consumer.opcode not in READS_LATE:
        return max(FP64_RESULT_DELAY, MMA_OPERAND_DELAY) if consumer.opcode == "HMMA" else FP64_RESULT_DELAY
    if consumer.opcode in READS_LATE:
        return EARLY_OPERAND_FETCH
    if consumer.opcode == "HMMA":
        return MMA_OPERAND_DELAY
    if consumer.opcode in VARIABLE_LATENCY:
        return 0
    return CROSS_PIPE if (producer in FMA_PIPE) != (consumer.opcode in FMA_PIPE) else 0


def _record_fixed(state: _State, item: Item, index: int, fixed: dict) -> None:
    """When each fixed-latency result of `item` (issued now) may be read."""
    for reg in item.writes:
        state.ready[reg] = state.cycle + _latency(item, reg, fixed)
        state.written[reg] = state.cycle
        state.producer[reg] = item.latency_key
        state.producer_index[reg] = index
        if reg[0] in ("P", "UP"):
            state.guard_ready[reg] = state.cycle + (FP64_PREDICATE_LATENCY if item.opcode in FP64_UNIT
                                                    else PREDICATE_LATENCY)
        else:
            state.guard_ready.pop(reg, None)


def _latency_of(opcode: str) -> int:
    return FIXED_LATENCIES.get(opcode, DEFAULT_LATENCY)


def _latency(item: Item, reg: tuple[str, int], fixed: dict) -> int:
    if item.opcode in fixed:
        return fixed[item.opcode]
    if reg[0] == "UP":
        return UNIFORM_PREDICATE_OPERAND_LATENCY
    if reg[0] == "P":
        return PREDICATE_OPERAND_LATENCIES.get(item.opcode, PREDICATE_OPERAND_LATENCY)
    if item.wide:
        return WIDE_LATENCY
    return FIXED_LATENCIES.get(item.latency_key, DEFAULT_LATENCY)


def _with_stall(control: Control, stall: int) -> Control:
    """Set the stall and a yield bit nvdisasm accepts (bit 109 = 1 only with stalls 1..11)."""
    return Control(stall=stall, yield_bit=1 if 1 <= stall <= 11 else 0,
                   write_barrier=control.write_barrier, read_barrier=control.read_barrier,
                   wait_mask=control.wait_mask)
