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
# Value ranges: a field of width w takes 0..2**w-1; an address offset (every memory slot's
# `offset`) is signed, -2**(w-1)..2**(w-1)-1, as nvdisasm prints it ([R2.64+-0x800000]).  Two fields
# take both spellings, since nvdisasm prints a negative form of bits a source writes unsigned:
# the 32-bit immediate of the integer opcodes (IADD3 R1, R2, -0x1 / LOP3.LUT ... 0xffffffff) and
# the constant offset (c[0x0][-0x4] for 0xfffc): -2**(w-1)..2**w-1 (encoder.field_range).  The
# bit patterns of the float opcodes' immediates (FLOAT_IMMEDIATE, DOUBLE_IMMEDIATE, HALF_OPCODES)
# are unsigned: nvdisasm prints no negative hex for them.

# The control code (bits 105..125 of the word; syntax.Control): each field's (lsb, width) in it.
# The wait mask holds a bit per scoreboard: SB0..SB5 are all the barrier fields and DEPBAR may name
# (a barrier field's 7 is "none"; nvdisasm decodes DEPBAR's SB6 and SB7 as INVALID6, INVALID7).
CONTROL_FIELDS = {"stall": (0, 4), "yield": (4, 1), "write barrier": (5, 3), "read barrier": (8, 3),
                  "wait mask": (11, 6), "reuse": (17, 3)}
SCOREBOARDS = CONTROL_FIELDS["wait mask"][1]

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
    "Pr": dict(kinds="PQ", field=(68, 3), neg=71),    # PLOP3's third source
    # special immediates
    "Ilut": dict(kinds="I", field=(72, 8), what="LUT"),
    "Iplut": dict(kinds="I", split=((64, 3), (72, 5)), what="LUT"),   # PLOP3: LUT bits 0..2 at 64, 3..7 at 72
    "Imask8": dict(kinds="I", field=(16, 8), what="second LUT"), # PLOP3's second immediate
    # PLOP3's register form (another opcode word, 0x21f): each source a register's sign bit, `R2.SIGN`,
    # at A's, B's and C's register fields, their reuse bits 122..124, the LUT whole at 72..79 (Ilut):
    # ptxas's add.sat.s32 PLOP3.LUT P0, PT, R2.SIGN, R5.SIGN, R4.SIGN, 0x2, 0x0 is 0x000000050200721f
    # 0x...00700204 (tools/ptx_corpus/sign_forms.ptx)
    "Rsa": dict(kinds="R", reg=REG_A),
    "Rsb": dict(kinds="R", reg=REG_B),
    "Rsc": dict(kinds="R", reg=REG_C),
    "SBn": dict(kinds="S", field=(44, 3), what="scoreboard"),   # DEPBAR's SB0..SB5 (6, 7: nvdisasm's INVALID6/7)
    "Idep": dict(kinds="I", field=(38, 6), what="count"),        # DEPBAR.LE's count
    # BPT.TRAP's code: one ptxas word (1 at 34); nvdisasm prints bits 34..36 alone (0x7 for all of 34..53 set,
    # nothing for bits 37..53: they never round-trip), so the field is those 3 bits
    "Ibpt": dict(kinds="I", field=(34, 3), what="trap code"),
    "Ishift": dict(kinds="I", field=(75, 5), what="shift"),
    "Ilane": dict(kinds="IR", field=(53, 5), reg=REG_B, what="lane (or offset)"),     # SHFL: imm or Rb
    "Iclamp": dict(kinds="IR", field=(40, 13), reg=REG_C, what="clamp (or segment mask)"),   # imm or Rc
    "Ibar": dict(kinds="I", field=(54, 4), what="barrier"),
    "Icount": dict(kinds="I", field=(42, 12), what="thread count"),
    "SR": dict(kinds="S", field=(72, 8)),
    "PR": dict(kinds="S"),                 # the literal PR of P2R/R2P: nothing to place
    # memory operands: [Ra(.64) + URb + offset] (desc[URd] on global accesses)
    "Mem": dict(kinds="M", base=(24, 8), offset=(40, 24), uoffset=(32, 6), desc=(32, 6)),   # loads
    "MemSt": dict(kinds="M", base=(24, 8), offset=(40, 24), uoffset=(64, 6), desc=(64, 6)),  # data in B
    "MemCas": dict(kinds="M", base=(24, 8), offset=(40, 24)),          # ATOMG.CAS: B and C are data
    "MemShared": dict(kinds="M", base=(16, 8), offset=(44, 20)),       # LDGSTS destination
    "MemGlobal": dict(kinds="M", base=(24, 8), offset=(32, 12), desc=(64, 6)),   # LDGSTS source
    "Target": dict(kinds="T"),             # BRA, CALL, RET: on sm_90 the low 8 bits sit at 16..23
    "Target34": dict(kinds="T"),           # BSSY: the whole offset at 34.. (its barrier is at 16)
    "Bar": dict(kinds="B", field=(16, 4), what="convergence barrier"),   # B0..B15
    # sm_90's asynchronous units (tools/ptx_corpus/sm90_async.ptx; fields from ptxas's words,
    # each checked by flipping its bits through nvdisasm)
    "Rc": dict(kinds="R", field=(64, 8)),     # HGMMA's accumulator input (RZ: scale-d false)
    "GdA": dict(kinds="G", field=(24, 6)),    # gdesc[URn]: A's descriptor URn..+1, B's URn+2..+3
    "GdB": dict(kinds="G", field=(32, 6)),    # gdesc[URn] when A is in registers: B's alone
    "Pg": dict(kinds="Q", field=(87, 3), neg=90, inverted=True),   # HGMMA's scale-d: UPn stored n^7
    "Gsb": dict(kinds="S", field=(84, 3)),    # gsb0 = 0; absent = 7 (a form of its own)
    "Iwg": dict(kinds="I", field=(72, 3), what="count"),    # WARPGROUP.DEPBAR.LE's count
    "Imaxreg": dict(kinds="I", field=(32, 10), what="register count"),   # USETMAXREG's (setmaxnreg)
    # [URa+offset] at 24 (SYNCS.EXCH); [URa] alone at 24 or 32 (UTMALDG/UTMASTG/UTMACCTL)
    "MemUA": dict(kinds="M", ubase=(24, 6), offset=(40, 24)),
    "MemU24": dict(kinds="M", ubase=(24, 6)),
    "MemU32": dict(kinds="M", ubase=(32, 6)),
    # [Ra+URb+offset] with URb at 64 (SYNCS.ARRIVE / SYNCS.PHASECHK: data register in B)
    "MemSync": dict(kinds="M", base=(24, 8), offset=(40, 24), uoffset=(64, 6)),
}

