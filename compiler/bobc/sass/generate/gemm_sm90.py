"""The tiled matrix products for sm_90 alone: TMA copies and warpgroup MMA (HGMMA), as SASS text.

    python -m bobc.sass.generate.gemm_sm90 --prefix NAME OUTDIR    # writes NAME-{nn,nt,tn}.sm_90.sass

The same kernels as bobc.sass.generate.gemm (read its docstring first: the three layouts, the
parameter block, the flags, the grid), in sm_90's own design, which sm_86 lacks: the operand
tiles come from the Tensor Memory Accelerator (UTMALDG, one copy a tile, described by tensor
maps the backend writes: the `//@ tensormap` words) and are multiplied where they land by the
warpgroup's asynchronous MMA (HGMMA.64x64x16.F32, operands read from shared memory through
matrix descriptors).  On the H200 the design took 0.72 ms where the HMMA kernels took 1.08 for
the benchmark's product set (bench/results/sm90-product-probe-h200.md, ptxas's PTX of the same
design); this module writes it as our own SASS.

The launch is the sm_86 kernels' (block 128 = one warpgroup, grid (N/64, M/64, batches), the same
17 parameter words): a plan launches either without knowing which the target assembles.  Two
parameter words more, 17 and 18, hold the addresses of A's and B's tensor maps, which the
backend encodes from the launch's words (`//@ tensormap` lines): 3-D maps (the stored matrix's
two dimensions and the batch, sA / sB apart), 64 x 64 boxes of binary16 under the 128-byte
swizzle.  A K-contiguous operand (A of nn, nt; B of nt) is copied as 64 rows of 64 k, an M- or
N-contiguous one (A of tn, B of nn, tn) as 64 k rows of 64 m or n and read by the MMA transposed.

Tile 64 x 64, K in steps of 64 (a step's A and B tiles: 8 KiB each, one stage of the ring of
`stages`; K need not be a multiple of 64: the map's dimensions stop the copy and TMA fills the
rest of the box with zeros, which add nothing).  Shared memory from 0x400 (the system's first
KiB): the ring, then a `full` mbarrier a stage (8 bytes).  Thread 0 initialises the barriers,
then copies steps 0 .. stages - 1.  Each step: every thread waits for its stage's barrier phase
(SYNCS.PHASECHK), the warpgroup issues four HGMMA k16 steps (the descriptors' start addresses
advance 32 bytes along k in a K-contiguous tile, 2 KiB in a transposed one) and waits until at
most one step's MMAs are in flight (WARPGROUP.DEPBAR.LE gsb0, 1): the previous step's are done,
so after a block barrier thread 0 refills that stage with the step `stages` further on.
A step is bound by its own instructions, not by its bytes or its MMAs (Nsight Compute: a third of
the warps' samples are fixed stalls between dependent uniform instructions; builds without B's
copies, A's or the MMAs take 0.92-0.93 of the time: bench/results/sm90-gemm-h200-step.txt), so
everything a step's branches, MMAs and copies read is written a step ahead or while the barrier
waits: the four k16 descriptors of the next step (_descriptors), the branch predicates
(_step_predicates), the copy blocks' words (_copy_words; their fixed coordinates once, _copy_blocks).
Accumulators R8..R39: warp w holds rows 16 w + l/4 (+8) and, for each 8 columns j, columns
8 j + 2 (l % 4), +1 (the HMMA.16816 C fragment's layout, eight of them across 64 columns), so
the epilogue is bobc.sass.generate.gemm's, over four groups of 8 rows x 32 columns.

Split K (flag 16) is gemm.py's: each split's partial to W[z], the ticket, the last block's sum
staged through the ring (split_partials a round), +0 + W0 + W1 + ..., so D has the same bits.  Its
shared addresses are in the cluster-wide form (CLUSTER_BASE), so a plan may launch a split product
in thread-block clusters; the partials still go through W.  (Sessions 23-27 carried a reduction on
chip, the first split adding its peers' partials from their shared memory: bit for bit in the
simulator, about 0.04 ms faster an update on the H200, but with D wrong in some elements there,
differently from run to run, at shapes the simulator runs right; it was taken out:
session 27's variants run in bench/results.)
The column sums of B (flag 32; nn, tn) are read from the swizzled B tiles as each step lands,
in gemm.py's association (four row groups k mod 4 from +0 in increasing k, then (s0 + s1) +
(s2 + s3)), and stored by gemm.py's code.  On the H200 every output of every flag is bit for
bit the HMMA kernels' (tests/gpu/test_sm90_gemm.py):
HGMMA adds a k16 step's products into an accumulator as HMMA.16816 does.  Control codes: the
asynchronous opcodes carry the codes ptxas writes for them (compiler/bobc/sass/README.md's table);
the rest are bobc.sass.schedule's, which holds a uniform result 9 cycles before an asynchronous
unit reads it (ASYNC_UNIFORM_READ).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import gemm
from .gemm import _differs
from .gemm import (ACC, COPY_PAIRS, CTA_M, CTA_N, CTA_Z, E_SUM0, E_SUM1, FLAG_COLUMN_SUMS, FLAG_SPLIT, REGISTERS,
                   SHARED_BASE, STAGED_PITCH, T0, TID, VARIANTS, Variant, _column_sums_store, _epilogue,
                   _flag_test, _half, _p, _split, _Text)

TILE_M = 64
STEP_K = 64                      # k a step: one 128-byte swizzled row of binary16
TILE_BYTES = TILE_M * STEP_K * 2  # 8 KiB: an operand's tile of one step
STAGE_BYTES = 2 * TILE_BYTES
STAGES = 4                       # the benchmark's products: 0.704 ms at 4 stages, 0.921 at 2, 0.862 at 8
                                 # (bench/results/sm90-gemm-h200.md); 66592 bytes a block
TARGET = "sm_90"
MAP_WORDS = {"A": 17, "B": 18}   # the tensor maps' addresses (the backend's words)
DESCRIPTOR_HIGH = 0x40000040     # stride offset 1024 >> 4 (8 swizzled 128-byte rows), 128-byte swizzle
LEADING_K = 1 << 16              # a K-contiguous operand's leading offset (16 bytes: unused)
LEADING_MN = (8192 >> 4) << 16   # a transposed operand's: 8 KiB between 64-wide boxes
K16_K, K16_MN = 32 >> 4, 2048 >> 4   # a k16 step's start-address move, in descriptor units
MBARRIER_ONE = (0x001FFFFE, 0x7FFFF800)   # an mbarrier expecting one arrival (ptxas's init words)
BLOCK_THREADS = 128

# Registers (gemm's R0-R3, R8-R39 accumulators; the epilogue's R40-R93 are free in the loop)
STEPS, STEP, BAR, PHASE, TX, REFILL = 40, 41, 42, 43, 44, 45
# Uniform registers: the block's coordinates, the ring's and the barriers' cluster addresses, the
# maps, the copy operand block (dst, barrier, c0, c1, c2) and the MMA descriptors (A lo/hi, B lo/hi)
# (UR4:UR5 hold the global memory descriptor every LDG / STG names: desc[UR4])
U_N0, U_M0, U_Z, U_CTA, U_RING, U_BARS = 6, 7, 13, 22, 14, 15
U_COPY, U_DESC, U_STEP, U_STAGE, U_MAP_A, U_MAP_B, U_INIT = 8, 16, 20, 21, 24, 26, 28
# A step's four k16 MMAs read four descriptor quads (A lo, hi, B lo, hi), all written before the
# step's first MMA: the MMAs then issue back to back (each uniform write is 9 cycles ahead of an
# asynchronous reader, ASYNC_UNIFORM_READ, so updating one quad between MMAs held each of them).
# U_DESC_BASE: A's and B's stage-0 descriptor low words (start address >> 4 + leading offset).
DESC_QUADS = (U_DESC, 32, 36, 40)
U_DESC_BASE = 30
# B's copy operand block (A's is U_COPY; both at multiples of 8, where a 3-D block must start:
# tables.layouts.ALIGNED_UNIFORM_TUPLES) and B's tile in stage 0 (cluster address): each block's
# tile coordinates but k are written once, so a step's copies need its stage and k alone
U_COPY_B, U_RING_B = 48, 53


def ring_base(stages: int) -> int:
    """The ring's first byte (the system's first KiB below it); its mbarriers follow it."""
    return SHARED_BASE


def barriers_base(stages: int) -> int:
    return SHARED_BASE + stages * STAGE_BYTES


def shared_bytes(stages: int = STAGES) -> int:
    """A block's shared memory, the system's first KiB included: the ring and its barriers."""
    return barriers_base(stages) + 8 * stages


# Column sums (flag 32) in the loop: the thread's column's byte offsets in a swizzled B tile for its
# two row groups, each at rows k = g (mod 8) and g + 4 (mod 8); the stage's B tile; four rows' values
SUM_OFFSETS, SUM_TILE, SUM_HALVES = 48, 52, 53


def split_partials(stages: int) -> int:
    """Partial tiles the ring stages at once in the last split block's sum (gemm._split_sum):
    64 rows of STAGED_PITCH each, eight 16-byte copies a thread a partial (COPY_PAIRS registers)."""
    return max(1, min(stages * STAGE_BYTES // (TILE_M * STAGED_PITCH), COPY_PAIRS // 8))


class WarpgroupTiling:
    """The epilogue's view of the accumulators (gemm._epilogue): 4 warps of 16 rows x 64 columns;
    groups of 8 rows x 32 columns in the order rows +0 (columns +0, +32), rows +8 (+0, +32)."""
    tile_m, threads, warps, warp_rows, warp_cols, warp_n, warp_height = 64, 128, 4, 4, 1, 64, 16

    def row_groups(self) -> list[tuple[list[int], int, int]]:
        groups = []
        for h in range(2):
            for half in range(2):
                values = [ACC + 4 * j + 2 * h + e for j in range(4 * half, 4 * half + 4) for e in range(2)]
                groups.append((values, 32 * half, 8 if h and not half else 0))
        return groups


# ptxas's control codes for the asynchronous opcodes (sm_90 corpus; compiler/bobc/sass/README.md)
def _x(out: _Text, control: str, instruction: str, comment: str = "") -> None:
    out(f"{control} {instruction}", comment)


def _map_lines(variant: Variant) -> list[str]:
    """The //@ tensormap lines: A's and B's maps over parameter words 0 and 1, 3-D (the stored
    matrix's contiguous dimension, its rows, the batch), the strides of its rows and batches."""
    M, N, K, BATCHES = (_half(n) for n in ("M", "N", "K", "batches"))
    LDA, LDB, SA, SB = (_half(n) for n in ("lda", "ldb", "sA", "sB"))
    a_dims = (K, M) if variant.a_along_k else (M, K)
    b_dims = (K, N) if variant.b_along_k else (N, K)
    lines = []
    for name, pointer, (inner, outer), ld, batch in (("A", 0, a_dims, LDA, SA), ("B", 1, b_dims, LDB, SB)):
        lines.append(f"//@ tensormap {MAP_WORDS[name]} of {pointer} binary16 dims ({inner}, {outer}, {BATCHES}) "
                     f"strides (2*{ld}, 2*{batch}) box (64, 64, 1) swizzle 128b {name}'s tiles")
    return lines


