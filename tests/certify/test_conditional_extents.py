"""Contract expressions with - and /, pointers touched only under a flag (`when`, `unless`),
and the footprints (bobc.certify.footprints) the launch scheduler orders launches by.

- `-` and `/` (floor) join terms as in arithmetic: * and / before + and -, each left to
  right; a negative result or a division by zero is a finding naming the launch, the
  argument and the expression.
- `when T&MASK` / `unless T&MASK`: the certifier holds a launch to the pointer only when
  the kernel touches it; a condition naming a word the launch does not set is a finding.
- A footprint is the byte ranges of every active pointer, every batch; two launches
  conflict when one writes a byte the other touches.  A launch without a contract has none.
"""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

from bobc.certify.footprints import Footprint, launch_footprints, merged
from bobc.certify.kernels import ContractError, parse_contract
from bobc.certify.pointers import check_pointers
from bobc.plan.model import DeviceArena, Launch, ParameterPatch, Plan, Region, Resident, WholeProgramPlan
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
GEMM_NN = REPO / "examples/coppelius/Realization/Nvidia/SM86/coppelius-gemm-nn.sass"
FIRST = SM86.parameter_base // 8          # word 0 of the parameters in bank 0
BASE = 0x10_0000_0000


def contract_of(tmp_path, name: str, lines: str):
    source = tmp_path / f"{name}.sass"
    source.write_text(lines)
    return parse_contract(source, name)


def hand_plan(launches, residents, kernels) -> Plan:
    """A plan of `launches` ((kernel, {argument: value}), ...) over `residents` ((name, address, size), ...),
    one window around all of them."""
    regions = tuple(Region(kernel, b"", 32, 32, 0, 0) for kernel in kernels)
    planned = tuple(Launch(kernel, kernels.index(kernel), 0, (1, 1, 1), (32, 1, 1), 0x100,
                           tuple(ParameterPatch(FIRST + i, v) for i, v in sorted(words.items())))
                    for kernel, words in launches)
    program = WholeProgramPlan("all", 0x86, 0xC7C0, 0x86, 0, 0, 0, 0, 256, 0, regions, planned, len(planned),
                               0, (), 0, 0)
    held = tuple(Resident(name, address, size, 1) for name, address, size in residents)
    low, high = min(r.address for r in held), max(r.address + r.size for r in held)
    return Plan(program, DeviceArena((Resident("window", low, high - low, 1),), held, ()))


def pair(low: int, high: int) -> int:
    return low | high << 32


# ---- the grammar ----

