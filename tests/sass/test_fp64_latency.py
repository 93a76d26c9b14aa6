"""FP64 arithmetic's control codes per target.

ptxas 13 (-O3, a chain sub/mul/fma/add/setp .f64 compiled for both; control bits read from the
cubins) sets no write scoreboard on DADD, DMUL, DFMA or DSETP for sm_90 and issues the next
FP64 reader 8 cycles on (6 to an F2F); for sm_86 it scoreboards them and the reader waits.
On the H200 a reader told to wait on a scoreboard the DADD named read the old register (seed
003's linear step gave t x for (w x - t) x: tests/gpu/probe_counting_semaphore.py), so on
sm_90 the FP64 results must be timed by stalls alone.
"""
from __future__ import annotations

import pytest

from bobc.sass import assemble

CHAIN = """
.kernel fp64_chain
.registers 16
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][RZ+param+0x0]
    LDG.E.64 R4, [R2.64]
    LDG.E.64 R6, [R2.64+0x8]
    DADD R8, R4, -R6
    DMUL R10, R8, R6
    DFMA R12, R10, R4, R8
    DADD R8, R12, R4
    F2F.F32.F64 R14, R8
    STG.E [R2.64+0x10], R14
    EXIT
done:
    BRA done
"""
FP64 = {"DADD", "DMUL", "DFMA"}


def controls(arch):
    """[(opcode, stall, write barrier, wait mask)] of the chain's instructions."""
    out = []
    for inst in assemble(CHAIN, arch).instructions:
        c = inst.control
        out.append((inst.text.split()[0], c.stall, c.write_barrier, c.wait_mask))
    return out


def test_sm90_times_fp64_results_by_stalls_alone():
    listing = controls("sm_90")
    for i, (opcode, stall, barrier, _) in enumerate(listing):
        if opcode in FP64:
            assert barrier == 7, f"{opcode} at {i} sets scoreboard {barrier} on sm_90"
            assert stall >= 8, f"{opcode} at {i}: its reader issues {stall} cycles on, under 8"


def test_sm86_scoreboards_fp64_results_and_the_reader_waits():
    listing = controls("sm_86")
    for i, (opcode, _, barrier, _) in enumerate(listing):
        if opcode in FP64:
            assert barrier != 7, f"{opcode} at {i} sets no scoreboard on sm_86"
            assert listing[i + 1][3] >> barrier & 1, f"the reader after {opcode} at {i} does not wait on it"
