"""P2R and R2P name the predicate file only as `PR`; they read (P2R) and write (R2P) the predicates
their mask selects (bit i is Pi; a mask in a register may select any of P0..P6).  The scheduler and
the simulator's control-code checker must time those predicates as any other operand (probe s38
undefregs, observation for the forms/scheduler; probe s38 p2r).

ptxas is the oracle: small PTX kernels it compiles at -O3 into `P2R Rd, PR, RZ, 0x1` right after
the ISETP that writes P0 (more predicates live than the file holds: ptxas packs them into
registers), and into `R2P PR, Rs, 0x7f` before SELs that read P0..P6 (seven bit tests of one word).
bobc's distance for the same two instructions alone in a stream must be no shorter than ptxas's.
"""
from __future__ import annotations

import re

import pytest

from bobc.sass import assemble
from bobc.sass.assembler import _guard, assemble_listing
from bobc.sass.encoder import Encoder
from bobc.sass.oracle import parse_hex_listing
from bobc.sass.schedule import Item, expand, schedule
from bobc.sass.syntax import Control, parse_instruction
from bobc.sim.faults import Hazard
from bobc.sim.hazards import Checker
from bobc.sim.sass_frontend import decode
from bobc.targets import TARGETS

ARCHES = ("sm_86", "sm_90")
TRANSFERS = {"BRA", "EXIT", "BSYNC", "BSSY", "CALL", "RET", "WARPSYNC", "BREAK", "BRX", "JMP", "JMX", "KILL"}


def _packed_predicates(arch: str, n: int = 14) -> str:
    """n predicates, each xor-chained to the one before (ptxas cannot recompute one from a
    register), all live until n SELs read them in reverse: ptxas keeps some in registers (P2R)."""
    lines = [f".version 8.0\n.target {arch}\n.address_size 64",
             ".visible .entry packed(.param .u64 a, .param .u64 b)\n{",
             f" .reg .pred p<{n}>; .reg .b32 r<{n}>; .reg .b32 s<{n + 1}>; .reg .b64 rd<2>;",
             " ld.param.u64 rd0, [a]; ld.param.u64 rd1, [b];",
             " cvta.to.global.u64 rd0, rd0; cvta.to.global.u64 rd1, rd1;"]
    lines += [f" ld.volatile.global.u32 r{i}, [rd0+{4 * i}];" for i in range(n)]
    lines += [" setp.gt.s32 p0, r0, 1;"]
    lines += [f" setp.gt.xor.s32 p{i}, r{i}, {3 * i + 1}, p{i - 1};" for i in range(1, n)]
    lines += [f" ld.volatile.global.u32 r{i}, [rd0+{4 * (i + 32)}];" for i in range(n)]
    lines += [f" mov.u32 s{n}, 0;"]
    for i in reversed(range(n)):
        lines += [f" selp.b32 s{i}, r{i}, {i}, p{i};", f" add.u32 s{n}, s{n}, s{i};"]
    lines += [f" st.global.u32 [rd1], s{n};", " ret;\n}\n"]
    return "\n".join(lines)


def _unpacked_bits(arch: str) -> str:
    """Seven predicates, bit i of one loaded word each: ptxas writes them with one R2P."""
    lines = [f".version 8.0\n.target {arch}\n.address_size 64",
             ".visible .entry unpacked(.param .u64 a, .param .u64 b)\n{",
             " .reg .pred p<7>; .reg .b32 r<8>; .reg .b32 s<8>; .reg .b32 t; .reg .b64 rd<2>;",
             " ld.param.u64 rd0, [a]; ld.param.u64 rd1, [b];",
             " cvta.to.global.u64 rd0, rd0; cvta.to.global.u64 rd1, rd1;",
             " ld.volatile.global.u32 r0, [rd0]; mov.u32 t, 0;"]
    lines += [f" and.b32 r{i + 1}, r0, {1 << i}; setp.ne.u32 p{i}, r{i + 1}, 0;" for i in range(7)]
    lines += [f" ld.volatile.global.u32 s{i}, [rd0+{4 + 4 * i}]; selp.b32 s{i}, s{i}, {i + 3}, p{i};"
              f" add.u32 t, t, s{i};" for i in range(7)]
    lines += [" st.global.u32 [rd1], t;", " ret;\n}\n"]
    return "\n".join(lines)


def _mask(text: str) -> set[int]:
    """The predicates a P2R / R2P text's mask (its last operand, an immediate) selects."""
    value = int(text.split(",")[-1].strip(), 0)
    return {p for p in range(7) if value >> p & 1}


def _predicates_written(text: str) -> set[int]:
    """P0..P6 named as the first two operands of a compare (ISETP, FSETP ...: its destinations)."""
    body = re.sub(r"^@!?P\w+\s+", "", text)
    if not re.match(r"^[A-Z0-9]+SETP", body):
        return set()
    operands = [o.strip() for o in body.split(None, 1)[1].split(",")]
    return {int(o[1:]) for o in operands[:2] if re.fullmatch(r"P[0-6]", o)}


