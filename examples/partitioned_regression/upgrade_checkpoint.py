"""Tag the shards of a seed 003 checkpoint of the older format (docs/partitioned-regression.md,
"The checkpoint"): each shard then names its region, as the hosts write and check it.

    python examples/partitioned_regression/upgrade_checkpoint.py MANIFEST W0 A0 W1 A1

The paths in the hosts' order (the manifest, worker 0's weight and accumulator shards, worker
1's): a shard of the older format carries nothing that says which region it holds, so the
order given here is the one trusted, as the older hosts trusted theirs.  The manifest is
checked (this pair's, its epoch) and each shard (the older format, the manifest's epoch, an
8-byte region); only when all four are, each is rewritten with its region's tag, through a
synced temporary renamed over it.  Exit 0 done, 2 a file refused (nothing rewritten).
"""
from __future__ import annotations

import argparse
import os
import struct
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from partitioned_regression import formats as F  # noqa: E402

NAMES = ("worker 0's weight shard", "worker 0's accumulator shard", "worker 1's weight shard",
         "worker 1's accumulator shard")


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read(4096)
    except OSError as error:
        raise ValueError(f"{what} {path}: cannot open: {error.strerror}") from None


def _replace(path: str, data: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.tmp-", dir=folder)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def upgrade(paths: list[str]) -> list[bytes | None]:
    """The four tagged shards for the checkpoint at `paths`, None for one tagged already
    (ValueError naming the file)."""
    manifest = _read(paths[0], "the manifest (argument 0)")
    epoch = struct.unpack_from("<Q", manifest, 4)[0] if len(manifest) >= 12 else 0
    if manifest[:4] != b"NREG" or manifest != F.manifest(epoch):
        raise ValueError(f"the manifest (argument 0) {paths[0]}: not a checkpoint manifest of this pair "
                         f"(Checkpoint.NativeRegions' with its numerics and four regions)")
    tagged = []
    for region, (path, name) in enumerate(zip(paths[1:], NAMES)):
        what = f"{name} (argument {region + 1})"
        data = _read(path, what)
        if len(data) == F.SHARD_BYTES and data[:4] == F.TAGS[region]:
            tagged.append(None)
            continue
        try:
            shard = F.upgrade_shard(data, region)
        except ValueError as error:
            raise ValueError(f"{what} {path}: {error}") from None
        if struct.unpack_from("<Q", data, 4)[0] != epoch:
            raise ValueError(f"{what} {path}: a frame of another epoch, not the manifest's epoch {epoch}")
        tagged.append(shard)
    return tagged


def main(argv=None, prog: str = "upgrade_checkpoint.py") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs=5, metavar="FILE", help="MANIFEST W0 A0 W1 A1, in the hosts' order")
    arguments = parser.parse_args(argv)
    try:
        shards = upgrade(arguments.paths)
    except ValueError as error:
        print(f"{prog}: error: {error}; nothing was rewritten", file=sys.stderr)
        return 2
    for region, (path, shard) in enumerate(zip(arguments.paths[1:], shards)):
        if shard is None:
            print(f"{path} is tagged as {NAMES[region]} ({F.TAGS[region].decode()}) already")
            continue
        _replace(path, shard)
        print(f"tagged {path} as {NAMES[region]} ({F.TAGS[region].decode()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
