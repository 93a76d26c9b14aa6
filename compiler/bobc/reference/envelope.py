"""The checkpoint envelope (docs/formats.md) around any payload: what the
plan-driven reference host reads and publishes, byte for byte what
runtime_c/host_runtime.c's rt_envelope_build writes.  The checks run in the
runtime's order and refuse with its exit codes (4 bad, 5 foreign)."""
from __future__ import annotations

import struct
import zlib

from ..plan.model import CheckpointContract
from .errors import BadCheckpoint, ForeignCheckpoint

MAGIC = b"BOBCENV1"
TRAILER = b"BOBCEND1"
FIXED = 64
_HEADER = struct.Struct("<8sIIQQQQ4I")


def header_bytes(contract: CheckpointContract) -> int:
    identities = len(contract.schema) + len(contract.learner) + len(contract.data) + len(contract.seed)
    return -(-(FIXED + identities) // 16) * 16


def encode(contract: CheckpointContract, step: int, payload: bytes) -> bytes:
    if len(payload) != contract.payload_bytes:
        raise ValueError(f"a {len(payload)}-byte payload for a {contract.payload_bytes}-byte contract")
    h = header_bytes(contract)
    ids = contract.schema + contract.learner + contract.data + contract.seed
    header = _HEADER.pack(MAGIC, h, contract.payload_bytes // contract.chunk_bytes, step, contract.payload_bytes,
                          contract.chunk_bytes, contract.updates_per_invocation, len(contract.schema),
                          len(contract.learner), len(contract.data), len(contract.seed))
    body = header + ids + bytes(h - FIXED - len(ids)) + payload
    return body + struct.pack("<I", zlib.crc32(body)) + TRAILER


def _identities(data: bytes, lengths, contract: CheckpointContract, path) -> None:
    at = FIXED
    for name, length in zip(("schema", "learner", "data", "seed"), lengths):
        if data[at:at + length] != getattr(contract, name):
            raise ForeignCheckpoint(path, name, f"its {name} identity differs from this plan's")
        at += length


def oversized_header(path, most: int) -> tuple[bytes, int] | None:
    """(its first MiB, its size) of a checkpoint file larger than `most` (what a host reads) whose
    start is an envelope's header (magic, header bytes within what was read), else None: such a
    file is judged by its identities (host_runtime.c oversized_foreign).  A regular file only."""
    import os
    import stat

    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size <= most:
            return None
        with open(path, "rb") as handle:
            head = handle.read(1 << 20)
    except OSError:
        return None
    if len(head) < FIXED or head[:8] != MAGIC or not FIXED <= _HEADER.unpack_from(head)[1] <= len(head):
        return None
    return head, info.st_size


def foreign_by_header(path, contract: CheckpointContract, most: int) -> None:
    """ForeignCheckpoint (exit 5) for a file larger than `most` whose header names other
    identities (oversized_header); else nothing (the size refusal stands)."""
    found = oversized_header(path, most)
    if found is not None:
        lengths = _HEADER.unpack_from(found[0])[7:]
        if sum(lengths) <= _HEADER.unpack_from(found[0])[1] - FIXED:
            _identities(found[0], lengths, contract, path)


def decode(data: bytes, contract: CheckpointContract, path="checkpoint") -> tuple[bytes, int]:
    """(payload, step) of an envelope the contract accepts."""
    n = len(data)
    if n < FIXED:
        raise BadCheckpoint(path, "size", f"truncated: {n} bytes, shorter than the {FIXED}-byte header")
    if data[:8] != MAGIC:
        raise BadCheckpoint(path, "magic", f"not a checkpoint (magic is not {MAGIC!r})")
    (_, h, chunks, step, payload, chunk, updates, *lengths) = _HEADER.unpack_from(data)
    if h < FIXED or h % 16 or h > n:
        raise BadCheckpoint(path, "header", f"header bytes {h} do not fit a {n}-byte file")
    if h + payload + 12 != n:
        raise BadCheckpoint(path, "size", f"{n} bytes, but its header (H {h} + payload {payload} + 12) "
                            f"says {h + payload + 12}")
    if sum(lengths) > h - FIXED:
        raise BadCheckpoint(path, "header", f"header bytes {h} cannot hold its identities")
    if data[h + payload + 4:] != TRAILER:
        raise BadCheckpoint(path, "trailer", f"trailer magic is not {TRAILER!r}")
    stored, computed = struct.unpack_from("<I", data, h + payload)[0], zlib.crc32(data[:h + payload])
    if stored != computed:
        raise BadCheckpoint(path, "crc", f"corrupted: CRC-32 stored {stored:08x}, computed {computed:08x}")
    # the header's padding after the identities is zero (docs/formats.md; host_runtime.c rt_envelope_check)
    pad = FIXED + sum(lengths)
    nonzero = next((k for k in range(pad, h) if data[k]), None)
    if nonzero is not None:
        raise BadCheckpoint(path, "header", "not a checkpoint this format writes: the header's padding after the "
                            f"identities is not zero (byte {nonzero})")
    _identities(data, lengths, contract, path)
    for part, have, want in (("payload bytes", payload, contract.payload_bytes),
                             ("chunk bytes", chunk, contract.chunk_bytes),
                             ("chunk count", chunks, contract.payload_bytes // contract.chunk_bytes),
                             ("updates per invocation", updates, contract.updates_per_invocation)):
        if have != want:
            raise ForeignCheckpoint(path, part, f"it declares {have}, the plan {want}")
    return bytes(data[h:h + payload]), step