def _contract(variant: Variant) -> list[str]:
    """gemm's contract with the tensor maps in their words' place (17 and 18, before flag 256's)."""
    lines = gemm._contract(variant, gemm.tiling())
    at = next((i for i, line in enumerate(lines) if line.startswith("//@ param 19 ")), len(lines))
    return lines[:at] + _map_lines(variant) + lines[at:]


def _cluster_address(out: _Text, register: int, offset: int) -> None:
    """UR{register} = this block's shared `offset` in the cluster-wide form the copies and
    mbarriers take (CgaCtaId << 24 + offset), as ptxas computes it."""
    out(f"UMOV UR{register}, {offset:#x}")
    out(f"ULEA UR{register}, UR{U_CTA}, UR{register}, 0x18")


def _copy_blocks(out: _Text, variant: Variant, stages: int) -> None:
    """The copy operand blocks' fixed words: each tile's row or column coordinate (m0 for A, n0 for
    B) and the batch; a step's copies write the destination, the barrier and k (_copy_words)."""
    _cluster_address(out, U_RING_B, ring_base(stages) + TILE_BYTES)
    for block, along_k, outer in ((U_COPY, variant.a_along_k, U_M0), (U_COPY_B, variant.b_along_k, U_N0)):
        out(f"UMOV UR{block + (3 if along_k else 2)}, UR{outer}", "the tile's m0" if block == U_COPY else "n0")
        out(f"UMOV UR{block + 4}, UR{U_Z}", "the batch")


