"""bobc's own control codes for two-instruction dependencies, judged by the simulator's control-code checker
(bobc.sim.hazards, whose latencies are NVIDIA's Ampere tables as Mesa NAK publishes them: sm80_instr_latencies.rs
RegLatencySM80 / PredLatencySM80 / URegLatencySM80, plus ptxas's sm_90 minimums) -- tables written apart from
bobc.sass.schedule's constants, so a constant or rule of the scheduler shortened below NVIDIA's figure shows here.

Each stream is a producer, its reader, and a store of the result (so nothing is dead), no control codes written:
the scheduler picks them.  Mutants of bobc.sass.schedule that the scheduler's own tests let pass and these
refuse (probe s45 mutants11): HFMA2 taken out of FMA_PIPE (a LOP3 result read by an HFMA2 4 cycles on; NAK: an
ALU -> FP16 read needs 5), PREDICATE_OPERAND_LATENCY 5 -> 4 (IMAD.X reading an ISETP's carry 4 cycles on; NAK:
Coupled writer -> FMA reader 5), MMA_OPERAND_DELAY 3 -> 2 or dropped (an HMMA reading an FADD / LOP3 result;
NAK: MMA_2x_collect reader 7), REDUX taken out of ASYNC_SOURCE_READERS (its source overwritten 2 cycles on
with no wait).  The rest of the table pins the constants the scheduler's tests already hold (guard 13, FP64
14, uniform -> decoupled 9, -> UMOV 7, early operand fetch, FP64 operand and result delays, cross pipe)."""
from __future__ import annotations

import pytest

from tests.sass.test_schedule_fp64_like_reads_s45 import _hazard  # (the checker's first hazard, or None)

