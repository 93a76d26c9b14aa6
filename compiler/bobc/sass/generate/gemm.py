"""Tiled matrix products on tensor cores (HMMA.16816.F32), emitted as SASS text.

    python -m bobc.sass.generate.gemm --prefix NAME OUTDIR       # writes NAME-{nn,nt,tn}.sass
    python -m bobc.sass.generate.gemm --prefix NAME --check DIR  # exit 1 if a file differs
    python -m bobc.sass.generate.gemm --prefix NAME --tile-m 128 OUTDIR   # 128-row tiles (below)
    python -m bobc.sass.generate.gemm --prefix NAME --warps 8 OUTDIR      # 8 warps a 64-row tile (below)

The model names its kernels: NAME-nn is the identity a plan's regions use, NAME_nn the
kernel symbol (each model's example passes its own NAME).

Three layouts of the operands, one kernel each (A and B binary16, row-major storage,
element strides):

    nn: P[m,n] = sum_k A[m*lda + k] B[k*ldb + n]     (B stored K x N)
    nt: P[m,n] = sum_k A[m*lda + k] B[n*ldb + k]     (B stored N x K: the product with B^T)
    tn: P[m,n] = sum_k A[k*lda + m] B[k*ldb + n]     (A stored K x M: the product with A^T)

then, in binary32 and in this order, v = alpha*P, v += bias[n] (flag 2), v += R[m,n]
(flag 1; R may be D itself: C += A.B), D[m,n] = v (unless flag 8), Dh[m,n] = half(v)
(flag 4, round to nearest even).  Every pointer moves by its batch stride times
blockIdx.z, so one launch does a batch of equal-shaped products.  The parameter block
is PARAMETERS below (and each file's `//@ param` lines).

Split K (flag 16; split_count, split_parameters): a product with few output tiles runs
S = batches blocks per tile, block z over its S-th of K (A and B moved by sA, sB); each
stores its binary32 partial in the workspace W[z], releases it (MEMBAR.ALL.GPU) and draws the
tile's ticket (ATOMG.E.INC wrapping at S - 1, so the tickets are zero again after the
launch); the block that draws S - 1 sums W[0] + W[1] + .. + W[S-1] in that order (the
same result whichever block finishes last: deterministic) and runs the epilogue.  It stages
the partials through the ring, staged_partials a round (two on 64-row tiles, one on 128-row):
every thread copies 16-byte chunks of whole rows (LDGSTS, rows of 288 bytes so that the
8-byte reads of four rows fall in four bank groups), one global round trip a round, then adds
its own values from shared memory partial by partial; loading one partial a round trip was
measurably slower on the H200 (bench/results: the split sum).  The ticket is drawn with
PTX's `atom.acq_rel.gpu` as ptxas writes it (tools/ptx_corpus/fences.ptx): MEMBAR.ALL.GPU and
ERRBAR before it release the partial, CCTL.IVALL after it keeps the last block from reading the
other partials from a stale L1 line.  (Until session 22 both sides were membar.gl, MEMBAR.SC.GPU,
a sequentially consistent fence the publication does not need: bench/results/, the split fence
measurement.)
On the H200 a long-K product of few tiles took little more than half its unsplit time in 4 splits
(split_count has the sweep's rule; the measurements are in bench/results).

Partials only (flag 512, with flag 16): every block stores its partial in W[z] as above and exits:
no release, no ticket, no sum, no epilogue (D, Dh, R, bias and U are not touched; the tickets stay
zero).  For a plan whose next launch reads the S partials itself and adds them as the last block
would (+0 + W[0] + .. + W[S-1], then alpha, bias, R as the epilogue below): the sum's arithmetic
is _split_sum's and _epilogue's, so such a reader that repeats those instructions leaves D's bits
as this kernel would.  Refused without flag 16 and with 32 or 256 by pack_parameters.

Column sums of B (flag 32; nn and tn, whose B is stored K x N): the launch also writes
E[n] = sum_k B[k, n] in binary32 -- a linear layer's bias gradient, from the same binary16
output gradient its weight-gradient product reads, without a launch of its own.  The
blocks of the first row tile (blockIdx.y = 0, batch 0) add their 64 columns from the B
slices already in shared memory, between a slice's BAR.SYNC and the next (no extra global
read).  The sum is associated as a column-sum kernel with four row groups would: thread t
takes column t % 64 and the row groups g = 2 (t / 64), g + 1 (rows k = g mod 4), each a
binary32 sum from +0 over its rows in increasing order; the block then adds
(s0 + s1) + (s2 + s3) through shared memory.  nt (B stored N x K) ignores the flag (its
contract declares E unused) and split_parameters refuses it; flag 32 with flag 16 or with
batches > 1 is refused by pack_parameters (a split sees a part of K; each batch's B would
race for E), and the kernel computes E only without flag 16 and in batch 0.  D and Dh are
computed exactly as without the flag.

GELU in the epilogue (flags 64 and 128; any layout, batches, split K: it runs after the
partials' sum).  Flag 128 (GELU_GRAD): once v is final (alpha P, + bias, + R), v = v *
gelu'(U[m,n]) before the D and Dh writes, U binary32 with D's strides (ldd, sD; parameter
word 16) -- an MLP's input gradient du = dy gelu'(u) from its saved pre-activation u.
Flag 64 (GELU): D = v as without it (the pre-activation, kept for the backward pass) and
Dh = half(gelu(v)).  The tanh form, without cancellation in either tail: e = 2^x with
x = min(u (K2 + KA2 u^2), 64) (MUFU.EX2), r = 1 / (1 + e) (MUFU.RCP), s = e r, gelu(u) =
u s, gelu'(u) = (u r s)(2K + 6KA u^2) + s (one FFMA), du = gelu'(u) dy rounded to binary32,
then to binary16 (GELU_* below; F2FP.PACK_AB).  Each element takes exactly the instructions,
operands and association of separate elementwise kernels written that way, so that Dh is bit for bit
theirs on the same D (a plan's tests can compare the two).  A row group's GELU work is
branched around when its flag is off (no cost but the branches to the other products).

The optimizer step in the epilogue (flag 256: Adam with decoupled weight decay, "the Adam step"
below; refused with 1, 2, 8, 64, 128 by pack_parameters;
served by tn, the weight-gradient layout, alone: nn and nt keep their code and ignore the flag,
split_parameters refuses it for them): v = alpha P is the gradient of the master weights at D,
and instead of storing it the epilogue runs one Adam step over them and their moments at R and U
(all three with D's strides): p = p decay, m = beta1 m + (1 - beta1) g, s = beta2 s + (1 - beta2)
g^2, p = p - alpha_t m / (sqrt(s) + epsilon_t) (MUFU.SQRT, MUFU.RCP), then D, R, U and with flag
4 Dh = half(p).  Each element takes the instructions, operands and association of a separate
optimizer kernel written that way (ADAM_STEP_INSTRUCTIONS; its gradient multiplier 1 is an exact FMUL, the
product's alpha plays its part), so the results are bit for bit that kernel's over the D this
kernel would have stored; a weight-gradient product then never writes its binary32 gradient, which
the optimizer kernel would read back: 12 of the 38 bytes a parameter an update moves.  The step's
scalars and the overflow flag come from a 32-byte record (word 19: ADAM_STEP_RECORD), which a plan
writes once an update after its non-finite check (a launch's words are at most 20 on sm_86's
512-byte bank 0, and a host writes each step's scalars into a few launches' blocks, not every
product's); when the flag is not 0 every thread exits before its first store (AMP's skipped step).
The column sums (flag 32) and split K (flag 16) are unchanged by it.

Tiling (tile_m = 64: the default; 128 below).  A block of 128 threads (4 warps) computes a
64 x 64 tile of the output: blockIdx.x picks the 64 columns, blockIdx.y the 64 rows.  Warp w
computes the 32 x 32 quarter (w >> 1, w & 1): 2 x 4 HMMA tiles of 16 x 8, 32 binary32
accumulators a thread.  K advances 32 at a time.  Each 64 x 32 slice of A and 32 x 64
slice of B is copied global -> shared with asynchronous 16-byte copies
(LDGSTS.E.BYPASS.128, two per operand per thread) into a ring of STAGES (4) buffers:
the copies of the next slices are in flight while slice i is multiplied
(LDGDEPBAR closes a group per slice; DEPBAR.LE SB0, STAGES - 2 in the middle of trip i waits
for slice i + 1, and BAR.SYNC makes every thread's copies visible and frees the buffer the
next copy overwrites: "Loop order" below).  A slice
whose rows run along k (A of nn/nt, B of nt) is stored as 64 rows of 32 halves with a
16-byte pad (row pitch 80 bytes), one whose rows run along m or n (A of tn, B of nn/tn)
as 32 rows of 64 halves padded to 144 bytes: either
way the 8 rows an 8x8 matrix load touches fall in 8 different 16-byte bank groups.
Fragments come from shared memory with LDSM.16.M88.4 (rows along k: the HMMA fragment
as stored) or LDSM.16.MT88.4 (rows along m or n: transposed on the way), four 8 x 8
matrices a load, ordered so that the registers are the HMMA's A fragment (16 x 16) or
two B fragments (16 x 8 each).  Shared memory is addressed from 0x400 on both targets
(sm_90 code keeps the first KiB of a block's window for the system, as ptxas does),
so a block needs SHARED_BASE + STAGES * stage bytes (shared_bytes()).

Contract (not checked by the kernel; the plan must hold it): M, N multiples of 64, K a
multiple of 32 and at least 32; lda, ldb, sA, sB multiples of 8 and A, B 16-byte aligned
(16-byte copies); ldd, ldh, sD, sH even, D, R, bias 8-byte aligned, Dh 4-byte aligned.
With flag 16: one batch split S = batches >= 2 ways, K the split's length; W 16-byte aligned with
4 S M N bytes (16-byte copies); tickets 4 (M/64)(N/64) bytes, zero before the launch (the launch leaves them zero).
With flag 32: E 4-byte aligned with 4 N bytes, one batch, no flag 16, layout nn or tn.
With flag 128: U 8-byte aligned, laid out as D (ldd, sD).

Loop order (one trip a slice, software-pipelined; bobc.sass.schedule issues in program order,
so the order is the overlap).  A trip starts with slice i's first k16 step's fragments already
in registers (the trip before loaded them, or the prologue for slice 0) and runs:
  1. the copies of slice i + STAGES - 1 into the stage slice i - 1 used (every thread finished
     reading it before the last BAR.SYNC), LDGDEPBAR;
  2. the fragment loads of slice i's second k16 step;
  3. the first step's HMMAs (8, or 4 for warps of 32 x 16), with the bookkeeping the next
     slice's loads need between them (the trip counter, the read stage, then the fragment
     addresses, last: they wait for step 2's loads to have read the old ones);
  4. (the column sums' version of the loop only) the column sums of slice i;
  5. DEPBAR.LE SB0, STAGES - 2 (slice i + 1's copies have landed) and BAR.SYNC (everyone's have;
     the barrier waits the scoreboards, so step 2's loads are done, but not the HMMAs in flight:
     schedule.BARRIER_DRAIN);
  6. the fragment loads of slice i + 1's first k16 step;
  7. the second step's HMMAs, with the next trip's copy bookkeeping between them (the copy
     sources moved by IMAD.WIDE.U32, no carry chain; the copy counter, the write stage and the
     destinations), then the back edge (schedule.BACK_EDGE: it waits only for what the next
     trip reads early, and the scoreboards: step 6's loads, issued before step 7's HMMAs).
So no HMMA waits for a fragment load issued just before it: the tensor cores are fed while
the loads of the next step, and the barrier, are in flight.  Each accumulator still takes its
k16 steps in order (k = 0, 16 of slice 0, then of slice 1, ..), exactly the products of the
unpipelined loop: the results are bit for bit those of earlier builds.  The column sums (flag
32) are a second copy of the loop, chosen once before it (P1): a branch inside the loop would
wait out every load and product in flight at each trip.  The last trip's step 6 reads a stage
no copy wrote (harmless: its fragments are never used).

The tile height (tile_m: 64 by default, or 128; generate(variant, prefix, tile_m), CLI --tile-m;
Tiling, TILINGS; grid, shared_bytes, check_shape, split_count, split_ticket_bytes,
split_parameters and pack_parameters take it, with 64 as default).  A 64 x 64 tile reads A
from L2 once per 64 columns and B once per 64 rows, 2 M N K (1/64 + 1/64) bytes in all;
a 128 x 64 tile reads B half as often, a quarter fewer bytes, for the products bound by that
traffic.  With tile_m = 128 a block is 256 threads, 8 warps in a 4 x 2 grid: warp w computes
rows 32 (w >> 1) .. + 31 and columns 32 (w & 1) .. + 31 with exactly the fragments, 16 HMMAs a
slice and accumulator order of a 64-row tile's warp, so every output element is computed by
the same instructions in the same order (bit for bit, with split K too; the ticket is per
128 x 64 tile).  The copies: each operand's slice in 16-byte chunks, slice bytes / 16 /
threads a thread (A's 128 x 32 or 32 x 128 slice: two; B's 32 x 64: one).  A stored across
m is 32 rows of 128 halves at a 272-byte pitch (outer_pitch: 256 + 16, so that 8 rows again
fall in 8 bank groups).  Column sums: thread t takes column t % 64 and one row group t / 64;
threads t + 64 g leave s_g in shared memory and thread t adds (s0 + s1) + (s2 + s3), the same
association.  Shared memory is 0x400 + 4 stages of (A 128 x 80 or 32 x 272 bytes + B), past
48 KiB: a launcher opts in to that much dynamic shared memory.  The committed kernels of a
model are whichever tiling it generated (64 unless it asks).

Warps a block (warps: 4 for 64-row tiles by default, or 8; 128-row tiles have 8; TILINGS lists
the (tile_m, warps) pairs served, tiling() refuses the others; generate(..., warps), CLI --warps).
With 8 warps on a 64 x 64 tile the block is 256 threads, a 2 x 4 grid of warps of 32 x 16: warp
w computes rows 32 (w >> 2) .. + 31 and columns 16 (w & 3) .. + 15, 2 x 2 HMMA tiles of 16 x 8
(16 accumulators a thread): per k16 step the same two A fragments and one B matrix load
(LDSM.x4: one 16-column pair, two n8 fragments), 8 HMMAs a slice with the bookkeeping between
them, two or three after each (an accumulator's two k16 steps are a barrier and a fragment load
apart; 81-86 stall cycles a trip).  Each output element is computed by the
same HMMAs on the same fragments in the same k order as with 4 warps, so the results are bit
for bit the same
(split K and column sums too: the copies are one 16-byte chunk per operand a thread, the
column sums one row group a thread combined as for 256 threads above).  Why: a product of few
tiles runs about one warp per scheduler with 4 warps a block, bound by latency; 8 warps keep
the block count and give each scheduler two.  The grid, shared memory, parameter block and
contract are the 4-warp kernels'; the registers stay at the declared 96 (R93 the highest),
so an SM holds 2 such blocks (16 warps) where it holds 5 of 4 warps when many blocks compete.

Control codes are left to bobc.sass.schedule (HMMA is fixed-latency there; the async
copies' scoreboard is waited only by DEPBAR).
"""
from __future__ import annotations

