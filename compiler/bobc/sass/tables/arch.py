"""Per-architecture encoding facts that are not per-opcode (sass-facts.md, checked by learning).

`fixed_bits` names the learned table of each form's fixed bits.  `symbols`
are the names a source may use inside c[0x0][...]: `param` is the kernel
parameter base, `memory_descriptor` the 64-bit global-memory descriptor that
ptxas loads into a uniform register pair for LDG/STG; both are the target
table's (bobc.targets), declared there once.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from ...targets import SM86, SM90, target_row
from .layouts import DEFAULT_LATENCY


@dataclass(frozen=True)
class SchedulingFacts:
    """What bobc.sass.schedule assumes of one target that another target does not share."""

    # Opcodes that are fixed-latency here though layouts.VARIABLE_LATENCY lists them, and their
    # latency here.  sm_90 (GH100's full-rate FP64 unit): ptxas 13 sets no scoreboard on DADD, DMUL,
    # DFMA or DSETP for sm_90 (it sets one on sm_86) and issues the next FP64 reader 8 cycles on (an
    # F2F 6); the H200 does not hold a reader on a scoreboard such an instruction names: an F2F read
    # the register its DADD was about to write, and the kernel stored the old value
    # (tests/gpu/probe_counting_semaphore.py).
    # VOTEU and UFLO (both targets) and sm_90's R2UR are fixed-latency too: ptxas 13 never sets them a
    # write scoreboard (VOTEU 0 of 18, UFLO 0 of 3, sm_90's R2UR 0 of 28 in the -O3 corpus) and times
    # their readers by stalls alone (NAK's URegLatencySM80 / UPredLatencySM80 have VoteU and the uniform
    # FLO as coupled writers: VoteU -> a uniform guard 5, -> a UR reader 2); a scoreboard bobc set on
    # them held nothing, as DADD's on the H200 did not.  Their readers now wait DEFAULT_LATENCY (6:
    # VOTEU's UR result, ptxas 2; UFLO's, ptxas 4), a guard schedule.PREDICATE_LATENCY (13; VOTEU's,
    # ptxas 5), and sm_90's R2UR's 13, the least ptxas leaves (5 of 24 at 13,
    # tests/sass/test_latency_vs_ptxas.py).
    fixed_latency: MappingProxyType
    # a MEMBAR completes on a scoreboard the next instruction waits (sm_90: schedule.FENCE_STALL's note)
    membar_scoreboard: bool


SM86_SCHEDULING = SchedulingFacts(
    fixed_latency=MappingProxyType({"VOTEU": DEFAULT_LATENCY, "UFLO": DEFAULT_LATENCY}),
    membar_scoreboard=False)
SM90_SCHEDULING = SchedulingFacts(
    fixed_latency=MappingProxyType({"DADD": 8, "DMUL": 8, "DFMA": 8, "DSETP": 8, "VOTEU": DEFAULT_LATENCY,
                                    "UFLO": DEFAULT_LATENCY, "R2UR": 13,
                                    # ptxas 13 reads sm_90's IABS 8 cycles on at the earliest (5 placements,
                                    # IABS -> IADD3 / IMAD, tools/ptx_corpus/int_forms.ptx
                                    # absolute_differences); its sm_86 code reads it at bobc's 6.  The longer
                                    # wait is never wrong (probe s37 sassforms4)
                                    "IABS": 8}),
    membar_scoreboard=True)


@dataclass(frozen=True)
class ArchEncoding:
    name: str
    fixed_bits: str            # JSON file next to this module
    branch_split_low8: bool    # sm_90: low 8 bits of the offset at 16..23, the rest at 34..81
    shows_descriptor: bool     # nvdisasm prints desc[URn] on LDG/STG (sm_90) or hides it (sm_86)
    symbols: dict
    scheduling: SchedulingFacts  # what the scheduler assumes of this target (bobc.sass.schedule)
    # what to write here instead of an opcode another target has and this one lacks (sass-facts.md,
    # "sm_90 versus sm_86": sm_90 code has opcodes SM86 rejects): the encoder's hint
    instead: MappingProxyType
    # the opcodes this target does not have (a subset: those another target's tables hold), which the
    # encoder may call "another target's opcode"; any other opcode the tables lack is a form not learned
    # here (ptxas 13 writes UIMAD / ULEA for sm_86 as well as sm_90: probe s43 newuser8, asmgaps3).
    # sm_86: the PTX ISA requires sm_90 of the instructions ptxas writes these for (wgmma: HGMMA /
    # WARPGROUP; cp.async.bulk.tensor: UTMALDG / UTMASTG / UTMACCTL / UTMACMDFLUSH; mbarrier.try_wait
    # and fence.proxy.async: SYNCS / FENCE; barrier.cluster: UCGABAR_ARV / UCGABAR_WAIT; elect.sync: ELECT;
    # griddepcontrol: ACQBULK / PREEXIT; setmaxnreg: USETMAXREG); CGAERRBAR (the cluster's, CGA's, error
    # barrier) and ENDCOLLECTIVE ptxas writes for sm_90 around ordinary code (corpus3.ptx barriers,
    # corpus.ptx shared_and_shuffle -O0) and never for sm_86 from the same PTX; and ptxas writes IADD3 /
    # IMNMX where sm_90's add and min / max are VIADD / VIMNMX / VIADDMNMX (sass-facts.md, "sm_90 versus
    # sm_86").  sm_90: ptxas writes VIMNMX for min / max, never IMNMX (RED is spelled REDG there).
    lacks: frozenset = frozenset()


SM86_ENCODING = ArchEncoding("sm_86", "sm_86.json", branch_split_low8=False, shows_descriptor=False,
                             symbols={"param": SM86.parameter_base, "memory_descriptor": SM86.memory_descriptor},
                             scheduling=SM86_SCHEDULING,
                             instead=MappingProxyType({"VIADD": "IADD3 (VIADD Rd, Ra, Rb is IADD3 Rd, Ra, Rb, RZ)",
                                                       "VIMNMX": "IMNMX"}),
                             lacks=frozenset({"ACQBULK", "CGAERRBAR", "ELECT", "ENDCOLLECTIVE", "FENCE", "HGMMA",
                                              "PREEXIT", "SYNCS", "UCGABAR_ARV", "UCGABAR_WAIT", "USETMAXREG",
                                              "UTMACCTL", "UTMACMDFLUSH", "UTMALDG", "UTMASTG", "VIADD",
                                              "VIADDMNMX", "VIMNMX", "WARPGROUP"}))
SM90_ENCODING = ArchEncoding("sm_90", "sm_90.json", branch_split_low8=True, shows_descriptor=True,
                             symbols={"param": SM90.parameter_base, "memory_descriptor": SM90.memory_descriptor},
                             scheduling=SM90_SCHEDULING,
                             instead=MappingProxyType({"IMNMX": "VIMNMX"}),
                             lacks=frozenset({"IMNMX"}))

ENCODINGS = {e.name: e for e in (SM86_ENCODING, SM90_ENCODING)}


def encoding_of(name: str) -> ArchEncoding:
    """The SASS row of the target `name` (sm_90); MissingTargetFact naming it and this table without one."""
    return target_row(ENCODINGS, name, "bobc.sass.tables.arch.ENCODINGS", "SASS encoding row")


def scheduling_facts(name: str) -> SchedulingFacts:
    """What the scheduler assumes of the target `name`; refused (MissingTargetFact, naming the target
    and this table) where the target has no row: the scheduler has no latency facts for it."""
    return target_row(ENCODINGS, name, "bobc.sass.tables.arch.ENCODINGS",
                      "SASS row, so the scheduler has no latency facts").scheduling