LAYOUTS: dict[str, list[str]] = {
    "MOV": ["Rd Sb"],
    "IMAD": ["Rd [Pu] Ra Sb Sc [Pp]"],
    "IADD3": ["Rd [Pu] [Pv] Ra Sb Sc [Pp] [Pq]"],
    "VIADD": ["Rd Ra Sb"],
    "VIMNMX": ["Rd Ra Sb Pp"],
    # sm_90's add-then-min/max (ptxas's add.s32 then min.s32 / max.s32, tools/ptx_corpus/wide_cover_sm90.ptx):
    # VIADDMNMX R15, R8, R9, R10, PT is min(R8 + R9, R10), !PT max (Pp's '!' at 90); B at 32 (an immediate
    # there, `R8, 0x5, R10`), C at 64; .U32 (72) and the other kinds are fixed bits (nvdisasm, flipping bits)
    "VIADDMNMX": ["Rd Ra Sb Sc Pp"],
    "LEA": ["Rd [Pu] Ra Sb Sc Ishift [Pp]", "Rd [Pu] Ra Sb Ishift [Pp]"],
    "LOP3": ["[Pu] Rd Ra Sb Sc Ilut [Pp]"],
    "PLOP3": ["Pu Pv Pp Pq Pr Iplut Imask8", "Pu Pv Rsa Rsb Rsc Ilut Imask8"],
    "SHF": ["Rd Ra Sb Sc"],
    "PRMT": ["Rd Ra Sb Sc"],
    "SGXT": ["Rd Ra Sb"],
    "SEL": ["Rd Ra Sb Pp"],
    "FSEL": ["Rd Ra Sb Pp"],
    "IMNMX": ["Rd Ra Sb Pp"],
    "FMNMX": ["Rd Ra Sb Pp"],
    # .EX (the high words of a 64-bit compare) takes the low words' result as a sixth operand, in Pr's
    # field 68..70 with its '!' at 71 (ptxas: ISETP.LT.U32.AND.EX P3, PT, R3, R7, PT, P3 sets 3 at 68;
    # tools/ptx_corpus/math_forms.ptx)
    "ISETP": ["Pu Pv Ra Sb Pp", "Pu Pv Ra Sb Pp Pr"],
    "FSETP": ["Pu Pv Ra Sb Pp"],
    # set.<cmp>.f32.f32 (FSET.BF.LT.AND R8, R0, R5, PT: 1.0f or 0.0f; tools/ptx_corpus/warp_forms.ptx):
    # FSEL's slots, the comparison and combination in the fixed bits as FSETP's
    "FSET": ["Rd Ra Sb Pp"],
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
    # tools/ptx_corpus/math_forms.ptx: cvt.rmi/rni/rzi/rpi.f32.f32 and .f64 (FRND.FLOOR / FRND / .TRUNC /
    # .CEIL, .F64), abs.s32 (IABS), cvt.sat.s8/u8/s16/u16.s32 (I2I), bmsk.clamp / .wrap (BMSK / BMSK.W)
    "FRND": ["Rd Sb"],
    "IABS": ["Rd Sb"],
    "I2I": ["Rd Sb"],
    "BMSK": ["Rd Ra Sb"],
    # tools/ptx_corpus/int_forms.ptx (probe s37 sassforms4): dp4a / dp2a (IDP.4A / IDP.2A: d = c + a . b),
    # cvt.rni.sat.u8.f32 / cvt.rzi.u8.f32 (F2IP.U8.F32.NTZ Rd, RZ, Rb, RZ: the value in B), sad / vabsdiff
    # (VABSDIFF: |a - b| + c), vabsdiff4 (VABSDIFF4.U8: per byte), all with C at 64; div.rn.f32's slow-path
    # check FCHK Pu, Ra, Rb (Pu at 81: nvdisasm reads bits 81 / 82 flipped as P1 / P2)
    "IDP": ["Rd Ra Sb Sc"],
    "F2IP": ["Rd Ra Sb Sc"],
    "VABSDIFF": ["Rd Ra Sb Sc"],
    "VABSDIFF4": ["Rd Ra Sb Sc"],
    "FCHK": ["Pu Ra Sb"],
    "LDG": ["Rd Mem"],
    "STG": ["MemSt Sb"],
    "LDS": ["Rd Mem"],
    "STS": ["MemSt Sb"],
    "LDC": ["Rd Sb"],
    "ULDC": ["Ud Sb"],
    "S2R": ["Rd SR"],
    "S2UR": ["Ud SR"],
    "CS2R": ["Rd SR"],
    "R2UR": ["Ud Ra"],
    "UMOV": ["Ud Sb"],
    "SHFL": ["Pu Rd Ra Ilane Iclamp"],
    "BAR": ["[Ibar] [Icount] [Pp]"],
    "BRA": ["[Pp] Target"],
    "EXIT": [""],
    "NOP": [""],
    "WARPSYNC": ["Sb", "", "Ra Target"],
    "NANOSLEEP": ["Sb"],                # nanosleep.u32 (wide_cover_forms.ptx): NANOSLEEP 0x64, the count at 32
    "BSSY": ["Bar Target34"],
    "BSYNC": ["Bar"],
    # BREAK Bn: leave convergence barrier n (ptxas's slow paths of div.r{n,z,m,p}.f32, rcp / sqrt .r{z,m,p}.f64
    # and div.rn.f64 loops, tools/ptx_corpus/user_forms_s45.ptx): BSYNC's slot, the barrier at 16, opcode 0x942;
    # with a predicate, `@!P0 BREAK !P2, B2` (div.rn.ftz.f32's slow path, user_forms_s46.ptx), Pp at 87..89, its '!'
    # at 90 -- BRA's predicate field (ptxas writes PT there, 0x7, when there is none)
    "BREAK": ["[Pp] Bar"],
    "CALL": ["Target"],
    "RET": ["Ra Target"],
    # binary64: registers are pairs; DADD's second source sits in the C field
    "DADD": ["Rd Ra Sc"],
    "DMUL": ["Rd Ra Sb"],
    "DFMA": ["Rd Ra Sb Sc"],
    "DSETP": ["Pu Pv Ra Sb Pp"],
    # packed halves: a `.H0_H0`/`.H1_H1` lane selection on A and B; an immediate is a pair
    "HADD2": ["Rd Ra Sb"],
    "HMUL2": ["Rd Ra Sb"],
    "HFMA2": ["Rd Ra Sb Sc"],
    "HMNMX2": ["Rd Ra Sb Pp"],
    "HSETP2": ["Pu Pv Ra Sb Pp"],      # setp.<cmp>.f16 / .f16x2 (math_forms.ptx): FSETP's slots on halves
    # F2FP packs two values (A, B); sm_90's fp8 forms have layouts of their own (LAYOUT_VARIANTS)
    "F2FP": ["Rd Ra Sb"],
    "HMMA": ["Rd Ra Sb Sc"],
    # local, shared and global memory beyond LDG/STG
    "LDL": ["Rd Mem"],
    "STL": ["MemSt Sb"],
    "LD": ["Rd Mem"],
    "LDSM": ["Rd Mem"],
    "LDGSTS": ["MemShared MemGlobal [Pp]"],
    "ATOMS": ["Rd MemSt", "Rd MemSt Sb", "Rd MemSt Sb Sc"],
    "ATOMG": ["Pu Rd MemSt Sb", "Pu Rd MemCas Sb Sc"],
    "RED": ["MemSt Sb"],
    "REDG": ["MemSt Sb"],
    "VOTE": ["Rd Pu Pp"],
    "VOTEU": ["Ud Pu Pp", "Pu Pp"],     # nvdisasm hides a URZ destination
    "B2R": ["Rd [Pu]"],
    "DEPBAR": ["SBn Idep"],
    "BPT": ["Ibpt"],
    "MEMBAR": [""],
    "ERRBAR": [""],
    "CGAERRBAR": [""],
    "CCTL": [""],
    "LDGDEPBAR": [""],
    "ENDCOLLECTIVE": [""],
    "ACQBULK": [""],                    # griddepcontrol.wait (sm_90): a programmatic dependent waits for its parent
    "PREEXIT": [""],                    # griddepcontrol.launch_dependents (sm_90)
    "UCGABAR_ARV": [""],                # barrier.cluster.arrive (sm_90): this block has reached the cluster's barrier
    "UCGABAR_WAIT": [""],               # barrier.cluster.wait (sm_90): until every block of the cluster has arrived
    # the uniform datapath: the same slots with uniform registers (U) in the vector places
    "UIADD3": ["Ud [Pu] [Pv] Ra Sb Sc [Pp] [Pq]"],
    "UIMAD": ["Ud Ra Sb Sc"],
    "ULEA": ["Ud [Pu] Ra Sb Sc Ishift [Pp]", "Ud [Pu] Ra Sb Ishift [Pp]"],
    "ULOP3": ["[Pu] Ud Ra Sb Sc Ilut [Pp]"],
    "USHF": ["Ud Ra Sb Sc"],
    "UPRMT": ["Ud Ra Sb Sc"],    # ptxas's sign extension of a uniform .s8 / .s16 parameter (0x8880 / 0x9910)
    "UFLO": ["Ud Sb"],
    "UISETP": ["Pu Pv Ra Sb Pp"],       # ISETP's slots with uniform predicates (sm90_hgmma_product.ptx)
    # setp.<cmp>.u64 / .s64 of kernel parameters (user_forms.ptx, both targets): USEL UR4, URZ, 0x1, UP1 and
    # USEL UR5, URZ, 0x2, !UP2 (ptxas 13: 0x...0x000000013f047887 / hi 0x...08800000, 0x...0d000000): SEL's
    # slots with uniform registers, the uniform predicate at 87 (its '!' at 90)
    "USEL": ["Ud Ra Sb Pp"],
    "REDUX": ["Ud Ra"],
    # match.all / match.any (warp_forms.ptx): MATCH.ALL P0, R9, R2 (Pu at 81); MATCH.ANY R8, R2 is the
    # word with Pu = PT (7), which nvdisasm does not print: a layout of its own, PT among its fixed bits
    "MATCH": ["Pu Rd Ra", "Rd Ra"],
    "P2R": ["Rd PR Ra Sb"],
    "R2P": ["PR Ra Sb"],
    # sm_90: warpgroup MMA, the Tensor Memory Accelerator, mbarriers (sm90_async.ptx)
    "HGMMA": ["Rd GdA Rc [Pg] [Gsb]", "Rd Ra GdB Rc [Pg] [Gsb]"],
    "WARPGROUP": ["", "Gsb Iwg"],
    "SYNCS": ["Ud MemUA Sb", "Rd MemSync Sb", "Pu MemSync Sb"],
    "UTMALDG": ["MemU32 MemU24"],     # [shared address, mbarrier, coordinates...], [tensor map]
    "UTMASTG": ["MemU32 MemU24"],     # [tensor map], [shared address, coordinates...]
    "UTMACCTL": ["MemU24"],
    "UTMACMDFLUSH": [""],
    "ELECT": ["Pu Ud Pp"],
    "FENCE": [""],
    "YIELD": [""],
    "USETMAXREG": ["Imaxreg", "Pu Imaxreg"],   # .DEALLOC 40 / .TRY_ALLOC UP0, 232 (a loop until UP0)
}