def _copy_step(out: _Text, variant: Variant, step: str, stages: int) -> None:
    """Thread 0 only: expect the step's bytes on its stage's barrier and copy A's and B's tiles
    (uniform register `step`: the step's index)."""
    _copy_words(out, variant, step, stages)
    _copy_issue(out)


def _copy_words(out: _Text, variant: Variant, step: str, stages: int) -> None:
    """The copy blocks' words for step `step` (its stage's tiles and barrier, its k): each is two
    instructions from `step`, so the copies issue together once the last is 9 cycles old; any
    warp may write them (the loop does before its barrier, where the wait hides them)."""
    shift = STAGE_BYTES.bit_length() - 1
    out(f"ULOP3.LUT UR{U_STAGE}, {step}, {stages - 1:#x}, URZ, 0xc0, !UPT", "the stage this step fills")
    out(f"ULEA UR{U_COPY}, UR{U_STAGE}, UR{U_RING}, {shift:#x}", "A's tile")
    out(f"ULEA UR{U_COPY_B}, UR{U_STAGE}, UR{U_RING_B}, {shift:#x}", "B's tile")
    out(f"ULEA UR{U_COPY + 1}, UR{U_STAGE}, UR{U_BARS}, 0x3", "its barrier: 8 bytes a stage")
    out(f"ULEA UR{U_COPY_B + 1}, UR{U_STAGE}, UR{U_BARS}, 0x3")
    for block, along_k in ((U_COPY, variant.a_along_k), (U_COPY_B, variant.b_along_k)):
        out(f"USHF.L.U32 UR{block + (2 if along_k else 3)}, {step}, 0x6, URZ", "k = 64 step" if block == U_COPY else "")


