"""The automatic control codes, judged by an independent hazard checker.

The checker replays a stream in order using only what the hardware contract
says (sass-facts.md): an instruction issues `stall` cycles after the one
before it; a scoreboard set by a variable-latency instruction stays pending
until some instruction lists it in its wait mask; a fixed-latency result is
ready 4 cycles after issue for FP32/IADD3/LOP3/LEA/SHF/MOV/SEL, 5 for IMAD
(6 for its .WIDE high half); a predicate may guard an instruction 13 cycles
after issue and be an operand (SEL's choice, IADD3.X's carry) 4 cycles after,
5 ahead of IMAD (ptxas's own minimums, as counted in tests/sass/data's sm_90
corpus).  It
then asserts: no register is read before it is ready, no scoreboarded result is
read or overwritten before its barrier was waited, no register a pending
store/load still reads is overwritten before its read barrier was waited, and
at branches and labels nothing is outstanding -- except a scoreboard a forward
branch hands to its target (the target's wait mask must cover it, and the path
that falls through keeps it pending across the label: schedule.FORWARD_BRANCH;
programs with BSSY / BSYNC / WARPSYNC drain everywhere) and a fixed-latency result
carried around a loop: the checker walks a loop's back edge (a BRA to an earlier
label) LOOP_TRIPS times before falling through, so every read after the label is
judged on the cycles the taken path really spends.  It is run over Bob's kernels
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
from bobc.targets import TARGETS

# The checker's own contract, written from sass-facts.md ("Control codes and latencies"), not
# imported from the scheduler, so an opcode missing from the scheduler's tables shows here:
# variable-latency opcodes (S2R ... SHFL), plus the stores and the conversions I2F/R2UR that
# ptxas also scoreboards; and those that read their registers after issue (memory, shuffles).
VARIABLE_LATENCY = {"S2R", "S2UR", "LDG", "LDS", "LDC", "MUFU", "F2I", "F2F", "POPC", "BREV", "FLO",
                    "SHFL", "STG", "STS", "I2F", "R2UR", "LDSM", "LDGSTS", "ATOMG"}
READS_LATE = {"LDG", "STG", "LDS", "STS", "SHFL", "LDC", "LDSM", "LDGSTS", "ATOMG"}

READY_AFTER = {"IMAD": 5, "FFMA": 4, "FADD": 4, "FMUL": 4, "IADD3": 4, "LOP3": 4, "LEA": 4, "SHF": 4,
               "MOV": 4, "SEL": 4, "FSEL": 4, "FMNMX": 4, "IMNMX": 4, "I2FP": 5, "ULDC": 4,
               "HMMA": 26}   # the longest wait ptxas leaves after an HMMA.16816 in the corpus


LOOP_TRIPS = 3


def check(source: str, arch: str):
    """Raise AssertionError naming the first hazard in the assembled stream of `source`."""
    assembled = assemble(source, arch)
    lines = [l for l in parse_source(source) if l.instruction is not None]
    targets = {op.address if op.address is not None else assembled.labels[op.name]
               for l in lines for op in l.instruction.operands if isinstance(op, Label)}
    encoder = Encoder(arch)
    # with convergence barriers (BSSY / BSYNC) or WARPSYNC every branch and label drains
    convergence = any(l.instruction.opcode in ("BSSY", "BSYNC", "WARPSYNC") for l in lines)
    cycle = 0
    ready: dict = {}
    pending_write: dict = {}
    pending_read: dict = {}
    predicate_issued: dict = {}
    producer: dict = {}
    trips: dict = {}
    position, back_edge = 0, False
    while position < len(lines):
        line, out = lines[position], assembled.instructions[position]
        inst = line.instruction
        inst = replace(inst, operands=[Label(op.name, assembled.labels[op.name])
                                       if isinstance(op, Label) and op.address is None else op
                                       for op in inst.operands])
        jump = next((op.address // 16 for op in inst.operands if isinstance(op, Label)), None)
        backward = inst.opcode == "BRA" and jump is not None and jump < position
        arrived_by_back_edge, back_edge = back_edge, False
        placed = encoder.place_operands(encoder.normalize(inst), out.address)
        reads, writes = expand(placed.reads), expand(placed.writes)
        c = out.control
        for b in range(6):
            if c.wait_mask >> b & 1:
                pending_write = {r: x for r, x in pending_write.items() if x != b}
                pending_read = {r: xs - {b} for r, xs in pending_read.items() if xs - {b}}
        where = f"{out.address:#06x} {out.text}"
        forward = inst.opcode == "BRA" and jump is not None and jump > position
        if forward and not convergence:
            # the taken path reaches the target with what is pending here: the target's own
            # wait mask must cover it (schedule.FORWARD_BRANCH); the fall-through path goes on
            # tracking it, and every read and overwrite below is judged against it
            waited = {b for b in range(6) if assembled.instructions[jump].control.wait_mask >> b & 1}
            assert all(b in waited for b in pending_write.values()), \
                f"{where}: a result still loading on the taken path is not waited at its target"
            assert all(bs <= waited for bs in pending_read.values()), \
                f"{where}: a register a pending access still reads is not waited at the taken path's target"
        elif out.address in targets and inst.opcode not in ("BRA", "EXIT", "BAR") and not convergence:
            pass    # a label the fall-through path crosses: what is pending stays tracked
        elif out.address in targets or inst.opcode in ("BRA", "EXIT", "BAR"):
            assert not pending_write and not pending_read or inst.opcode == "EXIT" and not pending_write, \
                f"{where}: scoreboards outstanding at a branch or label"
        if out.address in targets or inst.opcode in ("BRA", "EXIT", "BAR"):
            # a BAR.SYNC waits the scoreboards but is no join of paths: results in flight
            # stay tracked through it (schedule.BARRIER_DRAIN)
            if not (backward or arrived_by_back_edge or inst.opcode == "BAR"):
                # a branch's own stall holds its target: what is in flight must be ready by then
                held = c.stall if inst.opcode == "BRA" else 0
                assert all(cycle + held >= t + 1 for t in ready.values()), \
                    f"{where}: results in flight at a branch or label"
                assert all(cycle + held >= t + 13 for t in predicate_issued.values()), \
                    f"{where}: a predicate not yet ready to guard at a branch or label"
        guard = (inst.guard.bank, inst.guard.index) if inst.guard is not None and inst.guard.index != 7 else None
        for r in reads:
            assert r not in pending_write, f"{where}: reads {r} before its scoreboard was waited"
            if r in predicate_issued:
                after = 13 if r == guard else 5 if inst.opcode == "IMAD" else 4
                assert cycle >= predicate_issued[r] + after, f"{where}: reads {r} too early"
            elif r in ready:
                # memory and shuffle instructions fetch operands a cycle before the ALUs do
                # (ptxas: 5 cycles from IADD3/LOP3/FADD to LDG/STG/LDS/STS/SHFL); a result
                # crossing between the FMA pipe and the ALU pipe takes a cycle more (ptxas:
                # FMNMX->FADD 5, FADD->FMNMX 5, IADD3->IMAD 5, FADD->FADD 4)
                if inst.opcode in ("LDG", "STG", "LDS", "STS", "SHFL", "LDC"):
                    extra = 1
                elif inst.opcode in VARIABLE_LATENCY:
                    extra = 0
                else:
                    # the half-precision arithmetic runs on the FMA pipe too: HADD2.F32 -> FADD at 6
                    # cycles gave the separate bias-gradient kernel's sums bit for bit on the H200
                    fma = ("FADD", "FMUL", "FFMA", "IMAD", "HADD2", "HFMA2", "HMUL2")
                    extra = 1 if (producer.get(r) in fma) != (inst.opcode in fma) else 0
                assert cycle >= ready[r] + extra, f"{where}: reads {r} {ready[r] + extra - cycle} cycles early"
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
                    predicate_issued.pop(r, None)
            if inst.opcode in READS_LATE and any(r[0] == "R" for r in reads):
                assert c.read_barrier != 7, f"{where}: late reader without a read scoreboard"
                for r in reads:
                    if r[0] == "R":
                        pending_read.setdefault(r, set()).add(c.read_barrier)
        else:
            latency = READY_AFTER.get(inst.opcode, 6)
            if "WIDE" in inst.modifiers:
                latency = 6
            for r in writes:
                if r[0] in ("P", "UP"):
                    predicate_issued[r] = cycle
                    ready[r] = cycle + 4
                else:
                    ready[r] = cycle + latency
                    producer[r] = inst.opcode
        if 1 <= c.stall <= 11 and inst.opcode != "DEPBAR":   # ptxas's DEPBAR.LE: yield bit 0
            assert c.yield_bit == 1
        cycle += c.stall
        position += 1
        if backward and trips.get(position, 0) < LOOP_TRIPS:
            trips[position] = trips.get(position, 0) + 1
            position, back_edge = jump, True
    return assembled


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_bob_kernels_have_no_hazards(kernel, arch):
    check(KERNELS[kernel].read_text(), arch)


@pytest.mark.parametrize("tiling", [(64, 4), (64, 8), (128, 8)], ids=lambda t: f"{t[0]}x{t[1]}")
@pytest.mark.parametrize("layout", ["nn", "nt", "tn"])
@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_generated_product_kernels_have_no_hazards(tiling, layout, arch):
    """The tiled products (bobc.sass.generate.gemm): a software-pipelined loop whose fragment
    loads, copies and HMMAs overlap across BAR.SYNC, its column-sums version, the split-K path."""
    from bobc.sass.generate import gemm
    check(gemm.generate(gemm.VARIANTS[layout], "k", tile_m=tiling[0], warps=tiling[1]), arch)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_barrier_waits_scoreboards_but_not_a_product_in_flight(arch):
    """A BAR.SYNC waits every scoreboard (the shared load before it) but not the HMMA issued
    just before it: independent work after the barrier covers the product's latency, and the
    FADD after that reads it no sooner than 26 cycles on (schedule.BARRIER_DRAIN)."""
    work = "".join(f"    IADD3 R{22 + i}, R{22 + i}, 0x1, RZ\n" for i in range(8))
    source = (".kernel k\n.registers 40\n"
              "    LDS R16, [R2]\n"
              "    HMMA.16816.F32 R4, R8, R12, R4\n"
              "    BAR.SYNC.DEFER_BLOCKING 0x0\n" + work +
              "    FADD R20, R4, R16\n"
              "    EXIT\n")
    code = check(source, arch).instructions
    hmma, bar = code[1].control, code[2].control
    assert bar.wait_mask >> code[0].control.write_barrier & 1          # the load is waited there
    assert hmma.stall + bar.stall < 26                                  # the product is not
    assert sum(c.control.stall for c in code[1:-2]) >= 26 + 1           # ... but before its reader


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_forward_branch_hands_its_loads_to_its_target(arch):
    """Loads, then a branch around work: the branch waits nothing, so the path that falls through
    issues its own loads while the first are in flight (one round trip, not two), and the target
    label waits the scoreboards that were busy at the branch (schedule.FORWARD_BRANCH).  With a
    convergence barrier in the program every branch still drains."""
    body = ("    ULDC.64 UR4, c[0x0][memory_descriptor]\n"
            "    LDG.E R8, [R2.64]\n"
            "    ISETP.NE.AND P0, PT, R6, RZ, PT\n"
            "    @P0 BRA skip\n"
            "    LDG.E R9, [R4.64]\n"
            "    FADD R10, R8, R9\n"
            "skip:\n"
            "    FADD R11, R8, 1\n"
            "    EXIT\n")
    code = check(".kernel k\n.registers 24\n" + body, arch).instructions
    first, branch, second, label = code[1].control, code[3].control, code[4].control, code[6].control
    assert branch.wait_mask == 0 and second.wait_mask == 0
    assert label.wait_mask >> first.write_barrier & 1
    drained = check(".kernel k\n.registers 24\n" + body.replace("    EXIT\n", "    BSSY B0, done\ndone:\n    BSYNC B0\n    EXIT\n"),
                    arch).instructions
    assert drained[3].control.wait_mask >> drained[1].control.write_barrier & 1


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


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_overwriting_an_address_waits_for_every_load_still_reading_it(arch):
    """Two loads from the same address registers hold two read scoreboards; a later write
    of those registers waits for both (waiting only the newest once let the first load
    read a clobbered address: an illegal address on the H200)."""
    source = (".kernel k\n"
              "    LDG.E.128 R8, [R2.64]\n"
              "    LDG.E.128 R12, [R2.64+0x200]\n"
              "    MOV R2, RZ\n"
              "    EXIT\n")
    assembled = check(source, arch)
    first, second, overwrite = (i.control for i in assembled.instructions[:3])
    assert first.read_barrier != second.read_barrier
    assert overwrite.wait_mask >> first.read_barrier & 1 and overwrite.wait_mask >> second.read_barrier & 1


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_an_address_is_ready_a_cycle_later_for_a_load_than_for_an_alu(arch):
    """IADD3.X -> LDG waits 5 cycles, as ptxas does (4 let the load read a stale high word)."""
    source = (".kernel k\n"
              "    IADD3 R2, P0, R4, UR6, RZ\n"
              "    IADD3.X R3, RZ, UR7, RZ, P0, !PT\n"
              "    LDG.E R5, [R2.64]\n"
              "    EXIT\n")
    assembled = check(source, arch)
    assert assembled.instructions[1].control.stall >= 5


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_result_crossing_between_pipes_waits_a_cycle_more(arch):
    """FMNMX (ALU pipe) -> FADD (FMA pipe) 5 cycles, FMNMX -> FMNMX 4, as ptxas does; 4 for the
    crossing gave a FADD the value before the FMNMX on the H200."""
    source = (".kernel k\n"
              "    FMNMX R1, R2, R3, !PT\n"
              "    FMNMX R4, R1, R5, !PT\n"
              "    FADD R6, R4, R7\n"
              "    EXIT\n")
    assembled = check(source, arch)
    assert [i.control.stall for i in assembled.instructions[:2]] == [4, 5]


def _hmma_then(between: str) -> str:
    return (".kernel k\n.registers 32\n    HMMA.16816.F32 R4, R8, R12, R4\n" + between
            + "    FADD R20, R4, R5\n    EXIT\n")


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_latency_longer_than_one_stall_is_spread_or_refused(arch):
    """HMMA's result is ready 26 cycles after issue (fixed latency, no scoreboard): more
    than one stall field (at most 15) can hold.  With one independent instruction between,
    the two stalls together must cover it; with none, the build is refused naming both
    instructions, never emitted with the rest of the wait dropped."""
    from bobc.errors import BobcError
    spread = assemble(_hmma_then("    IADD3 R22, R23, R24, RZ\n"), TARGETS[arch])
    stalls = [inst.control.stall for inst in spread.instructions]
    assert stalls[0] + stalls[1] >= 26
    with pytest.raises(BobcError, match=r"FADD at 0x10 reads a result of HMMA at 0x0 \d+ cycles too early"):
        assemble(_hmma_then(""), TARGETS[arch])


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_depbar_holds_the_next_instruction_as_ptxas_does(arch):
    """Every DEPBAR.LE ptxas wrote in the corpus listings has a stall of at least 4 and the yield
    bit (bit 109 = 0); ours too.  With a stall of 1 the BAR.SYNC after it went through before
    the copies landed on the H200 (bench/gpu/coppelius_gemm_diagnose.py, 2026-12-01)."""
    import gzip
    from pathlib import Path
    from bobc.sass.assembler import assemble_listing
    listings = Path(__file__).parent / "data" / "listings"
    theirs = []
    for path in sorted(listings.glob(f"*.{arch}.lst.gz")):
        for a in assemble_listing(gzip.decompress(path.read_bytes()).decode(), TARGETS[arch]).values():
            theirs += [i.control for i in a.instructions if i.text.startswith("DEPBAR")]
    assert theirs and all(c.stall >= 4 and c.yield_bit == 0 for c in theirs)
    code = assemble("LDGDEPBAR\nDEPBAR.LE SB0, 0x1\nBAR.SYNC.DEFER_BLOCKING 0x0\nEXIT\n", TARGETS[arch])
    depbar = next(i.control for i in code.instructions if i.text.startswith("DEPBAR"))
    assert depbar.stall >= 4 and depbar.yield_bit == 0


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_vote_reads_its_predicate_as_early_as_a_guard(arch):
    """ISETP -> VOTE.ANY waits 13 cycles, as for a guard (NVIDIA's Ampere tables via Mesa NAK:
    Vote is a dispatch-time predicate reader).  5, an operand's wait, balloted the predicate's
    previous value on the H200 (coppelius-embedding-backward summed the wrong rows); the
    simulator's checker refuses it (tests/coppelius/test_kernels_ops_sim.py runs that kernel)."""
    source = (".kernel k\n"
              "    ISETP.EQ.AND P1, PT, R2, R3, PT\n"
              "    VOTE.ANY R4, PT, P1\n"
              "    EXIT\n")
    assembled = check(source, arch)
    assert assembled.instructions[0].control.stall >= 13


