"""The simulator's own latency rules for the control-code checker.

Source: the register scheduling information NVIDIA provided for Ampere and
Ada, as published in Mesa's NAK compiler (src/nouveau/compiler/nak/
sm80_instr_latencies.rs: RegLatencySM80, PredLatencySM80, URegLatencySM80),
reduced to the classes Bob's kernels use.  Hopper shares the Volta+ issue
model; the same rules are applied to sm_90 (its published table is not
public; ptxas's sm_90 code meets these rules, tests/sim checks that).

Coupled (fixed-latency) producers need the consumer to issue at least
RAW[reader][writer] cycles later, counted from the stall fields alone;
decoupled (variable-latency) producers need a scoreboard the consumer waits on.
This is deliberately not bobc.sass.schedule's table: that one is what the
scheduler assumes, this one is what the checker holds it to.
"""
from __future__ import annotations

# Writer classes of a GPR result, by base opcode.  Uniform-datapath opcodes (UIADD3,
# ULOP3, ...) are classed by their base opcode; their uniform results all follow UNIFORM_RAW.
COUPLED_ALU = frozenset({"IADD3", "LOP3", "ISETP", "LEA", "SHF", "MOV", "SEL", "FSEL", "FMNMX", "FSETP",
                         "PLOP3", "IMNMX", "VIMNMX", "IABS", "PRMT", "P2R", "R2P", "VOTE", "CS2R", "UMOV", "I2FP"})
COUPLED_FMA = frozenset({"FFMA", "FADD", "FMUL", "IMAD", "HADD2", "HMUL2", "HFMA2", "HMNMX2",
                         "VIADD"})   # sm_90's VIADD: ptxas reads it 4 cycles on from an IMAD (FMA pipe)
DECOUPLED = frozenset({"S2R", "S2UR", "LDC", "MUFU", "LDG", "SHFL", "LDS", "LDSM", "ATOMS", "ATOMG", "ATOM",
                       "LDL", "LD"})
# Opcodes whose result latency is not in the public Ampere tables this checker transcribes
# (the FP64 unit, the tensor cores, the conversion unit, bit counting): a producer that sets
# a write scoreboard is held to it like a decoupled one; one that sets none is not timed
# (docs/simulator.md, "The control-code checker").
REDIRECTED = frozenset({"DADD", "DMUL", "DFMA", "DSETP", "HMMA", "F2F", "F2FP", "I2F", "F2I", "POPC", "FLO",
                        "BREV", "R2UR"})
UNIFORM_LOAD = frozenset({"ULDC"})
KNOWN_BASES = COUPLED_ALU | COUPLED_FMA | DECOUPLED | REDIRECTED
# Readers whose register operands go through the address unit (DecoupledAgu).
AGU_READERS = frozenset({"LDG", "STG", "SHFL", "LDS", "STS", "LDSM", "ATOMS", "ATOMG", "ATOM", "RED", "REDG",
                         "LDGSTS", "LDL", "STL", "LD", "ST"})
DECOUPLED_READERS = frozenset({"S2R", "LDC", "MUFU", "BRA", "EXIT", "F2F", "I2F", "F2I", "POPC", "FLO", "BREV",
                               "R2UR", "DADD", "DMUL", "DFMA", "DSETP", "HMMA"})

# RAW[reader][writer] in cycles (sm80_instr_latencies.rs read_after_write).
RAW = {
    "alu": {"alu": 4, "fma": 5, "wide_lo": 3, "wide_hi": 5},
    "fma": {"alu": 5, "fma": 4, "wide_lo": 2, "wide_hi": 4},
    "wide_ab": {"alu": 5, "fma": 4, "wide_lo": 4, "wide_hi": 6},
    "wide_ch": {"alu": 3, "fma": 2, "wide_lo": 2, "wide_hi": 2},
    "decoupled": {"alu": 4, "fma": 4, "wide_lo": 4, "wide_hi": 4},
    "agu": {"alu": 5, "fma": 5, "wide_lo": 5, "wide_hi": 5},
}
# Predicates written by a coupled instruction (PredLatencySM80 Coupled):
PREDICATE_RAW = {"coupled": 4, "fma": 5, "guard": 13, "decoupled": 13}
# Uniform registers written by ULDC, read by a non-uniform instruction (URegLatencySM80 Uldc).
UNIFORM_RAW = 2


def writer_class(opcode: str, modifiers: tuple[str, ...]) -> str | None:
    """'alu', 'fma', 'wide' (IMAD.WIDE: lo/hi per register), 'decoupled', 'uldc', or None."""
    if opcode == "IMAD" and "WIDE" in modifiers:
        return "wide"
    if opcode in COUPLED_ALU:
        return "alu"
    if opcode in COUPLED_FMA:
        return "fma"
    if opcode in DECOUPLED:
        return "decoupled"
    if opcode in UNIFORM_LOAD:
        return "uldc"
    if opcode in REDIRECTED:
        return "redirected"
    if opcode.startswith("U") and opcode[1:] in KNOWN_BASES:
        return writer_class(opcode[1:], modifiers)
    return None


def reader_class(opcode: str, modifiers: tuple[str, ...]) -> str:
    if opcode.startswith("U") and opcode[1:] in KNOWN_BASES:
        opcode = opcode[1:]
    if opcode in AGU_READERS:
        return "agu"
    if opcode in DECOUPLED_READERS:
        return "decoupled"
    if opcode in COUPLED_FMA:
        return "fma"
    return "alu"


def predicate_reader_class(opcode: str) -> str:
    if opcode in DECOUPLED_READERS or opcode in AGU_READERS:
        return "decoupled"
    return "fma" if opcode in COUPLED_FMA else "coupled"


# Variable-latency units whose results return in issue order (ptxas leaves the earlier of two
# back-to-back LDSM without a scoreboard and waits on the later one's): a result that set no
# scoreboard is complete once a later instruction of its queue has completed.
QUEUES = {"LDS": "shared", "LDSM": "shared", "ATOMS": "shared", "LDG": "global", "LDL": "global",
          "ATOMG": "global", "ATOM": "global", "LD": "global", "LDC": "constant"}


def queue_of(opcode: str) -> str:
    return QUEUES.get(opcode, opcode)