def _copy_issue(out: _Text) -> None:
    """Thread 0: expect the bytes on the stage's barrier, then the two copies (_copy_words wrote
    their blocks)."""
    _x(out, "[B------:R2:W-:-:S01]", f"SYNCS.ARRIVE.TRANS64 RZ, [UR{U_COPY + 1}], R{TX}",
       "expect the stage's bytes")
    for name, block, map_ in (("A", U_COPY, U_MAP_A), ("B", U_COPY_B, U_MAP_B)):
        _x(out, "[B------:R3:W-:-:S10]", f"UTMALDG.3D [UR{block}], [UR{map_}]", f"{name}'s 64 x 64 tile")


def _column_sums_setup(out: _Text) -> None:
    """Flag 32 (nn, tn: B stored K x N, its tile 64 k rows of 128 swizzled bytes): P2 = flag 32
    without 16, in the first row tile of batch 0 (gemm's rule); thread t sums column c = t % 64 over
    row groups g = 2 (t / 64) and g + 1 (rows k = g mod 4, in increasing k: gemm's association);
    the byte of (k, c) in a tile is k 128 + ((c / 8) ^ (k % 8)) 16 + 2 (c % 8), so each group's
    rows take two offsets, k % 8 = g and g + 4, plus 1 KiB for every 8 rows."""
    out.note(f"column sums of B (flag {FLAG_COLUMN_SUMS}): thread t adds column t%64, row groups 2(t/64), +1")
    out(f"MOV R{T0}, {_p('flags')}")
    out(f"LOP3.LUT R{T0}, R{T0}, {FLAG_SPLIT | FLAG_COLUMN_SUMS:#x}, RZ, 0xc0, !PT")
    out(f"ISETP.EQ.U32.AND P2, PT, R{T0}, {FLAG_COLUMN_SUMS:#x}, PT", f"flag {FLAG_COLUMN_SUMS}, not split")
    out(f"ISETP.EQ.U32.AND P2, PT, R{CTA_M}, RZ, P2", "the first row tile")
    out(f"ISETP.EQ.U32.AND P2, PT, R{CTA_Z}, RZ, P2", "batch 0")
    c, g, chunk, within = T0, T0 + 1, T0 + 2, T0 + 3
    out(f"LOP3.LUT R{c}, R{TID}, 0x3f, RZ, 0xc0, !PT", "column c = t % 64")
    out(f"SHF.R.U32.HI R{g}, RZ, 0x6, R{TID}")
    out(f"SHF.L.U32 R{g}, R{g}, 0x1, RZ", "g = 2 (t / 64)")
    out(f"SHF.R.U32.HI R{chunk}, RZ, 0x3, R{c}", "c / 8: its 16-byte chunk")
    out(f"LOP3.LUT R{within}, R{c}, 0x7, RZ, 0xc0, !PT")
    out(f"SHF.L.U32 R{within}, R{within}, 0x1, RZ", "2 (c % 8): its byte in the chunk")
    for index, (group, parity) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
        at = SUM_OFFSETS + index
        out(f"IADD3 R{at}, R{g}, {group + 4 * parity:#x}, RZ", f"row g{' + 1' if group else ''}"
            f"{' + 4' if parity else ''}")
        out(f"LOP3.LUT R{c}, R{chunk}, R{at}, RZ, 0x3c, !PT", "chunk ^ (row % 8)")
        out(f"SHF.L.U32 R{c}, R{c}, 0x4, RZ")
        out(f"IMAD R{at}, R{at}, 0x80, R{c}", "row 128 + swizzled chunk 16")
        out(f"IADD3 R{at}, R{at}, R{within}, RZ")
    out(f"MOV R{E_SUM0}, RZ")
    out(f"MOV R{E_SUM1}, RZ")