def _loop(body_before: str, body_after: str = "") -> str:
    """A loop whose last product (HMMA into R4) is read `body_before` into the next trip,
    and once more after the loop (after work of its own, so that the exit path asks for
    less than the whole latency at the branch)."""
    return (".kernel k\n.registers 40\n    MOV R30, 0x3\n"
            "loop:\n    IADD3 R30, R30, -0x1, RZ\n    ISETP.GE.AND P0, PT, R30, 0x1, PT\n"
            + body_before + "    FADD R20, R4, R5\n" + body_after
            + "    HMMA.16816.F32 R4, R8, R12, R4\n    @P0 BRA loop\n"
            + "".join(f"    IADD3 R{31 + i}, R{31 + i}, 0x1, RZ\n" for i in range(8))
            + "    FADD R21, R4, R6\n    EXIT\n")


def _taken_path(assembled, reader: str) -> tuple[int, int]:
    """(cycles from the HMMA's issue to the branch's target, cycles from the HMMA's issue to the
    next trip's `reader`) on the loop's taken path."""
    code = assembled.instructions
    issue, cycle = [], 0
    for x in code:
        issue.append(cycle)
        cycle += x.control.stall
    hmma = next(i for i, x in enumerate(code) if x.text.startswith("HMMA"))
    label = assembled.labels["loop"] // 16
    first = next(i for i in range(label, hmma) if code[i].text.startswith(reader))
    to_label = issue[hmma + 2] - issue[hmma]
    return to_label, to_label + issue[first] - issue[label]


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_loop_back_edge_covers_only_what_the_loop_needs(arch):
    """A loop's back edge need not wait out the 26-cycle HMMA when the next trip reads the
    accumulator only after other work: the taken path counts the cycles from the label
    (schedule.BACK_EDGE).  The checker walks the loop three times, then the exit path."""
    work = "".join(f"    IADD3 R{22 + i}, R{22 + i}, 0x1, RZ\n" for i in range(6))
    far_label, far_read = _taken_path(check(_loop(work * 2), arch), "FADD R20")
    near_label, near_read = _taken_path(check(_loop(""), arch), "FADD R20")
    assert near_read >= 26 + 1 and far_read >= 26 + 1  # HMMA -> FADD: the latency and a pipe crossing
    assert far_label < near_label                         # the loop's own work covers part of it
    assert far_read - far_label >= 12                     # ... twelve issue cycles of it
    assert far_label >= 5                                 # a branch keeps its own minimum


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_loop_with_a_branch_inside_is_covered_up_to_that_branch(arch):
    """A branch or label inside the loop before the reader ends the search: a shorter path may
    leave there, so the product must be ready by then."""
    inner = "    @P1 BRA skip\n    IADD3 R22, R22, 0x1, RZ\nskip:\n"
    work = "".join(f"    IADD3 R{23 + i}, R{23 + i}, 0x1, RZ\n" for i in range(8))
    assert _taken_path(check(_loop(inner + work), arch), "@P1 BRA")[1] >= 26 + 1
