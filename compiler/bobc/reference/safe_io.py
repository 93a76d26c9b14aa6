"""How the reference runner touches files: the rules runtime_c/host_io.c keeps in C.

The native host and the reference runner must refuse the same hostile files
with the same exit code, before any work starts, and must never leave a
half-written or mixed set of outputs.  docs/runtime.md ("Files") states the
rules; this module and runtime_c/host_io.c are their two implementations,
held together by tests/fuzz.

Inputs:  opened with O_NONBLOCK (a FIFO cannot hang the open), checked to be
         a regular file no larger than its limit, read once, whole.
Outputs: every path is checked before any work: its folder exists and is
         writable; the path is not a symlink, folder, device or FIFO (a
         regular file or nothing); it does not end in '/'; no two outputs and
         no output and input are one file (by real path and by device/inode),
         except the output checkpoint and the input checkpoint (resume in
         place).
         Publication writes every output to a temporary file in its own
         folder and fsyncs it; only when all are written are they renamed
         into place, in the order given (the checkpoint last: a new
         checkpoint means every output of that invocation is new).  A
         failure before the renames removes the temporaries and publishes
         nothing.
"""
from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field

from .errors import BadCheckpoint, OutputWriteFailure

INPUT_LIMIT_BYTES = 1 << 30          # no input larger than 1 GiB is read (docs/limits.md)
STEP_LIMIT = 2 ** 32 - 1             # the AdamW block carries the global step as u32
PAUSE_VARIABLE = "BOB_IO_TEST_PAUSE_MS"   # tests only: a pause between two renames
_PAUSE_LIMIT_MS = 10_000