def _column_sums_step(out: _Text, stages: int) -> None:
    """P2: add this step's 16 rows of each of the thread's two row groups (B's tile, just landed,
    read while the MMAs run; its stage is refilled only after the next step's block barrier)."""
    out("@!P2 BRA sums_done")
    out(f"LOP3.LUT R{SUM_TILE}, R{STEP}, {stages - 1:#x}, RZ, 0xc0, !PT")
    out(f"SHF.L.U32 R{SUM_TILE}, R{SUM_TILE}, {(STAGE_BYTES.bit_length() - 1):#x}, RZ")
    out(f"IADD3 R{SUM_TILE}, R{SUM_TILE}, {ring_base(stages) + TILE_BYTES:#x}, RZ", "the step's B tile")
    for index in range(SUM_OFFSETS, SUM_OFFSETS + 4):
        out(f"IADD3 R{index}, R{index}, R{SUM_TILE}, RZ")
    for i in range(0, 16, 2):                # rows g + 4 i, g + 4 (i + 1) of each group
        for group in range(2):
            for parity in range(2):
                offset = SUM_OFFSETS + 2 * group + parity
                out(f"LDS.U16 R{SUM_HALVES + 2 * group + parity}, [R{offset}+{(i // 2) * 1024:#x}]",
                    f"rows +{4 * i} and +{4 * i + 4}" if group == parity == 0 else "")
        for h in range(4):
            out(f"HADD2.F32 R{SUM_HALVES + h}, -RZ, R{SUM_HALVES + h}.H0_H0", "binary16 -> binary32, exact" if h == 0 else "")
        for group, total in ((0, E_SUM0), (1, E_SUM1)):
            out(f"FADD R{total}, R{total}, R{SUM_HALVES + 2 * group}")
            out(f"FADD R{total}, R{total}, R{SUM_HALVES + 2 * group + 1}", "in increasing k" if group == 0 else "")
    for index in range(SUM_OFFSETS, SUM_OFFSETS + 4):
        out(f"IADD3 R{index}, R{index}, -R{SUM_TILE}, RZ")
    out.label("sums_done")


def _step_predicates(out: _Text, stages: int) -> None:
    """The step R{STEP}'s branch conditions, written a step ahead of their branches (a predicate
    reaches a branch 13 cycles after its ISETP): P4 step 0 (no stage before it to refill), P5 no
    refill by this thread (not thread 0, or the step `stages` - 1 on is past the last), P6 a step
    to do (the loop's back edge, taken with the step just counted)."""
    out(f"IADD3 R{REFILL}, R{STEP}, {stages - 1:#x}, RZ")
    out(f"ISETP.EQ.U32.AND P4, PT, R{STEP}, RZ, PT")
    out(f"ISETP.GE.U32.OR P5, PT, R{REFILL}, R{STEPS}, P1")
    out(f"ISETP.LT.U32.AND P6, PT, R{STEP}, R{STEPS}, PT")


