"""Where each operand of each opcode goes in the 128-bit word: shared by sm_86 and sm_90.

This is data.  An opcode's layout is a list of operand slots in nvdisasm's
text order (optional slots in brackets); each slot names a placement below.
The bits a slot does not cover (opcode, modifiers, implicit operands) are the
form's fixed bits, learned per architecture from ptxas output (sm_86.json,
sm_90.json).  Field positions come from ../../../../../shared/docs/sass-facts.md
(register fields, predicates, modifiers, constant bank, S2R, SHFL) and were
checked by learning: every ptxas word of a form must leave the same fixed bits
once its operands are taken out, and the round-trip tests re-decode our words
with nvdisasm.
"""
from __future__ import annotations

# Placements: a register slot's field (lsb, width); for R slots also the
# negate / absolute / reuse bits that belong to that position.
REG_A = dict(field=(24, 8), neg=72, abs=73, reuse=122)
REG_B = dict(field=(32, 8), neg=63, abs=62, reuse=123)
REG_C = dict(field=(64, 8), neg=75, abs=74, reuse=124)
UREG_A = dict(field=(24, 6))
UREG_B = dict(field=(32, 6))
UREG_C = dict(field=(64, 6))
IMM_B = (32, 32)
CONST_OFFSET = (38, 16)   # byte offset
CONST_BANK = (54, 5)

SLOTS = {
    # destinations
    "Rd": dict(kinds="R", field=(16, 8), write=True),
    "Ud": dict(kinds="U", field=(16, 6), write=True),
    "Pu": dict(kinds="PQ", field=(81, 3), write=True),
    "Pv": dict(kinds="PQ", field=(84, 3), write=True),
    # sources: A, B (register, immediate, constant or uniform register), C
    "Ra": dict(kinds="RU"),
    "Sb": dict(kinds="RUICX"),
    "Sc": dict(kinds="RUIC"),      # C slot; an immediate/constant here moves B's register to C
    "Pp": dict(kinds="PQ", field=(87, 3), neg=90),
    "Pq": dict(kinds="PQ", field=(77, 3), neg=80),
    # special immediates
    "Ilut": dict(kinds="I", field=(72, 8)),
    "Ishift": dict(kinds="I", field=(75, 5)),
    "Ilane": dict(kinds="IR", field=(53, 5), reg=REG_B),     # SHFL lane/offset: imm or Rb
    "Iclamp": dict(kinds="IR", field=(40, 13), reg=REG_C),   # SHFL clamp/mask: imm or Rc
    "Ibar": dict(kinds="I", field=(54, 4)),
    "Icount": dict(kinds="I", field=(42, 12)),             # BAR thread count
    "SR": dict(kinds="S", field=(72, 8)),
    "PR": dict(kinds="S"),                 # the literal PR of P2R/R2P: nothing to place
    "Mem": dict(kinds="M"),                # LDG / LDS / STS style: base Ra, offset 40..63
    "MemSt": dict(kinds="M", desc=(64, 6)),  # STG: its descriptor UR sits in 64..69
    "Target": dict(kinds="T"),
}