def _bobc_distance(first: str, second: str, arch: str) -> int:
    """Cycles bobc's scheduler puts between the two instructions (placed by the encoder whether or
    not a form is learned), alone in a stream."""
    encoder = Encoder(arch)
    items = []
    for text in (first, second):
        inst = encoder.normalize(parse_instruction(text))
        placed = encoder.place_operands(inst)
        items.append(Item(inst.opcode, expand(placed.reads), expand(placed.writes), None, guard=_guard(inst)))
    items.append(Item("EXIT", set(), set(), None))
    return schedule(items, arch)[0].stall


def _ptxas_p2r_pairs(listing: str):
    """[(ptxas's distance, writer text, P2R text)]: each P2R and the nearest compare before it (in
    the same block) that writes a predicate its mask selects."""
    rows = parse_hex_listing(listing)
    out = []
    for k, row in enumerate(rows):
        if not row.text.startswith("P2R "):
            continue
        distance = 0
        for j in range(k - 1, -1, -1):
            before = rows[j]
            if before.text.split()[0].split(".")[0] in TRANSFERS:
                break
            distance += Control.from_word(before.hi).stall
            if _predicates_written(before.text) & _mask(row.text):
                out.append((distance, before.text, row.text))
                break
    return out


@pytest.mark.parametrize("arch", ARCHES)
def test_p2r_waits_for_the_predicates_it_packs_as_ptxas(ptxas_listing, arch):
    pairs = _ptxas_p2r_pairs(ptxas_listing(_packed_predicates(arch), arch))
    assert pairs, "ptxas packs some of the predicates into registers with P2R"
    least = min(distance for distance, *_ in pairs)
    assert least >= 4, pairs      # a latency, not an unrelated neighbour (1)
    for _distance, writer, p2r in pairs:
        mine = _bobc_distance(writer, p2r, arch)
        assert mine >= least, f"{arch}: {writer} -> {p2r}: bobc {mine} cycles, ptxas at least {least}"


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_p2r_code_assembles_to_its_own_control_codes_reads(ptxas_listing, arch):
    """The scheduler's view of a P2R is the encoder's: assembling ptxas's listing, the P2R's read
    set holds the predicates its mask selects and nothing else of the predicate file."""
    listing = assemble_listing(ptxas_listing(_packed_predicates(arch), arch), TARGETS[arch])["packed"]
    p2rs = [(inst.text, step) for inst, step in zip(listing.instructions, listing.flow) if step.opcode == "P2R"]
    assert p2rs
    for text, step in p2rs:
        assert {r[1] for r in step.reads if r[0] == "P"} == _mask(text.rstrip(" ;")), text


@pytest.mark.parametrize("arch", ARCHES)
def test_p2r_waits_only_for_the_predicates_its_mask_selects(arch):
    compare = "ISETP.GE.AND P1, PT, R1, R2, PT"
    assert _bobc_distance(compare, "P2R R5, PR, RZ, 0x1", arch) == 1
    assert _bobc_distance(compare, "P2R R5, PR, RZ, 0x2", arch) >= 4
    assert _bobc_distance(compare, "P2R R5, PR, RZ, 0x7f", arch) >= 4
    # a mask in a register may select any predicate
    assert _bobc_distance(compare, "P2R R5, PR, RZ, R3", arch) >= 4
    # and the assembler's own control codes (P2R R,S,R,I is learned)
    code = assemble(f"{compare}\nP2R R5, PR, RZ, 0x2\nEXIT\n", arch)
    assert code.instructions[0].control.stall >= 4


@pytest.mark.parametrize("arch", ARCHES)
def test_predicates_r2p_writes_are_read_no_sooner_than_ptxas_reads_them(ptxas_listing, arch):
    rows = parse_hex_listing(ptxas_listing(_unpacked_bits(arch), arch))
    start = next(k for k, row in enumerate(rows) if row.text.startswith("R2P "))
    written = _mask(rows[start].text)
    assert written == set(range(7)), rows[start].text
    pairs = []
    for k in range(start + 1, len(rows)):
        if rows[k].text.split()[0] in TRANSFERS:
            break
        named = {int(p) for p in re.findall(r"\bP([0-6])\b", rows[k].text)}
        if named & written:
            pairs.append((sum(Control.from_word(row.hi).stall for row in rows[start:k]), rows[k].text))
            written -= named
    assert len(pairs) == 7, pairs                  # one SEL reads each predicate
    least = min(distance for distance, _ in pairs)
    assert least >= 4, pairs      # a latency, not an unrelated neighbour (1)
    for _distance, reader in pairs:
        mine = _bobc_distance(rows[start].text, reader, arch)
        assert mine >= least, f"{arch}: {rows[start].text} -> {reader}: bobc {mine} cycles, ptxas at least {least}"
    # as a guard, too (a predicate guards 13 cycles after an ALU writes it: the scheduler's rule for
    # ISETP), and only the predicates the mask selects
    assert _bobc_distance("R2P PR, R2, 0x1", "@P0 IADD3 R4, R4, 0x1, RZ", arch) >= 13
    assert _bobc_distance("R2P PR, R2, 0x2", "@P0 IADD3 R4, R4, 0x1, RZ", arch) == 1


