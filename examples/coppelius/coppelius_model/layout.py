"""Coppelius's memory: the device arena (every resident, its address and extent) and the
staging buffer the host reads and writes (docs/coppelius.md, "The arena").

The checkpoint payload is the first four residents, contiguous: the master weights,
the two moments and the counters, so a checkpoint chunk is one byte range of the
arena and its gather or scatter is one copy.  Everything else is rebuilt from it
(the half copies by the forward's half-copy launch) or written before it is read
within one submission.  Coppelius.ArenaPlan declares the same residents; the
tests hold the two to each other.
"""
from __future__ import annotations

from dataclasses import dataclass

from .config import CoppeliusConfig

RESIDENT_ALIGNMENT = 256
# GPU virtual addresses: below 2^40, 2 MiB aligned, the system buffers 256 MiB apart
GPFIFO_BASE = 0x1000000000
PUSHBUFFER_BASE = 0x1010000000
SEMAPHORE_BASE = 0x1020000000
PROGRAM_BASE = 0x1030000000
QMD_BASE = 0x1040000000
STAGING_BASE = 0x1100000000
ARENA_BASE = 0x2000000000

# the staging buffer (host-mapped, GPU-visible): offsets of what the host reads and writes
STAGING_INPUTS = 0            # u32 tokens [T]
STAGING_TARGETS = 2048        # u32 tokens [T] (the same window one token on)
STAGING_RECORD = 4096         # the result record: 16-byte marker (the host's), 16-byte summary
STAGING_RECORD_BYTES = 64
STAGING_PREDICTIONS = 8192    # the last position's 256 logits (binary32): the next byte's scores
STAGING_LOSS_WINDOW = 12288   # one update's loss record: 16-byte summary, then the T row losses
STAGING_LOSS_BLOCK = 16384    # the final forward's: same layout
STAGING_REPORT_END = 20480    # the report region [STAGING_RECORD, STAGING_REPORT_END), mirrored in the arena
MARKER = b"COPPELIUS-RESULT"
TOKEN_BYTES = 4
SUMMARY_BYTES = 16
COUNTERS_BYTES = 16           # +0 non-finite flag, +4 zero, +8 updates issued, +12 updates skipped
# the split products' workspace and tickets (coppelius-gemm flag 16): a split launch has fewer
# than 66 tiles of 64 x 64 and at most 4 splits (graph.split_count), so these bound every one
GEMM_PARTIALS_BYTES = 4 * 4 * 65 * 64 * 64
GEMM_TICKETS_BYTES = 4 * 65
# the program residence (bobc.nvidia.residence): the copy of the program table every launch reads
# its code, bank 0 and tensor maps from; 2 MiB holds either target's table (the backend refuses less)
PROGRAM_RESIDENCE_BYTES = 1 << 21


@dataclass(frozen=True)
class Resident:
    name: str
    address: int
    bytes: int

    @property
    def end(self) -> int:
        return self.address + self.bytes