@dataclass(frozen=True)
class InputFile:
    """An input read whole: its bytes and its identity (for the alias checks)."""

    path: str
    data: bytes
    real: str
    device: int
    inode: int


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_input(path, error, limit: int = INPUT_LIMIT_BYTES) -> InputFile:
    """Read `path` whole or raise `error(path, part, detail)` (an exit-coded FileRefused)."""
    limit = min(limit, INPUT_LIMIT_BYTES)
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as failure:
        raise error(path, "open", f"cannot open: {failure.strerror or failure}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(path, "kind", f"{_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise error(path, "size", f"{info.st_size} bytes, more than the {limit} this file "
                        "can be")
        # one byte past the size fstat gave tells a file that changed while being read
        expected = info.st_size
        chunks, got = [], 0
        while got <= expected:
            try:
                chunk = os.read(fd, min(1 << 20, expected + 1 - got))
            except InterruptedError:
                continue
            except OSError as failure:
                raise error(path, "read", f"read failed: {failure.strerror or failure}") from None
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got != expected:
            raise error(path, "size", f"changed while being read ({expected} bytes, then "
                        f"{'more' if got > expected else got})")
        return InputFile(name, b"".join(chunks), os.path.realpath(name), info.st_dev, info.st_ino)
    finally:
        os.close(fd)


def check_step_room(step: int, updates: int, path) -> None:
    """A checkpoint whose step leaves no room for this invocation's updates is refused (exit 4).

    The AdamW block carries the global step t = step + k (k = 1..updates) as
    u32; past 2^32 - 1 it would wrap and the bias corrections divide by zero.
    """
    if updates > STEP_LIMIT or step > STEP_LIMIT - updates:
        raise BadCheckpoint(path, "step", f"step {step} leaves no room for {updates} more "
                            f"updates (limit {STEP_LIMIT})")


@dataclass
class _Output:
    path: str
    option: str
    folder: str
    base: str
    real: str
    identity: tuple | None
    data: bytes | None = None


@dataclass
class OutputSet:
    """Output paths checked before any work, then published together."""

    inputs: list = field(default_factory=list)        # InputFile
    outputs: list = field(default_factory=list)       # _Output, in publication order

    def add(self, path, option: str, replaces: InputFile | None = None) -> None:
        """Check one output path now (exit 8 when it cannot be published safely).

        `replaces`: the one input this output may be (a checkpoint resumed in
        place: the input was read whole before, and the rename replaces it
        atomically)."""
        name = os.fspath(path)

        def refuse(detail):
            raise OutputWriteFailure(name, option, detail,
                                     hint="nothing was written; the files there are unchanged")
        if not name:
            refuse("an empty path")
        if name.endswith("/"):
            refuse("ends with '/': an output is a file, not a folder")
        folder, base = os.path.split(name)
        folder = folder or "."
        if base in (".", ".."):
            refuse(f"'{base}' names a folder, not a file")
        try:
            folder_info = os.stat(folder)
        except OSError as failure:
            refuse(f"its folder {folder} cannot be reached: {failure.strerror or failure}")
        if not stat.S_ISDIR(folder_info.st_mode):
            refuse(f"{folder} is not a folder")
        if not os.access(folder, os.W_OK | os.X_OK):
            refuse(f"its folder {folder} is not writable")
        identity = None
        try:
            info = os.lstat(name)
        except FileNotFoundError:
            info = None
        except OSError as failure:
            refuse(f"cannot inspect it: {failure.strerror or failure}")
        if info is not None:
            if not stat.S_ISREG(info.st_mode):
                refuse(f"is {_kind(info.st_mode)}; only a regular file (or nothing) is replaced")
            identity = (info.st_dev, info.st_ino)
        real = os.path.join(os.path.realpath(folder), base)
        for other in self.outputs:
            if other.real == real or (identity is not None and other.identity == identity):
                refuse(f"is the same file as {other.option} {other.path}")
        for source in self.inputs:
            if source is replaces:
                continue
            if source.real == real or identity == (source.device, source.inode):
                refuse(f"is the input {source.path}; an output never replaces an input")
        self.outputs.append(_Output(name, option, folder, base, real, identity))

    def stage(self, option: str, data: bytes) -> None:
        for output in self.outputs:
            if output.option == option:
                output.data = bytes(data)
                return
        raise KeyError(option)

    def publish(self) -> None:
        """Write every staged output to a synced temporary, then rename them all in order."""
        temporaries: list = []
        try:
            for output in self.outputs:
                temporaries.append(_write_temporary(output))
            for output in self.outputs:         # still a regular file or nothing?
                try:
                    info = os.lstat(output.path)
                except FileNotFoundError:
                    continue
                except OSError as failure:
                    raise OutputWriteFailure(output.path, output.option,
                                             f"cannot inspect it: {failure.strerror}") from None
                if not stat.S_ISREG(info.st_mode):
                    raise OutputWriteFailure(output.path, output.option,
                                             f"became {_kind(info.st_mode)} during the run")
            pause = _test_pause()
            for index, (output, temporary) in enumerate(zip(self.outputs, temporaries)):
                if index and pause:
                    time.sleep(pause)
                try:
                    os.replace(temporary, output.path)
                except OSError as failure:
                    raise OutputWriteFailure(output.path, output.option,
                                             f"rename failed: {failure.strerror or failure}",
                                             hint=_published_hint(self.outputs[:index])) from None
                temporaries[index] = None
            for folder in dict.fromkeys(o.folder for o in self.outputs):
                _fsync_folder(folder)
        finally:
            for temporary in temporaries:
                if temporary is not None:
                    try:
                        os.unlink(temporary)
                    except OSError:
                        pass


def _published_hint(done) -> str:
    if not done:
        return "nothing was published; the files there are unchanged"
    return "already published: " + ", ".join(o.path for o in done)


def _test_pause() -> float:
    text = os.environ.get(PAUSE_VARIABLE, "")
    if text.isdigit():
        return min(int(text), _PAUSE_LIMIT_MS) / 1000
    return 0.0


def _write_temporary(output: _Output) -> str:
    data = output.data if output.data is not None else b""
    mask = os.umask(0)
    os.umask(mask)
    for attempt in range(100):
        candidate = os.path.join(output.folder, f".{output.base}.tmp-{os.getpid()}-{attempt}")
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
                         | os.O_NOFOLLOW, 0o600)
            break
        except FileExistsError:
            continue
        except OSError as failure:
            raise OutputWriteFailure(output.path, output.option, "cannot create a temporary "
                                     f"file in {output.folder}: {failure.strerror or failure}",
                                     hint="nothing was published") from None
    else:
        raise OutputWriteFailure(output.path, output.option, "no free temporary name",
                                 hint="nothing was published")
    try:
        os.fchmod(fd, 0o666 & ~mask)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(5, "write wrote nothing")
            view = view[written:]
        os.fsync(fd)
    except OSError as failure:
        os.close(fd)
        try:
            os.unlink(candidate)
        except OSError:
            pass
        raise OutputWriteFailure(output.path, output.option,
                                 f"write failed: {failure.strerror or failure}",
                                 hint="nothing was published; the files there are unchanged") \
            from None
    os.close(fd)
    return candidate


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return          # the renames already happened; nothing more to make durable
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def publish_file(path, data: bytes, option: str = "output", mode: int | None = None) -> None:
    """One output on its own (the same checks, one temporary, one rename)."""
    outputs = OutputSet()
    outputs.add(path, option)
    outputs.stage(option, data)
    if mode is None:
        outputs.publish()
        return
    _publish_with_mode(outputs, mode)


def _publish_with_mode(outputs: OutputSet, mode: int) -> None:
    """As publish(), with an explicit mode (an executable) applied before the rename."""
    output = outputs.outputs[0]
    temporary = _write_temporary(output)
    try:
        os.chmod(temporary, mode & ~_umask())
        os.replace(temporary, output.path)
        temporary = None
        _fsync_folder(output.folder)
    except OSError as failure:
        raise OutputWriteFailure(output.path, output.option, f"{failure.strerror or failure}",
                                 hint="nothing was published; the file there is unchanged") \
            from None
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
