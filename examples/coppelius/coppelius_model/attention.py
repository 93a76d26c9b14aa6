"""coppelius-attention-forward, -backward and -backward-kv: a layer's attention in one launch
forward and two backward, where there were three and five.

One large update on the H200 spends 0.9 ms on its launches alone, each waiting for the one
before (every kernel empty: bench/results/coppelius-host-h200-attention.txt), so the forward's

    gemm-nt          scores = q k^T (per head)           scores [H, T, T] binary32
    softmax-forward  p = causal softmax(scores / sqrt(dh))   p16 [H, T, T] binary16, p binary32
    gemm-nn          o16 = p16 v (per head, merged)      o16 [T, d] binary16

are one kernel whose outputs are those three launches' bit for bit (the products' HMMA k
order, the softmax's arithmetic); the scores stay on chip, so no arena resident holds them.
The backward's dp = do16 v^T, ds16 and dq = ds16 k are coppelius-attention-backward the same way
(`backward_parts`), and the backward's two per-head products dv = p16^T do16 and dk = ds16^T q
are coppelius-attention-backward-kv (`kv_parts`; its words 0 qkv16, 1 do16, 2 p16, 3 ds16, 4 dqkv,
5 dqkv16, 6 (T, H), 7 (scale, 0)).

Its parameter block (8-byte words from the parameter base):

    0  qkv16  binary16 [T, 3d] (ld 3d): head h's q at column 64h, k at d + 64h, v at 2d + 64h
    1  p16    binary16 [H, T, T] (row h T + i; a masked key j > i is 0)
    2  p      binary32 [H, T, T]
    3  o16    binary16 [T, d], head h at columns 64h .. 64h + 63
    4  (T u32, H u32)      d = 64 H
    5  (scale f32, 0)      dh ** -0.5, the softmax's word

The kernel's dh is 64; the references take dh from the scale (dh = scale^-2: tests/coppelius's
tiny configuration has heads of 16, and runs only here).

grid (T / 32, H, 1), block BLOCKS[KERNEL] (512); the kernel needs T a power of two, 128 <= T <= 512 (the plan's
Coppelius.Model refuses any other context); the composition here takes any T (the tests' tiny one).

`parts` gives the three launches the block stands for, in graph.py's own words, with the
scores at SCORES (an address outside every buffer); `run` executes them through a set of
registered kernels on a memory that holds the scores there: the NumPy references
(kernels.py, ref_ops.py) are the composition, so every bit-for-bit test of the graph holds.
"""
from __future__ import annotations

import struct

from .graph import NO_D, WRITE_HALF, Launch, f32, gemm_words, pair
from .memory import Launched, ViewedMemory

KERNEL = "coppelius-attention-forward"
HEAD_DIMENSION = 64
SCORES = 1 << 60          # the scores' stand-in address: no plan or test buffer is near it


def words(qkv16: int, p16: int, p: int, o16: int, T: int, H: int, scale: float | None = None) -> tuple[int, ...]:
    """The parameter words (scale: dh ** -0.5 unless given)."""
    scale = HEAD_DIMENSION ** -0.5 if scale is None else scale
    return (qkv16, p16, p, o16, pair(T, H), pair(f32(scale)))


def backward_words(qkv16: int, do16: int, probabilities: int, ds16: int, dqkv: int, dqkv16: int, T: int, H: int,
                   scale: float) -> tuple[int, ...]:
    """The parameter words of coppelius-attention-backward (`probabilities`: p, binary32) and of
    coppelius-attention-backward-kv (p16): one layout (backward_parts, kv_parts)."""
    return (qkv16, do16, probabilities, ds16, dqkv, dqkv16, pair(T, H), pair(f32(scale)))


def head_dimension(block: tuple[int, ...]) -> int:
    """dh, from the scale word (dh ** -0.5 in binary32, exact for a power of 4)."""
    scale = struct.unpack("<f", struct.pack("<I", block[5] & 0xFFFFFFFF))[0]
    dh = round(scale ** -2) if scale > 0 else 0
    if dh <= 0 or words(0, 0, 0, 0, 0, 0, dh ** -0.5)[5] != block[5]:
        raise ValueError(f"{KERNEL}: scale {scale!r} (word 5) is not dh ** -0.5 of a whole head dimension dh; "
                         f"pass dh ** -0.5 as graph.py does")
    return dh