import argparse
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from ...errors import BobcError
from ..source import read_source


def _differs(path: Path, text: str) -> bool:
    """Whether the source at `path` is not `text`: absent, unreadable, past the assembler's bound
    (bobc.sass.source, which reads it) or other."""
    if not path.is_file():
        return True
    try:
        return read_source(path) != text
    except BobcError:
        return True

TILE_M = 64                    # the default tile height (tile_m: 64 or 128, TILINGS)
TILE_N = 64
TILE_K = 32
THREADS = 128                  # the default tiling's block
STAGES = 4
SHARED_BASE = 0x400            # the first KiB of a block's shared window is the system's on sm_90
K_ROWS_PITCH = 80              # a row of 32 halves along k (64 bytes) + 16 bytes of pad
REGISTERS = 96                 # the budget each kernel declares

# The parameter block: (byte offset, name, meaning); two u32 share an 8-byte word.
PARAMETERS = (
    (0x00, "A", "pointer: A, binary16"),
    (0x08, "B", "pointer: B, binary16"),
    (0x10, "D", "pointer: D, binary32 (written unless flag 8)"),
    (0x18, "Dh", "pointer: Dh, binary16 copy of D (written if flag 4; of gelu(D) with flag 64)"),
    (0x20, "R", "pointer: R, binary32 addend with D's strides (read if flag 1; may equal D)"),
    (0x28, "bias", "pointer: bias, binary32 [N] (read if flag 2)"),
    (0x30, "M", "u32 rows of D"), (0x34, "N", "u32 columns of D"),
    (0x38, "K", "u32 the summed dimension (with flag 16: of one split)"),
    (0x3c, "flags", "u32: 1 add R, 2 add bias, 4 write Dh, 8 no D, 16 split K (batches = the splits), "
                    "32 column sums of B into E (nn, tn), 64 Dh = half(gelu(v)), 128 v *= gelu'(U), "
                    "256 the Adam step (tn), 512 partials only (with 16: W[z] stored, nothing else)"),
    (0x40, "lda", "u32 row stride of A (elements)"), (0x44, "ldb", "u32 row stride of B (elements)"),
    (0x48, "ldd", "u32 row stride of D and R (elements)"), (0x4c, "ldh", "u32 row stride of Dh (elements)"),
    (0x50, "sA", "u32 batch stride of A (elements)"), (0x54, "sB", "u32 batch stride of B (elements)"),
    (0x58, "sD", "u32 batch stride of D and R (elements)"), (0x5c, "sH", "u32 batch stride of Dh (elements)"),
    (0x60, "alpha", "f32 scale of the product"), (0x64, "batches", "u32 batch count (= grid z; flag 16: splits)"),
    (0x68, "W", "pointer: the split workspace, binary32 [batches][M][N] (written and read with flag 16)"),
    (0x70, "tickets", "pointer: u32 per output tile, zero between launches (flag 16)"),
    (0x78, "E", "pointer: E, binary32 [N] column sums of B (written with flag 32)"),
    (0x80, "U", "pointer: U, binary32 saved pre-activation with D's strides ldd, sD (read with flag 128)"),
)
# Words 17 and 18 (0x88, 0x90) are sm_90's tensor maps (gemm_sm90.MAP_WORDS; zero for these kernels).
# Flag 256 (the Adam step in the epilogue; tn) reads word 19, the last of a 512-byte bank 0 on sm_86:
# the step record a plan writes once an update before its products run.
ADAM_STEP_PARAMETERS = (
    (0x98, "step", "pointer: the Adam step record, read with flag 256: alpha_t, epsilon_t, decay, beta1, "
                   "1 - beta1, beta2, 1 - beta2 (binary32), the overflow flag (u32: not 0, the step is skipped)"),
)
ADAM_STEP_RECORD = ("alpha_t", "epsilon_t", "decay", "beta1", "one_minus_beta1", "beta2", "one_minus_beta2", "overflow")
OFFSET = {name: offset for offset, name, _ in PARAMETERS + ADAM_STEP_PARAMETERS}
FLAG_ADD_R, FLAG_BIAS, FLAG_HALF, FLAG_NO_D, FLAG_SPLIT, FLAG_COLUMN_SUMS = 1, 2, 4, 8, 16, 32
FLAG_GELU, FLAG_GELU_GRAD, FLAG_ADAM_STEP, FLAG_PARTIALS = 64, 128, 256, 512
PARAMETER_BYTES = 0x88
ADAM_STEP_PARAMETER_BYTES = 0xa0

# The tanh-form GELU's constants in binary32, as a model's separate elementwise GELU kernels
# hold them:
# K = sqrt(2/pi), A = 0.044715,
# x = u (K2 + KA2 u^2) with K2 = 2 K log2(e), KA2 = K2 A; gelu' = s + u r s (2K + 6KA u^2).
GELU_KA2 = 0x3dd2d3e8                 # binary32 bits, in a register (FFMA's B operand)
GELU_K2 = "2.3022081851959228516"     # FFMA's immediate C operand, as the kernels write it
GELU_6KA = 0x3e5b33b6
GELU_2K = "1.5957691669464111328"
GELU_CLAMP = "64"                     # x <= 64 keeps e = 2^x finite


@dataclass(frozen=True)
class Variant:
    name: str
    a_along_k: bool        # A's stored rows run along k (A is M x K)
    b_along_k: bool        # B's stored rows run along k (B is N x K)
    formula: str
    uses: str

    def kernel(self, prefix: str) -> str:
        """The kernel symbol under the model's name `prefix` (e.g. my-gemm -> my_gemm_nn)."""
        return f"{prefix.replace('-', '_')}_{self.name}"

    def identity(self, prefix: str) -> str:
        """The region identity and file stem under the model's name `prefix`."""
        return f"{prefix}-{self.name}"

    @property
    def column_sums(self) -> bool:
        """Whether flag 32 is served: B stored K x N, its slices in shared memory as k rows."""
        return not self.b_along_k

    @property
    def adam_step(self) -> bool:
        """Whether flag 256 is served: the weight-gradient layout (A^T B: a linear layer's input
        K x M and its output gradient K x N, over the K rows of a batch), and only it, so that
        the other layouts' code stays as it was (they ignore the flag; split_parameters refuses it)."""
        return not self.a_along_k and not self.b_along_k


VARIANTS = {
    "nn": Variant("nn", True, False, "P[m,n] = sum_k A[m*lda + k] * B[k*ldb + n]",
                  "A times B: A stored M x K, B K x N"),
    "nt": Variant("nt", True, True, "P[m,n] = sum_k A[m*lda + k] * B[n*ldb + k]",
                  "A times B^T: A stored M x K, B N x K"),
    "tn": Variant("tn", False, False, "P[m,n] = sum_k A[k*lda + m] * B[k*ldb + n]",
                  "A^T times B: A stored K x M, B K x N"),
}


@dataclass(frozen=True)
class Tiling:
    """A block's share of the output: tile_m rows by TILE_N columns, `threads` threads, a
    grid of tile_m / 32 x warp_cols warps, each computing 32 rows by warp_n columns (32, or
    16 with twice the warps on a 64-row tile).  Every output element is computed by the
    same HMMAs on the same fragments in the same k order whatever the tiling, so the tiling
    changes which thread computes an element, never how."""
    tile_m: int
    threads: int

    @property
    def warps(self) -> int:
        return self.threads // 32

    @property
    def warp_rows(self) -> int:
        return self.tile_m // 32

    @property
    def warp_cols(self) -> int:
        return self.warps // self.warp_rows

    @property
    def warp_height(self) -> int:
        """Output rows a warp computes (two 16-row HMMA tiles)."""
        return 32

    def row_groups(self) -> list[tuple[list[int], int, int]]:
        """The epilogue's groups of 8 rows: (a lane's values in column order, the group's first
        column relative to the lane's, rows from the previous group's): rows +0, +8 of HMMA
        tile row 0, then of tile row 1."""
        groups = []
        for group in range(4):
            mi, h = divmod(group, 2)
            groups.append(([self.acc(mi, nt) + 2 * h + j for nt in range(self.n_tiles) for j in range(2)],
                           0, 8 if group else 0))
        return groups

    @property
    def warp_n(self) -> int:
        """Columns a warp computes: 32 (two 16-column pairs of n8 tiles) or 16 (one pair)."""
        return TILE_N // self.warp_cols

    @property
    def n_tiles(self) -> int:
        """16 x 8 HMMA tiles across a warp's columns (a thread's 4 accumulators each, per mi)."""
        return self.warp_n // 8

    @property
    def accumulators(self) -> int:
        return 2 * 4 * self.n_tiles

    def acc(self, mi: int, nt: int) -> int:
        """The first of the 4 accumulator registers of HMMA tile (mi, nt)."""
        return ACC + 4 * self.n_tiles * mi + 4 * nt


# The tilings the generator emits, by (tile height, warps a block); the first of a height
# is its default.  64 x 4 (the default) gives (M/64)(N/64) blocks for products of few rows;
# 128 x 8 re-reads B from L2 half as often (M/128 row tiles), moving a quarter fewer operand
# bytes: 2 M N K (1/128 + 1/64) instead of 2 M N K (2/64); 64 x 8 keeps the 64-row tile and
# its block count but puts two warps on each scheduler (warps of 32 x 16) for the products
# bound by latency at one warp a scheduler (bench/results).
TILINGS = {(64, 4): Tiling(64, 128), (64, 8): Tiling(64, 256), (128, 8): Tiling(128, 256)}
TILE_HEIGHTS = tuple(dict.fromkeys(tile_m for tile_m, _ in TILINGS))
WARP_COUNTS = tuple(sorted({warps for _, warps in TILINGS}))


def tiling(tile_m: int = TILE_M, warps: int | None = None) -> Tiling:
    """The Tiling of a tile height and a block's warps (None: the height's default, 32 x 32
    warps), refusing a combination the generator does not emit."""
    if tile_m not in TILE_HEIGHTS:
        raise ValueError(f"tile_m = {tile_m}: the product kernels come in tiles of "
                         f"{' or '.join(str(t) for t in TILE_HEIGHTS)} rows")
    if warps is None:
        return next(t for (height, _), t in TILINGS.items() if height == tile_m)
    if (tile_m, warps) not in TILINGS:
        served = ", ".join(f"tile_m {h} with {w} warps" for h, w in TILINGS)
        raise ValueError(f"tile_m = {tile_m} with warps = {warps}: the product kernels come as {served}; "
                         f"pick one of those")
    return TILINGS[tile_m, warps]


def outer_pitch(outer: int) -> int:
    """Row pitch of a slice stored as TILE_K rows of `outer` halves along m or n: the row's
    bytes + 16, so that 8 rows at one column fall in 8 different 16-byte bank groups
    (2 outer + 16 = 16 mod 128 for outer = 64, 128: 144, 272 bytes)."""
    return 2 * outer + 16


def tile_bytes(along_k: bool, outer: int) -> int:
    """Shared bytes of one operand's slice: `outer` rows of TILE_K halves, or TILE_K rows of `outer`."""
    return outer * K_ROWS_PITCH if along_k else TILE_K * outer_pitch(outer)


def stage_bytes(variant: Variant, tile_m: int = TILE_M) -> int:
    return tile_bytes(variant.a_along_k, tiling(tile_m).tile_m) + tile_bytes(variant.b_along_k, TILE_N)


def shared_bytes(variant: Variant, tile_m: int = TILE_M) -> int:
    """Shared memory a block needs, the system's first KiB included."""
    return SHARED_BASE + STAGES * stage_bytes(variant, tile_m)


