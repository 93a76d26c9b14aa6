"""The files of seed 003's pair (docs/partitioned-regression.md, "The data" and "The checkpoint").

A coordinate record (a worker's input): w, a, decay, rate, then the rows' (x_k, y), all
binary64 little-endian.  The checkpoint: a manifest (Checkpoint.NativeRegions'
nativeRegionManifest) and one shard per region (Runtime.RegionFrame's 28-byte header, then
the region's 8 bytes).
"""
from __future__ import annotations

import struct

from .reference import NUMERICS, Coordinate, Data

REGIONS = (b"coordinate-0-weight", b"coordinate-0-accumulator", b"coordinate-1-weight", b"coordinate-1-accumulator")
# where a training layout keeps w and a (PartitionedRegression.CoordinateHost: the first
# frame boundary at or after phStateExtent)
WEIGHT_OFFSET, ACCUMULATOR_OFFSET = 256, 264


def record(data: Data, worker: int, coordinate: Coordinate) -> bytes:
    header = struct.pack("<4d", coordinate.weight, coordinate.accumulator, coordinate.decay, coordinate.rate)
    rows = b"".join(struct.pack("<2d", float(x), float(y)) for x, y in zip(data.features[:, worker], data.targets))
    return header + rows


def manifest(epoch: int, numerics: bytes = NUMERICS) -> bytes:
    out = b"NREG" + struct.pack("<Q", epoch) + struct.pack("<Q", len(numerics)) + numerics + struct.pack("<Q", 4)
    for name in REGIONS:
        offset = WEIGHT_OFFSET if name.endswith(b"weight") else ACCUMULATOR_OFFSET
        out += name.ljust(32, b"\0") + struct.pack("<QQ", offset, 8)
    return out


def shard(epoch: int, steps: int, value: float) -> bytes:
    return b"FRAM" + struct.pack("<QQQ", epoch, steps, 8) + struct.pack("<d", value)


def shard_value(data: bytes) -> tuple[int, int, float]:
    """(epoch, steps, value) of a shard."""
    assert data[:4] == b"FRAM" and len(data) == 36, data[:4]
    epoch, steps, size = struct.unpack_from("<QQQ", data, 4)
    assert size == 8
    return epoch, steps, struct.unpack_from("<d", data, 28)[0]


def column_checksums(record_bytes: bytes) -> tuple[int, int, int, int]:
    """The data identity's four words for a record (docs/partitioned-regression.md, "The data's
    identity"): for y, then for x, the sum of the rows' bit patterns and the sum of those running
    sums, modulo 2^64, rows in order."""
    mask = (1 << 64) - 1
    sums = [0, 0, 0, 0]
    for row in range(4096):
        x, y = struct.unpack_from("<QQ", record_bytes, 32 + 16 * row)
        for at, value in ((0, y), (2, x)):
            sums[at] = (sums[at] + value) & mask
            sums[at + 1] = (sums[at + 1] + sums[at]) & mask
    return tuple(sums)


def data_identity(record_bytes: bytes, worker: int) -> bytes:
    """Worker `worker`'s data message: b"CDPD", the worker (4 bytes), the four checksums."""
    return b"CDPD" + struct.pack("<I4Q", worker, *column_checksums(record_bytes))
