"""Write a LinReg input record (LinReg.Model): magic LINREG01, version u64 1,
X (64 x 7 binary32, row-major), y (64 binary32) = X w* + b* + noise.

    python examples/linear_regression/make_record.py -o record.bin [--seed N]

The record is published as the platform publishes every output (docs/runtime.md, "Files"):
written to a synced temporary `.NAME.tmp-XXXXXX` beside it, then renamed into place, so a
full disk, a file size limit (`ulimit -f`: EFBIG, SIGXFSZ ignored) or any other failed
write leaves the file there as it was and no temporary behind.  Only a regular file (or
nothing) is replaced: a symbolic link, a folder, a device or a FIFO is refused, never
written through; `-o -` is refused as bobc refuses it (a usage error: the record is a file,
never stdout; `-o ./-` names a file called `-`).  Exit 0 written; 2 a usage error; 8 the record not written (one message on
stderr naming the path and the reason; the files there are unchanged).
"""
import argparse
import os
import secrets
import signal
import stat
import struct
import sys

import numpy as np

N, D = 64, 7
PROG = "make_record.py"
NOT_WRITTEN = 8                      # as every tool and host of the platform: an output not written
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"   # mkstemp's


def make(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D)).astype(np.float32)
    w = np.linspace(-1.5, 1.5, D).astype(np.float32)
    y = (X @ w + np.float32(0.75) + 0.05 * rng.standard_normal(N)).astype(np.float32)
    return X, y

def record_bytes(X, y) -> bytes:
    return b"LINREG01" + struct.pack("<Q", 1) + X.astype("<f4").tobytes() + y.astype("<f4").tobytes()


class NotWritten(Exception):
    """The record cannot be published; the message says why (the files there are unchanged)."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _check(path: str) -> tuple[str, str]:
    """(folder, name) of an output path the record may be published at; NotWritten if not."""
    if not path:
        raise NotWritten("an empty path")
    if path.endswith("/"):
        raise NotWritten("ends with '/': an output is a file, not a folder")
    folder, base = os.path.split(path)
    folder = folder or "."
    if base in (".", ".."):
        raise NotWritten(f"'{base}' names a folder, not a file")
    try:
        info = os.stat(folder)
    except FileNotFoundError:       # as bobc says it (bobc.reference.safe_io OutputSet.add)
        raise NotWritten(f"its folder {folder} does not exist; create it first") from None
    except OSError as failure:
        raise NotWritten(f"its folder {folder} cannot be reached: {failure.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise NotWritten(f"{folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise NotWritten(f"its folder {folder} is not writable")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return folder, base
    except OSError as failure:
        raise NotWritten(f"cannot inspect it: {failure.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise NotWritten(f"is {_kind(info.st_mode)}; only a regular file (or nothing) is replaced")
    return folder, base


def _sync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def publish(path: str, data: bytes) -> None:
    """`data` at `path`: a synced temporary beside it renamed over it (never through a symbolic
    link); NotWritten, the temporary removed and the file there unchanged, if any step fails."""
    folder, base = _check(path)
    mask = os.umask(0)
    os.umask(mask)
    for _attempt in range(100):
        temporary = os.path.join(folder, f".{base}.tmp-" + "".join(secrets.choice(_LETTERS) for _ in range(6)))
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            break
        except FileExistsError:
            continue
        except OSError as failure:
            raise NotWritten(f"cannot create a temporary file in {folder}: {failure.strerror}") from None
    else:
        raise NotWritten(f"no free temporary name in {folder}")
    stage = "write"
    try:
        try:
            os.fchmod(fd, 0o666 & ~mask)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                if written <= 0:
                    raise OSError(5, os.strerror(5))
                view = view[written:]
            stage = "fsync"
            os.fsync(fd)
        finally:
            os.close(fd)
        stage = "rename"
        info = os.lstat(path) if os.path.lexists(path) else None
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise NotWritten(f"became {_kind(info.st_mode)} while the record was written")
        os.replace(temporary, path)
        temporary = None
    except OSError as failure:        # ENOSPC, EFBIG (past `ulimit -f`), EIO, EDQUOT ... alike
        raise NotWritten(f"{stage} failed: {failure.strerror}") from None
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass
    _sync_folder(folder)


def main(argv=None) -> int:
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # past `ulimit -f` a write says EFBIG, not a kill
    p = argparse.ArgumentParser(prog=PROG, description="Write a LinReg input record.")
    p.add_argument("-o", required=True, help="the record file to write")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if a.o == "-":      # as bobc refuses `-o -` (README): the record is a file a host reads, never stdout
        print(f"{PROG}: error: -o -: the record is written to a file, not stdout; name the file (-o ./- for one "
              "named '-')", file=sys.stderr)
        return 2
    X, y = make(a.seed)
    try:
        publish(a.o, record_bytes(X, y))
    except NotWritten as error:
        # the path as bobc shows it: a control character (a newline) as "?", so the message stays one
        # line, and a byte that is not UTF-8 as itself
        line = f"{PROG}: error: {a.o}: cannot write output (-o): {error}".translate(
            {code: "?" for code in (*range(0x20), 0x7F)})
        sys.stderr.flush()
        sys.stderr.buffer.write(os.fsencode(line) + b"\nhint: nothing was written; the files there are unchanged\n")
        sys.stderr.buffer.flush()
        return NOT_WRITTEN
    return 0


if __name__ == "__main__":
    sys.exit(main())
