"""Tag the shards of a seed 003 checkpoint of the older format (docs/partitioned-regression.md,
"The checkpoint"): each shard then names its region, as the hosts write and check it.

    python examples/partitioned_regression/upgrade_checkpoint.py MANIFEST W0 A0 W1 A1

The paths in the hosts' order (the manifest, worker 0's weight and accumulator shards, worker
1's): a shard of the older format carries nothing that says which region it holds, so the
order given here is the one trusted, as the older hosts trusted theirs.  Each argument must be
a regular file (a FIFO or a folder is refused without reading it) and a file of its own (two
arguments that are the same file, a symbolic link to another argument included, are refused).
The manifest is checked (this pair's, its epoch) and each shard (the older format, the
manifest's epoch, an 8-byte region); only when all four are, each shard's tagged copy is
written to a synced temporary beside it, with the shard's permission bits, and only when all
are written is each renamed over its shard.  A shard given as a symbolic link is rewritten at
the file it points to: the link stays a link.

Exit 0 done; 2 a file refused or a temporary that could not be written (nothing rewritten);
1 a rename failed after others succeeded: the message names the shards tagged and those left as
they were; run the tool again with the same arguments once the cause is fixed (it leaves a
shard tagged already as it is and tags the rest); 130 interrupted (Ctrl-C), said the same way.
Whatever ends a run, each shard is either tagged or as it was, and no temporary is left beside
it.  The summary is printed on stdout only after every rename: a stdout that cannot take it (a
full disk, `> /dev/full`, closed) is one line on stderr saying the checkpoint is upgraded, exit 0.
"""
from __future__ import annotations

import argparse
import os
import stat
import struct
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from partitioned_regression import formats as F  # noqa: E402

NAMES = ("worker 0's weight shard", "worker 0's accumulator shard", "worker 1's weight shard",
         "worker 1's accumulator shard")