PAIRS = {
 "hfma2_lop3": ["HFMA2 R2, R4, R5, R6", "LOP3.LUT R7, R2, R8, RZ, 0xc0, !PT", "STG.E [R10.64], R7"],
 "lop3_hfma2": ["LOP3.LUT R2, R4, R8, RZ, 0xc0, !PT", "HFMA2 R7, R2, R5, R6", "STG.E [R10.64], R7"],
 "isetp_imadx": ["ISETP.GE.AND P0, PT, R4, R5, PT", "IMAD.X R7, R4, R5, R6, P0", "STG.E [R10.64], R7"],
 "redux_src": ["REDUX.SUM UR4, R2", "IADD3 R2, R4, R5, RZ", "STG.E [R10.64], R2", "MOV R8, UR4", "STG.E [R12.64], R8"],
 "fadd_hmma": ["FADD R4, R8, R9", "HMMA.16816.F32 R12, R4, R6, R12", "MOV R20, R21", "MOV R22, R23", "STG.E [R10.64], R12"],
 "lop3_hmma": ["LOP3.LUT R4, R8, R9, RZ, 0xc0, !PT", "HMMA.16816.F32 R12, R4, R6, R12", "MOV R20, R21", "MOV R22, R23", "STG.E [R10.64], R12"],
 "hfma2_fadd": ["HFMA2 R2, R4, R5, R6", "FADD R7, R2, R8", "STG.E [R10.64], R7"],
 "isetp_guard": ["ISETP.GE.AND P0, PT, R4, R5, PT", "@P0 IADD3 R7, R4, R5, RZ", "STG.E [R10.64], R7"],
 "isetp_sel": ["ISETP.GE.AND P0, PT, R4, R5, PT", "SEL R7, R4, R5, P0", "STG.E [R10.64], R7"],
 "isetp_imad_x": ["ISETP.GE.AND P0, PT, R4, R5, PT", "IADD3.X R7, R4, R5, RZ, P0, !PT", "STG.E [R10.64], R7"],
 "hsetp2_sel": ["HSETP2.GTU.AND P0, PT, R4, R5, PT", "SEL R7, R4, R5, P0", "STG.E [R10.64], R7"],
 "isetp_vote": ["ISETP.GE.AND P0, PT, R4, R5, PT", "VOTE.ANY R7, PT, P0", "STG.E [R10.64], R7"],
 "isetp_barred": ["ISETP.GE.AND P0, PT, R4, R5, PT", "BAR.RED.POPC.DEFER_BLOCKING 0x0, P0", "STG.E [R10.64], R7"],
 "isetp_voteu": ["ISETP.GE.AND P0, PT, R4, R5, PT", "VOTEU.ANY UR4, UPT, P0", "MOV R7, UR4", "STG.E [R10.64], R7"],
 "ulop3_popc": ["ULOP3.LUT UR4, UR5, UR6, URZ, 0xc0, !UPT", "POPC R7, UR4", "STG.E [R10.64], R7"],
 "uiadd3_umov": ["UIADD3 UR4, UR5, UR6, URZ", "UMOV UR7, UR4", "MOV R7, UR7", "STG.E [R10.64], R7"],
 "uisetp_sel": ["UISETP.GT.AND UP0, UPT, UR4, UR5, UPT", "USEL UR7, UR4, UR5, UP0", "MOV R7, UR7", "STG.E [R10.64], R7"],
 "iadd3_ldg": ["IADD3 R2, R4, R5, RZ", "LDG.E R7, [R2.64]", "STG.E [R10.64], R7"],
 "fadd_dadd": ["FADD R2, R4, R5", "DADD R6, R2, R8", "STG.E.64 [R10.64], R6"],
 "dadd_fsel": ["DADD R2, R4, R8", "FSEL R7, R2, R5, P0", "STG.E [R10.64], R7"],
 "dsetp_guard": ["DSETP.GT.AND P0, PT, R4, R8, PT", "@P0 IADD3 R7, R4, R5, RZ", "STG.E [R10.64], R7"],
 "wide": ["IMAD.WIDE R2, R4, R5, R6", "IADD3 R7, R3, R5, RZ", "STG.E [R10.64], R7"],
 "decoupled_ow": ["IADD3 R2, R4, R5, RZ", "MUFU.EX2 R2, R6", "STG.E [R10.64], R2"],
 "mufu_src": ["MUFU.EX2 R8, R2", "FADD R2, R4, R5", "STG.E [R10.64], R2", "STG.E [R12.64], R8"],
 "popc_src": ["POPC R8, R2", "IADD3 R2, R4, R5, RZ", "STG.E [R10.64], R2", "STG.E [R12.64], R8"],
 "flo_src": ["FLO.U32 R8, R2", "IADD3 R2, R4, R5, RZ", "STG.E [R10.64], R2", "STG.E [R12.64], R8"],
 "i2i": ["I2I.S16.S32.SAT R2, R4", "PRMT R7, R2, 0x9910, RZ", "STG.E [R10.64], R7"],
 "lea": ["LEA R2, R4, R5, 0x2", "IADD3 R7, R2, R5, RZ", "STG.E [R10.64], R7"],
 "i2fp": ["I2FP.F32.S32 R2, R4", "FADD R7, R2, R5", "STG.E [R10.64], R7"],
 "i2fp_lop": ["I2FP.F32.S32 R2, R4", "LOP3.LUT R7, R2, R8, RZ, 0xc0, !PT", "STG.E [R10.64], R7"],
 "imad_lop": ["IMAD R2, R4, R5, R6", "LOP3.LUT R7, R2, R8, RZ, 0xc0, !PT", "STG.E [R10.64], R7"],
 "fmnmx_fadd": ["FMNMX R2, R4, R5, !PT", "FADD R7, R2, R5", "STG.E [R10.64], R7"],
}


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_scheduled_pair_passes_the_checker(name, target):
    reason = _hazard("\n".join(line + " ;" for line in PAIRS[name]) + "\nEXIT ;\n", target)
    if reason:
        pytest.fail(f"{name} on {target}: {reason}")