# Layouts of one variant of an opcode, tried instead of LAYOUTS[opcode] where the instruction has the
# modifier (outside the opcode's encoding class, derive.encoding_class, which its other forms keep): sm_90's fp8
# F2FP (ptxas's cvt.rn.satfinite.e4m3x2 / .e5m2x2, tools/ptx_corpus/wide_cover_sm90.ptx) merges into C,
# F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C R8, R6, R7, RZ (C at 64), or unpacks B alone, F2FP.F16.E4M3.UNPACK_B
# R11, R0 (A a fixed RZ), or B and C, F2FP.SATFINITE.E4M3.F16.UNPACK_B_MERGE_C R6, R0, RZ
# UISETP's 64-bit comparison of uniform registers (setp.lt.u64 of two kernel parameters, user_forms.ptx, both
# targets): UISETP.GE.U32.AND.EX UP1, UPT, UR5, UR9, UPT, UP1 -- ISETP.EX's six slots, the low words' UP1 at 68.
# sm_86's shfl.sync / redux.sync / bar.warp.sync with a register's member mask (user_forms.ptx): @!P0 BRA.CONV UR6,
# `(.L_x_5)` branches to the warp-wide code when the mask is not the converged warp's -- UR6 at A's uniform field
# (24), bit 91 and bits 32..33 among .CONV's fixed bits (ptxas 13: 0x0000003306008947 hi 0x...0b800000); vote.sync /
# match.sync with a tile's computed mask: @!P1 BRA.DIV UR4, `(.L_x_39)` (0x000001e204009947: bit 33 for .DIV)
# F2FP.RELU.MERGE_C R0, R2, RZ (cvt.rn.relu.f16.f32, sim_forms_s44.ptx, both targets; sm_90 spells it
# F2FP.RELU.F16.F32.MERGE_C): one source at B, C merged, A a fixed RZ -- ptxas 13: 0x00000002ff00723e hi ...48ff
LAYOUT_VARIANTS = {("F2FP", "PACK_AB_MERGE_C"): ["Rd Ra Sb Sc"], ("F2FP", "UNPACK_B_MERGE_C"): ["Rd Sb Sc"],
                   ("F2FP", "MERGE_C"): ["Rd Sb Sc"],
                   ("F2FP", "UNPACK_B"): ["Rd Sb"], ("UISETP", "EX"): ["Pu Pv Ra Sb Pp Pr"],
                   ("BRA", "CONV"): ["[Pp] Target", "Ra Target"], ("BRA", "DIV"): ["[Pp] Target", "Ra Target"]}