def _align(n: int, alignment: int = RESIDENT_ALIGNMENT) -> int:
    return -(-n // alignment) * alignment


def loss_window_bytes(config: CoppeliusConfig) -> int:
    return SUMMARY_BYTES + 4 * config.context


def staging_bytes(config: CoppeliusConfig) -> int:
    """One checkpoint chunk (the plan's coppeliusShapeChunkBytes)."""
    return config.chunk_bytes


def resident_sizes(config: CoppeliusConfig) -> list[tuple[str, int]]:
    """(name, bytes) of every arena resident, in arena order."""
    n, T, d, H, V = config.parameter_count, config.context, config.width, config.heads, config.vocabulary
    f = config.hidden
    sizes = [("parameters", 4 * n), ("first-moments", 4 * n), ("second-moments", 4 * n),
             ("counters", COUNTERS_BYTES),
             ("half-parameters", 2 * n), ("gradients", 4 * n),
             ("x0-half", 2 * T * d)]
    for layer in range(config.layers):
        p = f"h{layer}."
        sizes += [(p + "x", 4 * T * d), (p + "ln1-mean", 4 * T), (p + "ln1-rstd", 4 * T), (p + "a16", 2 * T * d),
                  (p + "qkv16", 2 * T * 3 * d), (p + "p", 4 * H * T * T), (p + "p16", 2 * H * T * T),
                  (p + "o16", 2 * T * d), (p + "h", 4 * T * d), (p + "ln2-mean", 4 * T), (p + "ln2-rstd", 4 * T),
                  (p + "b16", 2 * T * d), (p + "u", 4 * T * f), (p + "g16", 2 * T * f),
                  # the backward's output gradients of the two layer norms, kept for the batched
                  # gain and bias gradients after the layer loop (graph.py, backward)
                  (p + "ln1-dy", 4 * T * d), (p + "ln2-dy", 4 * T * d),
                  # the binary16 gradients the layer's weight-gradient products read, in the order the
                  # backward writes them: one copy per layer, so nothing later in the update writes a
                  # product's inputs again (no write-after-read between layers; the product can run
                  # beside the chain).  dres16-ln1 is read by the layer below (layer 0's by none)
                  (p + "du16", 2 * T * f), (p + "dres16-ln2", 2 * T * d), (p + "dqkv16", 2 * T * 3 * d),
                  (p + "dres16-ln1", 2 * T * d)]
    sizes += [("xL", 4 * T * d), ("lnf-mean", 4 * T), ("lnf-rstd", 4 * T), ("xf16", 2 * T * d),
              ("logits", 4 * T * V), ("losses", 4 * T), ("dlogits16", 2 * T * V),
              # backward scratch, reused by every layer: read only by the next launches of the chain
              # (dres is read and written in place by every layer norm's backward, then read by the
              # embedding's; nothing reads the binary32 dqkv, the q, k, v products' D) -- except
              # lnf-dres16, the final norm's binary16 residual gradient (the top layer's MLP reads it).
              # No scores and no dP: the attention kernels keep them in shared memory
              ("dres", 4 * T * d), ("lnf-dres16", 2 * T * d), ("dtmp", 4 * T * f),
              ("do16", 2 * T * d), ("ds16", 2 * H * T * T),
              ("dqkv", 4 * T * 3 * d), ("fence", COUNTERS_BYTES),
              ("report", STAGING_REPORT_END - STAGING_RECORD),
              # split products: partials, and tickets that every launch leaves zero (the arena starts zeroed)
              ("gemm-partials", GEMM_PARTIALS_BYTES), ("gemm-tickets", GEMM_TICKETS_BYTES),
              # every submission copies the program table here first; no launch is given it
              ("program-residence", PROGRAM_RESIDENCE_BYTES)]
    return sizes


def arena(config: CoppeliusConfig, base: int = ARENA_BASE) -> dict[str, Resident]:
    """Every resident, each after the previous, aligned (from `base`: the plan's arena
    address, or wherever a test allocated the arena)."""
    residents, address = {}, base
    for name, size in resident_sizes(config):
        residents[name] = Resident(name, address, size)
        address = _align(address + size)
    return residents


def arena_bytes(config: CoppeliusConfig) -> int:
    residents = arena(config)
    return _align(max(r.end for r in residents.values()) - ARENA_BASE, 1 << 21)


def checkpoint_payload_bytes(config: CoppeliusConfig) -> int:
    """P, M, V (binary32) and the counters: the first four residents, contiguous."""
    residents = arena(config)
    return residents["counters"].end - residents["parameters"].address


def chunks(config: CoppeliusConfig) -> list[tuple[int, int]]:
    """(offset, bytes) of each checkpoint chunk moved through the staging buffer: full ones, then the tail."""
    payload, chunk = checkpoint_payload_bytes(config), staging_bytes(config)
    out = [(offset, chunk) for offset in range(0, payload - chunk + 1, chunk)]
    if payload % chunk:
        out.append((len(out) * chunk, payload % chunk))
    return out
