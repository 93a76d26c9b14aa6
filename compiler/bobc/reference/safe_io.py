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
         regular file or nothing); it does not end in '/'; a rename over it
         would not fail (not another user's file in a sticky folder that is
         not the user's either; neither it nor its folder immutable or
         append-only); no two outputs and no output and input are one file
         (by real path and by device/inode), except the output checkpoint and
         the input checkpoint (resume in place).
         Publication writes every output to a temporary file in its own
         folder (DIR/.NAME.tmp-XXXXXX) and fsyncs it; only when all are
         written are they renamed into place, in the order given (the
         checkpoint last: a new checkpoint means every output of that
         invocation is new).  A
         failure before the renames removes the temporaries and publishes
         nothing.
Journal: a publication of several files first writes a journal (below) in
         the last output's folder, naming each temporary and its destination,
         and removes it after the last rename; recover() completes a journal
         left by a kill before any later invocation checks its outputs, so a
         user never sees outputs of two runs side by side; a journal older
         than one of its destinations is stale and refused, never rolled
         forward over the newer file.
Locking: a publication and a recovery hold an exclusive flock(2) on each folder they write
         in (lock_folders; host_io.c takes the same lock, so hosts and the reference exclude
         each other): publications into one folder are serialised, and a recovery never sees a
         live publication's journal.  A lock another process holds is said on stderr
         (LOCK_NOTICE, the host's words) before it is waited for; Ctrl-C while waiting removes
         the publication's temporaries (`bobc: interrupted`, exit 130).
Messages: a path is shown as the C host shows it (shown(): shortened in the
         middle past SHOWN_BYTES bytes, so the C host's messages keep their
         reason in its fixed buffer; the reference gives the same text).
"""
from __future__ import annotations

import os
import secrets
import stat
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field

from ..errors import stderr_line   # one writer of a line on stderr, the CLI's too
from ..native.words import count
from .digits import decimal_at_most
from .errors import BadCheckpoint, OutputWriteFailure

INPUT_LIMIT_BYTES = 1 << 30          # no input larger than 1 GiB is read (docs/limits.md)
STEP_LIMIT = 2 ** 32 - 1             # a per-step fill writes the global step as u32
PAUSE_VARIABLE = "BOBC_IO_TEST_PAUSE_MS"   # tests only: a pause between two renames
LOCK_PAUSE_VARIABLE = "BOBC_IO_TEST_LOCK_PAUSE_MS"   # tests only: a pause between writing the
#                                                   temporaries and taking the publication lock
_PAUSE_LIMIT_MS = 10_000
# how a message shows a path: bobc.errors (the CLI's refusals say paths without importing this package)
from ..errors import SHOWN_BYTES, shown  # noqa: E402,F401
NAME_ROOM = 25                       # RT_IO_NAME_ROOM: `..NAME.bob-journal.tmp-XXXXXX` beside an output
# Linux's FS_IOC_GETFLAGS (_IOR('f', 1, long)) and the two attributes that stop a rename
_FS_IOC_GETFLAGS = (2 << 30) | (struct.calcsize("l") << 16) | (ord("f") << 8) | 1
_FS_IMMUTABLE_FL = 0x10
_FS_APPEND_FL = 0x20
_TEMPORARY_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"   # mkstemp's




CAP_FOWNER = 3         # linux/capability.h


def may_replace_any_file() -> bool:
    """Whether this process may replace another user's file in a sticky folder that is not its
    own (runtime_c/host_io.c may_replace_any_file): the kernel asks for CAP_FOWNER in the
    effective set (/proc/self/status, CapEff), not for uid 0 -- root in a container that dropped
    the capability may not (probe s31 hostexe finding 3).  Without /proc, uid 0 is taken to."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"CapEff:"):
                    return bool(int(line.split()[1], 16) >> CAP_FOWNER & 1)
    except (OSError, ValueError, IndexError):
        pass
    return os.geteuid() == 0


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd` (os.write may write less than asked); a write that makes no
    progress is an I/O error (EIO), not a loop."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(5, os.strerror(5))
        view = view[written:]


def write_failure(failure: OSError) -> str:
    """A failed write's reason as runtime_c/host_runtime.c rt_write_failure words it: the system's
    words, and for EFBIG under a file size limit that limit and what to do (probe s33 resources
    finding 4: the host ignores SIGXFSZ, so a write past `ulimit -f` fails as this one does)."""
    import errno
    import resource

    words = os.strerror(failure.errno) if failure.errno else str(failure)
    if failure.errno == errno.EFBIG:
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if limit != resource.RLIM_INFINITY:
            words += f" (the file size limit, ulimit -f, is {count(limit, 'byte')}: raise it, then run again)"
    return words


def open_failure(number: int | None, words: str | None = None) -> str:
    """Why a file could not be created (an output's temporary, its folder's trial file) as
    runtime_c/host_io.c open_failure words it: the system's words, and when no descriptor was left
    what to do -- this process's limit (EMFILE: ulimit -n) or the system's table (ENFILE), as bobc's
    own commands say it (probe s34 ux finding 3)."""
    import errno
    import resource

    said = os.strerror(number) if number else (words or "unknown error")
    if number == errno.EMFILE:
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        shown_limit = "" if limit == resource.RLIM_INFINITY else f", is {limit}"
        return f"{said} (the limit of open files, ulimit -n{shown_limit}: raise it, then run again)"
    if number == errno.ENFILE:
        return f"{said} (the system's table of open files is full: close programs that hold many files open, then run again)"
    return said


def room_failure(number: int | None, folder, otherwise: str) -> str:
    """A publication's temporary that failed for want of room as runtime_c/host_io.c room_failure
    words it: ENOSPC (a full file system, or no inode left) and EDQUOT with what to do (probe s47
    faultinject finding 4); `otherwise` for any other errno."""
    import errno

    if number == errno.ENOSPC:
        return f"{os.strerror(number)} (the file system of {shown(folder)} is full: free space there, then run again)"
    if number == errno.EDQUOT:
        return (f"{os.strerror(number)} (the disk quota on the file system of {shown(folder)} is used up: free space "
                "there or have the quota raised, then run again)")
    return otherwise


def _read_only_file_system(folder) -> bool:
    """Whether `folder` lies on a file system mounted read-only (statvfs's ST_RDONLY, as host_io.c asks)."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _attributes(path, folder: bool) -> int:
    """FS_IOC_GETFLAGS of `path` (a folder, through a symlink, or the file itself); 0 when they
    cannot be read (host_io.c attributes_of)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
                     | (os.O_DIRECTORY if folder else os.O_NOFOLLOW))
    except OSError:
        return 0
    try:
        import fcntl

        flags = bytearray(8)
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags)
        return int.from_bytes(flags[:4], sys.byteorder)      # the kernel writes an int
    except (OSError, ImportError):
        return 0
    finally:
        os.close(fd)


def _unrenamable(path, folder: bool) -> str | None:
    """Why `path` cannot take a rename, from its attributes (host_io.c unrenamable); None if it can."""
    flags = _attributes(path, folder)
    if flags & _FS_IMMUTABLE_FL:
        return ("has the immutable attribute (lsattr shows 'i'): nothing in it can be replaced; "
                "clear it (chattr -i) or choose another folder" if folder else
                "has the immutable attribute (lsattr shows 'i'), so it cannot be replaced; "
                "clear it (chattr -i) or choose another path")
    if flags & _FS_APPEND_FL:
        return ("has the append-only attribute (lsattr shows 'a'): nothing in it can be renamed; "
                "clear it (chattr -a) or choose another folder" if folder else
                "has the append-only attribute (lsattr shows 'a'), so it cannot be replaced; "
                "clear it (chattr -a) or choose another path")
    return None


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


def _open_input(path, error, limit: int, exact: bool = False):
    """(fd, fstat, the name as shown) of `path` opened without blocking (a FIFO never hangs it),
    a regular file of at most `limit` bytes; else `error(path, part, detail)` and nothing open.
    `exact`: the file must be `limit` bytes, so a larger one is refused as "expected exactly"
    (host_io.c rt_io_read_exact's words), not by the reader's bound."""
    named = shown(os.fspath(path))         # as the C host names it (its messages have a fixed size)
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as failure:
        raise error(named, "open", f"cannot open: {failure.strerror or failure}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(named, "kind", f"{_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            if exact:           # the sizes grouped by threes, as host_io.c's (rt_grouped)
                from ..certify.limits import shown as shown_count, shown_bytes
                raise error(named, "size", f"{shown_bytes(info.st_size)}, expected exactly {shown_count(limit)}")
            from ..certify.limits import shown as shown_count, shown_bytes
            raise error(named, "size", f"{shown_bytes(info.st_size)}, more than this file can be "
                        f"({shown_count(limit)} bytes at most are read)")       # grouped, as host_io.c's
    except BaseException:
        os.close(fd)
        raise
    return fd, info, named


def check_input(path, error, limit: int = INPUT_LIMIT_BYTES) -> None:
    """read_input's checks of `path` without reading it: a regular file of at most `limit` bytes."""
    fd, _, _ = _open_input(path, error, min(limit, INPUT_LIMIT_BYTES))
    os.close(fd)


def read_input(path, error, limit: int = INPUT_LIMIT_BYTES, exact: bool = False) -> InputFile:
    """Read `path` whole or raise `error(path, part, detail)` (an exit-coded FileRefused).
    `exact`: `limit` is the size the file must have (a larger one is refused unread, saying so)."""
    name = os.fspath(path)
    fd, info, named = _open_input(name, error, min(limit, INPUT_LIMIT_BYTES), exact and limit <= INPUT_LIMIT_BYTES)
    try:
        # one byte past the size fstat gave tells a file that changed while being read
        expected = info.st_size
        chunks, got = [], 0
        while got <= expected:
            try:
                chunk = os.read(fd, min(1 << 20, expected + 1 - got))
            except InterruptedError:
                continue
            except OSError as failure:
                raise error(named, "read", f"read failed: {failure.strerror or failure}") from None
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got != expected:
            raise error(named, "size", f"changed while being read ({expected} bytes, then "
                        f"{'more' if got > expected else got})")
        return InputFile(name, b"".join(chunks), os.path.realpath(name), info.st_dev, info.st_ino)
    finally:
        os.close(fd)


def check_step_room(step: int, updates: int, path) -> None:
    """A checkpoint whose step leaves no room for this invocation's updates is refused (exit 4).

    A per-step fill writes the global step t = step + k (k = 1..updates) as a
    u32; past 2^32 - 1 it would wrap (and an optimizer's bias corrections would divide by zero).
    """
    refusal = step_room_refusal(step, updates)
    if refusal is not None:
        raise BadCheckpoint(shown(path), "step", refusal)


def step_room_refusal(step: int, updates: int) -> str | None:
    """host_io.c rt_io_check_step_room's words when `step` leaves no room for `updates` more, else None."""
    if updates > STEP_LIMIT or step > STEP_LIMIT - updates:
        return (f"step {step} leaves no room for {count(updates, 'more update')} (limit {STEP_LIMIT}); it can still "
                "be used for predict, or train from an earlier checkpoint")
    return None


@dataclass
class _Output:
    path: str
    option: str
    folder: str
    base: str
    real: str
    identity: tuple | None
    data: bytes | None = None
    temporary: str | None = None      # written by OutputSet.prepare: only its rename is left
    mode: int = 0o666                 # its temporary's mode before the umask (an executable: 0o755)


class PrepareRefused(Exception):
    """An output whose temporary OutputSet.prepare could not write; `message` is the host's
    (runtime_c/host_io.c rt_io_prepare), and every temporary is removed."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass
class OutputSet:
    """Output paths checked before any work, then published together."""

    inputs: list = field(default_factory=list)        # InputFile
    outputs: list = field(default_factory=list)       # _Output, in publication order

    def add(self, path, option: str, replaces: InputFile | None = None, mode: int = 0o666) -> None:
        """Check one output path now (exit 8 when it cannot be published safely).

        `replaces`: the one input this output may be (a checkpoint resumed in
        place: the input was read whole before, and the rename replaces it
        atomically).  `mode`: the file's mode before the umask (0o755: an
        executable, `bobc build -o`), its temporary's from its first byte on."""
        name = os.fspath(path)

        def refuse(detail):
            raise OutputWriteFailure(shown(name), option, detail,
                                     hint="nothing was written; the files there are unchanged")
        if not name:
            refuse("an empty path")
        if len(os.fsencode(name)) >= JOURNAL_PATH_BYTES:     # host_io.c rt_io_add_output: its path buffers
            refuse("path too long")
        if name.endswith("/"):
            refuse("ends with '/': an output is a file, not a folder")
        # the folder as host_io.c rt_io_add_output takes it: the path up to its last '/' as
        # written ("a//o": "a/"), "/" for a name at the root, "." for a bare name
        cut = name.rfind("/")
        folder, base = ("." if cut < 0 else "/" if cut == 0 else name[:cut]), name[cut + 1:]
        if base in (".", ".."):
            refuse(f"'{base}' names a folder, not a file")
        try:
            folder_info = os.stat(folder)
        except FileNotFoundError:       # said as --emit-images says it (nvidia.encode.check_image_folder)
            refuse(f"its folder {shown(folder)} does not exist; create it first")
        except OSError as failure:
            refuse(f"its folder {shown(folder)} cannot be reached: {failure.strerror or failure}")
        if not stat.S_ISDIR(folder_info.st_mode):
            refuse(f"{shown(folder)} is not a folder")
        why = _unrenamable(folder, True)
        if why:
            refuse(f"its folder {shown(folder)} {why}")
        if not os.access(folder, os.W_OK | os.X_OK):
            # which of the three (probe s31 hostexe finding 11); its twin: host_io.c rt_io_add_output
            if _read_only_file_system(folder):
                refuse(f"its folder {shown(folder)} is on a read-only file system")
            if not os.access(folder, os.X_OK):
                refuse(f"its folder {shown(folder)} cannot be entered: its mode {folder_info.st_mode & 0o7777:04o} "
                       "gives no search (x) permission")
            refuse(f"its folder {shown(folder)} is not writable")
        # the publication makes `.NAME.tmp-XXXXXX`, `.NAME.bob-journal` and the journal's temporary
        # `..NAME.bob-journal.tmp-XXXXXX` beside the output (host_io.c)
        try:
            name_max = os.pathconf(folder, "PC_NAME_MAX")
        except (OSError, ValueError):
            name_max = 255
        if name_max <= 0:
            name_max = 255
        length = len(os.fsencode(base))
        if length + NAME_ROOM > name_max:
            refuse(f"its file name has {length} bytes, and its folder {shown(folder)} takes names of at most "
                   f"{name_max}: the publication writes .NAME.tmp-XXXXXX and ..NAME.bob-journal.tmp-XXXXXX beside it, "
                   f"so an output's name may have at most {name_max - NAME_ROOM}; choose a shorter one")
        try:       # as the host does (host_io.c): some folders refuse a new file whatever their mode says
            descriptor, trial = tempfile.mkstemp(prefix=".bobc-trial-", dir=folder)
            os.close(descriptor)
        except OSError as error:
            refuse(f"a file cannot be created in its folder {shown(folder)}: {open_failure(error.errno, error.strerror)}")
        try:       # made, but not removable (EIO): not "cannot be created" (probe s47 faultinject finding 3)
            os.unlink(trial)
        except OSError as error:
            refuse(f"a trial file made in its folder {shown(folder)} cannot be removed: {error.strerror or error}; "
                   "remove the .bobc-trial-* file there by hand")
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
            # a rename over it that would fail is refused now, not after the work (docs/runtime.md, "Files")
            me = os.geteuid()
            if folder_info.st_mode & stat.S_ISVTX and me not in (info.st_uid, folder_info.st_uid) \
                    and not may_replace_any_file():
                refuse(f"it cannot be replaced: it belongs to another user (uid {info.st_uid}) and its folder "
                       f"{shown(folder)} is sticky and not yours; ask the owner to remove it, or choose "
                       "another path")
            why = _unrenamable(name, False)
            if why:
                refuse(f"it {why}")
            identity = (info.st_dev, info.st_ino)
        real = os.path.join(os.path.realpath(folder), base)
        for other in self.outputs:
            if other.real == real or (identity is not None and other.identity == identity):
                refuse(f"is the same file as {other.option} {shown(other.path)}; give each output a path of its own")
        for source in self.inputs:
            if source is replaces:
                continue
            if source.real == real or identity == (source.device, source.inode):
                refuse(f"is the input {shown(source.path)}; an output never replaces an input")
        self.outputs.append(_Output(name, option, folder, base, real, identity, mode=mode))

    def stage(self, option: str, data: bytes) -> None:
        for output in self.outputs:
            if output.option == option:
                output.data = bytes(data)
                return
        raise KeyError(option)

    def prepare(self, staged) -> None:
        """Publication's first phase (runtime_c/host_io.c rt_io_prepare): each output whose option
        `staged` maps to its bytes, and that has no temporary yet, written now to a synced
        temporary beside it.  The first that cannot be written removes every temporary and raises
        PrepareRefused in the host's words.  Not under the folders' locks (publish takes them)."""
        mask = _umask()
        for output in self.outputs:
            if output.option not in staged or output.temporary is not None:
                continue
            output.data = bytes(staged[output.option])
            try:
                _prepare_temporary(output, mask)     # output.temporary, from its creation on
            except PrepareRefused:
                self.discard()
                raise

    def discard(self) -> None:
        """Remove every prepared temporary: nothing is published."""
        for output in self.outputs:
            if output.temporary is not None:
                _drop(output.temporary)
                output.temporary = None

    def publish(self) -> None:
        """Write every staged output to a synced temporary (an output prepared already keeps
        its own), then rename them all in order.

        With more than one output, a journal naming the pairs is published
        before the first rename and removed after the last (journal_write)."""
        temporaries: list = []
        journal = None
        locks: list = []
        deferred = None
        try:
            for output in self.outputs:
                if output.temporary is not None:
                    temporaries.append(output.temporary)
                else:
                    _write_temporary(output, into=temporaries)   # in the list from its creation on
                output.temporary = None          # this publication's own now (removed on failure)
            # from here to the journal's removal no other publication or recovery works in these
            # folders (docs/runtime.md, "Files": concurrent invocations)
            lock_pause = _test_pause(LOCK_PAUSE_VARIABLE)
            if lock_pause:
                time.sleep(lock_pause)
            locks = lock_folders(folder_of(o.path) for o in self.outputs)
            _date_now(temporaries)
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
                                             f"became {_kind(info.st_mode)} during the run",
                                             host_line=f"output {shown(output.path)} ({output.option}): became "
                                                       f"{_kind(info.st_mode)} during the run (nothing was published)")
            # from the journal's write to its removal, SIGINT, SIGTERM and SIGHUP wait (they are acted
            # on once the renames are done): a journal on disk owns the temporaries it lists, so
            # this process never removes them, and never leaves the renames half done unless killed
            # (SIGKILL: the next invocation completes them; docs/runtime.md, "Files")
            deferred = _DeferredSignals()
            deferred.__enter__()
            if len(self.outputs) > 1:
                last = self.outputs[-1]
                journal = journal_write(last.folder, last.base,
                                        [(os.path.join(os.path.dirname(o.real), os.path.basename(t)),
                                          o.real) for o, t in zip(self.outputs, temporaries)],
                                        last)
            pause = _test_pause()
            for index, (output, temporary) in enumerate(zip(self.outputs, temporaries)):
                if index and pause:
                    time.sleep(pause)
                try:
                    os.replace(temporary, output.path)
                except OSError as failure:
                    if journal is not None and index == 0:
                        # nothing renamed yet: the journal goes with the temporaries, nothing was
                        # published (a journal whose first rename fails again would block every later run)
                        _remove_journal(journal)
                        journal = None
                    detail = f"rename failed: {failure.strerror or failure}"
                    raise OutputWriteFailure(output.path, output.option, detail,
                                             hint=_published_hint(self.outputs[:index], journal, output.path),
                                             host_line=f"output {shown(output.path)} ({output.option}): {detail} "
                                                       f"({kept_journal(journal, output.path) if journal else 'nothing was published'})") \
                        from None
                _drop(temporary, remove=False)      # renamed: only its folder is closed
                temporaries[index] = None
            unsynced = None
            for folder in dict.fromkeys(o.folder for o in self.outputs):
                failure = _fsync_published(folder)
                unsynced = unsynced or (failure and (folder, failure))
            if unsynced:
                _say_unsynced(*unsynced)
            if journal is not None:
                _remove_finished_journal(journal)
                journal = None
        finally:
            if journal is not None and os.path.lexists(journal):
                for temporary in temporaries:
                    if temporary is not None:
                        _drop(temporary, remove=False)
                temporaries = []        # the journal on disk owns the temporaries: the next invocation renames them
            unlock_folders(locks)
            for temporary in temporaries:
                if temporary is not None:
                    _drop(temporary)
            self.discard()          # prepared temporaries a failure left before their turn
            if deferred is not None:
                deferred.__exit__(None, None, None)     # a signal that waited is acted on now


class _DeferredSignals:
    """The signals that end bobc with its cleanup (bobc.ENDING_SIGNALS, cli.main; the host's
    rt_io_publish lets them kill it there), held back over a publication's journal and renames.
    While entered (in the main thread: the only one Python delivers signals to), SIGINT,
    SIGTERM and SIGHUP are noted instead of acted on; on exit the handlers are restored and each
    noted signal is raised again, so its usual action (KeyboardInterrupt, cli.main's
    `bobc: terminated`, death) happens after the renames.  A signal ignored (SIG_IGN) stays
    ignored; one whose handler is not Python's is left alone."""

    def __init__(self):
        self.previous: dict = {}
        self.arrived: list = []

    def _note(self, number, frame) -> None:
        if number not in self.arrived:
            self.arrived.append(number)

    def __enter__(self):
        from .. import take_signals

        self.previous = take_signals(self._note)     # bobc.ENDING_SIGNALS, in the main thread only
        return self

    def __exit__(self, *exception) -> bool:
        import signal

        while self.previous:
            number, handler = self.previous.popitem()
            signal.signal(number, handler)
        arrived, self.arrived = self.arrived, []
        for number in arrived:
            signal.raise_signal(number)
        return False


def _date_now(temporaries) -> None:
    """Set each temporary's modification time to now, under the lock (host_io.c publish_locked).

    A destination's modification time is its temporary's.  The temporaries were written before
    the lock was taken, perhaps before the journal of a publication that held the lock meanwhile
    (and was killed): dated now, a file this publication puts in place is newer than any journal
    written before it, so a recovery finds that journal stale, never rolls it forward over these
    files (docs/runtime.md, "Files").  Files this process made: only a read-only filesystem
    refuses, and then the renames fail too."""
    for temporary in temporaries:
        try:
            if isinstance(temporary, _Temporary) and temporary.folder_fd >= 0:
                os.utime(os.path.basename(temporary), dir_fd=temporary.folder_fd)
            else:
                os.utime(temporary)
        except OSError:
            pass


KEPT_JOURNAL = "is kept: once"      # in a kept journal's message (host_io.h RT_IO_KEPT_JOURNAL)


def kept_journal(journal: str, failed: str) -> str:
    """What a publication whose rename of `failed` failed after others were renamed says of the
    journal it keeps (runtime_c/host_io.c publish_locked): the same rename would fail again, so
    it names what to do either way."""
    return (f"the journal {shown(journal)} {KEPT_JOURNAL} {shown(failed)} can be replaced, the next invocation "
            f"naming these outputs completes the publication; to keep the files as they are instead, remove "
            f"the journal and the temporaries it lists")


def interval_note(said: str, written: int, publications: int, step: int, path: str) -> str:
    """A failing run's message `said` once `written` (> 0) of the request's `publications`
    checkpoint publications were put at `path` by this run, the last at global step `step`: the
    message less a tail that says nothing was published, which that checkpoint belies, then
    "; publication N of M (step S) stays at PATH; nothing else was published" -- `said` as it is
    when it keeps a journal (part of the last publication is in place, and it says what to do).
    runtime_c/host_io.c rt_io_interval_note, word for word: every host's line (probe s47
    faultinject finding 6: the plan host said "(nothing was published)" alone)."""
    if KEPT_JOURNAL in said:
        return said
    for claim in (" (nothing was published)", "; nothing was published"):
        if said.endswith(claim):
            said = said[:-len(claim)]
            break
    return (f"{said}; publication {written} of {publications} (step {step}) stays at {shown(path)}; "
            f"nothing else was published")


def _remove_journal(journal: str) -> None:
    try:
        os.unlink(journal)
    except OSError:
        pass
    _fsync_folder(os.path.dirname(journal) or ".")


def _published_hint(done, journal=None, failed=None) -> str:
    if journal is not None:
        return kept_journal(journal, failed)
    if not done:
        return "nothing was published; the files there are unchanged"
    return "already published: " + ", ".join(o.path for o in done)


# The publication journal (docs/runtime.md, "Files"): `.<checkpoint>.bob-journal`
# in the folder of the publication's last output, text in this form:
#     bob-journal 1 <pairs>\n
#     <bytes> <temporary>\n<bytes> <destination>\n     (once per pair, in rename order)
#     end\n
# Paths are absolute (the folder's real path); <bytes> is the path's length in
# bytes, so any path reads back exactly.  runtime_c/host_io.c writes and reads
# the same form.
JOURNAL_SUFFIX = ".bob-journal"
JOURNAL_PAIRS = 8                   # runtime_c/host_io.h RT_IO_MAX_FILES
JOURNAL_PATH_BYTES = 4096           # runtime_c/host_io.h RT_IO_PATH_BYTES
# the bytes a journal is read from, at most JOURNAL_BYTES - 1 (host_io.c JOURNAL_BYTES): a longer
# file does not read back in the journal's form on either side
JOURNAL_BYTES = 2 * JOURNAL_PAIRS * (JOURNAL_PATH_BYTES + 96) + 64
_JOURNAL_HEAD = b"bob-journal 1 "


def journal_write(folder: str, base: str, pairs, output) -> str:
    """Publish the journal for `pairs` (temporary, destination) durably; return its path."""
    path = os.path.join(folder, f".{base}{JOURNAL_SUFFIX}")
    text = f"bob-journal 1 {len(pairs)}\n".encode()
    for temporary, destination in pairs:
        for name in (temporary, destination):
            raw = os.fsencode(name)
            text += str(len(raw)).encode() + b" " + raw + b"\n"
    text += b"end\n"
    for name in dict.fromkeys(os.path.dirname(t) for t, _ in pairs):
        _fsync_folder(name)             # the temporaries' names are durable before the journal
    staged = _Output(path, output.option, folder, os.path.basename(path), path, None, text)
    temporary = _write_temporary(staged)
    try:
        os.replace(temporary, path)
    except OSError as failure:
        _drop(temporary)
        raise OutputWriteFailure(output.path, output.option, f"cannot publish the journal {path}: "
                                 f"{failure.strerror or failure}", hint="nothing was published",
                                 host_line=f"cannot publish the journal {shown(path)}: {failure.strerror or failure} "
                                           "(nothing was published)") \
            from None
    _drop(temporary, remove=False)
    _fsync_folder(folder)
    return path


def journal_read(path: str):
    """(pairs, modification time in ns) of a journal: its (temporary, destination) pairs and
    when it was written, None when it does not read back in the journal's form, or the OSError
    when it could not be opened or read (EIO, EACCES: not "damaged", host_io.c journal_read; a
    symbolic link, ELOOP under O_NOFOLLOW, is no journal's form; probe s47 faultinject finding 2)."""
    import errno

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as failure:
        return None if failure.errno == errno.ELOOP else failure
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    try:
        if not stat.S_ISREG(info.st_mode):
            return None
        data = os.read(fd, JOURNAL_BYTES - 1)
    except OSError as failure:
        return failure
    finally:
        os.close(fd)
    head, _, rest = data.partition(b"\n")
    pairs = decimal_at_most(head.removeprefix(_JOURNAL_HEAD), JOURNAL_PAIRS) if head.startswith(_JOURNAL_HEAD) else None
    if not pairs:
        return None
    names = []
    for _ in range(2 * pairs):
        digits, space, rest = rest.partition(b" ")
        size = decimal_at_most(digits, JOURNAL_PATH_BYTES - 1)
        if not space or not size or len(rest) < size + 1 or rest[size:size + 1] != b"\n" or b"\0" in rest[:size]:
            return None
        names.append(os.fsdecode(rest[:size]))
        rest = rest[size + 1:]
    if rest != b"end\n" or not names:
        return None
    return list(zip(names[0::2], names[1::2])), info.st_mtime_ns


def _temporary_beside(temporary: str, destination: str) -> bool:
    """Whether `temporary` is what _write_temporary (and host_io.c) make for `destination`:
    `DIR/.NAME.tmp-XXXXXX` (six letters or digits) where the destination is the absolute DIR/NAME."""
    folder, name = destination.rsplit("/", 1) if "/" in destination else ("", "")
    if not destination.startswith("/") or name in ("", ".", ".."):
        return False
    prefix = f"{folder}/.{name}.tmp-"
    suffix = temporary[len(prefix):]
    return temporary.startswith(prefix) and len(suffix) == 6 and all(c in _TEMPORARY_LETTERS for c in suffix)


def _journal_named_after(folder: str, name: str, destination: str) -> bool:
    """Whether journal `name` in `folder` is `.NAME.bob-journal` in its last destination's folder."""
    if name != f".{os.path.basename(destination)}{JOURNAL_SUFFIX}" or not os.path.basename(destination):
        return False
    try:
        here, there = os.stat(folder), os.stat(os.path.dirname(destination) or ".")
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def recover(paths) -> None:
    """Complete any journal left (by a kill) in the folders of `paths` that names one of them.

    The folders are locked while it looks (lock_folders), so a journal of a
    live publication (which holds the same lock) is never read or completed.
    Called before an invocation reads its inputs or checks its outputs.  The
    temporaries a journal names were complete and synced before it was
    written, and were renamed in order, so the ones still there are a suffix;
    renaming them completes the publication.  Refused by name (exit 8), the
    journal left as it is and nothing renamed (runtime_c/host_io.c
    journal_complete, the same checks in the same order and the same words):
    a damaged journal (not in the form; a temporary that is not
    `.DEST.tmp-XXXXXX` beside its destination; not named after its last
    destination, beside it), whatever it names; and, for one naming an output,
    temporaries that are not such a suffix, or a destination changed after the
    journal was written (stale: a later publication replaced it)."""
    folders, reals, named = [], set(), []
    for path in paths:
        if path is None or not os.fspath(path):
            continue
        given = os.fspath(path)
        folder, base = folder_of(given), given[given.rfind("/") + 1:]
        if folder not in folders:
            folders.append(folder)
        real = os.path.join(os.path.realpath(folder), base)
        reals.add(real)
        if (folder, real) not in named:
            named.append((folder, real))
    locks = lock_folders(folders)
    try:
        _recover_locked(folders, reals, named)
    finally:
        unlock_folders(locks)


def _recover_locked(folders: list, reals: set, named: list) -> None:
    for folder in folders:
        try:
            names = sorted(n for n in os.listdir(folder)
                           if n.startswith(".") and n.endswith(JOURNAL_SUFFIX)
                           and len(n) > len(JOURNAL_SUFFIX) + 1)      # `.NAME.bob-journal`
        except OSError:
            # a folder that cannot be listed (mode 0300: search and write, no read) is searched by
            # name: the journal a publication of these outputs leaves is `.NAME.bob-journal` beside
            # its last destination NAME, one of them (the checkpoint, for a host).  A journal named
            # after another file cannot be found there (docs/runtime.md, "Files"; host_io.c
            # rt_io_recover)
            names = []
            for at, real in named:
                name = f".{os.path.basename(real)}{JOURNAL_SUFFIX}"
                if at != folder:
                    continue
                try:
                    os.lstat(f"{folder}/{name}")
                except OSError:
                    continue    # none there (or no search permission: the output checks say so)
                names.append(name)
        for name in names:
            _complete(folder, name, reals)


def _complete(folder: str, name: str, reals: set) -> None:
    """Complete journal `name` in `folder` when it names one of `reals` (host_io.c journal_complete)."""
    left = "it was left as it is; see docs/runtime.md (Files) to finish or remove it"
    journal = f"{folder}/{name}"            # as host_io.c journal_complete names it

    def refuse(detail, hint=left):
        raise OutputWriteFailure(shown(journal), "journal", detail, hint=hint)
    read = journal_read(journal)
    if (read is None or isinstance(read, OSError)) and _vanished(journal):
        return          # removed since the folder was listed (by hand): nothing to complete
    if isinstance(read, OSError):
        refuse(f"cannot be read: {read.strerror or read}")
    if read is None:
        refuse("a damaged publication journal (an earlier invocation was interrupted)")
    pairs, written = read
    for temporary, destination in pairs:
        if not _temporary_beside(temporary, destination):
            refuse(f"a damaged publication journal (its temporary {shown(temporary)} is not a "
                   ".NAME.tmp-XXXXXX file beside its destination)")
    if not _journal_named_after(folder, name, pairs[-1][1]):
        refuse("a damaged publication journal (it is not .NAME.bob-journal beside its last "
               f"destination {shown(pairs[-1][1])})")
    if not reals & {d for _, d in pairs}:
        return
    present = [os.path.lexists(t) for t, _ in pairs]
    for index in range(len(pairs) - 1):
        if present[index] and not present[index + 1]:
            refuse(f"its temporaries are missing ({shown(pairs[index + 1][0])})")
    # what the journal's own publication put at a destination (its old file, or a temporary
    # renamed) was written before the journal: a destination changed later was replaced by a
    # later publication, or by hand, and rolling forward would put older files over it
    for _, destination in pairs:
        try:
            info = os.lstat(destination)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_mtime_ns > written:
            refuse(f"stale: {shown(destination)} was replaced after the journal was written",
                   hint="nothing was renamed and the journal was kept: to keep the newer files, "
                        "remove it and the temporaries it lists (docs/runtime.md, Files)")
    for (temporary, destination), here in zip(pairs, present):
        if here:
            try:
                os.replace(temporary, destination)
            except OSError as failure:
                refuse(f"completing it failed: {shown(destination)}: "
                       f"{failure.strerror or failure}",
                       hint=f"it was left as it is: once {shown(destination)} can be replaced, the next invocation "
                            "completes it; to keep the files as they are instead, remove the journal and the "
                            "temporaries it lists")
    # synced as a publication's folders are: a failure (EIO) is the same warning after the notice
    # (host_io.c journal_complete; probe s47 faultinject finding 5: unchecked)
    unsynced = None
    for name_ in dict.fromkeys(os.path.dirname(d) for _, d in pairs):
        failure = _fsync_published(name_)
        unsynced = unsynced or (failure and (name_, failure))
    left = _unlink_journal(journal)
    _fsync_folder(folder)
    # host_io.c journal_complete's notice: each destination after a space, every path as any
    # message shows it (shown(): one line, each path shortened)
    stderr_line(f"bobc: completed an interrupted publication from {shown(journal)}:"
                + "".join(f" {shown(d)}" for _, d in pairs))
    if unsynced:
        _say_unsynced(*unsynced)
    if left:
        _say_journal_left(journal, left)


def _vanished(path: str) -> bool:
    """Whether `path` is no longer there (lstat says ENOENT; host_io.c journal_complete)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        pass
    return False


LOCK_GRACE_MS = 1000                 # host_io.c LOCK_GRACE_MS: a wait this long before the notice
_LOCK_POLL_S = 0.01                  # LOCK_POLL_MS
LOCK_GRACE_VARIABLE = "BOBC_IO_TEST_LOCK_GRACE_MS"   # tests only: another grace, in ms (at most 10000)
LOCK_NOTICE = ("folder {} is locked: another process is publishing into it; waiting for it to finish "
               "(if nothing else should be running, find it with fuser -v or lsof on the folder)")


def folder_of(path) -> str:
    """The folder a message names for `path` (host_io.c folder_of): the path up to its last '/'
    ("/" for /NAME, "." for a bare NAME)."""
    given = os.fspath(path)
    slash = given.rfind("/")
    return "." if slash < 0 else given[:slash] or "/"


def _say_waiting(folder: str) -> None:
    """LOCK_NOTICE on stderr; a stderr that cannot take it does not stop the wait (nor the lock)."""
    try:
        if sys.stderr is not None:
            stderr_line(f"bobc: {LOCK_NOTICE.format(shown(folder))}")
    except (OSError, ValueError):
        pass


def _test_ms(variable: str) -> int | None:
    """A tests-only setting's milliseconds, at most _PAUSE_LIMIT_MS, as host_io.c reads its own
    (test_ms): ASCII digits, six at most; None for anything else (unset, empty, a sign, a space,
    another script's digits, seven digits or more)."""
    text = os.environ.get(variable, "")
    if text.isascii() and text.isdigit() and len(text) <= 6:
        return min(int(text), _PAUSE_LIMIT_MS)
    return None


def _lock_grace_s() -> float:
    ms = _test_ms(LOCK_GRACE_VARIABLE)
    return (LOCK_GRACE_MS if ms is None else ms) / 1000


def _wait_for_lock(fd: int, folder: str) -> None:
    """`fd`'s lock, held by another process (host_io.c wait_for_lock): tried again every 10 ms for
    the grace period (a publication next door ends well within it: no word), then, after
    LOCK_NOTICE, blocked on (probe s30 cache finding 9)."""
    import fcntl
    import time

    start = time.monotonic()
    grace = _lock_grace_s()
    while time.monotonic() - start < grace:
        time.sleep(_LOCK_POLL_S)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            continue
    _say_waiting(folder)
    fcntl.flock(fd, fcntl.LOCK_EX)       # retried by Python on EINTR


def lock_folders(folders) -> list:
    """An exclusive flock(2) on each of `folders` (each folder once, by device and inode, taken in
    that order so that two invocations never wait on each other crosswise); the descriptors, to
    give to unlock_folders.  runtime_c/host_io.c lock_folders takes the same locks, so a host, the
    reference runner and `bobc build --emit-images` exclude one another.  A folder that cannot be
    opened or locked (no read permission; a filesystem without flock) is left unlocked: the
    publication goes on as it would without the lock (docs/runtime.md, "Files").

    A lock another process holds is tried without blocking first, then again for LOCK_GRACE_MS;
    once the wait has lasted that long, one line on stderr (LOCK_NOTICE: the C host's words after
    its name) names the folder before this process blocks.
    Ctrl-C while it blocks raises KeyboardInterrupt here, every descriptor closed (the caller
    removes its temporaries; the command line says `bobc: interrupted`)."""
    import fcntl

    opened: dict = {}
    locked: list = []
    try:
        for folder in folders:
            try:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                info = os.fstat(fd)
            except OSError:
                os.close(fd)
                continue
            key = (info.st_dev, info.st_ino)
            if key in opened:
                os.close(fd)            # a second open file would wait on the first one's lock
                continue
            opened[key] = (fd, folder)
        for key in sorted(opened):
            fd, folder = opened.pop(key)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:      # another process holds it: wait, saying so past the grace
                    _wait_for_lock(fd, folder)
            except OSError:
                os.close(fd)
                continue
            except BaseException:
                os.close(fd)
                raise
            locked.append(fd)
    except BaseException:
        for fd, _ in opened.values():
            os.close(fd)
        unlock_folders(locked)
        raise
    return locked


def unlock_folders(locks: list) -> None:
    """Release lock_folders' locks (closing the descriptor releases its flock)."""
    while locks:
        os.close(locks.pop())


def _test_pause(variable: str = PAUSE_VARIABLE) -> float:
    return (_test_ms(variable) or 0) / 1000


class _Temporary(str):
    """A temporary's path, with the folder it was made in held open (`folder_fd`, O_PATH; -1 once
    closed): it is dated, and removed, through that folder, so a folder renamed during the run
    keeps none of its temporaries -- by its old path the removal missed them (probe s37 leftovers
    finding 1; host_io.c drop_temporary)."""

    folder_fd = -1


def _open_folder(folder: str, already: int) -> int:
    return already if already >= 0 else os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)


def _close_folder(fd: int) -> None:
    if fd >= 0:
        os.close(fd)


def _drop(temporary, remove: bool = True) -> None:
    """Remove (when `remove`) the temporary `temporary` and close its folder: through that folder
    when it is held (_Temporary), else by its path."""
    fd = getattr(temporary, "folder_fd", -1)
    if remove:
        try:
            if fd >= 0:
                os.unlink(os.path.basename(temporary), dir_fd=fd)
            else:
                os.unlink(temporary)
        except OSError:
            pass
    if fd >= 0:
        temporary.folder_fd = -1
        os.close(fd)


def _fill_temporary(fd: int, candidate, data: bytes, mask: int, mode: int = 0o666):
    """host_io.c write_temporary's steps on a fresh temporary: its mode (0666; an executable's
    0755) & ~umask, the bytes written, fsync, close.  Returns None, or (the step that failed, its
    OSError) with the descriptor closed and the temporary removed."""
    stage = "chmod"
    try:
        os.fchmod(fd, mode & ~mask)
        stage = "write"
        write_all(fd, data)
        stage = "fsync"
        os.fsync(fd)
        # a close can fail too (EIO: NFS and FUSE report write-back errors there); the descriptor
        # is gone either way (probe s36 faultinject finding 1; host_io.c write_temporary)
        stage = "close"
        descriptor, fd = fd, -1
        os.close(descriptor)
    except OSError as failure:
        if fd >= 0:
            os.close(fd)
        _drop(candidate)
        return stage, failure
    except BaseException:
        # ended by a signal mid-write (cli._ending's Ended) or the like: the descriptor is closed
        # here, the temporary removed by its owner, the list it was registered in
        # (_write_temporary's `into`, _prepare_temporary's output.temporary; probe s42 cli3 finding 2)
        if fd >= 0:
            os.close(fd)
        raise
    return None


def _write_temporary(output: _Output, into: list | None = None) -> str:
    """Write `output`'s bytes to a new synced temporary beside it; its path.  With `into`, the
    temporary is appended to that list the moment it exists -- its creation and the append with
    SIGINT, SIGTERM and SIGHUP held back (_DeferredSignals) -- so an owner whose cleanup removes
    the temporaries in `into` removes this one too, whenever a signal ends the command: returned
    and then appended, a signal between the two left a `.NAME.tmp-XXXXXX` (SIGINT 1.8 s into
    `bobc build LinReg -o out/h --emit-images out/imgs` left out/imgs/.program.bin.tmp-ZldcdY;
    probe s42 cli3 finding 2).  A write that fails removes it (and takes it out of `into`)."""
    data = output.data if output.data is not None else b""
    into = [] if into is None else into
    mask = os.umask(0)
    os.umask(mask)
    folder_fd = -1
    for _attempt in range(100):      # DIR/.NAME.tmp-XXXXXX, as mkstemp names them (recover() checks the form)
        letters = "".join(secrets.choice(_TEMPORARY_LETTERS) for _ in range(6))
        candidate = _Temporary(os.path.join(output.folder, f".{output.base}.tmp-{letters}"))
        try:
            folder_fd = _open_folder(output.folder, folder_fd)
            with _DeferredSignals():
                fd = os.open(os.path.basename(candidate), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
                             | os.O_NOFOLLOW, 0o600, dir_fd=folder_fd)
                candidate.folder_fd = folder_fd
                into.append(candidate)
            break
        except FileExistsError:
            continue
        except OSError as failure:
            _close_folder(folder_fd)
            why = room_failure(failure.errno, output.folder,
                               open_failure(failure.errno, failure.strerror or str(failure)))
            raise OutputWriteFailure(output.path, output.option, "cannot create a temporary "
                                     f"file in {output.folder}: {why}",
                                     hint="nothing was published",
                                     host_line=f"output {shown(output.path)}: cannot create a temporary file in "
                                               f"{shown(output.folder)}: {why} "
                                               "(nothing was published)") from None
    else:
        _close_folder(folder_fd)
        raise OutputWriteFailure(output.path, output.option, "no free temporary name",
                                 hint="nothing was published")
    failed = _fill_temporary(fd, candidate, data, mask, output.mode)
    if failed:
        into.remove(candidate)      # removed already
        stage, failure = failed
        why = room_failure(failure.errno, output.folder, write_failure(failure))
        raise OutputWriteFailure(output.path, output.option,
                                 f"write failed: {why}",
                                 hint="nothing was published; the files there are unchanged",
                                 host_line=f"output {shown(output.path)}: {stage} of the temporary file failed: "
                                           f"{why} (nothing was published)")
    return candidate


def _prepare_temporary(output: _Output, mask: int) -> str:
    """runtime_c/host_io.c write_temporary as rt_io_prepare calls it: `.NAME.tmp-XXXXXX` created
    beside the output (mkostemp), its mode 0666 & ~umask, the bytes written, fsync, close; each
    failure removes it and raises PrepareRefused in the host's words."""
    def refused(detail):
        return PrepareRefused(f"output {shown(output.path)} ({output.option}): {detail}; nothing was published")

    pattern = f"{output.folder}/.{output.base}.tmp-XXXXXX"
    if len(os.fsencode(pattern)) >= JOURNAL_PATH_BYTES + 64:       # host_io.h: char temporary[RT_IO_PATH_BYTES + 64]
        raise refused("path too long")
    folder_fd = -1
    for _attempt in range(100):
        letters = "".join(secrets.choice(_TEMPORARY_LETTERS) for _ in range(6))
        candidate = _Temporary(pattern[:-6] + letters)
        try:
            folder_fd = _open_folder(output.folder, folder_fd)
            with _DeferredSignals():        # owned from its first moment, as _write_temporary's
                fd = os.open(os.path.basename(candidate), os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600,
                             dir_fd=folder_fd)
                candidate.folder_fd = folder_fd
                output.temporary = candidate    # OutputSet.discard removes it
            break
        except FileExistsError:
            continue
        except OSError as failure:
            _close_folder(folder_fd)
            raise refused(f"cannot create a temporary file in {shown(output.folder)}: "
                          f"{room_failure(failure.errno, output.folder, open_failure(failure.errno))}") from None
    else:
        _close_folder(folder_fd)
        raise refused(f"cannot create a temporary file in {shown(output.folder)}: {os.strerror(17)}")
    failed = _fill_temporary(fd, candidate, output.data or b"", mask)
    if failed:
        output.temporary = None     # removed already
        stage, failure = failed
        raise refused(f"{stage} of the temporary file failed: "
                      f"{room_failure(failure.errno, output.folder, write_failure(failure))}")
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


# runtime_c/host_io.h RT_IO_UNSYNCED_WARNING, after "bobc: "
UNSYNCED_WARNING = ("warning: the outputs were published, but fsync of their folder {} failed: {}; they are in "
                    "place, but may not survive a crash or power loss: check the disk (dmesg)")


def _fsync_published(folder: str) -> OSError | None:
    """fsync the folder of outputs just renamed into place (host_io.c publish_locked): the
    failure (EIO), or None; a folder that cannot be opened, or a filesystem that cannot fsync
    a folder (EINVAL), is no failure."""
    import errno

    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    try:
        os.fsync(fd)
    except OSError as failure:
        return None if failure.errno == errno.EINVAL else failure
    finally:
        os.close(fd)
    return None


# runtime_c/host_io.h RT_IO_JOURNAL_LEFT_WARNING, after "bobc: "
JOURNAL_LEFT_WARNING = ("warning: the outputs were published, but their journal {} could not be removed: {}; every "
                        "file it lists is in place: remove the journal by hand")


def _unlink_journal(journal: str) -> OSError | None:
    """Remove the journal of a publication whose every rename is done: the failure (EIO, EROFS),
    or None (removed, or removed by hand already)."""
    try:
        os.unlink(journal)
    except FileNotFoundError:
        return None         # removed by hand: the publication is complete all the same
    except OSError as failure:
        return failure
    return None


def _say_journal_left(journal: str, failure: OSError) -> None:
    """Every output is in place, the journal could not be removed: a warning, the status unchanged
    (host_io.c remove_finished_journal; it was a traceback after the publication: probe s47
    faultinject finding 1).  Left unsaid, the next invocation "completed" it again, or refused
    the outputs as stale once one of them was replaced."""
    stderr_line("bobc: " + JOURNAL_LEFT_WARNING.format(shown(journal), failure.strerror or failure))


def _remove_finished_journal(journal: str) -> None:
    """host_io.c remove_finished_journal: the journal removed, its folder fsynced; a failure said."""
    left = _unlink_journal(journal)
    _fsync_folder(os.path.dirname(journal))
    if left:
        _say_journal_left(journal, left)


def _say_unsynced(folder: str, failure: OSError) -> None:
    """The publication is done (every rename): a folder fsync that failed is a warning, not exit 8,
    which says an output was not written (probe s36 faultinject finding 2)."""
    stderr_line("bobc: " + UNSYNCED_WARNING.format(shown(folder), failure.strerror or failure))


def publish_file(path, data: bytes, option: str = "output", mode: int | None = None) -> None:
    """One output on its own (the same checks, one temporary, one rename); `mode`: as OutputSet.add's
    (an executable's 0o755), and then the `.NAME.tmp-XXXXXX` files a killed bobc left beside it are
    named (name_leftovers)."""
    outputs = OutputSet()
    outputs.add(path, option, mode=0o666 if mode is None else mode)
    outputs.stage(option, data)
    outputs.publish()
    if mode is not None:
        name_leftovers(outputs.outputs[0])


def name_leftovers(output: _Output) -> None:
    """Name, in one stderr line, the `.NAME.tmp-XXXXXX` files beside the executable just published
    (`bobc build -o`), which a bobc killed (SIGKILL) while writing it leaves and nothing removes
    (probe s32 concur finding 2).  They are named, not removed: a temporary is written before the
    folder's lock is taken and is not locked itself, so another bobc may be writing one now."""
    destination = os.path.join(os.path.abspath(output.folder), output.base)
    try:
        names = sorted(name for name in os.listdir(output.folder)
                       if _temporary_beside(os.path.join(os.path.abspath(output.folder), name), destination))
    except OSError:
        return
    if not names:
        return
    more = f" (and {len(names) - 1} more like it)" if len(names) > 1 else ""
    stderr_line(f"bobc: note: {shown(os.path.join(output.folder, names[0]))}{more} beside {shown(output.path)} "
                f"is a temporary of a bobc that did not finish writing it (killed?): delete it once no bobc "
                f"writes into {shown(output.folder)}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