# Layouts an opcode takes beyond its LAYOUTS entry, kept out of its encoding class (derive.encoding_class reads
# LAYOUTS alone): sm_86's R2UR P0, URZ, R7 (redux.sync / bar.warp.sync with a register's member mask,
# user_forms.ptx) writes "is the mask uniform" to Pu at 81 (ptxas 13: P1 sets bit 81); REDUX, R2UR's class
# sibling, writes no predicate
LAYOUT_EXTRAS = {"R2UR": ["Pu Ud Ra"]}
# ... and of one target: sm_90's WARPSYNC R7 (bar.warp.sync / shfl.sync with a register mask) holds the
# mask at A (24..31), sm_86's at B (32..39): ptxas 13's words 0x...0007007348 / 0x...0700007348
LAYOUT_TARGETS = {("WARPSYNC", "sm_90"): ["Ra", "", "Ra Target"]}

# Which source positions accept '-' (neg) and '|..|' (abs), per opcode; the bits are the
# position's (REG_A/B/C above; a constant in B uses B's).  Everything else takes none.
_FLOAT = {"A": ("neg", "abs"), "B": ("neg", "abs"), "C": ("neg", "abs")}
_HALF = {"A": ("neg", "abs"), "B": ("neg", "abs")}
# HFMA2's C register takes both too, at REG_C_HALF_PAIR's bits (ptxas's neg / abs .bf16x2 and .bf16, both
# targets: HFMA2.BF16_V2 R7, -RZ.H0_H0, RZ.H0_H0, -R4 sets 84, |R4| 83; sm_90's sub.rn.bf16x2 and
# mul.rn.bf16x2: HFMA2.MMA.BF16_V2 R9, R4, 1, 1, -R7 and R9, R4, R7, -RZ set 84; tools/ptx_corpus/bf16_forms.ptx)
_HALF_FMA = dict(_HALF, C=("neg", "abs"))
# Variants whose bits differ from their opcode's: HADD2.F32 has no absolute-value bit on A (nvdisasm,
# flipping every bit 0..104 of ptxas's HADD2.F32 R8, R2, R3: none prints |R2|; bit 73, plain HADD2's, prints
# nothing), so `|Ra|` there is refused, not dropped (probe s33 asmfuzz finding 2).
OPERAND_MODIFIER_VARIANTS = {("HADD2", "F32"): {"A": ("neg",), "B": ("neg", "abs")}}
OPERAND_MODIFIERS = {
    "FADD": _FLOAT, "FMUL": _FLOAT, "FFMA": _FLOAT, "FSETP": _FLOAT, "FSET": _FLOAT, "FMNMX": _FLOAT, "FSEL": _FLOAT,
    "DADD": _FLOAT, "DMUL": _FLOAT, "DFMA": _FLOAT, "DSETP": _FLOAT,
    "HADD2": _HALF, "HMUL2": _HALF, "HFMA2": _HALF_FMA, "HMNMX2": _HALF, "HSETP2": _HALF,
    "MUFU": {"B": ("neg", "abs")},
    "IADD3": {"A": ("neg",), "B": ("neg",), "C": ("neg",)},
    "UIADD3": {"A": ("neg",), "B": ("neg",), "C": ("neg",)},   # ptxas: UIADD3 UR4, -UR5, 0x100000, URZ
    "IMAD": {"C": ("neg",)},
    # ptxas's div.r{n,z,m,p}.f64 on sm_90: VIADDMNMX R9, R10, -R9, 0xb9600000, !PT (B's register lands in the C field,
    # the immediate at 32) sets bit 75, IADD3's C negate (user_forms_s45.ptx); a register B at 32 takes bit 63, which
    # nvdisasm prints as -R9.  Not C: bit 75 under a written C register prints nothing (nvdisasm), so '-' is refused there
    "VIADDMNMX": {"B": ("neg",)},
    "LEA": {"B": ("neg",),         # ptxas: LEA.HI R9, R6, -R13, RZ, 0x10 sets bit 63 (int_forms.ptx)
            # ptxas: LEA R12, P0, -R7, R2, 0x2 (sub.s64 of y - (x << 2)) sets bit 72, REG_A's negate
            # (probe s38 sassforms5; tests/sass/test_sim_probe_s38_sassforms5.py)
            "A": ("neg",)},
    "HGMMA": {"A": ("neg",)},      # -R56: negate A (in registers); gdesc[..].negA otherwise
}

