"""The automatic control codes, judged by an independent hazard checker.

The checker replays a stream in order using only what the hardware contract
says (sass-facts.md): an instruction issues `stall` cycles after the one
before it; a scoreboard set by a variable-latency instruction stays pending
until some instruction lists it in its wait mask; a fixed-latency result is
ready 4 cycles after issue for FP32/IADD3/LOP3/LEA/SHF/MOV/SEL, 5 for IMAD
(6 for its .WIDE high half) and 13 for predicates (ptxas's own minimums).  It
then asserts: no register is read before it is ready, no scoreboarded result is
read or overwritten before its barrier was waited, no register a pending
store/load still reads is overwritten before its read barrier was waited, and
at branches and labels nothing is outstanding.  It is run over Bob's kernels
and over random straight-line programs.
"""
from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings, strategies as st
import pytest

from bobc.sass import assemble, assemble_kernel
from bobc.sass.encoder import Encoder
from bobc.sass.golden import KERNELS
from bobc.sass.schedule import expand
from bobc.sass.syntax import Label, parse_source
from bobc.sass.tables.layouts import VARIABLE_LATENCY, READS_LATE
from bobc.targets import TARGETS

READY_AFTER = {"IMAD": 5, "FFMA": 4, "FADD": 4, "FMUL": 4, "IADD3": 4, "LOP3": 4, "LEA": 4, "SHF": 4,
               "MOV": 4, "SEL": 4, "FSEL": 4, "FMNMX": 4, "IMNMX": 4, "I2FP": 5, "ULDC": 4}


def check(source: str, arch: str):
    """Raise AssertionError naming the first hazard in the assembled stream of `source`."""
    assembled = assemble(source, arch)
    lines = [l for l in parse_source(source) if l.instruction is not None]
    targets = {op.address if op.address is not None else assembled.labels[op.name]
               for l in lines for op in l.instruction.operands if isinstance(op, Label)}
    encoder = Encoder(arch)
    cycle = 0
    ready: dict = {}
    pending_write: dict = {}
    pending_read: dict = {}
    for line, out in zip(lines, assembled.instructions):
        inst = line.instruction
        inst = replace(inst, operands=[Label(op.name, assembled.labels[op.name])
                                       if isinstance(op, Label) and op.address is None else op
                                       for op in inst.operands])
        placed = encoder.place_operands(encoder.normalize(inst), out.address)
        reads, writes = expand(placed.reads), expand(placed.writes)
        c = out.control
        for b in range(6):
            if c.wait_mask >> b & 1:
                pending_write = {r: x for r, x in pending_write.items() if x != b}
                pending_read = {r: x for r, x in pending_read.items() if x != b}
        where = f"{out.address:#06x} {out.text}"
        if out.address in targets or inst.opcode in ("BRA", "EXIT", "BAR"):
            assert not pending_write and not pending_read or inst.opcode == "EXIT" and not pending_write, \
                f"{where}: scoreboards outstanding at a branch or label"
            assert all(cycle >= t for t in ready.values()), f"{where}: results in flight at a branch or label"
        for r in reads:
            assert r not in pending_write, f"{where}: reads {r} before its scoreboard was waited"
            assert cycle >= ready.get(r, 0), f"{where}: reads {r} {ready[r] - cycle} cycles early"
        for r in writes:
            assert cycle >= ready.get(r, 0), f"{where}: overwrites {r} while an earlier result is in flight"
            assert r not in pending_write, f"{where}: overwrites {r} while a load still writes it"
            assert r not in pending_read, f"{where}: overwrites {r} while a pending access still reads it"
        if inst.opcode in VARIABLE_LATENCY:
            if writes:
                assert c.write_barrier != 7, f"{where}: variable latency without a write scoreboard"
                for r in writes:
                    pending_write[r] = c.write_barrier
                    ready.pop(r, None)
            if inst.opcode in READS_LATE and any(r[0] == "R" for r in reads):
                assert c.read_barrier != 7, f"{where}: late reader without a read scoreboard"
                for r in reads:
                    if r[0] == "R":
                        pending_read[r] = c.read_barrier
        else:
            latency = READY_AFTER.get(inst.opcode, 6)
            if "WIDE" in inst.modifiers:
                latency = 6
            for r in writes:
                ready[r] = cycle + (13 if r[0] in ("P", "UP") else latency)
        if 1 <= c.stall <= 11:
            assert c.yield_bit == 1
        cycle += c.stall
    return assembled


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_bob_kernels_have_no_hazards(kernel, arch):
    check(KERNELS[kernel].read_text(), arch)


TEMPLATES = [
    "FADD R{a}, R{b}, R{c}", "FFMA R{a}, R{b}, R{c}, R{d}", "FMUL R{a}, R{b}, 0.5",
    "IMAD R{a}, R{b}, R{c}, R{d}", "IADD3 R{a}, R{b}, R{c}, RZ", "LOP3.LUT R{a}, R{b}, R{c}, RZ, 0xc0, !PT",
    "MUFU.EX2 R{a}, R{b}", "MUFU.RCP R{a}, R{b}", "S2R R{a}, SR_TID.X",
    "LDG.E R{a}, [R{e}.64]", "STG.E [R{e}.64], R{b}", "LDS R{a}, [R{b}]", "STS [R{b}], R{c}",
    "ISETP.NE.AND P{p}, PT, R{b}, RZ, PT", "@P{p} FADD R{a}, R{b}, R{c}", "SEL R{a}, R{b}, R{c}, P{p}",
    "IMAD.WIDE.U32 R{e}, R{b}, 0x4, R{f}", "SHFL.BFLY PT, R{a}, R{b}, 0x1, 0x1f",
]


@st.composite
def programs(draw):
    lines = ["ULDC.64 UR4, c[0x0][memory_descriptor]"]
    for _ in range(draw(st.integers(5, 40))):
        t = draw(st.sampled_from(TEMPLATES))
        regs = {k: draw(st.integers(0, 7)) for k in "abcd"}
        regs["e"] = 2 * draw(st.integers(0, 3))
        regs["f"] = 2 * draw(st.integers(0, 3))
        regs["p"] = draw(st.integers(0, 2))
        lines.append(t.format(**regs))
    lines.append("EXIT")
    return "\n".join(lines)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@settings(max_examples=150, deadline=None)
@given(source=programs())
def test_random_programs_have_no_hazards(arch, source):
    check(source, arch)