def parts(block: tuple[int, ...]) -> list[Launch]:
    """The three launches (kernel, grid, block, words) the parameter words `block` stand for,
    as graph.py built them before they were one, the scores at SCORES."""
    qkv16, p16, p, o16, shape, scale = block[:6]
    T, H = shape & 0xFFFFFFFF, shape >> 32
    dh = head_dimension(block)
    d = dh * H
    scores = Launch("coppelius-gemm-nt", (T // 64, T // 64, H), 128,
                    gemm_words(qkv16, qkv16 + 2 * d, T, T, dh, 3 * d, 3 * d, D=SCORES, ldd=T, batches=H, sA=dh, sB=dh,
                               sD=T * T), "scores = q k^T (per head)")
    softmax = Launch("coppelius-softmax-forward", (-(-H * T // 8), 1, 1), 256,
                     (SCORES, p16, p, pair(H * T, T), scale), "p = causal softmax(scores / sqrt(dh))")
    values = Launch("coppelius-gemm-nn", (dh // 64, T // 64, H), 128,
                    gemm_words(p16, qkv16 + 2 * 2 * d, T, dh, T, T, 3 * d, Dh=o16, flags=WRITE_HALF | NO_D, ldh=d,
                               batches=H, sA=T * T, sB=dh, sH=dh), "o16 = p16 v (per head, merged)")
    return [scores, softmax, values]


BACKWARD = "coppelius-attention-backward"


def backward_parts(block: tuple[int, ...]) -> list[Launch]:
    """coppelius-attention-backward's three launches: dp = do16
    v^T, ds16 = p (dp - rowsum(dp p)) scale, dq = ds16 k into dqkv and dqkv16's q columns, as
    graph.py's backward builds them, dp at SCORES.  Words: 0 qkv16, 1 do16 [T, d], 2 p binary32,
    3 ds16, 4 dqkv binary32 [T, 3d], 5 dqkv16, 6 (T, H), 7 (scale, 0)."""
    qkv16, do16, p, ds16, dqkv, dqkv16, shape, scale = block[:8]
    T, H = shape & 0xFFFFFFFF, shape >> 32
    dh = head_dimension((0, 0, 0, 0, 0, scale))
    d = dh * H
    dp = Launch("coppelius-gemm-nt", (T // 64, T // 64, H), 128,
                gemm_words(do16, qkv16 + 2 * 2 * d, T, T, dh, d, 3 * d, D=SCORES, ldd=T, batches=H, sA=dh, sB=dh,
                           sD=T * T), "dp = do16 v^T (per head)")
    ds = Launch("coppelius-softmax-backward", (-(-H * T // 8), 1, 1), 256, (p, SCORES, ds16, pair(H * T, T), scale),
                "ds16 = p (dp - rowsum(dp p)) / sqrt(dh)")
    dq = Launch("coppelius-gemm-nn", (dh // 64, T // 64, H), 128,
                gemm_words(ds16, qkv16 + 2 * d, T, dh, T, T, 3 * d, D=dqkv, Dh=dqkv16, flags=WRITE_HALF, ldd=3 * d,
                           ldh=3 * d, batches=H, sA=T * T, sB=dh, sD=dh, sH=dh), "dq = ds16 k (per head)")
    return [dp, ds, dq]


KV = "coppelius-attention-backward-kv"
# each kernel's block (the threads of one 32-row tile and head): the forward and the backward
# spread their phases over 16 warps, backward-kv its keys and dims over 8 (their sources say why)
BLOCKS = {KERNEL: 512, BACKWARD: 512, KV: 256}


def kv_parts(block: tuple[int, ...]) -> list[Launch]:
    """coppelius-attention-backward-kv's two launches: dv = p16^T do16 and dk = ds16^T q (per
    head) into dqkv and dqkv16's v and k columns, as graph.py's backward builds them.  Words: 0
    qkv16, 1 do16 [T, d], 2 p16, 3 ds16, 4 dqkv binary32 [T, 3d], 5 dqkv16, 6 (T, H), 7 (scale, 0)
    (the kernel's dh is 64; the scale gives the references theirs)."""
    qkv16, do16, p16, ds16, dqkv, dqkv16, shape, scale = block[:8]
    T, H = shape & 0xFFFFFFFF, shape >> 32
    dh = head_dimension((0, 0, 0, 0, 0, scale))
    d = dh * H
    dv = Launch("coppelius-gemm-tn", (dh // 64, T // 64, H), 128,
                gemm_words(p16, do16, T, dh, T, T, d, D=dqkv + 4 * 2 * d, Dh=dqkv16 + 2 * 2 * d, flags=WRITE_HALF,
                           ldd=3 * d, ldh=3 * d, batches=H, sA=T * T, sB=dh, sD=dh, sH=dh), "dv = p16^T do16 (per head)")
    dk = Launch("coppelius-gemm-tn", (dh // 64, T // 64, H), 128,
                gemm_words(ds16, qkv16, T, dh, T, T, 3 * d, D=dqkv + 4 * d, Dh=dqkv16 + 2 * d, flags=WRITE_HALF,
                           ldd=3 * d, ldh=3 * d, batches=H, sA=T * T, sB=dh, sD=dh, sH=dh), "dk = ds16^T q (per head)")
    return [dv, dk]


class _WithScores(ViewedMemory):
    """`memory` (bobc.reference.host.Memory, or kernels.FlatMemory) and the scores at SCORES."""

    def __init__(self, memory, nbytes: int):
        self.memory, self.scores = memory, bytearray(nbytes)

    def view(self, address, size) -> memoryview:
        if SCORES <= address < SCORES + len(self.scores):
            if address + size > SCORES + len(self.scores):
                raise IndexError(f"[{address:#x}, {address + size:#x}) runs past the scores")
            return memoryview(self.scores)[address - SCORES:address - SCORES + size]
        return self.memory.view(address, size)



def run(memory, launch, kernels, split=parts) -> None:
    """Execute the launch as the launches `split` (parts, backward_parts or kv_parts) says it
    stands for, each through kernels[part's kernel]; the scores or dP in a scratch at SCORES."""
    forward = split is parts
    block = tuple(launch.word(i) for i in range(6 if forward else 8))
    shape = block[4 if forward else 6]
    T, H = shape & 0xFFFFFFFF, shape >> 32
    scratch = _WithScores(memory, 0 if split is kv_parts else 4 * H * T * T)
    for part in split(block):
        kernels[part.kernel](scratch, Launched(part.parameters()))