# Additions with carry-in (.X): the negate bit of a source means its one's complement there, and
# nvdisasm prints it as '~' (ptxas: IADD3.X R3, R10, ~c[0x0][0x164], RZ, P1, !PT sets bit 63;
# IMAD.X R7, RZ, RZ, ~R7, P0 sets bit 75; UIADD3.X UR5, URZ, ~UR7, URZ, UP1, !UPT sets bit 63;
# tests/sass/test_modifiers.py), so a source writes '~' on them and '-' is refused.
COMPLEMENT_WITH_CARRY = {"IADD3", "IMAD", "UIADD3", "LEA"}
# Sources whose negate bit is a one's complement with or without .X, which nvdisasm prints as '~' (not in
# OPERAND_MODIFIERS: FLO keeps I2F's encoding class, derive.encoding_class): FLO.U32 R25, ~R4 sets bit 63, REG_B's
# negate (ptxas 13's bfind.u64 / clz.b64, the leading one of the high word's complement, both targets,
# tools/ptx_corpus/wide_cover_forms.ptx)
COMPLEMENTED = {"FLO": ("B",)}
# ... LEA.HI.X too, on B (OPERAND_MODIFIERS["LEA"]): bit 63, REG_B's negate, which nvdisasm prints as '-' on a
# plain LEA and '~' on LEA.X (ptxas 13, sad / vabsdiff2 of tools/ptx_corpus/int_forms.ptx, both targets:
# LEA.HI R9, R6, -R13, RZ, 0x10 and LEA.HI.X.SX32 R15, R6, ~R15, 0x1, P1 each set bit 63)

# .reuse bits follow the operand's logical position, not the field it lands in: with an
# immediate/constant third source, B's register moves to the C field but keeps B's reuse
# bit (ptxas: FFMA R18, R2, R7.reuse, 0.5 sets bit 123).  FADD's second source sits in the
# B field yet uses C's reuse bit (ptxas: FADD R6, R2.reuse, R7.reuse sets 122 and 124).
REUSE_BIT = {"Ra": 122, "Sb": 123, "Sc": 124}
REUSE_BIT_OVERRIDES = {"FADD": {"Sb": 124}, "HADD2": {"Sb": 124},
                       "DSETP": {"Sb": 124},   # ptxas sm_90: DSETP.GEU.AND P1, PT, R10, R4.reuse, PT sets 124
                       "HSETP2": {"Sb": 124}}  # ptxas: HSETP2.EQ.AND P1, P2, R2.reuse, R5.reuse, PT sets 122 and 124