def grid(m: int, n: int, batches: int = 1, tile_m: int = TILE_M) -> tuple[int, int, int]:
    """The launch grid for an M x N product (block: tiling(tile_m).threads x 1 x 1)."""
    return (n // TILE_N, m // tiling(tile_m).tile_m, batches)


# flags whose v is not the product's alone, or that would write D or gelu(D): refused with flag 256
ADAM_STEP_EXCLUDES = {FLAG_ADD_R: "add R", FLAG_BIAS: "add bias", FLAG_NO_D: "no D", FLAG_GELU: "gelu",
                  FLAG_GELU_GRAD: "gelu'"}


def pack_parameters(A: int, B: int, D: int, M: int, N: int, K: int, lda: int, ldb: int, ldd: int,
                    Dh: int = 0, R: int = 0, bias: int = 0, flags: int = 0, ldh: int = 0,
                    sA: int = 0, sB: int = 0, sD: int = 0, sH: int = 0, alpha: float = 1.0,
                    batches: int = 1, W: int = 0, tickets: int = 0, E: int = 0, U: int = 0,
                    tile_m: int = TILE_M, step: int = 0) -> bytes:
    """The parameter block of one launch (pointers are addresses) of the kernels of tile height
    tile_m: PARAMETER_BYTES bytes, or ADAM_STEP_PARAMETER_BYTES with flag 256 (`step` the Adam step
    record's address; D the master weights, R and U the moments; words 17 and 18, sm_90's tensor
    maps, zero)."""
    check_shape(M, N, K, tile_m)
    if bool(flags & FLAG_ADAM_STEP) != bool(step):
        raise ValueError(f"flag {FLAG_ADAM_STEP} (the Adam step in the epilogue) and its step record (step=address) "
                         f"go together: pass both or neither")
    if flags & FLAG_ADAM_STEP:
        clash = [f"{flag} ({what})" for flag, what in ADAM_STEP_EXCLUDES.items() if flags & flag]
        if clash:
            raise ValueError(f"flag {FLAG_ADAM_STEP} takes the product (alpha P) as the gradient of the master weights "
                             f"at D and writes D, R, U (the weights and their moments) and with flag 4 Dh: it "
                             f"refuses {', '.join(clash)}")
    if flags & FLAG_PARTIALS and (not flags & FLAG_SPLIT or flags & (FLAG_COLUMN_SUMS | FLAG_ADAM_STEP)):
        raise ValueError(f"partials only (flag {FLAG_PARTIALS}) stores a split's partial in W and nothing else: it "
                         f"needs split K (flag {FLAG_SPLIT}) and refuses column sums (flag {FLAG_COLUMN_SUMS}) and "
                         f"the Adam step (flag {FLAG_ADAM_STEP}); flags = {flags}")
    if flags & FLAG_SPLIT and batches < 2:
        raise ValueError(f"a split launch (flag {FLAG_SPLIT}) has batches = its splits >= 2, not {batches}")
    if flags & FLAG_COLUMN_SUMS and (flags & FLAG_SPLIT or batches != 1):
        raise ValueError(f"column sums of B (flag {FLAG_COLUMN_SUMS}) need the whole of K in one batch: not "
                         f"with split K (flag {FLAG_SPLIT}) nor batches = {batches}; launch the column sums "
                         f"apart or leave the product unsplit")
    block = (struct.pack("<6Q", A, B, D, Dh, R, bias)
             + struct.pack("<12I", M, N, K, flags, lda, ldb, ldd, ldh, sA, sB, sD, sH)
             + struct.pack("<fI", alpha, batches) + struct.pack("<4Q", W, tickets, E, U))
    if step:
        block += bytes(OFFSET["step"] - PARAMETER_BYTES) + struct.pack("<Q", step)
        assert len(block) == ADAM_STEP_PARAMETER_BYTES
    return block


def check_shape(m: int, n: int, k: int, tile_m: int = TILE_M) -> None:
    """Refuse a shape the kernels of tile height tile_m do not serve, naming the dimension."""
    rows = tiling(tile_m).tile_m
    for name, value, unit in (("M", m, rows), ("N", n, TILE_N), ("K", k, TILE_K)):
        if value <= 0 or value % unit:
            raise ValueError(f"{name} = {value} is not a positive multiple of {unit}: these "
                             f"kernels compute whole {rows} x {TILE_N} tiles, {TILE_K} k at a time")


# Split-K.  A product with few output tiles (say 48 blocks on an H200's 132 SMs) and
# a long K runs as one launch of S blocks per tile (flag 16, grid z = S): block s computes
# the product over its S-th of K (its k offset is the batch stride sA, sB) and stores it,
# binary32, in the workspace W; the tile's last block to finish (a ticket counter per
# tile, ATOMG.INC wrapping at S - 1, so the counters are zero again after every launch)
# adds the S partials in split order, 0 .. S - 1 -- the same sum whichever block came
# last -- and applies the epilogue (alpha, bias, R, D, Dh) once.
SPLIT_FEW_TILES = 66           # split a product of fewer output tiles than half an H200's 132 SMs
SPLIT_MIN_SLICES = 12          # ... into at most SPLIT_MAX splits of at least this many 32-k slices
SPLIT_MAX = 4


def split_count(m: int, n: int, k: int, batches: int = 1, tile_m: int = TILE_M) -> int:
    """How many splits of K a product gets (1: none): the most, up to SPLIT_MAX, that divide
    K's 32-k slices into splits of at least SPLIT_MIN_SLICES, for a one-batch product of
    fewer than SPLIT_FEW_TILES tiles.  From a sweep of splits on the H200 (bench/results): a
    long K gains most in the most splits, a K of a few dozen slices a little in 2, and one of
    under two dozen slices is only slower split."""
    tiles = (m // tiling(tile_m).tile_m) * (n // TILE_N)
    slices = k // TILE_K
    if batches != 1 or tiles >= SPLIT_FEW_TILES:
        return 1
    return max(s for s in range(1, SPLIT_MAX + 1) if slices % s == 0 and (s == 1 or slices // s >= SPLIT_MIN_SLICES))


def split_workspace_bytes(m: int, n: int, splits: int) -> int:
    """The binary32 workspace W of a split product: its S partial M x N matrices."""
    return 4 * splits * m * n if splits > 1 else 0


def split_ticket_bytes(m: int, n: int, tile_m: int = TILE_M) -> int:
    """The tickets of a split product: a u32 per output tile (zero before the first launch)."""
    return 4 * (m // tiling(tile_m).tile_m) * (n // TILE_N)


def split_parameters(layout: str, splits: int, W: int, tickets: int, tile_m: int = TILE_M,
                     **fields) -> tuple[tuple[int, int, int], bytes]:
    """(grid, parameter block) of one product (the fields of pack_parameters, one batch)
    split `splits` ways, for the kernels of tile height tile_m; the plain launch when splits is 1."""
    m, n, k = fields["M"], fields["N"], fields["K"]
    if fields.get("flags", 0) & FLAG_ADAM_STEP and not VARIANTS[layout].adam_step:
        raise ValueError(f"the Adam step in the epilogue (flag {FLAG_ADAM_STEP}) is served by the weight-gradient "
                         f"layout tn, not {layout}")
    if fields.get("flags", 0) & FLAG_COLUMN_SUMS and not VARIANTS[layout].column_sums:
        raise ValueError(f"column sums of B (flag {FLAG_COLUMN_SUMS}) are served by the layouts whose B is "
                         f"stored K x N (nn, tn), not {layout}")
    if splits == 1:
        return (grid(m, n, fields.get("batches", 1), tile_m),
                pack_parameters(W=W, tickets=tickets, tile_m=tile_m, **fields))
    if fields.get("batches", 1) != 1 or k % (splits * TILE_K):
        raise ValueError(f"K = {k} in {splits} splits: a split product has one batch and K a multiple "
                         f"of {splits * TILE_K}")
    variant = VARIANTS[layout]
    part = k // splits
    split = dict(fields, K=part, sA=part if variant.a_along_k else part * fields["lda"],
                 sB=part if variant.b_along_k else part * fields["ldb"],
                 flags=fields.get("flags", 0) | FLAG_SPLIT, batches=splits, W=W, tickets=tickets)
    return grid(m, n, splits, tile_m), pack_parameters(tile_m=tile_m, **split)


# Registers (fixed, so the listing can be read against this table).
TID, CTA_N, CTA_M, CTA_Z = 0, 1, 2, 3
T0, T1, T2, T3 = 4, 5, 6, 7                   # set-up temporaries
ACC = 8                                       # R8..R39: accumulator (mi, nt) at ACC + 16 mi + 4 nt
FRAG_A = 40                                   # R40..R55: A fragment (kk, mi) at FRAG_A + 8 kk + 4 mi
FRAG_B = 56                                   # R56..R71: B fragments (kk, pair p) at FRAG_B + 8 kk + 4 p
COPY = 72                                     # R72..R79: the four copy sources (A0, A1, B0, B1), 64-bit
STEP_A, STEP_B = 80, 81                       # bytes a copy source advances per slice (along m/n rows)
WRITE_STAGE, READ_STAGE = 82, 83              # byte offset of the stage written / read
COPY_DST_A, COPY_DST_B = 84, 85               # this thread's copy destinations in a stage
FRAG_SRC_A, FRAG_SRC_B = 86, 87               # this lane's fragment addresses in a stage
TO_ISSUE, TO_DO = 88, 89                      # slices left to copy / to multiply
DST_A, DST_B = 90, 91                         # copy destinations of the stage being written
SRC_A, SRC_B = 92, 93                         # fragment addresses of the stage being read
# the epilogue reuses the fragment and copy registers
OUT_D, OUT_R, OUT_H = 40, 42, 44              # 64-bit row pointers
STEP_D, STEP_H = 46, 47                       # bytes per 8 rows of D (and R), of Dh
BIAS = 48                                     # R48..R55: bias of this thread's 8 columns
ADDEND = 56                                   # R56..R63: R of one row group
HALVES = 64                                   # R64..R75: conversions of one row group
BIAS_AT = 64                                  # R64:R65: the bias pointer, before the conversions
# GELU (flag 64) and its derivative (flag 128), one row group (8 values) at a time
GELU_U = 76                                   # R76..R83: U of one row group (flag 128)
GELU_E = 84                                   # R84..R91: x, then e = 2^x, s = e r (then gelu' or gelu)
GELU_R = ADDEND                               # R56..R63: 1 + e, then r = 1 / (1 + e) (R is added by then)
GELU_P = HALVES                               # R64..R71: u^2, then 2K + 6KA u^2 (before the conversions)
GELU_KA2_AT, GELU_6KA_AT = TID, CTA_N         # the two constants FFMA takes from registers (R0, R1)
OUT_U = CTA_M                                 # R2:R3: U's row pointer (D's strides), once blockIdx is used
# column sums of B (flag 32, predicate P1 through the loop): the set-up temporaries are free
# there, and so are blockIdx.y and .z, both 0 under P1 (set back to 0 after the loop)
E_AT, E_COLUMN = T0, T1                       # this slice's address; the thread's column and row group
E_SUM0, E_SUM1 = T2, T3                       # binary32 sums of its row groups g and g + 1
E_HALF0, E_HALF1 = CTA_M, CTA_Z               # two rows' values
E_PARTS = 84                                  # R84..R86: s1, s2, s3 from shared (256 threads; after the loop)


class _Text:
    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, instruction: str, comment: str = "") -> None:
        self.lines.append(f"    {instruction}" + (f"    // {comment}" if comment else ""))

    def note(self, text: str) -> None:
        self.lines.append(f"    // {text}")

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")


def _p(name: str, high: bool = False) -> str:
    return f"c[0x0][param+{OFFSET[name] + (4 if high else 0):#x}]"


def _add64(out: _Text, reg: int, amount: str, predicate: str = "P6") -> None:
    out(f"IADD3 R{reg}, {predicate}, R{reg}, {amount}, RZ")
    out(f"IADD3.X R{reg + 1}, RZ, R{reg + 1}, RZ, {predicate}, !PT")


def _log2(value: int) -> int:
    assert value > 0 and value & (value - 1) == 0, value
    return value.bit_length() - 1


@dataclass(frozen=True)
class _Operand:
    """One operand's slice in a stage and how the block's threads copy it: 16-byte chunks,
    `per_row` to a stored row; thread t copies chunk t % per_row of row t / per_row and of
    the rows `rows_per_pass` further on, `chunks` in all (slice bytes / 16 / threads)."""
    name: str              # "A" or "B"
    along_k: bool          # stored rows run along k (rows are m or n)
    outer: int             # the slice's extent along m (A) or n (B)
    threads: int
    base: int              # the slice's shared offset within a stage
    copy: int              # first of its 64-bit copy-source registers (two a chunk)
    step: int              # register: bytes a copy source advances per slice

    @property
    def per_row(self) -> int:
        return (TILE_K if self.along_k else self.outer) // 8

    @property
    def rows(self) -> int:
        return self.outer if self.along_k else TILE_K

    @property
    def pitch(self) -> int:
        return K_ROWS_PITCH if self.along_k else outer_pitch(self.outer)

    @property
    def rows_per_pass(self) -> int:
        return self.threads // self.per_row

    @property
    def chunks(self) -> int:
        """16-byte copies per thread per slice (the copy registers hold two)."""
        chunks, left = divmod(self.rows, self.rows_per_pass)
        assert left == 0 and chunks in (1, 2), (self, chunks, left)
        return chunks

    @property
    def chunk_offset(self) -> int:
        """Shared bytes between a thread's chunks."""
        return self.rows_per_pass * self.pitch


def _operands(variant: Variant, tiling_: Tiling) -> tuple[_Operand, _Operand]:
    a = _Operand("A", variant.a_along_k, tiling_.tile_m, tiling_.threads, SHARED_BASE, COPY, STEP_A)
    b_base = SHARED_BASE + tile_bytes(a.along_k, a.outer)
    return a, _Operand("B", variant.b_along_k, TILE_N, tiling_.threads, b_base, COPY + 4, STEP_B)


def _copy_sources(out: _Text, op: _Operand, cta: int) -> None:
    """This thread's 64-bit copy sources of `op` (one a chunk) and its per-slice step."""
    ld, stride = ("lda", "sA") if op.name == "A" else ("ldb", "sB")
    per_row, again = op.per_row, op.rows_per_pass
    if op.along_k:
        more = f" (and t/{per_row} + {again})" if op.chunks == 2 else ""
        out.note(f"{op.name}: stored rows along k; thread t copies row t/{per_row}{more}, halves 8(t%{per_row})..")
        out(f"SHF.R.U32.HI R{T0}, RZ, {_log2(per_row):#x}, R{TID}")
        out(f"LEA R{T0}, R{cta}, R{T0}, {_log2(op.outer):#x}", f"row = {op.outer} blockIdx + t/{per_row}")
        out(f"LOP3.LUT R{T1}, R{TID}, {per_row - 1:#x}, RZ, 0xc0, !PT")
        out(f"SHF.L.U32 R{T1}, R{T1}, 0x3, RZ", f"k = 8 (t % {per_row})")
    else:
        more = f" (and t/{per_row} + {again})" if op.chunks == 2 else ""
        out.note(f"{op.name}: stored rows along k's partner; thread t copies k row t/{per_row}{more}, "
                 f"columns 8(t%{per_row})..")
        out(f"SHF.R.U32.HI R{T0}, RZ, {_log2(per_row):#x}, R{TID}", f"k row = t/{per_row}")
        out(f"LOP3.LUT R{T1}, R{TID}, {per_row - 1:#x}, RZ, 0xc0, !PT")
        out(f"SHF.L.U32 R{T1}, R{T1}, 0x3, RZ")
        out(f"LEA R{T1}, R{cta}, R{T1}, {_log2(op.outer):#x}", f"column = {op.outer} blockIdx + 8 (t % {per_row})")
    out(f"IMAD R{T1}, R{CTA_Z}, {_p(stride)}, R{T1}", "+ batch * stride")
    out(f"IMAD R{T0}, R{T0}, {_p(ld)}, R{T1}", "element index")
    out(f"LEA R{op.copy}, P6, R{T0}, {_p(op.name)}, 0x1")
    out(f"LEA.HI.X R{op.copy + 1}, R{T0}, {_p(op.name, high=True)}, RZ, 0x1, P6")
    if op.chunks == 2 or not op.along_k:
        out(f"MOV R{T2}, {_p(ld)}")
    if op.chunks == 2:
        out(f"SHF.L.U32 R{T3}, R{T2}, {1 + _log2(again):#x}, RZ", f"{again} rows, in bytes")
        out(f"IADD3 R{op.copy + 2}, P6, R{op.copy}, R{T3}, RZ", "the second chunk")
        out(f"IADD3.X R{op.copy + 3}, RZ, R{op.copy + 1}, RZ, P6, !PT")
    if op.along_k:
        out(f"MOV R{op.step}, 0x40", "a slice is 32 halves further along k")
    else:
        out(f"SHF.L.U32 R{op.step}, R{T2}, 0x6, RZ", "a slice is 32 rows further along k")


def _copy_destination(out: _Text, op: _Operand, register: int) -> None:
    out(f"SHF.R.U32.HI R{T0}, RZ, {_log2(op.per_row):#x}, R{TID}")
    out(f"LOP3.LUT R{T1}, R{TID}, {op.per_row - 1:#x}, RZ, 0xc0, !PT")
    out(f"SHF.L.U32 R{T1}, R{T1}, 0x4, RZ")
    out(f"IADD3 R{T1}, R{T1}, {op.base:#x}, RZ")
    out(f"IMAD R{register}, R{T0}, {op.pitch:#x}, R{T1}", "row * pitch + 16 bytes a chunk")


def _fragment_source(out: _Text, op: _Operand, register: int, tiling_: Tiling) -> None:
    """This lane's LDSM address in a stage.  Lane l names a row of matrix l/8 of the four:
    q0 = l % 8, q1 = (l / 8) % 2, q2 = l / 16.  A along k (M88): matrices (m0-7,k0-7),
    (m8-15,k0-7), (m0-7,k8-15), (m8-15,k8-15): row q0 + 8 q1, bytes 16 q2.  B along k
    (M88; rows are n): (n0-7,k0-7), (n0-7,k8-15), (n8-15,k0-7), (n8-15,k8-15): row q0 + 8 q2,
    bytes 16 q1.  A along m (MT88; rows are k): row q0 + 8 q2, bytes 16 q1.  B along n
    (MT88): row q0 + 8 q1, bytes 16 q2.  Plus the warp's 32 rows of m (A) or warp_n of n (B),
    as rows or 2-byte halves: warp w is row w / warp_cols (A: (tid / 32 warp_cols) % (tile_m / 32))
    and column w % warp_cols (B) of the warp grid."""
    is_a = op.name == "A"
    row_q, col_q = (3, 4) if op.along_k == is_a else (4, 3)   # shift giving the row's and the column's bit
    out(f"LOP3.LUT R{T0}, R{TID}, 0x7, RZ, 0xc0, !PT", "q0")
    out(f"SHF.R.U32.HI R{T1}, RZ, {row_q:#x}, R{TID}")
    out(f"LOP3.LUT R{T1}, R{T1}, 0x1, RZ, 0xc0, !PT")
    out(f"LEA R{T0}, R{T1}, R{T0}, 0x3", "row within the 16")
    out(f"SHF.R.U32.HI R{T1}, RZ, {col_q:#x}, R{TID}")
    out(f"LOP3.LUT R{T1}, R{T1}, 0x1, RZ, 0xc0, !PT")
    out(f"SHF.L.U32 R{T1}, R{T1}, 0x4, RZ", "16 bytes for the second column of matrices")
    # tid / (32 warp_cols) = warp row, (tid / 32) % warp_cols = warp column
    warp_shift = 5 + _log2(tiling_.warp_cols) if is_a else 5
    mask = tiling_.warp_rows - 1 if is_a else tiling_.warp_cols - 1
    extent = 32 if is_a else tiling_.warp_n                   # the warp's rows of m or columns of n
    out(f"SHF.R.U32.HI R{T2}, RZ, {warp_shift:#x}, R{TID}")
    out(f"LOP3.LUT R{T2}, R{T2}, {mask:#x}, RZ, 0xc0, !PT",
        f"the warp's row (A) or column (B) of the {tiling_.warp_rows} x {tiling_.warp_cols}")
    if op.along_k:
        out(f"LEA R{T0}, R{T2}, R{T0}, {_log2(extent):#x}", f"+ {extent} rows of m or n")
    else:
        out(f"LEA R{T1}, R{T2}, R{T1}, {_log2(2 * extent):#x}", f"+ {extent} halves of m or n")
    out(f"IADD3 R{T1}, R{T1}, {op.base:#x}, RZ")
    out(f"IMAD R{register}, R{T0}, {op.pitch:#x}, R{T1}")


def _copies(out: _Text, ops: tuple[_Operand, _Operand]) -> None:
    """The slice's asynchronous copies into the stage being written (under P0: a slice is left)."""
    for op, dst in zip(ops, (DST_A, DST_B)):
        for i in range(op.chunks):
            at = f"R{dst}+{i * op.chunk_offset:#x}" if i else f"R{dst}"
            out(f"@P0 LDGSTS.E.BYPASS.128 [{at}], [R{op.copy + 2 * i}.64]")


def _issue(out: _Text, ops: tuple[_Operand, _Operand], stage: int) -> None:
    out.note("copy the next slice (if one is left) into the stage being written")
    out(f"ISETP.GE.AND P0, PT, R{TO_ISSUE}, 0x1, PT")
    out(f"IADD3 R{DST_A}, R{WRITE_STAGE}, R{COPY_DST_A}, RZ")
    out(f"IADD3 R{DST_B}, R{WRITE_STAGE}, R{COPY_DST_B}, RZ")
    _copies(out, ops)
    out("LDGDEPBAR", "one group per slice, empty past the last")
    out(f"IADD3 R{TO_ISSUE}, R{TO_ISSUE}, -0x1, RZ")
    for op in ops:
        for i in range(op.chunks):
            _add64(out, op.copy + 2 * i, f"R{op.step}")
    out(f"IADD3 R{WRITE_STAGE}, R{WRITE_STAGE}, {stage:#x}, RZ")
    out(f"ISETP.GE.AND P6, PT, R{WRITE_STAGE}, {STAGES * stage:#x}, PT")
    out(f"SEL R{WRITE_STAGE}, RZ, R{WRITE_STAGE}, P6", "around the ring")


def _fragments(out: _Text, variant: Variant, ops: tuple[_Operand, _Operand], tiling_: Tiling, kk: int) -> None:
    """The fragments of k16 step kk of the slice SRC_A / SRC_B name: the A fragment of each
    16-row half of the warp's rows and the B fragments of each 16-column pair."""
    a_load = "LDSM.16.M88.4" if variant.a_along_k else "LDSM.16.MT88.4"
    b_load = "LDSM.16.M88.4" if variant.b_along_k else "LDSM.16.MT88.4"
    op_a, op_b = ops
    for mi in range(2):
        offset = (mi * 16 * op_a.pitch + kk * 32) if op_a.along_k else (kk * 16 * op_a.pitch + mi * 32)
        out(f"{a_load} R{FRAG_A + 8 * kk + 4 * mi}, [R{SRC_A}+{offset:#x}]", f"A rows {16 * mi}.., k {16 * kk}..")
    for p in range(tiling_.n_tiles // 2):
        offset = (p * 16 * op_b.pitch + kk * 32) if op_b.along_k else (kk * 16 * op_b.pitch + p * 32)
        out(f"{b_load} R{FRAG_B + 8 * kk + 4 * p}, [R{SRC_B}+{offset:#x}]", f"B columns {16 * p}.., k {16 * kk}..")


def _products(out: _Text, tiling_: Tiling, kk: int, bookkeeping: list[tuple[str, str]]) -> None:
    """The HMMAs of k16 step kk (each accumulator once), with `bookkeeping` spread over them
    in order, as evenly as it goes: the integer work issues while the tensor cores are busy."""
    hmmas = 2 * tiling_.n_tiles
    each = -(-len(bookkeeping) // hmmas)
    work = list(bookkeeping)
    for mi in range(2):
        for nt in range(tiling_.n_tiles):
            acc = tiling_.acc(mi, nt)
            b = FRAG_B + 8 * kk + 4 * (nt // 2) + 2 * (nt % 2)
            out(f"HMMA.16816.F32 R{acc}, R{FRAG_A + 8 * kk + 4 * mi}, R{b}, R{acc}")
            for _ in range(min(each, len(work))):
                out(*work.pop(0))
    for line in work:
        out(*line)


def _trip(out: _Text, variant: Variant, stage: int, ops: tuple[_Operand, _Operand], tiling_: Tiling,
          sums: bool) -> None:
    """One trip of the main loop, slice i, software-pipelined ("Loop order" in the docstring):
    its first k16 step's fragments are in registers when it starts (loaded by the trip before,
    or by the prologue), and it loads the next slice's while its second step's HMMAs run."""
    ring = STAGES * stage
    out.note("copy slice i + STAGES - 1 (if one is left) into the stage slice i - 1 used (free: every")
    out.note("thread finished reading it before the last BAR.SYNC)")
    _copies(out, ops)
    out("LDGDEPBAR", "one group per slice, empty past the last")
    out.note("slice i's second k16 step's fragments, in flight beside the first step's products")
    _fragments(out, variant, ops, tiling_, kk=1)
    if sums:
        out(f"IADD3 R{E_AT}, R{SRC_B}, R{E_COLUMN}, RZ", "this slice's B rows (before SRC_B moves on)")
    # what the next slice's fragment loads need (SRC, after this trip's loads have read it:
    # last), and the trip counter the back edge tests
    to_next_slice = [
        (f"IADD3 R{TO_DO}, R{TO_DO}, -0x1, RZ", ""),
        (f"ISETP.GE.AND P5, PT, R{TO_DO}, 0x1, PT", "another slice?"),
        (f"IADD3 R{READ_STAGE}, R{READ_STAGE}, {stage:#x}, RZ", "the next slice's stage"),
        (f"ISETP.GE.AND P2, PT, R{READ_STAGE}, {ring:#x}, PT", ""),
        (f"SEL R{READ_STAGE}, RZ, R{READ_STAGE}, P2", "around the ring"),
        (f"IADD3 R{SRC_A}, R{READ_STAGE}, R{FRAG_SRC_A}, RZ", "the next slice's fragment sources"),
        (f"IADD3 R{SRC_B}, R{READ_STAGE}, R{FRAG_SRC_B}, RZ", ""),
    ]
    _products(out, tiling_, 0, to_next_slice)
    if sums:
        _column_sums_slice(out, tiling_)
    out(f"DEPBAR.LE SB0, {STAGES - 2:#x}", f"slice i + 1's group has landed ({STAGES - 2} younger may fly)")
    out("BAR.SYNC.DEFER_BLOCKING 0x0", "every thread's copies of slice i + 1 visible; every read of slice i done")
    out.note("slice i + 1's first k16 step's fragments, in flight beside slice i's second step's products")
    _fragments(out, variant, ops, tiling_, kk=0)
    moves = [(f"IMAD.WIDE.U32 R{op.copy + 2 * i}, R{op.step}, 0x1, R{op.copy + 2 * i}", "")
             for op in ops for i in range(op.chunks)]
    moves[0] = (moves[0][0], "the copy sources: one slice on")
    to_next_copy = moves + [
        (f"IADD3 R{TO_ISSUE}, R{TO_ISSUE}, -0x1, RZ", ""),
        (f"ISETP.GE.AND P0, PT, R{TO_ISSUE}, 0x1, PT", "another slice to copy?"),
        (f"IADD3 R{WRITE_STAGE}, R{WRITE_STAGE}, {stage:#x}, RZ", ""),
        (f"ISETP.GE.AND P6, PT, R{WRITE_STAGE}, {ring:#x}, PT", ""),
        (f"SEL R{WRITE_STAGE}, RZ, R{WRITE_STAGE}, P6", "around the ring"),
        (f"IADD3 R{DST_A}, R{WRITE_STAGE}, R{COPY_DST_A}, RZ", "the next trip's copy destinations"),
        (f"IADD3 R{DST_B}, R{WRITE_STAGE}, R{COPY_DST_B}, RZ", ""),
    ]
    _products(out, tiling_, 1, to_next_copy)


def _loop_entry(out: _Text, variant: Variant, ops: tuple[_Operand, _Operand], tiling_: Tiling) -> None:
    """What the first trip needs that later trips compute for the next: the copy destinations
    of slice STAGES - 1, the copy guard, and slice 0's first k16 step's fragments."""
    out(f"IADD3 R{DST_A}, R{WRITE_STAGE}, R{COPY_DST_A}, RZ")
    out(f"IADD3 R{DST_B}, R{WRITE_STAGE}, R{COPY_DST_B}, RZ")
    out(f"IADD3 R{SRC_A}, R{READ_STAGE}, R{FRAG_SRC_A}, RZ")
    out(f"IADD3 R{SRC_B}, R{READ_STAGE}, R{FRAG_SRC_B}, RZ")
    out(f"ISETP.GE.AND P0, PT, R{TO_ISSUE}, 0x1, PT")
    out(f"DEPBAR.LE SB0, {STAGES - 2:#x}", f"slice 0's group has landed ({STAGES - 2} younger may fly)")
    out("BAR.SYNC.DEFER_BLOCKING 0x0", "every thread's copies of slice 0 visible")
    _fragments(out, variant, ops, tiling_, kk=0)


def _column_sums_groups(tiling_: Tiling) -> int:
    """Row groups (k mod 4) a thread sums: the block's threads cover TILE_N columns x 4 groups."""
    return 4 * TILE_N // tiling_.threads


def _column_sums_setup(out: _Text, b: _Operand, tiling_: Tiling) -> None:
    """P1 = flag 32 without flag 16, in the first row tile of batch 0; thread t's column
    t % 64 and first row group g = groups (t / 64) within a stage's B slice; the sums +0."""
    groups = _column_sums_groups(tiling_)
    if groups == 2:
        out.note(f"column sums of B (flag {FLAG_COLUMN_SUMS}): thread t adds column t%64, row groups 2(t/64), +1")
    else:
        out.note(f"column sums of B (flag {FLAG_COLUMN_SUMS}): thread t adds column t%64, row group t/64")
    out(f"MOV R{T0}, {_p('flags')}")
    out(f"LOP3.LUT R{T0}, R{T0}, {FLAG_SPLIT | FLAG_COLUMN_SUMS:#x}, RZ, 0xc0, !PT")
    out(f"ISETP.EQ.U32.AND P1, PT, R{T0}, {FLAG_COLUMN_SUMS:#x}, PT", f"flag {FLAG_COLUMN_SUMS}, not split")
    out(f"ISETP.EQ.U32.AND P1, PT, R{CTA_M}, RZ, P1", "the first row tile")
    out(f"ISETP.EQ.U32.AND P1, PT, R{CTA_Z}, RZ, P1", "batch 0")
    out(f"LOP3.LUT R{E_COLUMN}, R{TID}, 0x3f, RZ, 0xc0, !PT", "column t % 64")
    out(f"SHF.L.U32 R{E_COLUMN}, R{E_COLUMN}, 0x1, RZ")
    out(f"SHF.R.U32.HI R{E_SUM0}, RZ, 0x6, R{TID}")
    out(f"IMAD R{E_COLUMN}, R{E_SUM0}, {groups * b.pitch:#x}, R{E_COLUMN}",
        "row 2 (t / 64)" if groups == 2 else "row t / 64")
    out(f"IADD3 R{E_COLUMN}, R{E_COLUMN}, {b.base:#x}, RZ")
    out(f"IADD3 R{E_COLUMN}, R{E_COLUMN}, -R{FRAG_SRC_B}, RZ", "less this lane's fragment address: from SRC_B")
    out(f"MOV R{E_SUM0}, RZ")
    if groups == 2:
        out(f"MOV R{E_SUM1}, RZ")


def _column_sums_slice(out: _Text, tiling_: Tiling) -> None:
    """Flag 32 (the loop's column-sums version): add this slice's rows g, g + 4, .. (and, two
    groups a thread, g + 1, g + 5, ..) of the thread's column, in increasing order, from the
    stage E_AT names (slice i's, set before SRC_B moved on; rewritten only after the next
    trip's start, past this trip's BAR.SYNC)."""
    pitch = outer_pitch(TILE_N)
    # two row groups a thread: rows g, g + 4, .. into E_SUM0 and g + 1, g + 5, .. into E_SUM1;
    # one: rows g, g + 4, g + 8, .. all into E_SUM0, two a step
    two = _column_sums_groups(tiling_) == 2
    step, second, into = (4, 1, E_SUM1) if two else (8, 4, E_SUM0)
    for row in range(0, TILE_K, step):
        out(f"LDS.U16 R{E_HALF0}, [R{E_AT}+{row * pitch:#x}]", f"k rows +{row}, +{row + second}")
        out(f"LDS.U16 R{E_HALF1}, [R{E_AT}+{(row + second) * pitch:#x}]")
        out(f"HADD2.F32 R{E_HALF0}, -RZ, R{E_HALF0}.H0_H0", "binary16 -> binary32, exact")
        out(f"HADD2.F32 R{E_HALF1}, -RZ, R{E_HALF1}.H0_H0")
        out(f"FADD R{E_SUM0}, R{E_SUM0}, R{E_HALF0}")
        out(f"FADD R{into}, R{into}, R{E_HALF1}", "" if two else "in increasing k")


def _column_sums_store(out: _Text, tiling_: Tiling) -> None:
    """Flag 32, after the last slice: E[64 blockIdx.x + t] = (s0 + s1) + (s2 + s3).  With two
    groups a thread, thread t < 64 holds s0 + s1 of its column and thread t + 64 s2 + s3; with
    one, thread t + 64 g holds s_g and thread t adds the others from shared memory."""
    groups = _column_sums_groups(tiling_)
    out("@!P1 BRA column_sums_stored")
    if groups == 2:
        out(f"FADD R{E_SUM0}, R{E_SUM0}, R{E_SUM1}", "s0 + s1 (t < 64), s2 + s3 (t >= 64)")
    out(f"MOV R{CTA_M}, RZ", "blockIdx.y and .z are 0 here (P1): back from holding halves")
    out(f"MOV R{CTA_Z}, RZ")
    out("BAR.SYNC.DEFER_BLOCKING 0x0", "every thread is done with the ring")
    out(f"ISETP.GE.U32.AND P0, PT, R{TID}, 0x40, PT")
    out(f"LOP3.LUT R{E_SUM1}, R{TID}, 0x3f, RZ, 0xc0, !PT", "column t % 64")
    if groups == 2:
        out(f"SHF.L.U32 R{T0}, R{E_SUM1}, 0x2, RZ")
        out(f"IADD3 R{T0}, R{T0}, {SHARED_BASE:#x}, RZ")
        out(f"@P0 STS [R{T0}], R{E_SUM0}", "s2 + s3, for thread t - 64")
        out("BAR.SYNC.DEFER_BLOCKING 0x0")
        out(f"@!P0 LDS R{T1}, [R{T0}]")
        out(f"@!P0 FADD R{E_SUM0}, R{E_SUM0}, R{T1}", "(s0 + s1) + (s2 + s3)")
    else:
        s1, s2, s3 = E_PARTS, E_PARTS + 1, E_PARTS + 2
        out(f"SHF.L.U32 R{T0}, R{TID}, 0x2, RZ")
        out(f"IADD3 R{T0}, R{T0}, {SHARED_BASE:#x}, RZ", "a word per thread")
        out(f"@P0 STS [R{T0}], R{E_SUM0}", "s_g (g = t / 64 >= 1), for thread t % 64")
        out("BAR.SYNC.DEFER_BLOCKING 0x0")
        out(f"@!P0 LDS R{s1}, [R{T0}+{4 * TILE_N:#x}]", "s1")
        out(f"@!P0 LDS R{s2}, [R{T0}+{8 * TILE_N:#x}]", "s2")
        out(f"@!P0 LDS R{s3}, [R{T0}+{12 * TILE_N:#x}]", "s3")
        out(f"@!P0 FADD R{E_SUM0}, R{E_SUM0}, R{s1}", "s0 + s1")
        out(f"@!P0 FADD R{s2}, R{s2}, R{s3}", "s2 + s3")
        out(f"@!P0 FADD R{E_SUM0}, R{E_SUM0}, R{s2}", "(s0 + s1) + (s2 + s3)")
    out(f"LEA R{E_SUM1}, R{CTA_N}, R{E_SUM1}, 0x6", "column 64 blockIdx.x + t % 64")
    out(f"LEA R{T0}, P6, R{E_SUM1}, {_p('E')}, 0x2")
    out(f"LEA.HI.X R{T1}, R{E_SUM1}, {_p('E', high=True)}, RZ, 0x2, P6")
    out(f"@!P0 STG.E [R{T0}.64], R{E_SUM0}")
    out.label("column_sums_stored")


def _position(out: _Text, tiling_: Tiling) -> None:
    """R{T0} = this lane's first row of D, R{T1} its first column (both whole-matrix)."""
    out(f"SHF.R.U32.HI R{T0}, RZ, 0x2, R{TID}")
    out(f"LOP3.LUT R{T0}, R{T0}, 0x7, RZ, 0xc0, !PT", "l / 4")
    out(f"SHF.R.U32.HI R{T1}, RZ, {5 + _log2(tiling_.warp_cols):#x}, R{TID}", "warp row")
    out(f"LEA R{T0}, R{T1}, R{T0}, {_log2(tiling_.warp_height):#x}")
    out(f"LEA R{T0}, R{CTA_M}, R{T0}, {_log2(tiling_.tile_m):#x}",
        f"row = {tiling_.tile_m} blockIdx.y + {tiling_.warp_height} warp row + l/4")
    out(f"LOP3.LUT R{T1}, R{TID}, 0x3, RZ, 0xc0, !PT")
    out(f"SHF.L.U32 R{T1}, R{T1}, 0x1, RZ", "2 (l % 4)")
    out(f"SHF.R.U32.HI R{T2}, RZ, 0x5, R{TID}")
    out(f"LOP3.LUT R{T2}, R{T2}, {tiling_.warp_cols - 1:#x}, RZ, 0xc0, !PT", "warp column")
    out(f"LEA R{T1}, R{T2}, R{T1}, {_log2(tiling_.warp_n):#x}")
    out(f"LEA R{T1}, R{CTA_N}, R{T1}, 0x6",
        f"column = 64 blockIdx.x + {tiling_.warp_n} warp column + 2 (l % 4)")


def _epilogue(out: _Text, tiling_: Tiling, bias_at: int = BIAS_AT, adam_step: bool = False) -> None:
    """alpha, bias, R, gelu', D, Dh / gelu over the tiling's row groups (Tiling.row_groups).  A
    tiling whose groups start at different columns (bias_at other than BIAS_AT, where the
    conversions write) loads each group's bias at its start; otherwise the lane's bias is loaded
    once."""
    per_group_bias = bias_at != BIAS_AT
    out.label("epilogue")
    out.note("epilogue: lane l holds rows l/4 (+8) and columns 2(l%4), +1 of each 16 x 8 tile")
    _position(out, tiling_)
    out(f"LEA R{bias_at}, P6, R{T1}, {_p('bias')}, 0x2")
    out(f"LEA.HI.X R{bias_at + 1}, R{T1}, {_p('bias', high=True)}, RZ, 0x2, P6")
    out(f"IMAD R{T2}, R{CTA_Z}, {_p('sD')}, R{T1}")
    out(f"IMAD R{T2}, R{T0}, {_p('ldd')}, R{T2}", "D's element index")
    out(f"LEA R{OUT_D}, P6, R{T2}, {_p('D')}, 0x2")
    out(f"LEA.HI.X R{OUT_D + 1}, R{T2}, {_p('D', high=True)}, RZ, 0x2, P6")
    out(f"LEA R{OUT_R}, P6, R{T2}, {_p('R')}, 0x2")
    out(f"LEA.HI.X R{OUT_R + 1}, R{T2}, {_p('R', high=True)}, RZ, 0x2, P6")
    out(f"IMAD R{T3}, R{CTA_Z}, {_p('sH')}, R{T1}")
    out(f"IMAD R{T3}, R{T0}, {_p('ldh')}, R{T3}", "Dh's element index")
    out(f"LEA R{OUT_H}, P6, R{T3}, {_p('Dh')}, 0x1")
    out(f"LEA.HI.X R{OUT_H + 1}, R{T3}, {_p('Dh', high=True)}, RZ, 0x1, P6")
    out(f"LEA R{OUT_U}, P6, R{T2}, {_p('U')}, 0x2", "U has D's strides (blockIdx.y, .z used: R2, R3 free)")
    out(f"LEA.HI.X R{OUT_U + 1}, R{T2}, {_p('U', high=True)}, RZ, 0x2, P6")
    out(f"MOV R{T2}, {_p('ldd')}")
    out(f"SHF.L.U32 R{STEP_D}, R{T2}, 0x5, RZ", "8 rows of D, in bytes")
    out(f"MOV R{T3}, {_p('ldh')}")
    out(f"SHF.L.U32 R{STEP_H}, R{T3}, 0x4, RZ", "8 rows of Dh, in bytes")
    if adam_step:
        _flag_test(out, T2, "P6", FLAG_ADAM_STEP, "the Adam step instead of D")
        out("@P6 BRA adam_step")
    out(f"MOV R{T0}, {_p('flags')}")
    for predicate, flag in (("P1", FLAG_ADD_R), ("P2", FLAG_BIAS), ("P3", FLAG_HALF), ("P4", FLAG_NO_D),
                            ("P0", FLAG_GELU), ("P5", FLAG_GELU_GRAD)):
        out(f"LOP3.LUT R{T1}, R{T0}, {flag:#x}, RZ, 0xc0, !PT")
        out(f"ISETP.NE.U32.AND {predicate}, PT, R{T1}, RZ, PT", f"flag {flag}")
    out(f"MOV R{GELU_KA2_AT}, {GELU_KA2:#x}", "KA2 (binary32)")
    out(f"MOV R{GELU_6KA_AT}, {GELU_6KA:#x}", "6KA (binary32)")
    groups = tiling_.row_groups()
    n_tiles = len(groups[0][0]) // 2
    if not per_group_bias:
        for nt in range(n_tiles):
            out(f"@P2 LDG.E.64 R{BIAS + 2 * nt}, [R{bias_at}.64+{32 * nt:#x}]", f"bias, columns +{8 * nt}")
    rows = 0
    for group, (values, column, _) in enumerate(groups):
        out.note(f"rows +{rows}" + (f", columns +{column}" if per_group_bias else ""))
        if per_group_bias:
            for nt in range(n_tiles):
                out(f"@P2 LDG.E.64 R{BIAS + 2 * nt}, [R{bias_at}.64+{32 * nt + 4 * column:#x}]",
                    f"bias, columns +{8 * nt + column}")
        for nt in range(n_tiles):
            out(f"@P1 LDG.E.64 R{ADDEND + 2 * nt}, [R{OUT_R}.64+{32 * nt + 4 * column:#x}]")
        for nt in range(n_tiles):
            out(f"@P5 LDG.E.64 R{GELU_U + 2 * nt}, [R{OUT_U}.64+{32 * nt + 4 * column:#x}]",
                f"U (flag {FLAG_GELU_GRAD})")
        for nt in range(n_tiles):
            v = values[2 * nt]
            out(f"FMUL R{v}, R{v}, {_p('alpha')}")
            out(f"FMUL R{v + 1}, R{v + 1}, {_p('alpha')}")
            out(f"@P2 FADD R{v}, R{v}, R{BIAS + 2 * nt}")
            out(f"@P2 FADD R{v + 1}, R{v + 1}, R{BIAS + 2 * nt + 1}")
            out(f"@P1 FADD R{v}, R{v}, R{ADDEND + 2 * nt}")
            out(f"@P1 FADD R{v + 1}, R{v + 1}, R{ADDEND + 2 * nt + 1}")
        out(f"@!P5 BRA gelu_grad_done_{group}")
        _gelu_grad(out, values)
        _store_d(out, values, column)
        _halves(out, values, pack=True, column=column)
        out(f"BRA halves_done_{group}")
        out.label(f"gelu_grad_done_{group}")
        _store_d(out, values, column)
        out(f"@P0 BRA gelu_{group}")
        _halves(out, values, pack=False, column=column)
        out(f"BRA halves_done_{group}")
        out.label(f"gelu_{group}")
        _gelu(out, values)
        _halves(out, [GELU_E + i for i in range(len(values))], pack=True, column=column)
        out.label(f"halves_done_{group}")
        if group + 1 < len(groups) and groups[group + 1][2]:
            assert groups[group + 1][2] == 8, "the epilogue steps 8 rows at a time"
            rows += 8
            _next_rows(out)
    out("EXIT")
    if adam_step:
        _adam_step_epilogue(out, tiling_)


# The Adam epilogue's registers (flag 256; R, bias and GELU are refused with it, so their
# registers are free): P (at D), M1 (at R), M2 (at U) of one row group, the step's temporaries,
# the packed halves, and the step record: alpha_t, epsilon_t, decay, beta1 in the set-up
# temporaries, 1 - beta1, beta2, 1 - beta2 and the overflow flag beside the halves.  The rows'
# pointers are the main epilogue's OUT_D, OUT_R, OUT_U, OUT_H; the record's address R92:R93 (the
# bias pointer's on sm_90, unused here).
ADAM_STEP_P, ADAM_STEP_M1, ADAM_STEP_M2, ADAM_STEP_T = BIAS, ADDEND, GELU_U, GELU_E
ADAM_STEP_HALVES = HALVES
ADAM_STEP_SCALARS = dict(zip(ADAM_STEP_RECORD, (T0, T1, T2, T3) + tuple(range(HALVES + 4, HALVES + 8))))
ADAM_STEP_RECORD_AT = 92

# One element's Adam step, instruction for instruction (operands and association) the separate
# optimizer kernel a model pairs with these products with its gradient multiplier 1 (an exact FMUL,
# left out here: the product's alpha is the multiplier), so that P, M1, M2 and the half copy are bit
# for bit what that kernel writes from the D this kernel would store: p = p decay; m = m beta1;
# m = g (1 - beta1) + m; s = s beta2; t = g g; s = t (1 - beta2) + s; t = sqrt(s); t = t + epsilon_t;
# t = 1 / t; t = m t; p = t (-alpha_t) + p.
ADAM_STEP_INSTRUCTIONS = (
    ("FMUL R{p}, R{p}, R{decay}", "p decay"),
    ("FMUL R{m}, R{m}, R{beta1}", ""),
    ("FFMA R{m}, R{v}, R{one_minus_beta1}, R{m}", "m = beta1 m + (1 - beta1) g"),
    ("FMUL R{s}, R{s}, R{beta2}", ""),
    ("FMUL R{t}, R{v}, R{v}", "g^2"),
    ("FFMA R{s}, R{t}, R{one_minus_beta2}, R{s}", "s = beta2 s + (1 - beta2) g^2"),
    ("MUFU.SQRT R{t}, R{s}", ""),
    ("FADD R{t}, R{t}, R{epsilon_t}", "sqrt(s) + epsilon_t"),
    ("MUFU.RCP R{t}, R{t}", ""),
    ("FMUL R{t}, R{m}, R{t}", "m / (sqrt(s) + epsilon_t)"),
    ("FFMA R{p}, R{t}, -R{alpha_t}, R{p}", "p - alpha_t m / (sqrt(s) + epsilon_t)"),
)


def _adam_step_epilogue(out: _Text, tiling_) -> None:
    """Flag 256: v = alpha P is the gradient of the master weights at D; one Adam step over them
    and their moments at R and U (D's strides) writes all three back, and with flag 4 Dh =
    half(P).  The step's scalars and the overflow flag come from the step record (word 19); when
    the flag is not 0 every thread exits before its first store, so a skipped update leaves the
    weights, the moments and Dh as they were."""
    out.label("adam_step")
    out.note(f"flag {FLAG_ADAM_STEP}: the Adam step over D (the weights), R and U (their moments), "
             "the product the gradient")
    out(f"MOV R{ADAM_STEP_RECORD_AT}, {_p('step')}")
    out(f"MOV R{ADAM_STEP_RECORD_AT + 1}, {_p('step', high=True)}")
    scalars = ADAM_STEP_SCALARS
    out(f"LDG.E.128 R{scalars['alpha_t']}, [R{ADAM_STEP_RECORD_AT}.64]", "alpha_t, epsilon_t, decay, beta1")
    out(f"LDG.E.128 R{scalars['one_minus_beta1']}, [R{ADAM_STEP_RECORD_AT}.64+0x10]",
        "1 - beta1, beta2, 1 - beta2, the overflow flag")
    _flag_test(out, ADAM_STEP_RECORD_AT, "P3", FLAG_HALF, "the half copy")
    groups = tiling_.row_groups()
    for group, (values, column, _) in enumerate(groups):
        n = len(values)
        p, m, s, t = ([base + i for i in range(n)] for base in (ADAM_STEP_P, ADAM_STEP_M1, ADAM_STEP_M2, ADAM_STEP_T))
        out.note(f"row group {group}" + (f", columns +{column}" if column else ""))
        for nt in range(n // 2):
            at = f"{32 * nt + 4 * column:#x}"
            out(f"LDG.E.64 R{p[2 * nt]}, [R{OUT_D}.64+{at}]")
            out(f"LDG.E.64 R{m[2 * nt]}, [R{OUT_R}.64+{at}]")
            out(f"LDG.E.64 R{s[2 * nt]}, [R{OUT_U}.64+{at}]")
        for v in values:
            out(f"FMUL R{v}, R{v}, {_p('alpha')}")
        _each_value(out, list(ADAM_STEP_INSTRUCTIONS), v=values, p=p, m=m, s=s, t=t,
                    **{name: [register] * n for name, register in scalars.items() if name != "overflow"})
        for nt in range(n // 2):
            out(f"@P3 F2FP.PACK_AB R{ADAM_STEP_HALVES + nt}, R{p[2 * nt + 1]}, R{p[2 * nt]}", "the lower column first")
        if group == 0:
            out(f"ISETP.NE.U32.AND P0, PT, R{scalars['overflow']}, RZ, PT")
            out("@P0 EXIT", "a skipped step stores nothing")
        for nt in range(n // 2):
            at = f"{32 * nt + 4 * column:#x}"
            out(f"STG.E.64 [R{OUT_D}.64+{at}], R{p[2 * nt]}")
            out(f"STG.E.64 [R{OUT_R}.64+{at}], R{m[2 * nt]}")
            out(f"STG.E.64 [R{OUT_U}.64+{at}], R{s[2 * nt]}")
            out(f"@P3 STG.E [R{OUT_H}.64+{16 * nt + 2 * column:#x}], R{ADAM_STEP_HALVES + nt}")
        if group + 1 < len(groups) and groups[group + 1][2]:
            _next_rows(out)
    out("EXIT")


def _flag_test(out: _Text, register: int, predicate: str, flag: int, why: str, before: str = "") -> None:
    """predicate = (flags & flag) != 0, through R{register}."""
    out(f"MOV R{register}, {_p('flags')}", before)
    out(f"LOP3.LUT R{register}, R{register}, {flag:#x}, RZ, 0xc0, !PT")
    out(f"ISETP.NE.U32.AND {predicate}, PT, R{register}, RZ, PT", f"flag {flag}: {why}")


def _next_rows(out: _Text) -> None:
    """The epilogue's row pointers 8 rows on: D's, R's and U's (D's strides) and Dh's."""
    for register in (OUT_D, OUT_R, OUT_U):
        _add64(out, register, f"R{STEP_D}")
    _add64(out, OUT_H, f"R{STEP_H}")


def _store_d(out: _Text, values: list[int], column: int = 0) -> None:
    """Unless flag 8: D = values of one row group (a pair of columns a store)."""
    for nt in range(len(values) // 2):
        out(f"@!P4 STG.E.64 [R{OUT_D}.64+{32 * nt + 4 * column:#x}], R{values[2 * nt]}")


def _halves(out: _Text, values: list[int], pack: bool = False, column: int = 0) -> None:
    """Flag 4: Dh = half(values) of one row group (columns in pairs, the lower first), by
    F2F and PRMT, or (pack: the GELU paths) by F2FP.PACK_AB as the separate elementwise
    kernels convert (both round to nearest even)."""
    for nt in range(len(values) // 2):
        t = HALVES + 3 * nt
        if pack:
            out(f"@P3 F2FP.PACK_AB R{t + 2}, R{values[2 * nt + 1]}, R{values[2 * nt]}",
                "two halves, the lower column first")
        else:
            out(f"@P3 F2F.F16.F32 R{t}, R{values[2 * nt]}")
            out(f"@P3 F2F.F16.F32 R{t + 1}, R{values[2 * nt + 1]}")
            out(f"@P3 PRMT R{t + 2}, R{t}, 0x5410, R{t + 1}", "two halves, the lower column first")
        out(f"@P3 STG.E [R{OUT_H}.64+{16 * nt + 2 * column:#x}], R{t + 2}")


def _each_value(out: _Text, steps: list[tuple[str, str]], **registers: list[int]) -> None:
    """Emit each step for the row group's values (8, or 4 for warps of 32 x 16) in turn
    (step-major, so that the independent chains interleave), its register fields filled from
    `registers`' i-th entries."""
    count = len(registers["v"])
    for step, comment in steps:
        for i in range(count):
            out(step.format(**{name: numbers[i] for name, numbers in registers.items()}), comment if i == 0 else "")


def _gelu(out: _Text, values: list[int]) -> None:
    """Flag 64: R{GELU_E}.. = gelu(v) of one row group, instruction for instruction
    the separate elementwise forward kernel's: t = v v; t = t KA2 + K2; x = v t; x = min(x, 64); e = 2^x;
    r = 1 / (e + 1); s = e r; gelu = v s."""
    e, r = [GELU_E + i for i in range(8)], [GELU_R + i for i in range(8)]
    steps = [
        ("FMUL R{e}, R{v}, R{v}", "v^2"),
        ("FFMA R{e}, R{e}, R{ka2}, " + GELU_K2, "K2 + KA2 v^2"),
        ("FMUL R{e}, R{v}, R{e}", "x"),
        ("FMNMX R{e}, R{e}, " + GELU_CLAMP + ", PT", "x <= 64"),
        ("MUFU.EX2 R{e}, R{e}", "e = 2^x"),
        ("FADD R{r}, R{e}, 1", ""),
        ("MUFU.RCP R{r}, R{r}", "r = 1 / (1 + e)"),
        ("FMUL R{e}, R{e}, R{r}", "s = e r"),
        ("FMUL R{e}, R{v}, R{e}", "gelu(v) = v s"),
    ]
    out.note(f"flag {FLAG_GELU}: gelu(v), as the separate elementwise kernel computes it")
    _each_value(out, steps, e=e[:len(values)], v=values, r=r[:len(values)], ka2=[GELU_KA2_AT] * len(values))


def _gelu_grad(out: _Text, values: list[int]) -> None:
    """Flag 128: v *= gelu'(U) of one row group, instruction for instruction
    the separate elementwise backward kernel's with dy = v: u2 = u u; t = u2 KA2 + K2; p = u2 6KA + 2K;
    x = u t; x = min(x, 64); e = 2^x; r = 1 / (e + 1); s = e r; w = u r; w = w s;
    gelu' = w p + s; du = gelu' dy."""
    u, e, r, p = ([base + i for i in range(8)] for base in (GELU_U, GELU_E, GELU_R, GELU_P))
    steps = [
        ("FMUL R{p}, R{u}, R{u}", "u^2"),
        ("FFMA R{e}, R{p}, R{ka2}, " + GELU_K2, "K2 + KA2 u^2"),
        ("FFMA R{p}, R{p}, R{ka6}, " + GELU_2K, "2K + 6KA u^2"),
        ("FMUL R{e}, R{u}, R{e}", "x"),
        ("FMNMX R{e}, R{e}, " + GELU_CLAMP + ", PT", "x <= 64"),
        ("MUFU.EX2 R{e}, R{e}", "e = 2^x"),
        ("FADD R{r}, R{e}, 1", ""),
        ("MUFU.RCP R{r}, R{r}", "r = 1 / (1 + e)"),
        ("FMUL R{e}, R{e}, R{r}", "s = e r"),
        ("FMUL R{u}, R{u}, R{r}", "u r"),
        ("FMUL R{u}, R{u}, R{e}", "w = u r s"),
        ("FFMA R{e}, R{u}, R{p}, R{e}", "gelu'(u) = w (2K + 6KA u^2) + s"),
        ("FMUL R{v}, R{e}, R{v}", "v = gelu'(u) v, as the kernel's gelu' dy"),
    ]
    out.note(f"flag {FLAG_GELU_GRAD}: v *= gelu'(U), as the separate elementwise kernel computes it")
    n = len(values)
    _each_value(out, steps, e=e[:n], v=values, r=r[:n], u=u[:n], p=p[:n], ka2=[GELU_KA2_AT] * n,
                ka6=[GELU_6KA_AT] * n)


# The split section's registers (flag 16; the copy and fragment registers are free there)
PARTIAL = 48                                  # R48..R79: one split's 32 values, (group g, nt) at 48 + 8 g + 2 nt
SUM_AT = 80                                   # R80..R87: W[0]'s pointers of the four row groups (the stores' W[z] from them)
SLICE_STEP, SLICES_LEFT = 88, 89              # bytes between splits in W; splits still to add
TICKET_AT, TICKET = 90, 92                    # R90:R91 the tile's ticket address; R92 the ticket drawn
TICKET_SHARED = SHARED_BASE                   # where thread 0 leaves the ticket for the block (ring done)
# ... and the last block's, summing the partials staged through the ring (_split_sum)
STAGE_FROM = 80                               # R80:R81 this round's first partial: this thread's first chunk
CHUNK_STEP = 82                               # bytes between a thread's chunks in W (threads / 16 rows)
STAGE_TO = 83                                 # shared: this thread's first chunk of a staged partial
STAGED_AT = 84                                # shared: this thread's first value of a staged partial
COPY_FROM = PARTIAL                           # R48..R79: a round's copy sources, 64-bit, partial-major
COPY_PAIRS = 16                               # ... at most 16 of them
STAGED_PITCH = 4 * TILE_N + 32                # a staged row: 64 binary32 + 32 bytes, so that the 8-byte loads of
                                              # four rows (a half warp) fall in four different bank groups


# PTX atom.acq_rel.gpu as ptxas 13 writes it (tests/sass/data/corpus-*.tsv, fences.ptx:release_acquire),
# with its control codes: before the atomic, the release (the fence and the error barrier that waits
# for it); after it, the acquire (the L1 invalidation).  (sm_90's ptxas adds CGAERRBAR to the release,
# which only concerns clusters.)
RELEASE_GPU = ("[B------:R-:W-:-:S06] MEMBAR.ALL.GPU", "[B------:R-:W-:Y:S00] ERRBAR")
ACQUIRE_GPU = ("[B------:R-:W-:-:S01] CCTL.IVALL",)


def _ordered(out: _Text, instructions: tuple[str, ...], why: str) -> None:
    out(instructions[0], why)
    for instruction in instructions[1:]:
        out(instruction)


def _cluster_form(out: _Text, register: int, cluster_base: int | None) -> None:
    """R{register}, a shared offset, in the cluster-wide form (+ R{cluster_base}, the block's rank
    << 24) where the kernel is given one (sm_90); unchanged otherwise."""
    if cluster_base is not None:
        out(f"IADD3 R{register}, R{register}, R{cluster_base}, RZ", "in the cluster-wide form")


def _group_rows(tiling_) -> list[tuple[list[int], int, int]]:
    """The epilogue's row groups with each group's 8-row index from the lane's first row."""
    out, row = [], 0
    for index, (values, column, advance) in enumerate(tiling_.row_groups()):
        row += advance // 8 if index else 0
        out.append((values, column, row))
    assert len(out) == 4, "four groups of 8 rows a lane"
    return out


def _split(out: _Text, tiling_: Tiling, per_round: int, label: str = "split", cluster_base: int | None = None) -> None:
    """Flag 16: store this split's partial tile in W, draw the tile's ticket; the last of
    the S blocks adds W's S partials in split order and goes on to the epilogue.
    `cluster_base`: a register holding the block's rank in its cluster << 24, added to every
    shared address (sm_90: a launch in clusters takes only the cluster-wide form)."""
    out.label(label)
    out.note("split K (flag 16): this block's partial tile to W[z], then the tile's ticket")
    _position(out, tiling_)
    out(f"MOV R{T2}, {_p('M')}")
    out(f"IMAD R{T2}, R{T2}, {_p('N')}, RZ", "M N: elements between splits in W")
    out(f"SHF.L.U32 R{SLICE_STEP}, R{T2}, 0x2, RZ")
    out(f"IMAD R{T3}, R{T0}, {_p('N')}, R{T1}", "W's row stride is N")
    out(f"LEA R{SUM_AT}, P6, R{T3}, {_p('W')}, 0x2", "in W[0]")
    out(f"LEA.HI.X R{SUM_AT + 1}, R{T3}, {_p('W', high=True)}, RZ, 0x2, P6")
    out(f"MOV R{T3}, {_p('N')}")
    out(f"SHF.L.U32 R{T3}, R{T3}, 0x5, RZ", "8 rows of W, in bytes")
    for group in range(1, 4):
        at = SUM_AT + 2 * group
        out(f"IADD3 R{at}, P6, R{at - 2}, R{T3}, RZ", f"rows +{8 * group}")
        out(f"IADD3.X R{at + 1}, RZ, R{at - 1}, RZ, P6, !PT")
    out(f"IMAD R{T0}, R{CTA_Z}, R{SLICE_STEP}, RZ", "W[z], this split's")
    for group in range(4):
        at = PARTIAL + 2 * group
        out(f"IADD3 R{at}, P6, R{SUM_AT + 2 * group}, R{T0}, RZ")
        out(f"IADD3.X R{at + 1}, RZ, R{SUM_AT + 2 * group + 1}, RZ, P6, !PT")
    for values, column, row in _group_rows(tiling_):     # row: the group's 8 rows, from the lane's first
        for nt in range(len(values) // 2):
            out(f"STG.E.64 [R{PARTIAL + 2 * row}.64+{32 * nt + 4 * column:#x}], R{values[2 * nt]}")
    _flag_test(out, T0, "P0", FLAG_PARTIALS, "partials only: the next launch adds them")
    out("@P0 EXIT")
    _ordered(out, RELEASE_GPU, "release: the partial is visible GPU-wide before the ticket is drawn")
    out("BAR.SYNC.DEFER_BLOCKING 0x0", "every thread's partial stored (and the ring is no longer read)")
    out(f"MOV R{T0}, {_p('N')}")
    out(f"SHF.R.U32.HI R{T0}, RZ, 0x6, R{T0}", "tiles in a row: N / 64")
    out(f"IMAD R{T0}, R{CTA_M}, R{T0}, R{CTA_N}", "the tile's ticket: blockIdx.y N/64 + blockIdx.x")
    out(f"LEA R{TICKET_AT}, P6, R{T0}, {_p('tickets')}, 0x2")
    out(f"LEA.HI.X R{TICKET_AT + 1}, R{T0}, {_p('tickets', high=True)}, RZ, 0x2, P6")
    out(f"MOV R{T1}, {_p('batches')}")
    out(f"IADD3 R{T1}, R{T1}, -0x1, RZ", "S - 1: the ticket wraps to 0 after the last")
    out(f"ISETP.NE.U32.AND P0, PT, R{TID}, RZ, PT")
    out(f"MOV R{T2}, {TICKET_SHARED:#x}")
    _cluster_form(out, T2, cluster_base)
    out(f"@!P0 ATOMG.E.INC.STRONG.GPU PT, R{TICKET}, [R{TICKET_AT}.64], R{T1}", "thread 0 draws")
    out(f"@!P0 STS [R{T2}], R{TICKET}")
    out("BAR.SYNC.DEFER_BLOCKING 0x0")
    out(f"LDS R{TICKET}, [R{T2}]")
    out(f"ISETP.NE.U32.AND P0, PT, R{TICKET}, R{T1}, PT", "not the tile's last split: done")
    out("@P0 EXIT")
    _ordered(out, ACQUIRE_GPU, "acquire: the other splits' partials, seen through their tickets, not from a stale L1 line")
    _split_sum(out, tiling_, per_round, cluster_base)
    out(f"MOV R{CTA_Z}, RZ", "z was the split: D, R and Dh are batch 0's")
    out("BRA epilogue")


def staged_partials(variant: Variant, tile_m: int = TILE_M) -> int:
    """How many partial tiles the ring holds at once (STAGED_PITCH a row): the last split block
    sums that many a round, one global round trip each round."""
    return STAGES * stage_bytes(variant, tile_m) // (tiling(tile_m).tile_m * STAGED_PITCH)


def _split_sum(out: _Text, tiling_: Tiling, per_round: int, cluster_base: int | None = None) -> None:
    """The last split block: the accumulators = W[0] + W[1] + ... + W[S-1] from +0, in that order.
    Each round copies the next `per_round` partial tiles into the ring (every thread 16-byte
    chunks of whole rows: one global round trip for all of them), then each thread adds its own
    values from shared memory, partial by partial."""
    chunks = tiling_.tile_m * TILE_N * 4 // 16 // tiling_.threads     # a partial's 16-byte chunks a thread
    rows_apart = tiling_.threads // 16                                # rows between a thread's chunks
    tile_bytes_ = tiling_.tile_m * STAGED_PITCH
    if per_round < 1 or per_round * chunks > COPY_PAIRS:
        raise ValueError(f"{per_round} {tiling_.tile_m}-row partials a round of {chunks} copies a thread: the ring "
                         f"holds none, or they need more than {COPY_PAIRS} copy-source registers")
    out.note(f"the last split: W[0] + W[1] + ... + W[S-1], in that order, {per_round} partial(s) a round through the ring")
    out("BAR.SYNC.DEFER_BLOCKING 0x0", "every thread has read the ticket: the ring is free")
    out(f"SHF.R.U32.HI R{T0}, RZ, 0x4, R{TID}", "t / 16: the first row this thread copies")
    out(f"LOP3.LUT R{T1}, R{TID}, 0xf, RZ, 0xc0, !PT", "t % 16: its 16-byte column")
    out(f"IMAD R{STAGE_TO}, R{T0}, {STAGED_PITCH:#x}, RZ")
    out(f"LEA R{STAGE_TO}, R{T1}, R{STAGE_TO}, 0x4")
    out(f"IADD3 R{STAGE_TO}, R{STAGE_TO}, {SHARED_BASE:#x}, RZ")
    _cluster_form(out, STAGE_TO, cluster_base)
    out(f"LEA R{T0}, R{CTA_M}, R{T0}, {_log2(tiling_.tile_m):#x}", f"its row of W: {tiling_.tile_m} blockIdx.y + t / 16")
    out(f"SHF.L.U32 R{T1}, R{T1}, 0x2, RZ")
    out(f"LEA R{T1}, R{CTA_N}, R{T1}, 0x6", "its column: 64 blockIdx.x + 4 (t % 16)")
    out(f"IMAD R{T1}, R{T0}, {_p('N')}, R{T1}", "W's row stride is N")
    out(f"LEA R{STAGE_FROM}, P6, R{T1}, {_p('W')}, 0x2", "in W[0]")
    out(f"LEA.HI.X R{STAGE_FROM + 1}, R{T1}, {_p('W', high=True)}, RZ, 0x2, P6")
    out(f"MOV R{T0}, {_p('N')}")
    out(f"SHF.L.U32 R{CHUNK_STEP}, R{T0}, {_log2(4 * rows_apart):#x}, RZ", f"{rows_apart} rows of W, in bytes")
    _position(out, tiling_)
    out(f"LEA R{T2}, R{CTA_M}, RZ, {_log2(tiling_.tile_m):#x}")
    out(f"IADD3 R{T0}, R{T0}, -R{T2}, RZ", "the thread's first row in the tile")
    out(f"LEA R{T3}, R{CTA_N}, RZ, 0x6")
    out(f"IADD3 R{T1}, R{T1}, -R{T3}, RZ", "and column")
    out(f"IMAD R{STAGED_AT}, R{T0}, {STAGED_PITCH:#x}, RZ")
    out(f"LEA R{STAGED_AT}, R{T1}, R{STAGED_AT}, 0x2")
    out(f"IADD3 R{STAGED_AT}, R{STAGED_AT}, {SHARED_BASE:#x}, RZ", "its first value of a staged partial")
    _cluster_form(out, STAGED_AT, cluster_base)
    out(f"MOV R{SLICES_LEFT}, {_p('batches')}")
    for i in range(sum(len(values) for values, _, _ in tiling_.row_groups())):
        out(f"MOV R{ACC + i}, RZ")
    out.label("split_sum")
    out(f"MOV R{COPY_FROM}, R{STAGE_FROM}")
    out(f"MOV R{COPY_FROM + 1}, R{STAGE_FROM + 1}")
    for i in range(1, chunks):
        at = COPY_FROM + 2 * i
        out(f"IADD3 R{at}, P6, R{at - 2}, R{CHUNK_STEP}, RZ")
        out(f"IADD3.X R{at + 1}, RZ, R{at - 1}, RZ, P6, !PT")
    for q in range(1, per_round):
        for i in range(chunks):
            at, before = COPY_FROM + 2 * (q * chunks + i), COPY_FROM + 2 * ((q - 1) * chunks + i)
            out(f"IADD3 R{at}, P6, R{before}, R{SLICE_STEP}, RZ", f"W[j + {q}]" if i == 0 else "")
            out(f"IADD3.X R{at + 1}, RZ, R{before + 1}, RZ, P6, !PT")
    for q in range(per_round):
        guard = "" if q == 0 else f"@P{q - 1} "
        if q:
            out(f"ISETP.GE.AND P{q - 1}, PT, R{SLICES_LEFT}, {q + 1:#x}, PT", f"a partial W[j + {q}]?")
        for i in range(chunks):
            offset = q * tile_bytes_ + i * rows_apart * STAGED_PITCH
            out(f"{guard}LDGSTS.E.BYPASS.128 [R{STAGE_TO}+{offset:#x}], [R{COPY_FROM + 2 * (q * chunks + i)}.64]")
    out("LDGDEPBAR")
    out("DEPBAR.LE SB0, 0x0", "this thread's copies have landed")
    out("BAR.SYNC.DEFER_BLOCKING 0x0", "everyone's")
    groups = _group_rows(tiling_)
    for q in range(per_round):
        guard = "" if q == 0 else f"@P{q - 1} "
        for group, (values, column, row) in enumerate(groups):
            for nt in range(len(values) // 2):
                offset = q * tile_bytes_ + 8 * row * STAGED_PITCH + 32 * nt + 4 * column
                out(f"{guard}LDS.64 R{PARTIAL + 8 * group + 2 * nt}, [R{STAGED_AT}+{offset:#x}]")
        for group, (values, column, row) in enumerate(groups):
            for nt in range(len(values) // 2):
                v = values[2 * nt]
                t = PARTIAL + 8 * group + 2 * nt
                out(f"{guard}FADD R{v}, R{v}, R{t}", f"+ W[j + {q}]" if group == nt == 0 else "")
                out(f"{guard}FADD R{v + 1}, R{v + 1}, R{t + 1}")
    out("BAR.SYNC.DEFER_BLOCKING 0x0", "every thread has read the round's partials")
    for _ in range(per_round):
        _add64(out, STAGE_FROM, f"R{SLICE_STEP}")
    out(f"IADD3 R{SLICES_LEFT}, R{SLICES_LEFT}, {-per_round:#x}, RZ")
    out(f"ISETP.GE.AND P0, PT, R{SLICES_LEFT}, 0x1, PT", "another round?")
    out("@P0 BRA split_sum")


# The extent of an operand stored as `rows` rows of `columns` elements, `ld` elements apart, in
# the contract's expression grammar: rowstride (rows - 1) + columns elements, times the element size.
def _matrix_bytes(size: int, ld: str, rows: str, columns: str) -> str:
    return f"{size}*{ld}*{rows}-{size}*{ld}+{size}*{columns}"


def _half(name: str) -> str:
    """A u32 of PARAMETERS as a contract names it: lo[i] or hi[i] of word i = bytes 8i..8i+7."""
    return f"{'hi' if OFFSET[name] % 8 else 'lo'}[{OFFSET[name] // 8}]"


def _contract(variant: Variant, tiling_: Tiling) -> list[str]:
    """The //@ param lines: one per 8-byte word, each pointer's whole extent on the launch's own
    words (every byte a launch may touch: the scheduler runs launches whose extents are disjoint
    at the same time) and the flag it is touched under.  A is read M x K (nn, nt: rows along k,
    lda apart) or K x M (tn); B K x N (nn, tn) or N x K (nt); K is a split's with flag 16, and
    every batch z (grid z: heads, or the splits) moves A, B by sA, sB and D, R, U, Dh by sD, sH
    (elements; with flag 16 the epilogue is batch 0's, so the batches declared for D are more than
    it touches).  The copies stop at K (a guard per slice), the epilogue writes M x N."""
    M, N, K, FLAGS, BATCHES = (_half(name) for name in ("M", "N", "K", "flags", "batches"))
    LDA, LDB, LDD, LDH, SA, SB, SD, SH = (_half(name) for name in ("lda", "ldb", "ldd", "ldh", "sA", "sB", "sD", "sH"))
    a_rows, a_cols = (M, K) if variant.a_along_k else (K, M)
    b_rows, b_cols = (N, K) if variant.b_along_k else (K, N)
    a_bytes = _matrix_bytes(2, LDA, a_rows, a_cols)
    b_bytes = _matrix_bytes(2, LDB, b_rows, b_cols)
    d_bytes = _matrix_bytes(4, LDD, M, N)
    h_bytes = _matrix_bytes(2, LDH, M, N)
    each = f"each {BATCHES} by"
    split = f"when {FLAGS}&{FLAG_SPLIT}"
    lines = [
        f"//@ param 0 pointer read {a_bytes} {each} 2*{SA} A (binary16 {'M x K' if variant.a_along_k else 'K x M'}, "
        "lda apart)",
        f"//@ param 1 pointer read {b_bytes} {each} 2*{SB} B (binary16 {'N x K' if variant.b_along_k else 'K x N'}, "
        "ldb apart)",
        f"//@ param 2 pointer write {d_bytes} {each} 4*{SD} unless {FLAGS}&{FLAG_NO_D | FLAG_PARTIALS:#x} D (binary32 "
        "M x N, ldd apart)",
        f"//@ param 3 pointer write {h_bytes} {each} 2*{SH} when {FLAGS}&{FLAG_HALF} Dh (binary16 M x N, ldh apart)",
        f"//@ param 4 pointer read {d_bytes} {each} 4*{SD} when {FLAGS}&{FLAG_ADD_R} R (binary32 addend, D's strides)",
        f"//@ param 5 pointer read 4*{N} when {FLAGS}&{FLAG_BIAS} bias (binary32 [N])",
        "//@ param 6 scalar M, N (u32)",
        "//@ param 7 scalar K, flags (u32; flags 1 add R, 2 add bias, 4 write Dh, 8 no D, 16 split K, "
        "32 column sums of B, 64 Dh = half(gelu(v)), 128 v *= gelu'(U), 256 the Adam step over D, 512 partials "
        "only)",
        "//@ param 8 scalar lda, ldb (u32 elements)",
        "//@ param 9 scalar ldd (D and R), ldh (Dh) (u32 elements)",
        "//@ param 10 scalar sA, sB (u32 batch strides, elements)",
        "//@ param 11 scalar sD (D and R), sH (Dh) (u32 batch strides, elements)",
        "//@ param 12 scalar alpha (f32), batches (u32, = grid z; with flag 16 the splits)",
        f"//@ param 13 pointer read-write 4*{BATCHES}*{M}*{N} {split} W (binary32 split workspace [splits][M][N])",
        f"//@ param 14 pointer read-write 4*{M}/{tiling_.tile_m}*{N}/{TILE_N} {split} tickets (u32 per "
        f"{tiling_.tile_m} x {TILE_N} output tile, zero between launches)",
        f"//@ param 15 pointer write 4*{N} when {FLAGS}&{FLAG_COLUMN_SUMS} E (binary32 [N] column sums of B, "
        "by the first row tile)" if variant.column_sums else
        "//@ param 15 unused E (column sums of B: not served by this layout, flag 32 is ignored)",
        f"//@ param 16 pointer read {d_bytes} {each} 4*{SD} when {FLAGS}&{FLAG_GELU_GRAD} U (binary32 saved "
        "pre-activation, D's strides)",
    ]
    if not variant.adam_step:
        return lines
    # the weight-gradient layout: with flag 256 D, R and U are the weights and their moments, read and written
    lines[2] = (f"//@ param 2 pointer read-write {d_bytes} {each} 4*{SD} unless {FLAGS}&{FLAG_NO_D | FLAG_PARTIALS:#x} "
                f"D (binary32 M x N, "
                f"ldd apart; with flag {FLAG_ADAM_STEP} the master weights, read and written)")
    lines[4] = (f"//@ param 4 pointer read-write {d_bytes} {each} 4*{SD} when {FLAGS}&{FLAG_ADD_R | FLAG_ADAM_STEP} R "
                f"(binary32 addend, D's strides; with flag {FLAG_ADAM_STEP} the first moments, read and written)")
    lines[16] = (f"//@ param 16 pointer read-write {d_bytes} {each} 4*{SD} when {FLAGS}&{FLAG_GELU_GRAD | FLAG_ADAM_STEP} "
                 f"U (binary32 saved pre-activation, D's strides; with flag {FLAG_ADAM_STEP} the second moments, read "
                 f"and written)")
    return lines + [f"//@ param 19 pointer read {4 * len(ADAM_STEP_RECORD)} when {FLAGS}&{FLAG_ADAM_STEP} the Adam step "
                    f"record ({', '.join(ADAM_STEP_RECORD)})"]


def requirements(tile_m: int, tile_n: int = TILE_N, k_step: int | None = TILE_K) -> list[str]:
    """The //@ require lines of a kernel computing whole tile_m x tile_n output tiles, k_step k at a
    time (None: a K its copies need not divide): the shapes its code serves, which every launch is held
    to at build time (docs/kernel-contracts.md, "Requirements").  The code has no bounds checks -- the
    epilogue writes every row and column of a tile, the loop runs K / k_step whole slices -- so a shape
    off the tiling would write past D or leave K's tail out; check_shape refuses it for a caller here."""
    M, N, K = (_half(name) for name in ("M", "N", "K"))
    lines = [f"//@ require {M} multiple of {tile_m} M: whole {tile_m}-row tiles (the epilogue writes every row of "
             "one, unchecked)",
             f"//@ require {N} multiple of {tile_n} N: whole {tile_n}-column tiles (the epilogue writes every column "
             "of one, unchecked)"]
    if k_step is not None:
        lines.append(f"//@ require {K} multiple of {k_step} K: whole slices of {k_step} k (the loop runs K / {k_step} "
                     "of them: a tail would be left out)")
    return lines


def generate(variant: Variant, prefix: str, tile_m: int = TILE_M, warps: int | None = None) -> str:
    """The kernel source of one variant for tiles of tile_m rows computed by `warps` warps
    (None: the height's default, TILINGS) (deterministic text)."""
    tiling_ = tiling(tile_m, warps)
    ops = _operands(variant, tiling_)
    stage = stage_bytes(variant, tile_m)
    a_tile = ops[1].base - ops[0].base
    copy_end = ops[1].copy + 2 * ops[1].chunks - 1
    if tile_m == TILE_N:
        shape = f"// Requires M, N multiples of {tile_m}, K a multiple of {TILE_K} (>= {TILE_K}); lda, ldb, sA, sB "
    else:
        shape = (f"// Requires M a multiple of {tile_m}, N of {TILE_N}, K of {TILE_K} (>= {TILE_K}); lda, ldb, "
                 "sA, sB ")
    tile_line = [] if tiling_ == tiling() else [
        f"// Tile: {tile_m} x {TILE_N} (tile_m = {tile_m}"
        + (f", warps = {tiling_.warps}" if tiling_ != tiling(tile_m) else "")
        + f"): {tiling_.warps} warps, warp w computes rows "
        f"32 (w >> {_log2(tiling_.warp_cols)}) and columns {tiling_.warp_n} (w & {tiling_.warp_cols - 1});",
        "// each output element by the same instructions in the same order as with 64-row tiles"
        + (" of 4 warps." if tiling_ != tiling(tile_m) else ".")]
    out = _Text()
    header = [
        f"// {variant.identity(prefix)}: generated by `python -m bobc.sass.generate.gemm` (compiler/bobc/sass/",
        "// generate/gemm.py, whose docstring explains the tiling); do not edit by hand.",
        f"//   {variant.formula}   ({variant.uses})",
        "//   v = alpha P (+ bias[n], flag 2) (+ R[m,n], flag 1), binary32; D = v unless flag 8;",
        "//   Dh = half(v) with flag 4.  A, B binary16; products accumulated in binary32 (HMMA.16816.F32).",
        "//   Batch z = blockIdx.z moves A, B, D/R, Dh by sA, sB, sD, sH elements.  Flag 16 (split K):",
        "//   z is the split (A, B moved by sA, sB), the partial goes to W[z] and the tile's last split",
        "//   (its ticket) adds W[0] + .. + W[batches - 1] in that order before the epilogue; with flag",
        "//   512 (partials only) every block exits once its partial is stored.",
        *(["//   Flag 32 (not with 16; batch 0): E[n] = sum_k B[k,n] in binary32, by the first row tile from",
           "//   its B slices in shared memory: per column four row groups k = g mod 4, each from +0 in",
           "//   increasing k, then (s0 + s1) + (s2 + s3)."] if variant.column_sums else
          ["//   Flag 32 (column sums of B) is not served by this layout and is ignored."]),
        "//   Flag 128: v *= gelu'(U[m,n]) (U binary32 with D's strides) before D and Dh; flag 64: Dh =",
        "//   half(gelu(v)) (D = v, the pre-activation): for each element the instructions of separate",
        "//   elementwise GELU kernels (tanh form through e = 2^min(x, 64), r = 1/(1+e), s = e r).",
        *(["//   Flag 256 (not with 1, 2, 8, 64, 128): v is the gradient of the weights at D; one Adam step",
           "//   (decoupled weight decay) writes D and their moments at R and U and, with flag 4, Dh = half(D),",
           "//   as a separate optimizer kernel would from the gradient v, with the step record's scalars",
           "//   (word 19); nothing is stored when the record's overflow flag is not 0."] if variant.adam_step else
          ["//   Flag 256 (the Adam step) is served by tn alone and is ignored."]),
        *tile_line,
        f"// Launch: block ({tiling_.threads}, 1, 1), grid (N/{TILE_N}, M/{tile_m}, batches); shared memory "
        f"{shared_bytes(variant, tile_m)} bytes",
        f"// ({SHARED_BASE:#x} reserved + {STAGES} stages of {stage}: A slice {a_tile}, B slice {stage - a_tile}).",
        shape + "multiples of 8,",
        "// A, B 16-byte aligned; ldd, ldh, sD, sH even; D, R, bias 8-byte and Dh 4-byte aligned.",
        f"// Registers: R0 tid, R1-R3 blockIdx x/y/z, R8-R{ACC + tiling_.accumulators - 1} accumulators, "
        f"R40-R71 fragments, R72-R{copy_end}",
        "// copy sources, R80-R93 steps, stage offsets, addresses and counters"
        + (" (R2-R7: column sums in the loop)" if variant.column_sums else "") + " (see gemm.py).",
        "// Contract (bobc.certify.kernels): the parameter words, from the parameter base.",
        *_contract(variant, tiling_),
        *requirements(tiling_.tile_m),
        f".kernel {variant.kernel(prefix)}",
        f".registers {REGISTERS}",
        f".shared {shared_bytes(variant, tile_m)}",
    ]
    out("S2R R0, SR_TID.X")
    out("S2R R1, SR_CTAID.X", "64-column tile")
    out("S2R R2, SR_CTAID.Y", f"{tile_m}-row tile")
    out("S2R R3, SR_CTAID.Z", "batch")
    out("ULDC.64 UR4, c[0x0][memory_descriptor]")
    out.note("ptxas puts these three never-executed loads before a kernel's first LDGSTS on sm_90")
    for _ in range(3):
        out("@!PT LDS RZ, [RZ]")
    _copy_sources(out, ops[0], CTA_M)
    _copy_sources(out, ops[1], CTA_N)
    out.note("shared addresses: copy destinations, then fragment sources, within a stage")
    _copy_destination(out, ops[0], COPY_DST_A)
    _copy_destination(out, ops[1], COPY_DST_B)
    _fragment_source(out, ops[0], FRAG_SRC_A, tiling_)
    _fragment_source(out, ops[1], FRAG_SRC_B, tiling_)
    if variant.column_sums:
        _column_sums_setup(out, ops[1], tiling_)
    for i in range(tiling_.accumulators):
        out(f"MOV R{ACC + i}, RZ")
    out(f"MOV R{WRITE_STAGE}, RZ")
    out(f"MOV R{READ_STAGE}, RZ")
    out(f"MOV R{T0}, {_p('K')}")
    out(f"SHF.R.U32.HI R{TO_ISSUE}, RZ, 0x5, R{T0}", "K / 32 slices")
    out(f"MOV R{TO_DO}, R{TO_ISSUE}")
    out.note(f"prologue: slices 0 .. {STAGES - 2} in flight")
    for _ in range(STAGES - 1):
        _issue(out, ops, stage)
    _loop_entry(out, variant, ops, tiling_)
    if variant.column_sums:
        out.note(f"two versions of the loop: with the column sums (P1: flag {FLAG_COLUMN_SUMS}, first row tile) and without")
        out("@P1 BRA slice_sums")
    out.label("slice")
    _trip(out, variant, stage, ops, tiling_, sums=False)
    out("@P5 BRA slice")
    if variant.column_sums:
        out("BRA looped")
        out.label("slice_sums")
        _trip(out, variant, stage, ops, tiling_, sums=True)
        out("@P5 BRA slice_sums")
        out.label("looped")
    _flag_test(out, T0, "P3", FLAG_SPLIT, "one split of the product",
               before="(before the column sums' branch: it waits out the last products)")
    if variant.column_sums:
        _column_sums_store(out, tiling_)
    out("@P3 BRA split")
    _epilogue(out, tiling_, adam_step=variant.adam_step)
    _split(out, tiling_, staged_partials(variant, tiling_.tile_m))
    return "\n".join(header + out.lines) + "\n"


def write_all(folder: Path, prefix: str, tile_m: int = TILE_M, warps: int | None = None) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for variant in VARIANTS.values():
        path = folder / f"{variant.identity(prefix)}.sass"
        path.write_text(generate(variant, prefix, tile_m, warps), encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bobc.sass.generate.gemm",
                                     description="write the tiled matrix-product kernel sources")
    parser.add_argument("--prefix", required=True,
                        help="the model's name for its kernels: files PREFIX-nn.sass ..., symbols PREFIX_nn ...")
    parser.add_argument("folder", type=Path, help="where the .sass files go (or are checked)")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    parser.add_argument("--tile-m", type=int, choices=TILE_HEIGHTS, default=TILE_M,
                        help=f"output rows a block computes (default {TILE_M}; 128: 256 threads, a quarter "
                             "fewer operand bytes from L2)")
    parser.add_argument("--warps", type=int, choices=WARP_COUNTS, default=None,
                        help="warps a block (default: the tile height's, 32 x 32 a warp; 8 with --tile-m 64: "
                             "warps of 32 x 16, two a scheduler)")
    args = parser.parse_args(argv)
    try:
        chosen = tiling(args.tile_m, args.warps)
    except ValueError as error:
        parser.error(str(error))
    warps = None if chosen == tiling(args.tile_m) else chosen.warps
    if args.check:
        stale = [v.identity(args.prefix) for v in VARIANTS.values()
                 if _differs(args.folder / f"{v.identity(args.prefix)}.sass",
                             generate(v, args.prefix, args.tile_m, warps))]
        tile = (f" --tile-m {args.tile_m}" if args.tile_m != TILE_M else "") + (f" --warps {warps}" if warps else "")
        for name in stale:
            print(f"{args.folder / (name + '.sass')}: differs from what the generator emits; "
                  f"run python -m bobc.sass.generate.gemm --prefix {args.prefix}{tile} {args.folder}", file=sys.stderr)
        return 1 if stale else 0
    for path in write_all(args.folder, args.prefix, args.tile_m, warps):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