# --- the simulator's control-code checker ------------------------------------------------------

def _issue(code: bytes, arch: str) -> None:
    """`code` (straight-line) through the checker in address order, up to its first EXIT."""
    checker = Checker("kernel", arch.replace("sm_", "SM"))
    for ins in decode(code, arch.replace("sm_", "SM")):
        checker.issue(ins)
        if ins.opcode == "EXIT":
            break


@pytest.mark.parametrize("arch", ARCHES)
def test_checker_times_the_predicates_p2r_reads(arch):
    def body(stall):
        return (f"[B------:R-:W-:-:S05] MOV R0, 0x4\n"
                f"[B------:R-:W-:-:S{stall:02d}] ISETP.GE.AND P2, PT, R0, 0x3, PT\n"
                f"[B------:R-:W-:-:S05] P2R R4, PR, RZ, 0x4\n[B------:R-:W-:-:S05] EXIT\n")
    with pytest.raises(Hazard) as caught:
        _issue(assemble(body(1), arch).code, arch)
    assert "(P2R R4, PR, RZ, 0x4): reads P2" in str(caught.value)
    _issue(assemble(body(4), arch).code, arch)      # ptxas's distance (test above)
    # a predicate outside the mask is not read
    _issue(assemble(body(1).replace("0x4", "0x3"), arch).code, arch)


def _with_stalls(rows, first: int, last: int, stall: int) -> bytes:
    """The listing's words with the stall of rows first..last-1 set to `stall`."""
    out = b""
    for k, row in enumerate(rows):
        hi = row.hi
        if first <= k < last:
            hi = (hi & ~(0xF << 41)) | (stall << 41)
        out += row.lo.to_bytes(8, "little") + hi.to_bytes(8, "little")
    return out


@pytest.mark.parametrize("arch", ARCHES)
def test_checker_times_the_predicates_r2p_writes(ptxas_listing, arch):
    rows = parse_hex_listing(ptxas_listing(_unpacked_bits(arch), arch))
    _issue(_with_stalls(rows, 0, 0, 0), arch)       # ptxas's own code passes
    start = next(k for k, row in enumerate(rows) if row.text.startswith("R2P "))
    reader = next(k for k in range(start + 1, len(rows)) if re.search(r"\bP0\b", rows[k].text))
    with pytest.raises(Hazard) as caught:           # the first reader of P0 one cycle after R2P
        _issue(_with_stalls(rows, start, reader, 1), arch)
    assert f"hazard at {rows[reader].offset:#06x}" in str(caught.value)
    assert "reads P0" in caught.value.reason


@pytest.mark.parametrize("arch", ARCHES)
def test_checker_times_ptxas_p2r_code(ptxas_listing, arch):
    rows = parse_hex_listing(ptxas_listing(_packed_predicates(arch), arch))
    _issue(_with_stalls(rows, 0, 0, 0), arch)       # ptxas's own code passes
    # a P2R right after the compare writing the predicate it packs, that compare's stall cut to 1
    k = next(k for k, row in enumerate(rows)
             if row.text.startswith("P2R ") and _predicates_written(rows[k - 1].text) & _mask(row.text))
    with pytest.raises(Hazard) as caught:
        _issue(_with_stalls(rows, k - 1, k, 1), arch)
    assert f"hazard at {rows[k].offset:#06x} (P2R" in str(caught.value)
    assert f"reads P{min(_mask(rows[k].text))}" in caught.value.reason


def test_the_written_before_read_rule_sees_the_predicate_file():
    """certify rule 4 (bobc.sass.defined) reads the same sets: a P2R of a predicate no path sets is
    refused by name, one of the predicates set before it is not."""
    from bobc.sass.defined import refusals
    from bobc.targets import target_named
    head = ("ULDC.64 UR4, c[0x0][memory_descriptor]\nS2R R0, SR_TID.X\nMOV R2, c[0x0][param+0x0]\n"
            "MOV R3, c[0x0][param+0x4]\nISETP.NE.AND P0, PT, R0, RZ, PT\nISETP.GT.AND P1, PT, R0, 0x4, PT\n")

    def found(p2r):
        text = head + p2r + "\nSTG.E [R2.64], R5\nEXIT\n"
        return [r.message for r in refusals(assemble(text, "sm_86", source_name="k.sass"), target_named("sm_86"))]
    assert found("P2R R5, PR, RZ, 0x3") == []
    (message,) = found("P2R R5, PR, RZ, 0x5")
    assert message.startswith("P2R R5, PR, RZ, 0x5 reads P2, which no path from the kernel's entry writes")