# Slots whose reuse flag nvdisasm rejects for a variant ("undefined value ... for table
# 'TABLES_opex_N'"): HADD2.F32 takes .reuse on its B operand only, on both targets
# (tests/sass/test_roundtrip.py::test_reuse_nvdisasm_rejects_is_refused).
REUSE_FORBIDDEN = {("HADD2", "F32"): {"Ra"},
                   # HMMA's accumulator C takes none (nvdisasm: undefined value 0x94 for TABLES_opex_4/5)
                   ("HMMA", "16816"): {"Sc"}, ("HMMA", "1688"): {"Sc"}}
# Opcodes ptxas marks .reuse on (in the corpus); nvdisasm shows no reuse flags on others.
# PRMT: ptxas sm_90 writes PRMT R7, R16.reuse, 0x9910, RZ (bit 122; tests/sass/test_messages.py).
# probe s28 asm: ptxas 13 also marks R2UR, DADD, DFMA, DMUL, DSETP, F2FP, HFMA2, HMUL2, HMNMX2 and HMMA
# (its listings of fp_ops/h_ops/tc_ops and random kernels, both targets; each reuse bit that of the
# operand's position, REUSE_BIT, re-encoded bit for bit: tests/sass/test_reuse_more_opcodes.py).
REUSE_OPCODES = {"FADD", "FFMA", "FMNMX", "FMUL", "FSEL", "FSETP", "I2FP", "IADD3", "IMAD", "IMNMX",
                 "ISETP", "LEA", "LOP3", "MOV", "SEL", "SHF", "VIADD", "VIMNMX", "HADD2", "PRMT",
                 "R2UR", "DADD", "DFMA", "DMUL", "DSETP", "F2FP", "HFMA2", "HMUL2", "HMNMX2", "HMMA",
                 # ptxas 13 marks these too (tools/ptx_corpus/math_forms.ptx, both targets)
                 "HSETP2", "SGXT", "BMSK", "I2I",
                 # ptxas 13.0 (CUDA 13.0) marks IABS's source (its B) on sm_90 in math_forms.ptx, 13.5
                 # does not: bobc asm refused that listing (probe s37 floor finding 2)
                 "IABS",
                 # ptxas 13 marks these too (tools/ptx_corpus/int_forms.ptx, both targets)
                 "IDP", "F2IP", "VABSDIFF",
                 # ptxas 13 marks PLOP3's .SIGN sources on sm_90 (PLOP3.LUT P0, PT, R5.reuse.SIGN, ...:
                 # tools/ptx_corpus/sign_forms.ptx)
                 "PLOP3",
                 # ptxas 13 marks FSET.BF's sources (FSET.BF.NAN.AND R11, R0.reuse, R5.reuse, PT: warp_forms.ptx)
                 "FSET",
                 # ptxas 13 sm_90 marks VIADDMNMX's and VABSDIFF4's sources (VIADDMNMX R13, R8.reuse, 0x5, R10, !PT;
                 # VABSDIFF4.U8.ACC R14, R4, R5, R6.reuse: wide_cover_forms.ptx / wide_cover_sm90.ptx)
                 "VIADDMNMX", "VABSDIFF4"}
# ... on these targets only: nvdisasm shows no reuse flag on sm_86's R2UR (bit 122 decodes to nothing)
REUSE_TARGETS = {"R2UR": {"sm_90"}}

# A packed-half fused multiply-add whose third source is an immediate pair (HFMA2 R6, R4, -|R5|, 1, 4):
# B's register sits in the C field (64..71) but its negate and absolute bits are 84 and 83 -- 75/74,
# REG_C's, are A's lane selection in these opcodes (SWIZZLE_FIELD).  ptxas (neg.f16x2/abs.f16x2 into
# fma.rn.f16x2 with a constant addend, sm_86 and sm_90, HFMA2 and HFMA2.MMA): -R5 sets 84, |R5| 83;
# nvdisasm decodes the same bits so on both targets (probe s33 asmfuzz finding 1).  HFMA2's own C register
# has the same two bits (ptxas's neg.bf16x2: HFMA2.BF16_V2 R7, -RZ.H0_H0, RZ.H0_H0, -R4; probe s42 bf16arith).
REG_C_HALF_PAIR = dict(REG_C, neg=84, abs=83)