WHATS = ("the manifest (argument 0)",) + tuple(f"{name} (argument {k + 1})" for k, name in enumerate(NAMES))

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _read(path: str, what: str) -> tuple[bytes, os.stat_result]:
    """The file's first 4096 bytes and its status; ValueError for one that cannot be opened or is
    not a regular file (opened without blocking, so a FIFO is refused, not waited on)."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise ValueError(f"{what} {path}: cannot open: {error.strerror}") from None
    try:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode):
            kind = next((name for test, name in _KINDS if test(status.st_mode)), "not a regular file")
            raise ValueError(f"{what} {path}: {kind}, not a checkpoint file; give the file itself")
        os.set_blocking(handle, True)
        with os.fdopen(handle, "rb") as file:
            handle = -1
            return file.read(4096), status
    except OSError as error:
        raise ValueError(f"{what} {path}: cannot read: {error.strerror}") from None
    finally:
        if handle >= 0:
            os.close(handle)


def _same_files(paths: list[str], statuses: list[os.stat_result]) -> None:
    seen: dict[tuple[int, int], int] = {}
    for argument, status in enumerate(statuses):
        first = seen.setdefault((status.st_dev, status.st_ino), argument)
        if first != argument:
            raise ValueError(f"{WHATS[argument]} {paths[argument]} is the same file as {WHATS[first]} "
                             f"{paths[first]}; give each region's own shard (the order is: manifest, "
                             f"w0, a0, w1, a1)")


def upgrade(paths: list[str]) -> list[bytes | None]:
    """The four tagged shards for the checkpoint at `paths`, None for one tagged already
    (ValueError naming the file)."""
    read = [_read(path, what) for path, what in zip(paths, WHATS)]
    _same_files(paths, [status for _, status in read])
    manifest = read[0][0]
    epoch = struct.unpack_from("<Q", manifest, 4)[0] if len(manifest) >= 12 else 0
    if manifest[:4] != b"NREG" or manifest != F.manifest(epoch):
        raise ValueError(f"the manifest (argument 0) {paths[0]}: not a checkpoint manifest of this pair "
                         f"(Checkpoint.NativeRegions' with its numerics and four regions)")
    tagged = []
    for region, (path, (data, _)) in enumerate(zip(paths[1:], read[1:])):
        what = WHATS[region + 1]
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


def _write_temporary(target: str, data: bytes, mode: int) -> str:
    """A synced temporary beside `target` holding `data` with permission bits `mode`."""
    handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.tmp-",
                                         dir=os.path.dirname(target))
    try:
        with os.fdopen(handle, "wb") as file:
            os.fchmod(file.fileno(), mode)
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
    except BaseException:
        _remove(temporary)
        raise
    return temporary


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _sync_folder(folder: str) -> None:
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _quiet_stdout() -> None:
    """Point descriptor 1 at /dev/null, so that what is left in stdout's buffer goes nowhere at exit
    (not to a second failure and a Python complaint)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _complain(line: str) -> None:
    """One line on stderr, a path's control character (a newline) as '?' and its bytes that are not
    UTF-8 as themselves, as bobc and the hosts print them; a stderr that cannot take it changes
    nothing that was done."""
    line = line.translate({code: "?" for code in (*range(0x20), 0x7F)})
    try:
        sys.stderr.flush()
        sys.stderr.buffer.write(line.encode("utf-8", "surrogateescape") + b"\n")
        sys.stderr.buffer.flush()
    except UnicodeEncodeError:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _summary(prog: str, lines: list[str]) -> None:
    """The summary on stdout, once every shard is tagged: a stdout that cannot take it (a full disk,
    `> /dev/full`, closed) is one line on stderr saying the checkpoint is upgraded all the same; a
    reader that went away (a broken pipe) is not told anything more.  Never a traceback, and never
    what undoes or stops an upgrade: every rename is done before the first line is printed."""
    if not lines:
        return
    if sys.stdout is None:          # descriptor 1 closed when the tool started (`>&-`)
        _complain(f"{prog}: the checkpoint is upgraded (every shard tagged), but its summary could not be "
                  f"printed on stdout (stdout is closed)")
        return
    try:
        for line in lines:
            print(line, file=sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    except (OSError, ValueError) as error:
        _quiet_stdout()
        reason = getattr(error, "strerror", None) or str(error)
        _complain(f"{prog}: the checkpoint is upgraded (every shard tagged), but its summary could not be "
                  f"printed on stdout ({reason})")


def main(argv=None, prog: str = "upgrade_checkpoint.py") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=(__doc__ or "\n").splitlines()[0])
    parser.add_argument("paths", nargs=5, metavar="FILE", help="MANIFEST W0 A0 W1 A1, in the hosts' order")
    arguments = parser.parse_args(argv)
    paths = arguments.paths
    try:
        shards = upgrade(paths)
    except ValueError as error:
        _complain(f"{prog}: error: {error}; nothing was rewritten")
        return 2
    # a shard given as a symbolic link is rewritten where it points: the link stays as it is
    todo = [(region, path, os.path.realpath(path), shard)
            for region, (path, shard) in enumerate(zip(paths[1:], shards)) if shard is not None]
    # every temporary not renamed over its shard is removed on the way out, whatever ends the run
    # (a failed write or rename, Ctrl-C): a shard is either tagged or as it was, nothing beside it
    temporaries: list[str | None] = []
    done: list[int] = []
    try:
        try:
            for region, path, target, shard in todo:
                mode = stat.S_IMODE(os.stat(target).st_mode)
                temporaries.append(_write_temporary(target, shard, mode))
        except OSError as error:
            what = WHATS[todo[len(temporaries)][0] + 1]
            place = error.filename or os.path.dirname(todo[len(temporaries)][2])
            _complain(f"{prog}: error: {what} {todo[len(temporaries)][1]}: cannot write its tagged copy "
                      f"({place}: {error.strerror}); nothing was rewritten")
            return 2
        except KeyboardInterrupt:
            _complain(f"{prog}: interrupted before any shard was tagged; nothing was rewritten")
            return 130
        # the renames, one after another with nothing between them that can fail (no printing)
        index = 0
        try:
            for index, ((region, path, target, _), temporary) in enumerate(zip(todo, temporaries)):
                os.replace(temporary, target)
                temporaries[index] = None
                done.append(index)
        except (OSError, KeyboardInterrupt) as error:
            tagged = ", ".join(f"{WHATS[todo[k][0] + 1]} {todo[k][1]}" for k in done) or "none"
            untouched = ", ".join(f"{WHATS[r + 1]} {p}" for r, p, _, _ in todo[len(done):])
            region, path = todo[index][0], todo[index][1]
            if isinstance(error, KeyboardInterrupt):
                cause, code = f"{prog}: interrupted while tagging the shards", 130
            else:
                cause = (f"{prog}: error: {WHATS[region + 1]} {path}: cannot rename its tagged copy over it "
                         f"({error.strerror})")
                code = 1
            half = "half upgraded" if done else "as it was"
            _complain(f"{cause}; the checkpoint is {half}: tagged now: {tagged}; left as they were: {untouched}; "
                      f"fix the cause and run {prog} again with the same arguments (it leaves tagged shards as "
                      f"they are and tags the rest)")
            return code
    finally:
        for temporary in temporaries:
            if temporary is not None:
                _remove(temporary)
    for folder in sorted({os.path.dirname(target) for _, _, target, _ in todo}):
        _sync_folder(folder)
    said = {region: f"tagged {path} as {NAMES[region]} ({F.TAGS[region].decode()})"
            for region, path, _, _ in todo}
    _summary(prog, [said.get(region) or
                    f"{paths[region + 1]} is tagged as {NAMES[region]} ({F.TAGS[region].decode()}) already"
                    for region in range(len(shards))])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