LAYOUTS: dict[str, list[str]] = {
    "MOV": ["Rd Sb"],
    "IMAD": ["Rd [Pu] Ra Sb Sc [Pp]"],
    "IADD3": ["Rd [Pu] [Pv] Ra Sb Sc [Pp] [Pq]"],
    "LEA": ["Rd [Pu] Ra Sb Sc Ishift [Pp]", "Rd [Pu] Ra Sb Ishift [Pp]"],
    "LOP3": ["[Pu] Rd Ra Sb Sc Ilut [Pp]"],
    "SHF": ["Rd Ra Sb Sc"],
    "PRMT": ["Rd Ra Sb Sc"],
    "SGXT": ["Rd Ra Sb"],
    "SEL": ["Rd Ra Sb Pp"],
    "FSEL": ["Rd Ra Sb Pp"],
    "IMNMX": ["Rd Ra Sb Pp"],
    "FMNMX": ["Rd Ra Sb Pp"],
    "ISETP": ["Pu Pv Ra Sb Pp"],
    "FSETP": ["Pu Pv Ra Sb Pp"],
    "FADD": ["Rd Ra Sb"],
    "FMUL": ["Rd Ra Sb"],
    "FFMA": ["Rd Ra Sb Sc"],
    "MUFU": ["Rd Sb"],
    "I2F": ["Rd Sb"],
    "I2FP": ["Rd Sb"],
    "F2I": ["Rd Sb"],
    "F2F": ["Rd Sb"],
    "POPC": ["Rd Sb"],
    "FLO": ["Rd Sb"],
    "BREV": ["Rd Sb"],
    "LDG": ["Rd Mem"],
    "STG": ["MemSt Sb"],
    "LDS": ["Rd Mem"],
    "STS": ["Mem Sb"],
    "LDC": ["Rd Sb"],
    "ULDC": ["Ud Sb"],
    "S2R": ["Rd SR"],
    "S2UR": ["Ud SR"],
    "CS2R": ["Rd SR"],
    "R2UR": ["Ud Ra"],
    "UMOV": ["Ud Sb"],
    "SHFL": ["Pu Rd Ra Ilane Iclamp"],
    "BAR": ["[Ibar] [Icount]"],
    "BRA": ["[Pp] Target"],
    "EXIT": [""],
    "NOP": [""],
    "WARPSYNC": ["Sb"],
    "P2R": ["Rd PR Ra Sb"],
    "R2P": ["PR Ra Sb"],
}

# Which source positions accept '-' (neg) and '|..|' (abs), per opcode; the bits are the
# position's (REG_A/B/C above; a constant in B uses B's).  Everything else takes none.
_FLOAT = {"A": ("neg", "abs"), "B": ("neg", "abs"), "C": ("neg", "abs")}
OPERAND_MODIFIERS = {
    "FADD": _FLOAT, "FMUL": _FLOAT, "FFMA": _FLOAT, "FSETP": _FLOAT, "FMNMX": _FLOAT, "FSEL": _FLOAT,
    "MUFU": {"B": ("neg", "abs")},
    "IADD3": {"A": ("neg",), "B": ("neg",), "C": ("neg",)},
    "IMAD": {"C": ("neg",)},
}

# .reuse bits follow the operand's logical position, not the field it lands in: with an
# immediate/constant third source, B's register moves to the C field but keeps B's reuse
# bit (ptxas: FFMA R18, R2, R7.reuse, 0.5 sets bit 123).  FADD's second source sits in the
# B field yet uses C's reuse bit (ptxas: FADD R6, R2.reuse, R7.reuse sets 122 and 124).
REUSE_BIT = {"Ra": 122, "Sb": 123, "Sc": 124}
REUSE_BIT_OVERRIDES = {"FADD": {"Sb": 124}}
# Opcodes ptxas marks .reuse on (in the corpus); nvdisasm shows no reuse flags on others.
REUSE_OPCODES = {"FADD", "FFMA", "FMNMX", "FMUL", "FSEL", "FSETP", "I2FP", "IADD3", "IMAD", "IMNMX",
                 "ISETP", "LEA", "LOP3", "MOV", "SEL", "SHF"}

# Opcodes whose immediates are binary32 values (nvdisasm prints them as floats).
FLOAT_IMMEDIATE = {"FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "FSEL", "MUFU"}

# Variable-latency opcodes: their results come back through a scoreboard
# (sass-facts.md "Control codes and latencies"; LDC is treated so on both).
VARIABLE_LATENCY = {"S2R", "S2UR", "LDG", "LDS", "LDC", "MUFU", "F2I", "I2F", "F2F", "POPC",
                    "BREV", "FLO", "SHFL", "STG", "STS", "R2UR"}
# Variable-latency opcodes that read their register sources late: a later
# overwrite of those sources must wait for the read barrier.
READS_LATE = {"LDG", "STG", "LDS", "STS", "SHFL", "LDC"}

# Display aliases: nvdisasm picks these names from operand values (IMAD with a power-of-two
# multiplier and RZ addend prints as IMAD.SHL, ...), so their operands cannot vary freely.
DISPLAY_ALIASES = ("IMAD.SHL", "IMAD.MOV", "IMAD.IADD")