# Packed-half lane selection (`R2.H0_H0`): a 2-bit field per source position
# (ptxas: HADD2 R7, R4.H0_H0, R7.H0_H0 sets 2 at 74..75 and at 60..61; HADD2.F32 .H1_H1: 3).
# HFMA2's C register takes one at 81..82 (ptxas: fma.rn.f16 of two halves of one register, HFMA2 R4,
# R0.H0_H0, R5.H0_H0, R0.H1_H1 sets 3 there; tools/ptx_corpus/math_forms.ptx); B's register moved to the
# C field by an immediate pair takes none (its lane field is the pair's bits: refused).
HALF_OPCODES = {"HADD2", "HMUL2", "HFMA2", "HMNMX2", "HSETP2"}
SWIZZLE_FIELD = {"A": (74, 2), "B": (60, 2), "C": (81, 2)}
# ... but not HFMA2.MMA's: nvdisasm reads its word with 3 at 81..82 as `HFMA2.MMA R4, R0, R5, R6`, no lane
# selection (tests/sass/test_math_forms.py), so a selection on its C is refused, never dropped.
SWIZZLE_FIELD_ABSENT = {("HFMA2", "MMA"): {"C"}}
SWIZZLE_VALUE = {"": 0, "H0_H0": 2, "H1_H1": 3}
# A 16-bit source's high half, `R10.H1` (nvdisasm's suffix; no suffix is the low half): the bit, per opcode, of
# the conversions and MUFU that read one half of B's register (ptxas 13, both targets, wide_cover_forms.ptx:
# I2F.S16 R15, R10.H1, F2F.F64.F16 R6, R10.H1, F2I.F16.TRUNC.NTZ R23, R10.H1, MUFU.EX2.F16 R33, R24.H1 set bit 60,
# whose neighbour 61 nvdisasm reads as .INVALID3; sm_90's F2FP.F16.E5M2.UNPACK_B R7, R0.H1 sets 88, which
# F2FP.*.PACK_AB_MERGE_C ignores).  Taken only where the source is 16 bits (HALF_SELECT_SOURCES: a
# conversion's source type, MUFU's .F16, F2FP's .UNPACK_B); refused elsewhere, never dropped.
HALF_SELECT = {"I2F": 60, "F2F": 60, "F2I": 60, "MUFU": 60, "F2FP": 88}
HALF_SELECT_SOURCES = {"I2F": ("S16", "U16"), "F2F": ("F16", "BF16"), "F2I": ("F16", "BF16"),
                       "MUFU": ("F16", "BF16"), "F2FP": ("UNPACK_B",)}

# Opcodes whose immediates are the high 32 bits of a binary64 (nvdisasm prints `DADD R10, R8, 1`).
DOUBLE_IMMEDIATE = {"DADD", "DMUL", "DFMA", "DSETP"}
# Global accesses carry a memory descriptor (desc[URn]; hidden in sm_86 text).
DESCRIPTOR_OPCODES = {"LDG", "STG", "LD", "ST", "ATOMG", "RED", "REDG", "LDGSTS"}
# Memory slots whose base register may not be RZ on a target: nvdisasm rejects sm_86's ATOMG [RZ.64+off]
# (every non-CAS form: "Unrecognized operation for functional unit 'uC'", an illegal instruction), and
# ptxas never writes it -- for an absolute address it zeroes a pair (CS2R R4, SRZ) and writes
# [R4.64+0x100]; its ATOMG.E.CAS takes [0x300] (MemCas, RZ-based, legal).  (opcode, slot) -> targets.
ZERO_BASE_ILLEGAL = {("ATOMG", "MemSt"): {"sm_86"}}
# Where sm_90's text names no descriptor, a generic load has none (ptxas's loads from a cluster
# peer's shared memory through the shared window: `LD.E Rd, [Ra+off]`, bit 91 clear), and its
# address offset takes the descriptor's bits and the 24-bit offset's: 32 signed bits from bit 32
# (tools/ptx_corpus/sm90_cluster.ptx; ptxas: LD.E R0, [R4+-0x10] is 0xfffffff004007980, and nvdisasm
# prints bits 32..63 = 0x80000000 as [R2+-0x80000000]: probe s29 asmrange).
DESCRIPTORLESS_OFFSET = {"LD": (32, 32)}
# Uniform registers a [URn] operand reads beyond URn (the scheduler's dependences): UTMALDG's first
# operand is a block -- shared address, mbarrier, then one coordinate a dimension (ptxas: UTMALDG.2D
# [UR20] with UR20..UR23 set before it, .3D [UR8] with UR8..UR12) -- and its tensor map is a 64-bit
# address (ULDC.64 URm..URm+1).  (opcode, dimensionality, operand) -> registers read.
# UTMASTG's block is the shared address then one coordinate a dimension, its tensor map the second
# operand (ptxas: UTMASTG.2D [UR4], [UR8] reads UR4..UR6 and UR8..UR9); UTMACCTL.PF [UR16] prefetches
# the tensor map at UR16..UR17 (nvdisasm's life ranges, tests/sass/test_register_widths.py).
UNIFORM_ADDRESS_READS = {("UTMALDG", "2D", "MemU32"): 4, ("UTMALDG", "3D", "MemU32"): 5,
                         ("UTMALDG", "2D", "MemU24"): 2, ("UTMALDG", "3D", "MemU24"): 2,
                         ("UTMASTG", "2D", "MemU32"): 3, ("UTMASTG", "2D", "MemU24"): 2,
                         ("UTMACCTL", "PF", "MemU24"): 2}

# Opcodes of the uniform datapath: their home register file is UR, so a uniform third source
# does not move B's register (the C-slot swap is for vector opcodes).
UNIFORM_OPCODES = {"UIADD3", "UIMAD", "ULEA", "ULOP3", "USHF", "UPRMT", "UFLO", "UMOV", "ULDC", "REDUX", "VOTEU",
                   "UISETP", "USEL"}

# Instructions whose guard is a uniform predicate (@UP0..@UP6, @UPT); every other takes a vector
# one (@P0..@P6, @PT).  The guard field (bits 12..15) is the same: the opcode decides the bank, so
# an instruction guarded by the other bank would silently test another predicate.  Read from
# nvdisasm over every learned form of both targets (tests/sass/test_guards.py) and from ptxas's
# guards in the corpus (@!UP0 SYNCS.EXCH.64 beside @!P0 SYNCS.ARRIVE.TRANS64): the uniform
# datapath's U* opcodes, S2UR and SYNCS.EXCH; not REDUX, VOTEU, R2UR or ELECT, which take P.
UNIFORM_GUARD_OPCODES = {"UIADD3", "UIMAD", "ULEA", "ULOP3", "USHF", "UPRMT", "UFLO", "UMOV", "ULDC", "UISETP", "USEL",
                         "S2UR", "UCGABAR_ARV", "UCGABAR_WAIT", "USETMAXREG", "UTMALDG", "UTMASTG",
                         "UTMACCTL", "UTMACMDFLUSH"}
