"""The files of seed 003's pair (docs/partitioned-regression.md, "The data" and "The checkpoint").

A coordinate record (a worker's input): w, a, decay, rate, then the rows' (x_k, y), all
binary64 little-endian.  The checkpoint: a manifest (Checkpoint.NativeRegions'
nativeRegionManifest) and one shard per region: Runtime.RegionFrame's 28-byte header with its
magic b"FRAM" replaced by the region's tag (TAGS: b"SHw0" worker 0's weight ... b"SHa1"), then
the region's 8 bytes.  A shard of the older format (before the tag) starts with b"FRAM";
`upgrade_shard` tags one.
"""
from __future__ import annotations

import struct

from .reference import NUMERICS, Coordinate, Data

REGIONS = (b"coordinate-0-weight", b"coordinate-0-accumulator", b"coordinate-1-weight", b"coordinate-1-accumulator")
# each region's shard tag (PartitionedRegression.CoordinateHost chShardTag), in REGIONS' order:
# region r is argument r + 1 of every host
TAGS = (b"SHw0", b"SHa0", b"SHw1", b"SHa1")
OLDER_MAGIC = b"FRAM"
SHARD_BYTES = 36
RECORD_HEADER_BYTES, ROW_BYTES = 32, 16        # a record's w, a, decay, rate; a row's x_k, y
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


def shard(epoch: int, steps: int, value: float, region: int) -> bytes:
    """The shard of region `region` (0 to 3, REGIONS' order: argument region + 1)."""
    return TAGS[region] + struct.pack("<QQQ", epoch, steps, 8) + struct.pack("<d", value)


def older_shard(epoch: int, steps: int, value: float) -> bytes:
    """A shard as the older format wrote it: Runtime.RegionFrame's header as it is (b"FRAM"), no tag."""
    return OLDER_MAGIC + shard(epoch, steps, value, 0)[4:]


def shard_region(data: bytes) -> int:
    """The region (0 to 3) a shard's tag names."""
    assert len(data) == SHARD_BYTES and data[:4] in TAGS, data[:4]
    return TAGS.index(data[:4])


def shard_value(data: bytes) -> tuple[int, int, float]:
    """(epoch, steps, value) of a shard."""
    shard_region(data)
    epoch, steps, size = struct.unpack_from("<QQQ", data, 4)
    assert size == 8
    return epoch, steps, struct.unpack_from("<d", data, 28)[0]


def upgrade_shard(data: bytes, region: int) -> bytes:
    """A shard of the older format tagged as region `region`'s (ValueError for one that is not)."""
    if len(data) != SHARD_BYTES:
        raise ValueError(f"{len(data)} bytes, not the {SHARD_BYTES} of a shard")
    if data[:4] in TAGS:
        raise ValueError(f"tagged {data[:4].decode()} already, {REGIONS[TAGS.index(data[:4])].decode()}'s tag")
    if data[:4] != OLDER_MAGIC:
        raise ValueError("not a shard of the older format (it does not start with FRAM)")
    if struct.unpack_from("<Q", data, 20)[0] != 8:
        raise ValueError("not a coordinate shard (its region is not 8 bytes)")
    return TAGS[region] + data[4:]


def record_rows(record_bytes: bytes) -> int:
    """The rows a coordinate record holds: (its bytes - 32) / 16 (ValueError for a size that is
    not a 32-byte header and whole 16-byte rows).  A host takes coordinateRows rows (4096, or what
    a plan of another coordinateRows builds for: docs/partitioned-regression.md, "The data")."""
    rows, left = divmod(len(record_bytes) - RECORD_HEADER_BYTES, ROW_BYTES)
    if len(record_bytes) < RECORD_HEADER_BYTES or left:
        raise ValueError(f"{len(record_bytes)} bytes: not a coordinate record ({RECORD_HEADER_BYTES} bytes of "
                         f"header, then {ROW_BYTES} bytes a row)")
    return rows


def column_checksums(record_bytes: bytes) -> tuple[int, int, int, int]:
    """The data identity's four words for a record (docs/partitioned-regression.md, "The data's
    identity"): for y, then for x, the sum of the rows' bit patterns and the sum of those running
    sums, modulo 2^64, rows in order -- every row the record holds (before, always 4096 rows: a
    record of a plan with another coordinateRows got another record's words, or none)."""
    mask = (1 << 64) - 1
    sums = [0, 0, 0, 0]
    for row in range(record_rows(record_bytes)):
        x, y = struct.unpack_from("<QQ", record_bytes, 32 + 16 * row)
        for at, value in ((0, y), (2, x)):
            sums[at] = (sums[at] + value) & mask
            sums[at + 1] = (sums[at + 1] + sums[at]) & mask
    return tuple(sums)


def data_identity(record_bytes: bytes, worker: int) -> bytes:
    """Worker `worker`'s data message: b"CDPD", the worker (4 bytes), the four checksums."""
    return b"CDPD" + struct.pack("<I4Q", worker, *column_checksums(record_bytes))