def _barrier_of(out: _Text, stages: int) -> None:
    """R{BAR}, R{PHASE}: the barrier and the phase parity (bit 31) of step R{STEP}."""
    out(f"LOP3.LUT R{BAR}, R{STEP}, {stages - 1:#x}, RZ, 0xc0, !PT")
    out(f"LEA R{BAR}, R{BAR}, UR{U_BARS}, 0x3")
    out(f"SHF.R.U32.HI R{PHASE}, RZ, {(stages.bit_length() - 1):#x}, R{STEP}")
    out(f"SHF.L.U32 R{PHASE}, R{PHASE}, 0x1f, RZ", "the phase the step's copies complete")


def _descriptors(out: _Text, variant: Variant, stages: int) -> None:
    """The four descriptor quads' low words for step UR{U_STEP}: its stage's start (the stage-0
    words + stage * STAGE_BYTES >> 4), then + k16 moves (independent of each other)."""
    out(f"ULOP3.LUT UR{U_STAGE}, UR{U_STEP}, {stages - 1:#x}, URZ, 0xc0, !UPT", "the next step's stage")
    shift = STAGE_BYTES.bit_length() - 1 - 4
    for offset, base in ((0, U_DESC_BASE), (2, U_DESC_BASE + 1)):
        out(f"ULEA UR{DESC_QUADS[0] + offset}, UR{U_STAGE}, UR{base}, {shift:#x}",
            "A's descriptor, k16 step 0" if offset == 0 else "B's")
    for kk, quad in enumerate(DESC_QUADS[1:], 1):
        for offset, along_k in ((0, variant.a_along_k), (2, variant.b_along_k)):
            out(f"UIADD3 UR{quad + offset}, UR{DESC_QUADS[0] + offset}, {kk * (K16_K if along_k else K16_MN):#x}, URZ")