def test_minus_and_division_bind_as_in_arithmetic(tmp_path):
    # (the columns are a scalar word's: an extent over a pointer word is refused, test_extent_over_a_pointer_word.py)
    contract = contract_of(tmp_path, "k", "//@ param 0 pointer read 2*lo[1]*hi[1]-2*lo[1]+2*lo[4] a matrix\n"
                                          "//@ param 1 scalar rows\n"
                                          "//@ param 2 pointer write 4*lo[1]/64*hi[1]/64 tickets\n"
                                          "//@ param 3 pointer write 10-7/2*3 a constant\n"
                                          "//@ param 4 scalar columns\n")
    a, tickets, constant = (contract.argument(i) for i in (0, 2, 3))
    words = {1: pair(96, 5), 4: 40}                 # lda 96, 5 rows, 40 columns
    assert a.extent_for(words, 0, 0) == (2 * (96 * 4 + 40), "")
    assert tickets.extent_for({1: pair(128, 192)}, 0, 0) == (4 * 2 * 3, "")   # ((4 * 128) / 64 * 192) / 64
    assert tickets.extent_for({1: pair(100, 64)}, 0, 0) == (6 * 64 // 64, "")  # 400 / 64 floors to 6
    assert constant.extent_for({}, 0, 0) == (10 - 3 * 3 // 1, "")          # 7 / 2 = 3, * 3 = 9: 10 - 9


def test_a_condition_says_when_the_kernel_touches_a_pointer(tmp_path):
    contract = contract_of(tmp_path, "k", "//@ param 0 pointer write 64 when hi[7]&16 W (only split)\n"
                                          "//@ param 1 pointer write 64 each 2 by 64 unless hi[7]&0x8 D\n"
                                          "//@ param 2 pointer read 64 the input\n"
                                          "//@ param 7 scalar K, flags\n")
    w, d, plain = (contract.argument(i) for i in (0, 1, 2))
    assert (w.condition, w.what, d.condition, d.batches, d.what) == (
        "when hi[7]&16", "W (only split)", "unless hi[7]&0x8", "2", "D")
    assert w.active({7: pair(32, 16)}) == (True, "") and w.active({7: pair(32, 8)}) == (False, "")
    assert d.active({7: pair(32, 24)}) == (False, "") and d.active({7: pair(32, 16)}) == (True, "")
    assert plain.active({}) == (True, "")
    missing, why = w.active({})
    assert missing is None and "when hi[7]&16" in why and "parameter word 7" in why


@pytest.mark.parametrize("line,says", [
    ("//@ param 0 pointer read 64 when hi[7] the flags without a mask\n", "when TERM&MASK"),
    ("//@ param 0 pointer read 64 unless hi[7] & 8 spaced\n", "when TERM&MASK"),
    ("//@ param 0 pointer read 64 when hi[7]&16 each 2 by 64 the batches after the condition\n", "when TERM&MASK"),
    ("//@ param 0 pointer read 4*-lo[1] a sign\n", "when|unless"),
    ("//@ param 0 pointer read 4*lo[1]- a dangling minus\n", "when|unless"),
    ("//@ param 0 pointer read 64 whenever hi[7]&16 a misspelt condition\n", "when TERM&MASK"),
    ("//@ param 0 pointer read 4*lo[3] +4 a sum with a space\n", "no spaces"),
    ("//@ param 0 pointer read 4 * lo[3] a product with spaces\n", "no spaces"),
    ("//@ block 0\n", "//@ block X [Y [Z]]"),
    ("//@ block 256 x\n", "//@ block X [Y [Z]]"),
    ("//@ block 256\n//@ block 128\n", "declared once")])
def test_a_malformed_condition_or_expression_is_refused_with_file_and_line(tmp_path, line, says):
    """(A condition that does not parse would otherwise become the pointer's description, and the
    pointer unconditional.)"""
    source = tmp_path / "k.sass"
    source.write_text("// a kernel\n" + line)
    with pytest.raises(ContractError) as caught:
        parse_contract(source)
    assert f"k.sass:{line.count(chr(10)) + 1}" in str(caught.value) and says in str(caught.value)


def test_negative_and_zero_division_extents_are_findings_naming_launch_argument_expression(tmp_path):
    contract = contract_of(tmp_path, "k", "//@ param 0 pointer read 4*lo[2]-4 rows less one\n"
                                          "//@ param 1 pointer write 4*hi[2]/lo[3] a share\n"
                                          "//@ param 2 scalar n, m\n"
                                          "//@ param 3 scalar parts\n")
    plan = hand_plan([("k", {0: BASE, 1: BASE + 0x100, 2: pair(0, 8), 3: 0})],
                     [("input", BASE, 0x100), ("output", BASE + 0x100, 0x100)], ["k"])
    found = [f.message for f in check_pointers(plan, {"k": contract})]
    assert found == [
        f"launch 0 (k) argument 0 (word {FIRST}, rows less one): its extent 4*lo[2]-4 is negative on this launch (-4)",
        f"launch 0 (k) argument 1 (word {FIRST + 1}, a share): its extent 4*hi[2]/lo[3] divides by zero "
        "(lo[3] is 0 on this launch)"]
    assert launch_footprints(plan, {"k": contract}) == [None]


def test_an_inactive_pointer_is_not_held_to_the_arena_but_a_missing_condition_word_is_a_finding(tmp_path):
    contract = contract_of(tmp_path, "k", "//@ param 0 pointer write 64 when hi[1]&16 the workspace\n"
                                          "//@ param 1 scalar flags\n")
    arena = [("data", BASE, 0x100)]
    stray = BASE + 0x1000                          # in no resident
    assert check_pointers(hand_plan([("k", {0: stray, 1: pair(0, 8)})], arena, ["k"]), {"k": contract}) == []
    (active,) = check_pointers(hand_plan([("k", {0: stray, 1: pair(0, 16)})], arena, ["k"]), {"k": contract})
    assert active.kind == "stray-pointer" and "argument 0" in active.message
    (unset,) = check_pointers(hand_plan([("k", {0: BASE})], arena, ["k"]), {"k": contract})
    assert unset.message == (f"launch 0 (k) argument 0 (word {FIRST}, the workspace): its condition when hi[1]&16 "
                             f"names parameter word 1, which the launch does not set")


# ---- the product kernels' true extents ----

def product_words(A, B, D, M, N, K, lda, ldb, ldd, flags=0, batches=1, sA=0, sB=0, W=0, tickets=0):
    """Parameter words of a coppelius-gemm launch (gemm.pack_parameters' layout)."""
    from bobc.sass.generate import gemm
    block = gemm.pack_parameters(A=A, B=B, D=D, M=M, N=N, K=K, lda=lda, ldb=ldb, ldd=ldd, flags=flags,
                                 batches=batches, sA=sA, sB=sB, W=W, tickets=tickets)
    return dict(enumerate(struct.unpack(f"<{len(block) // 8}Q", block)))


def test_a_product_whose_A_leaves_its_resident_by_one_row_is_refused():
    """nn A is M x K, lda apart: 2 (lda (M - 1) + K) bytes.  A resident one row short (the
    one-tile contract of before declared 4096 bytes and admitted it) is refused by the row's bytes."""
    contract = parse_contract(GEMM_NN, "coppelius-gemm-nn")
    M, N, K, lda = 256, 64, 96, 128
    a_bytes = 2 * (lda * (M - 1) + K)
    B, D = BASE + 0x100000, BASE + 0x200000

    def plan(a_size):
        words = product_words(BASE, B, D, M, N, K, lda, N, N)
        return hand_plan([("coppelius-gemm-nn", words)],
                         [("A", BASE, a_size), ("B", B, 2 * K * N), ("D", D, 4 * M * N)], ["coppelius-gemm-nn"])

    contracts = {"coppelius-gemm-nn": contract}
    assert check_pointers(plan(a_bytes), contracts) == []
    (found,) = check_pointers(plan(a_bytes - 2 * lda), contracts)
    assert found.message.startswith(f"launch 0 (coppelius-gemm-nn) argument 0 (word {FIRST}, ")
    assert f"reads {a_bytes:,} bytes (2*lo[8]*lo[6]-2*lo[8]+2*lo[7])" in found.message
    assert f"runs {2 * lda:,} bytes past A" in found.message


# ---- footprints ----

ONE = "//@ param 0 pointer read 16 the source\n//@ param 1 pointer write 16 the destination\n"


def test_footprints_conflict_by_one_byte_and_not_when_adjacent(tmp_path):
    contract = contract_of(tmp_path, "copy", ONE)
    arena = [("a", BASE, 0x100), ("b", BASE + 0x100, 0x100)]
    launches = [("copy", {0: BASE, 1: BASE + 0x100}),          # writes [0x100, 0x110)
                ("copy", {0: BASE + 0x10F, 1: BASE + 0x20}),   # reads the first's last byte
                ("copy", {0: BASE + 0x110, 1: BASE + 0x30}),   # reads the bytes just past it
                ("copy", {0: BASE + 0x40, 1: BASE + 0x110})]   # writes just past it
    first, one_byte, after, writes_after = launch_footprints(hand_plan(launches, arena, ["copy"]),
                                                             {"copy": contract})
    assert first.reads == ((BASE, BASE + 16),) and first.writes == ((BASE + 0x100, BASE + 0x110),)
    assert first.conflicts(one_byte) and one_byte.conflicts(first)
    assert not first.conflicts(after) and not after.conflicts(first)
    assert not first.conflicts(writes_after)
    assert writes_after.conflicts(after)                       # writes the bytes `after` reads


def test_an_inactive_split_workspace_does_not_conflict(tmp_path):
    """Two products into different outputs that pass one workspace W: only a split launch
    (flag 16) touches it."""
    contract = parse_contract(GEMM_NN, "coppelius-gemm-nn")
    M = N = K = 64
    A, B, D1, D2, W, T = (BASE + k * 0x10000 for k in range(6))
    arena = [(name, address, 0x10000) for name, address in zip(("A", "B", "D1", "D2", "W", "T"), (A, B, D1, D2, W, T))]
    plain = [("coppelius-gemm-nn", product_words(A, B, d, M, N, K, K, N, N, W=W, tickets=T)) for d in (D1, D2)]
    split = [("coppelius-gemm-nn", product_words(A, B, d, M, N, K // 2, K, N, N, flags=16, batches=2, sA=K // 2,
                                                 sB=K // 2 * N, W=W, tickets=T)) for d in (D1, D2)]
    contracts = {"coppelius-gemm-nn": contract}
    one, two, split_one, split_two = launch_footprints(hand_plan(plain + split, arena, ["coppelius-gemm-nn"]),
                                                       contracts)
    assert not one.conflicts(two)
    assert all(not (a <= W < b) for a, b in one.writes + one.reads)
    assert split_one.conflicts(split_two)                      # both write W and the tickets
    assert (W, W + 4 * 2 * M * N) in split_one.writes and (T, T + 4) in split_one.writes
    assert not one.conflicts(split_two)


def test_a_launch_without_a_contract_has_no_footprint(tmp_path):
    contract = contract_of(tmp_path, "copy", ONE)
    plan = hand_plan([("copy", {0: BASE, 1: BASE + 0x20}), ("mystery", {0: BASE})], [("a", BASE, 0x100)],
                     ["copy", "mystery"])
    known, unknown = launch_footprints(plan, {"copy": contract})
    assert isinstance(known, Footprint) and unknown is None


def test_a_word_the_contract_does_not_declare_holding_an_address_leaves_the_footprint_unknown(tmp_path):
    contract = contract_of(tmp_path, "copy", ONE)
    plan = hand_plan([("copy", {0: BASE, 1: BASE + 0x20, 2: BASE + 0x40})], [("a", BASE, 0x100)], ["copy"])
    assert launch_footprints(plan, {"copy": contract}) == [None]


def test_batches_become_intervals_merged_when_they_touch():
    assert merged([(10, 20), (0, 5), (20, 30), (4, 6), (40, 40)]) == ((0, 6), (10, 30))
    strided = Footprint(reads=[(b * 100, b * 100 + 10) for b in range(64)])
    assert len(strided.reads) == 64
    assert strided.conflicts(Footprint(writes=[(6309, 6310)]))          # batch 63's last byte
    assert not strided.conflicts(Footprint(writes=[(6210, 6300)]))      # all between batches 62 and 63
    assert not strided.conflicts(Footprint(writes=[(6310, 7000)]))      # past batch 63
    assert not strided.conflicts(Footprint(reads=[(0, 10_000)]))        # reads never conflict with reads
