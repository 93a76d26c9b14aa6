"""The checkpoint envelope (docs/formats.md) around any payload: what the
plan-driven reference host reads and publishes, byte for byte what
runtime_c/host_runtime.c's rt_envelope_build writes.  The checks run in the
runtime's order and refuse with its exit codes (4 bad, 5 foreign)."""
from __future__ import annotations

import struct
import zlib

from ..native.words import count
from ..plan.model import CheckpointContract
from .errors import BadCheckpoint, ForeignCheckpoint
from .safe_io import shown

MAGIC = b"BOBCENV1"
TRAILER = b"BOBCEND1"
FIXED = 64
TAIL = 4 + len(TRAILER)         # after the payload: the CRC-32 of all before it, then TRAILER
_HEADER = struct.Struct("<8sIIQQQQ4I")
# What to do, the end of each refusal (host_runtime.c HINT_COPY, HINT_OURS, HINT_FOREIGN)
HINT_COPY = "copy it again from where it was written, or use an earlier checkpoint"
HINT_OURS = "pass a checkpoint this host's plan wrote"
HINT_FOREIGN = "pass a checkpoint this host's plan wrote, or none to start fresh"


def header_bytes(contract: CheckpointContract) -> int:
    identities = len(contract.schema) + len(contract.learner) + len(contract.data) + len(contract.seed)
    return -(-(FIXED + identities) // 16) * 16


def file_bytes(contract: CheckpointContract) -> int:
    """The size of the envelope `encode` writes for `contract`: header, payload, tail."""
    return header_bytes(contract) + contract.payload_bytes + TAIL


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


def step_of(data: bytes) -> int:
    """The global step an envelope `encode` wrote carries."""
    return _HEADER.unpack_from(data)[3]


def _le(data: bytes, at: int, width: int) -> int:
    return int.from_bytes(data[at:at + width], "little")


def _printable(data: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 else "?" for b in data)


def _quote(data: bytes, start: int = 0) -> str:
    """60 bytes from `start`, "..." where cut, non-printables as '?' (host_runtime.c quote)."""
    text = ("..." if start else "") + _printable(data[start:start + 60]) + ("..." if len(data) > start + 60 else "")
    return f"'{text}'"


def identities_refusal(data: bytes, h: int, contract: CheckpointContract, path) -> BadCheckpoint | ForeignCheckpoint | None:
    """host_runtime.c identities_check: the envelope's four identities against the contract's
    (a CheckpointContract); the refusal (an identity running past the
    `h`-byte header: damaged, exit 4; the first that differs: foreign, exit 5; the caller adds what
    to do), or None.  `path` as a message shows it (safe_io.shown)."""
    at = FIXED
    for index, name in enumerate(("schema", "learner", "data", "seed")):
        n = _le(data, 48 + 4 * index, 4)
        if at + n > h:
            return BadCheckpoint(path, "header", f"malformed: the {name} identity ({n:,} byte{'' if n == 1 else 's'}) "
                                                 f"runs past the header ({h:,} bytes)")
        found, want = data[at:at + n], getattr(contract, name)
        if found != want:
            d = next((k for k, (a, b) in enumerate(zip(found, want)) if a != b), min(len(found), len(want)))
            start = d - 20 if d > 20 else 0
            return ForeignCheckpoint(path, name, f"{name} identity differs from byte {d}: this host's is "
                                                 f"{_quote(want, start)}, the checkpoint's is {_quote(found, start)}")
        at += n
    return None


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
    identities (oversized_header), in host_runtime.c oversized_foreign's words; else nothing
    (the size refusal stands)."""
    found = oversized_header(path, most)
    named = shown(path)
    refused = identities_refusal(found[0], _le(found[0], 8, 4), contract, named) if found else None
    if isinstance(refused, ForeignCheckpoint):
        raise ForeignCheckpoint(named, refused.part, f"{refused.detail} (and {found[1]} bytes, more than this "
                                                     f"host's checkpoint); {HINT_FOREIGN}")


def decode(data: bytes, contract: CheckpointContract, path="checkpoint") -> tuple[bytes, int]:
    """(payload, step) of an envelope the contract accepts (a plan's, or a native request's
    Request.contract).  runtime_c/host_runtime.c rt_envelope_check's order, exit codes and messages, byte for
    byte: BadCheckpoint (exit 4) or ForeignCheckpoint (exit 5), `part` naming what is wrong.  Every size
    and count a message shows is grouped by threes (`{n:,}`, as rt_grouped); a byte's position is not."""
    path = shown(path)          # as the C host shows it (rt_io_shown): one line, shortened
    n = len(data)
    if n < FIXED:
        raise BadCheckpoint(path, "size", f"truncated: {count(n, 'byte')}, shorter than the {FIXED}-byte header; "
                                          f"{HINT_COPY}")
    if data[:8] != MAGIC:
        raise BadCheckpoint(path, "magic", f"not a checkpoint (magic is not {MAGIC.decode()}); {HINT_OURS}")
    # the header's sizes: H >= 64, a multiple of 16, H + payload + 12 the file's size
    h, payload = _le(data, 8, 4), _le(data, 24, 8)
    our_h = header_bytes(contract)
    if not (FIXED <= h <= n and h + payload + TAIL == n) and n == file_bytes(contract):
        # a file of exactly this host's size is not cut short: a size field of its header is damaged
        field, have, want = (("header bytes", h, our_h) if h != our_h else
                             ("payload bytes", payload, contract.payload_bytes))
        raise BadCheckpoint(path, "header", f"corrupted: its header says {field} {have:,}, this host's {want:,}, in a "
                                            f"file of this host's size ({n:,} bytes): the header is damaged; "
                                            f"{HINT_COPY}")
    if h < FIXED:
        raise BadCheckpoint(path, "header", f"not a checkpoint: header bytes {h}, fewer than the {FIXED} fixed "
                                            f"bytes; {HINT_OURS}")
    if h % 16:
        raise BadCheckpoint(path, "header", f"not a checkpoint: header bytes {h}, not a multiple of 16; {HINT_OURS}")
    if h > n:
        raise BadCheckpoint(path, "header", f"truncated: header bytes {h:,} do not fit a {n:,}-byte file; {HINT_COPY}")
    if payload > n - h:
        raise BadCheckpoint(path, "size", f"truncated: its header declares a {payload:,}-byte payload, more than the "
                                          f"{n - h:,} byte{'' if n - h == 1 else 's'} after its {h:,}-byte header; "
                                          f"{HINT_COPY}")
    if h + payload + TAIL != n:
        raise BadCheckpoint(path, "size", f"{'truncated' if n < h + payload + TAIL else 'has trailing bytes'}: "
                                          f"{n:,} byte{'' if n == 1 else 's'}, but its header (H {h:,} + payload "
                                          f"{payload:,} + 12) says {h + payload + TAIL:,}; {HINT_COPY}")
    # the trailer: the sizes agree, so a wrong one is damage, not a file cut short
    body = h + payload
    if data[body + 4:body + 12] != TRAILER:
        raise BadCheckpoint(path, "trailer", f"corrupted: its trailer magic is not {TRAILER.decode()}: the file is "
                                             f"damaged; {HINT_COPY}")
    stored, computed = _le(data, body, 4), zlib.crc32(data[:body])
    if stored != computed:
        raise BadCheckpoint(path, "crc", f"corrupted: CRC-32 stored 0x{stored:08x}, computed 0x{computed:08x} over "
                                         f"bytes 0..{body}: the file is damaged; {HINT_COPY}")
    # the identities fit the header, and its padding after them is zero (docs/formats.md): after
    # the CRC, so that a damaged length is said to be damage
    lengths = [_le(data, 48 + 4 * i, 4) for i in range(4)]
    if sum(lengths) > h - FIXED:
        raise BadCheckpoint(path, "header", f"not a checkpoint: header bytes {h:,} cannot hold its identities "
                                            f"({sum(lengths):,} byte{'' if sum(lengths) == 1 else 's'}); {HINT_OURS}")
    nonzero = next((k for k in range(FIXED + sum(lengths), h) if data[k]), None)
    if nonzero is not None:
        raise BadCheckpoint(path, "header", "not a checkpoint this format writes: the header's padding after the "
                            f"identities is not zero (byte {nonzero}); {HINT_OURS}")
    refused = identities_refusal(data, h, contract, path)
    if isinstance(refused, ForeignCheckpoint):
        raise ForeignCheckpoint(path, refused.part, f"{refused.detail}; {HINT_FOREIGN}")
    if refused is not None:
        raise refused
    for part, have, want in (("payload bytes", payload, contract.payload_bytes),
                             ("chunk bytes", _le(data, 32, 8), contract.chunk_bytes),
                             ("chunk count", _le(data, 12, 4), contract.chunk_count),
                             ("updates per invocation", _le(data, 40, 8), contract.updates_per_invocation)):
        if have != want:
            differ = "differs" if part == "chunk count" else "differ"
            raise ForeignCheckpoint(path, part, f"{part} {differ}: this host's {want:,}, the checkpoint's {have:,}; "
                                                f"{HINT_FOREIGN}")
    return bytes(data[h:h + payload]), _le(data, 16, 8)