def generate(variant: Variant, prefix: str, stages: int = STAGES) -> str:
    """The sm_90 kernel source of one variant with a ring of `stages` (a power of two) steps
    (deterministic text)."""
    if stages < 2 or stages & (stages - 1):
        raise ValueError(f"stages = {stages}: the ring takes a power of two, at least 2, of 16 KiB stages")
    out = _Text()
    a_k, b_k = variant.a_along_k, variant.b_along_k
    header = [
        f"// {variant.identity(prefix)}.{TARGET}: generated by `python -m bobc.sass.generate.gemm_sm90` "
        "(compiler/bobc/sass/",
        "// generate/gemm_sm90.py, whose docstring explains the design); do not edit by hand.",
        f"// sm_90's variant of {variant.identity(prefix)}.sass (the same launch and parameter words, "
        "the same results' formula):",
        f"//   {variant.formula}   ({variant.uses})",
        "//   then the epilogue, split K and column sums of bobc.sass.generate.gemm (every flag; each",
        "//   output bit for bit the HMMA kernel's).",
        f"// Launch: block ({BLOCK_THREADS}, 1, 1), grid (N/64, M/64, batches); shared memory {shared_bytes(stages)} "
        f"bytes ({SHARED_BASE:#x} reserved + {stages} stages of {STAGE_BYTES} + {8 * stages} of mbarriers).",
        "// Contract (bobc.certify.kernels): the parameter words, from the parameter base.",
        *_contract(variant),
        *gemm.requirements(TILE_M, TILE_M, None),   # 64 x 64 tiles; K any: the maps stop the copies (zeros past K)
        f".kernel {variant.kernel(prefix)}",
        f".registers {REGISTERS}",
        f".shared {shared_bytes(stages)}",
    ]
    out(f"S2R R{TID}, SR_TID.X")
    out(f"S2R R{CTA_N}, SR_CTAID.X", "64-column tile")
    out(f"S2R R{CTA_M}, SR_CTAID.Y", "64-row tile")
    out(f"S2R R{CTA_Z}, SR_CTAID.Z", "batch")
    out("ULDC.64 UR4, c[0x0][memory_descriptor]", "the epilogue's loads and stores name desc[UR4]")
    out(f"S2UR UR{U_N0}, SR_CTAID.X")
    out(f"S2UR UR{U_M0}, SR_CTAID.Y")
    out(f"S2UR UR{U_Z}, SR_CTAID.Z")
    out(f"S2UR UR{U_CTA}, SR_CgaCtaId")
    out(f"USHF.L.U32 UR{U_N0}, UR{U_N0}, 0x6, URZ", "n0 = 64 blockIdx.x")
    out(f"USHF.L.U32 UR{U_M0}, UR{U_M0}, 0x6, URZ", "m0 = 64 blockIdx.y")
    _cluster_address(out, U_RING, ring_base(stages))
    _cluster_address(out, U_BARS, barriers_base(stages))
    _copy_blocks(out, variant, stages)
    out(f"ULDC.64 UR{U_MAP_A}, c[0x0][param+{8 * MAP_WORDS['A']:#x}]", "A's tensor map")
    out(f"ULDC.64 UR{U_MAP_B}, c[0x0][param+{8 * MAP_WORDS['B']:#x}]", "B's tensor map")
    for quad in DESC_QUADS:
        out(f"UMOV UR{quad + 1}, {DESCRIPTOR_HIGH:#x}", "descriptors' high words: 1 KiB strides, 128-byte swizzle"
            if quad == DESC_QUADS[0] else "")
        out(f"UMOV UR{quad + 3}, {DESCRIPTOR_HIGH:#x}")
    for register, base, along_k in ((U_DESC_BASE, 0, a_k), (U_DESC_BASE + 1, TILE_BYTES, b_k)):
        out(f"UMOV UR{register}, {((ring_base(stages) + base) >> 4) + (LEADING_K if along_k else LEADING_MN):#x}",
            "stage 0's descriptor: start address >> 4, leading offset")
    for i in range(0, 32, 2):
        out(f"CS2R R{ACC + i}, SRZ")
    out(f"MOV R{T0}, {_p('K')}")
    out(f"IADD3 R{T0}, R{T0}, {STEP_K - 1:#x}, RZ")
    out(f"SHF.R.U32.HI R{STEPS}, RZ, 0x6, R{T0}", "steps = ceil(K / 64)")
    out(f"MOV R{TX}, {STAGE_BYTES:#x}", "bytes a stage's copies bring")
    out(f"ISETP.NE.U32.AND P1, PT, R{TID}, RZ, PT", "P1: not the copying thread")
    out.note("thread 0: the barriers (one arrival each, and the copies' bytes), then steps 0 .. stages - 1;")
    out.note("each thread-0 region ends in a BSYNC: what follows (uniform registers) runs once, converged")
    out("BSSY B0, initialised")
    out("@P1 BRA initialised")
    out(f"UMOV UR{U_INIT}, {MBARRIER_ONE[0]:#x}")
    out(f"UMOV UR{U_INIT + 1}, {MBARRIER_ONE[1]:#x}")
    _x(out, "[B------:R-:W0:-:S02]", "FENCE.VIEW.ASYNC.S")
    for stage in range(stages):
        wait = "B0-----" if stage == 0 else "B------"
        _x(out, f"[{wait}:R0:W1:-:S01]", f"SYNCS.EXCH.64 URZ, [UR{U_BARS}+{8 * stage:#x}], UR{U_INIT}",
           f"stage {stage}'s barrier")
    _x(out, "[B-1----:R1:W-:-:S06]", "MEMBAR.ALL.CTA")
    _x(out, "[B-1----:R-:W1:-:S02]", "FENCE.VIEW.ASYNC.S", "the barriers, seen by the copy unit")
    out.label("initialised")
    out("BSYNC B0")
    out("BAR.SYNC.DEFER_BLOCKING 0x0")
    out("BSSY B0, prologue_done")
    out("@P1 BRA prologue_done")
    out(f"UMOV UR{U_STEP}, URZ")
    for stage in range(stages):
        out(f"ISETP.GE.U32.AND P0, PT, R{STEPS}, {stage + 1:#x}, PT")
        out("@!P0 BRA prologue_done", f"fewer than {stage + 1} steps")
        _copy_step(out, variant, f"UR{U_STEP}", stages)
        out(f"UIADD3 UR{U_STEP}, UR{U_STEP}, 0x1, URZ")
    out.label("prologue_done")
    out("BSYNC B0")
    if variant.column_sums:
        _column_sums_setup(out)
    out(f"MOV R{STEP}, RZ")
    out(f"UMOV UR{U_STEP}, URZ")
    _step_predicates(out, stages)
    _barrier_of(out, stages)
    _descriptors(out, variant, stages)
    out.label("step")
    _x(out, "[B------:R-:W4:-:S03]", f"SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R{BAR}+URZ], R{PHASE}",
       "the step's tiles have landed?")
    out("@!P0 BRA step")
    out("WARPSYNC.ALL")
    _x(out, "[B------:R-:W-:-:S01]", "WARPGROUP.ARRIVE")
    flags = ("" if a_k else ".tnspA") + ("" if b_k else ".tnspB")
    for kk, quad in enumerate(DESC_QUADS):
        last = kk == len(DESC_QUADS) - 1
        _x(out, "[B------:R-:W-:-:S01]", f"HGMMA.64x64x16.F32 R{ACC}, gdesc[UR{quad}]{flags}, R{ACC}"
           + (", gsb0" if last else ""), f"k16 step {kk}")
    if variant.column_sums:
        _column_sums_step(out, stages)
    _x(out, "[B------:R-:W-:-:S02]", "WARPGROUP.DEPBAR.LE gsb0, 0x1", "the previous step's MMAs are done")
    out.note("the previous step's stage is free: thread 0 refills it with the step `stages` further on")
    out("@P4 BRA next_step", "step 0: no stage before it")
    out(f"UIADD3 UR{U_INIT}, UR{U_STEP}, {stages - 1:#x}, URZ", "the refill's words, while the barrier waits")
    _copy_words(out, variant, f"UR{U_INIT}", stages)
    out("BAR.SYNC.DEFER_BLOCKING 0x0", "every warp is done with the stage")
    out("BSSY B0, refilled")
    out("@P5 BRA refilled")
    _copy_issue(out)
    out.label("refilled")
    out("BSYNC B0")
    out.label("next_step")
    out(f"IADD3 R{STEP}, R{STEP}, 0x1, RZ")
    out(f"UIADD3 UR{U_STEP}, UR{U_STEP}, 0x1, URZ")
    _step_predicates(out, stages)
    _barrier_of(out, stages)
    _descriptors(out, variant, stages)
    out("@P6 BRA step")
    _x(out, "[B------:R-:W-:-:S02]", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "every MMA is done")
    _flag_test(out, T0, "P3", FLAG_SPLIT, "one split of the product")
    tiling_ = WarpgroupTiling()
    if variant.column_sums:
        out("PLOP3.LUT P1, PT, P2, PT, PT, 0x80, 0x0", "the column sums' predicate, as gemm's store takes it")
        _column_sums_store(out, tiling_)
    out("@P3 BRA split")
    _epilogue(out, tiling_, bias_at=92, adam_step=variant.adam_step)
    out.label("split")
    out(f"S2R R{CLUSTER_BASE}, SR_CgaCtaId", "split K (flag 16): through W")
    out(f"SHF.L.U32 R{CLUSTER_BASE}, R{CLUSTER_BASE}, 0x18, RZ", "the rank << 24: this block's shared addresses")
    _split(out, tiling_, split_partials(stages), label="split_partials", cluster_base=CLUSTER_BASE)
    return "\n".join(header + out.lines) + "\n"