UNIFORM_GUARD_VARIANTS = {("SYNCS", "EXCH")}


def guard_bank(mnemonic: str) -> str:
    """"UP" when `mnemonic`'s guard is a uniform predicate, else "P" (UNIFORM_GUARD_OPCODES)."""
    opcode, *modifiers = mnemonic.split(".")
    if opcode in UNIFORM_GUARD_OPCODES or any((opcode, m) in UNIFORM_GUARD_VARIANTS for m in modifiers):
        return "UP"
    return "P"


# gdesc[URn] flags: the bit each sets (nvdisasm, flipping bits of ptxas's HGMMA words)
MATRIX_DESCRIPTOR_FLAGS = {"tnspA": 61, "tnspB": 62, "negB": 63, "negA": 72}

# Opcodes the scheduler does not model (sm_90's asynchronous units: warpgroup MMA completes
# through WARPGROUP.DEPBAR, TMA copies and mbarrier phases through SYNCS): their control
# codes must be written (or come from a listing); the assembler refuses them otherwise.
EXPLICIT_CONTROL = {"HGMMA", "WARPGROUP", "SYNCS", "UTMALDG", "UTMASTG", "UTMACCTL",
                    "UTMACMDFLUSH", "ELECT", "FENCE", "YIELD", "USETMAXREG"}

# Uniform-register blocks an opcode reads as one tuple, by opcode and operand index: the block must
# start at a multiple of the tuple's width rounded up to a power of two.  The TMA copies' operand
# block (destination, mbarrier, then one coordinate a dimension: 4 words for 2-D, 5 to 7 beyond):
# every UTMALDG / UTMASTG in ptxas's sm_90 output starts a 2-D block at a multiple of 4 and a 3-D
# one at a multiple of 8, and the H200 raised an illegal instruction for UTMALDG.3D [UR44]
# (bench/results/sm90-gemm-h200-step.txt).
ALIGNED_UNIFORM_TUPLES = {"UTMALDG": 0, "UTMASTG": 0}

# Opcodes whose immediates are binary32 values (nvdisasm prints them as floats).
FLOAT_IMMEDIATE = {"FADD", "FMUL", "FFMA", "FSETP", "FSET", "FMNMX", "FSEL", "MUFU"}

# Variable-latency opcodes: their results come back through a scoreboard
# (sass-facts.md "Control codes and latencies"; LDC is treated so on both).
# Cycles until a fixed-latency result may be read, for an opcode bobc.sass.schedule's LATENCY does not
# list: the longest ALU chain ptxas uses (here, beside VARIABLE_LATENCY, for arch.py's SchedulingFacts)
DEFAULT_LATENCY = 6
VARIABLE_LATENCY = {"S2R", "S2UR", "LDG", "LDS", "LDC", "MUFU", "F2I", "I2F", "F2F", "POPC",
                    "BREV", "FLO", "SHFL", "STG", "STS", "R2UR", "LDL", "STL", "LD", "LDSM", "LDGSTS",
                    "ATOMS", "ATOMG", "RED", "REDG", "DADD", "DMUL", "DFMA", "DSETP", "B2R",
                    "REDUX", "UFLO", "VOTEU",
                    "MATCH",  # ptxas sets a write scoreboard on every MATCH (warp_forms.ptx, both targets)
                    "FCHK",   # ptxas sets a write scoreboard on FCHK (int_forms.ptx divide, both targets)
                    "FRND"}   # ptxas sets a write scoreboard on every FRND (math_forms.ptx, both targets)
# Variable-latency opcodes that read their register sources late: a later
# overwrite of those sources must wait for the read barrier.
READS_LATE = {"LDG", "STG", "LDS", "STS", "SHFL", "LDC", "LDL", "STL", "LD", "LDSM", "LDGSTS", "ATOMS",
              "ATOMG", "RED", "REDG", "DADD", "DMUL", "DFMA"}
# HMMA is in neither set: it is fixed-latency (coupled), ptxas sets no scoreboard on it on
# either target (tools/ptx_corpus corpus3 tensor_mma, gemm_forms) and NVIDIA's Ampere tables
# (Mesa NAK sm80_instr_latencies.rs, MMA_2x_collect) give it fixed read-after-write delays;
# schedule.FIXED_LATENCIES holds its latency.

# Destinations nvdisasm leaves out of its text when they are the zero register: VOTE.ANY RZ, P1, P0
# prints as VOTE.ANY P1, P0 (ptxas writes that shape: VOTE.ALL P1, !P1 for vote.sync.all.pred), VOTEU's
# URZ likewise; the encoder reads the 2-operand text as the form with the zero destination.
HIDDEN_ZERO_DESTINATION = {"VOTE": "R", "VOTEU": "UR"}

# Display aliases: nvdisasm picks these names from operand values (IMAD with a power-of-two
# multiplier and RZ addend prints as IMAD.SHL, ...), so their operands cannot vary freely.
DISPLAY_ALIASES = ("IMAD.SHL", "IMAD.MOV", "IMAD.IADD")