# the block's rank in its cluster << 24: the cluster-wide form of its shared addresses, which a
# launch in clusters of several blocks requires of every LDS / STS (the H200 refuses a plain offset
# from a block of rank 1 and up: bench/results/cuda-cluster-launch-h200.md); 0 unclustered
CLUSTER_BASE = 93


def write_all(folder: Path, prefix: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for variant in VARIANTS.values():
        path = folder / f"{variant.identity(prefix)}.{TARGET}.sass"
        path.write_text(generate(variant, prefix), encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bobc.sass.generate.gemm_sm90",
                                     description="write the sm_90 (TMA + warpgroup MMA) matrix-product kernel sources")
    parser.add_argument("--prefix", required=True, help="the model's name for its kernels (as for gemm)")
    parser.add_argument("folder", type=Path, help="where the .sm_90.sass files go (or are checked)")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    args = parser.parse_args(argv)
    if args.check:
        stale = [v for v in VARIANTS.values()
                 if _differs(args.folder / f"{v.identity(args.prefix)}.{TARGET}.sass", generate(v, args.prefix))]
        for v in stale:
            print(f"{args.folder}/{v.identity(args.prefix)}.{TARGET}.sass differs from what the generator emits; run "
                  f"python -m bobc.sass.generate.gemm_sm90 --prefix {args.prefix} {args.folder}", file=sys.stderr)
        return 1 if stale else 0
    for path in write_all(args.folder, args.prefix):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
