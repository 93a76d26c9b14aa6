"""The errors bobc reports to its users.

Every failure a user can cause (a bad plan, a bad file, a refused build) is a
BobcError: it carries where it happened and what to do, and the CLI prints it
as one clear message instead of a traceback.
"""
from __future__ import annotations

import os
import resource     # here, not when a limit is met: importing it then may itself fail for lack of memory
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Span:
    """A place in a source file: 1-based line and column."""

    path: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        """The place as a message shows it: file:line:column, the file as shown_path shows it."""
        return self.location(shown=True)

    def location(self, shown: bool = True) -> str:
        """file:line:column; `shown` False: the path as stored (what is kept between runs, such as
        a passed check's warnings in bobc/recall.py, is written with it, never with the
        working folder's view of it)."""
        return f"{shown_path(self.path) if shown else self.path}:{self.line}:{self.column}"

    def source_excerpt(self) -> str:
        """The source line with a caret under the column, or '' when unreadable: a line longer
        than EXCERPT_WIDTH characters is shown as a window of that many around the column, cut
        ends marked `...` and the cut said after the carets, so one error stays a few lines
        whatever the source holds (a 78,001-digit literal, a file of one megabyte line)."""
        text = _source_line(self.path, self.line)
        if text is None:
            return ""
        width = 1
        if self.end_line == self.line and self.end_column and self.end_column > self.column:
            width = self.end_column - self.column
        return excerpt(text, self.column, width, self.line)


def shown_path(path) -> str:
    """A source file's path as a message shows it: relative to the working folder when it lies
    under it (LinReg/Model.bob), else absolute -- the same for the plan module the user named
    (kept as given), the modules it imports and the kernel sources it names (found under the
    plan's resolved root, so stored absolute).  Only the showing: what is hashed, kept or
    emitted uses the path as stored.  As stored when the working folder is gone.  A control
    character in it (a newline, a tab) is shown as '?', as safe_io.shown and the host show one, so
    that file:line:column and its message stay one line (probe s34 paths finding 3)."""
    import os

    text = os.fspath(path)
    if not text:
        return text
    if not os.path.isabs(text):
        inside = os.path.normpath(text)     # a/./b, a/../a/b: as the path the file system takes
        if inside != os.pardir and not inside.startswith(os.pardir + os.sep):
            return inside.translate(_SHOWN_PATH)    # under the working folder (or a name: <input>)
    try:
        here = os.getcwd()
        absolute = os.path.abspath(text)
    except (OSError, ValueError):
        return text.translate(_SHOWN_PATH)
    if here != os.sep and absolute.startswith(here + os.sep):
        return absolute[len(here) + 1:].translate(_SHOWN_PATH)
    return absolute.translate(_SHOWN_PATH)


SHOWN_BYTES = 128                    # runtime_c/host_io.h RT_IO_SHOWN_BYTES
_SHOWN_HEAD = 32                     # RT_IO_SHOWN_HEAD
# bytes.translate's table of how a message shows bytes the user or the plan gave: a C0 control (a
# newline, a tab, NUL) or DEL as '?', so the message stays one line (runtime_c/host_settings.h
# rt_control_char); the reference's paths, settings' values and native messages alike
SHOWN_CONTROLS = bytes(ord("?") if b < 0x20 or b == 0x7F else b for b in range(256))


def shown(path) -> str:
    """`path` as a message shows it (runtime_c/host_io.c rt_io_shown): whole when it has at
    most SHOWN_BYTES bytes, else its start, "..." and its end (the file name whole when it
    fits), SHOWN_BYTES bytes in all, never cutting a UTF-8 character; a control character (a
    newline, a tab, DEL) is '?', so a message stays one line."""
    raw = os.fsencode(path)
    if len(raw) <= SHOWN_BYTES:
        return os.fsdecode(raw.translate(SHOWN_CONTROLS))
    keep = SHOWN_BYTES - 3
    slash = raw.rfind(b"/")
    tail = len(raw) - slash if slash >= 0 else 0
    if not tail or tail > keep - _SHOWN_HEAD:
        tail = keep - _SHOWN_HEAD
    head, start = keep - tail, len(raw) - tail
    while head and raw[head] & 0xC0 == 0x80:
        head -= 1
    while start < len(raw) and raw[start] & 0xC0 == 0x80:
        start += 1
    return os.fsdecode((raw[:head] + b"..." + raw[start:]).translate(SHOWN_CONTROLS))


def printable(path) -> str:
    """`path` whole, with shown()'s control characters as '?' (a newline, a tab, DEL), so that a
    message naming it stays one line: for a path the user gave that a refusal names in full (a
    name too long for the system is shown whole, so its user sees which it is)."""
    return os.fsdecode(os.fsencode(path).translate(SHOWN_CONTROLS))


# How a compiler message shows a plan's bytes (an identity, a resident's or buffer's name, a kernel's
# name or source, a byte string refused): at most this many bytes, then cut (docs/limits.md)
SHOWN_PLAN_BYTES = 128


def shown_plan_text(value) -> str:
    """A plan's bytes (bytes, or the str the extractor decoded them to) as bobc's own messages --
    check, build, certify, sim and run's compile stage -- show them: as themselves when they are 1
    to SHOWN_PLAN_BYTES bytes of printable ASCII other than `"` and `\\` (sgd-step, as the plan
    reads), else as the plan language's byte-string literal that reads back to them (b"L\\n\\x1b[m":
    a newline, a tab as \\n, \\t, every other byte outside printable ASCII as \\xNN, `"` and `\\`
    escaped), so a message stays one line, drives no terminal, and shows which byte it was; a
    bare value never holds `"`, so it cannot be taken for a literal.  Past SHOWN_PLAN_BYTES bytes
    the literal of its first half and its length: b"AAAA..."...(50,000 bytes).  The one rule for
    every compiler message naming a plan's bytes (docs/formats.md); a plan host shows them with
    control characters as '?' instead (docs/native-host.md)."""
    from .language.syntax import show_bytes

    raw = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)
    if len(raw) > SHOWN_PLAN_BYTES:
        return f"{show_bytes(raw[:SHOWN_PLAN_BYTES // 2])}...({len(raw):,} bytes)"
    if raw and all(0x20 <= b < 0x7F and b not in (0x22, 0x5C) for b in raw):
        return raw.decode("ascii")
    return show_bytes(raw)


# a path's C0 controls and DEL, the tab included, shown as '?' (SHOWN_CONTROLS, host_io.c rt_io_shown)
_SHOWN_PATH = {code: "?" for code in (*range(0x20), 0x7F)}


# Characters of a source line an error or warning shows: the window around the column.
EXCERPT_WIDTH = 100
# The largest source file an excerpt is read from: docs/limits.md's bound on any file bobc reads.
_EXCERPT_FILE_BYTES = 1 << 30
# C0 controls and DEL but the tab, shown as '?' (one character for one: the caret stays put)
_SHOWN = {code: "?" for code in (*range(0x09), *range(0x0A, 0x20), 0x7F)}


def source_lines(text: str) -> list[str]:
    """A source's lines as every reader of sources numbers them (modules, kernel sources,
    contract lines, this excerpt): ended by LF, CR LF or CR, and by nothing else -- not by the
    form feeds, U+0085 or U+2028 str.splitlines also ends lines at, which would show another
    line than the one a message's line number names."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _source_line(path: str, line: int) -> str | None:
    """Line `line` (1-based) of the file at `path` as the readers numbered it (source_lines),
    line 1 without the UTF-8 byte order mark they skip, or None: not a regular file of at most _EXCERPT_FILE_BYTES (a FIFO is never opened to
    block), unreadable, or no such line."""
    import os
    import stat

    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > _EXCERPT_FILE_BYTES:
        return None
    try:
        lines = source_lines(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    if not 1 <= line <= len(lines):
        return None
    if line == 1 and lines[0].startswith("\ufeff"):
        return lines[0][1:]         # the readers skip a byte order mark: columns count from after it
    return lines[line - 1]


def _cells(character: str) -> int:
    """How many terminal cells `character` takes: 2 for an East Asian wide or full-width one
    (CJK), 0 for a combining mark, else 1 -- so the caret stays under the column it names."""
    import unicodedata

    if unicodedata.combining(character):
        return 0
    return 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1


# Unicode categories an excerpt shows as '?', as it does the C0 controls: the C1 controls (Cc),
# the format characters (Cf: zero-width spaces and joiners, the bidirectional embeddings,
# overrides and isolates, a byte order mark inside a line) and the line and paragraph separators
# (Zl, Zp).  A terminal draws them in no cell, reorders the rest of the line by them ("Trojan
# Source") or breaks the line there, so the caret would stand under another character than the
# column names; as '?' each is one character in one cell (probe s37 sourcetext finding 5).
_INVISIBLE = frozenset(("Cc", "Cf", "Zl", "Zp"))


def _visible(text: str) -> str:
    """`text` with each character of an _INVISIBLE category as '?'."""
    if text.isascii():
        return text
    import unicodedata

    return "".join("?" if unicodedata.category(c) in _INVISIBLE and c != "\t" else c for c in text)


def excerpt(text: str, column: int, width: int = 1, line: int | None = None) -> str:
    """`text` (one source line) and a caret line under `column` (1-based) `width` characters
    wide: the whole line when it has at most EXCERPT_WIDTH characters, else EXCERPT_WIDTH of
    them around the column (`...` where it is cut, and after the carets which columns are
    shown).  Control characters and invisible ones (_INVISIBLE) are shown as '?', a tab as itself, and the caret line counts a
    wide (CJK) character as two cells and a combining mark as none, so the caret stays under its
    character in a terminal."""
    column = max(1, column)
    start, end = 0, len(text)
    if end > EXCERPT_WIDTH:
        start = min(max(0, column - 1 - EXCERPT_WIDTH // 2), end - EXCERPT_WIDTH)
        end = start + EXCERPT_WIDTH
    shown = _visible(text[start:end].translate(_SHOWN))
    head = "..." if start else ""
    tail = "..." if end < len(text) else ""
    before = shown[:max(0, column - 1 - start)]
    pad = "".join("\t" if c == "\t" else " " * _cells(c) for c in before)
    pad += " " * min(EXCERPT_WIDTH, column - 1 - start - len(before))    # a column past the line's end
    marked = shown[len(before):len(before) + max(1, min(width, end - (column - 1)))]
    carets = "^" * max(1, sum(_cells(c) for c in marked) if marked else 1)
    note = ""
    if head or tail:
        which = f"line {line}" if line is not None else "the line"
        note = f"  ({which} cut to columns {start + 1}-{end} of {len(text):,})"
    return f"  {head}{shown}{tail}\n  {' ' * len(head)}{pad}{carets}{note}"


class BobcError(Exception):
    """A failure with a message meant for the user (no traceback)."""

    exit_code = 1

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint

    def render(self) -> str:
        head = f"{self.span}: error: {self.message}" if self.span else f"error: {self.message}"
        parts = [head]
        if self.span is not None:
            excerpt = self.span.source_excerpt()
            if excerpt:
                parts.append(excerpt)
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class UsageError(BobcError):
    """The command line itself is wrong (unknown file, bad option value)."""

    exit_code = 2


class NotYetAvailable(BobcError):
    """What bobc does not support: a plan the reference runner cannot run (outside the plan host's documented steps and formats)."""

    exit_code = 9  # `bobc run --reference`: the host's 9 is a damaged host file, which a reference run has none of (docs/runtime.md)


class TemporaryWriteFailure(BobcError):
    """A temporary file or folder bobc needs could not be written (a full disk, a quota, the file
    size limit of `ulimit -f`): the command's output cannot be made, so nothing is written.
    Exit 8, README's "an output ... not written" (`bobc diff` says 2: it cannot compare).  The
    message names the file and the system's words for the failure; the hint, the folder to free
    space in (the system's temporary folder, `$TMPDIR`, not the `bobc-proc-*` folder in it that
    the command removes when it ends) or the limit to raise."""

    exit_code = 8

    def __init__(self, path, error: OSError, folder: bool = False):
        words = error.strerror or str(error)
        if folder:
            message = f"cannot make a temporary folder in {shown(path)}: {words}"
        else:
            message = f"cannot write the temporary file {shown(path)}: {words}"
        super().__init__(message, hint=temporary_hint(error, temporary_base(path, folder)))
        self.errno = error.errno


def temporary_base(path, folder: bool = False) -> Path:
    """The folder a user can act on for a temporary at `path`: the folder that holds the
    command's `bobc-proc-*` folder when `path` lies in one (that folder is removed when the
    command ends), else the folder `path` is in (`path` itself with `folder`)."""
    path = Path(path)
    for parent in ([path] if folder else []) + list(path.parents):
        if parent.name.startswith("bobc-proc-"):        # cache.PROCESS_PREFIX
            return parent.parent
    return path if folder else path.parent


def temporary_hint(error: OSError, where) -> str:
    """What to do when a temporary in the folder `where` could not be written for `error`."""
    import errno

    if error.errno == errno.EFBIG:
        return "the file size limit (ulimit -f) is smaller than the file: raise it, then run again"
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"free space in {shown(where)}, or point TMPDIR at a folder with room"
    if error.errno in (errno.EMFILE, errno.ENFILE):     # no descriptor left, not a folder's fault
        return descriptors_exhausted(error).hint
    return f"point TMPDIR at a writable folder with room ({shown(where)} was used)"


def write_temporary(path, data: bytes) -> None:
    """Write `data` to the temporary file `path`; a failure is a TemporaryWriteFailure (one
    message, exit 8), never an OSError traceback, and leaves no partial file."""
    import os

    try:
        with open(path, "wb") as out:
            out.write(data)
    except OSError as error:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise TemporaryWriteFailure(path, error) from None


def temporary_folder(**options):
    """tempfile.TemporaryDirectory(**options), owner-writable whatever the umask (cache.own_folder);
    a folder that cannot be made is a TemporaryWriteFailure naming the folder it was to be made in."""
    import tempfile

    from .cache import own_folder

    try:
        made = tempfile.TemporaryDirectory(**options)
    except OSError as error:
        raise TemporaryWriteFailure(options.get("dir") or tempfile.gettempdir(), error, folder=True) from None
    own_folder(Path(made.name))     # 0700 whatever the umask (a umask of 277 left it 0500)
    return made


class ResourceExhausted(BobcError):
    """bobc itself ran out of something the system rations (docs/cache.md names these stops): open
    file descriptors (EMFILE: `ulimit -n`; ENFILE: the system's open-file table), memory (a
    MemoryError: `ulimit -v`, or no memory left), or a thread that cannot start (its stack does
    not fit the address space `ulimit -v` allows).  Not a fault in the plan or in bobc: the
    message says what ran out, with the limit in force, and the hint what to do.  Exit 8, as gcc
    stopped by the same is (an output not made); `bobc diff` 2, `bobc run --reference` the host's
    1 for memory ("internal error (out of memory)")."""

    exit_code = 8

    def __init__(self, message: str, hint: str, kind: str):
        super().__init__(message, hint=hint)
        self.kind = kind


def _limit(name: str) -> str:
    """The soft limit `name` (resource.RLIMIT_*) in force, as `ulimit` shows it, or 'unlimited'."""
    try:
        soft, _ = resource.getrlimit(getattr(resource, name))
    except (OSError, ValueError, AttributeError):
        return "unknown"
    if soft == resource.RLIM_INFINITY:
        return "unlimited"
    return f"{soft // 1024} KiB" if name == "RLIMIT_AS" else str(soft)


def descriptors_exhausted(error: OSError, doing: str | None = None) -> ResourceExhausted | None:
    """The ResourceExhausted for an OSError that says no file descriptor was left (EMFILE: this
    process's `ulimit -n`; ENFILE: the whole system's table), else None.  `doing`: what failed."""
    import errno

    if error.errno == errno.EMFILE:
        limit = _limit("RLIMIT_NOFILE")
        said = f"too many open files: bobc reached its limit of open file descriptors (ulimit -n is {limit})"
        hint = (f"raise the limit of open files (ulimit -n, now {limit}: 1024 or more; ulimit -Hn shows the most "
                f"you may set), then run again")
    elif error.errno == errno.ENFILE:
        said = "too many open files in the system: its table of open files is full (ENFILE)"
        hint = "close programs that hold many files open (or raise the system's fs.file-max), then run again"
    else:
        return None
    where = f" ({doing})" if doing else ""
    return ResourceExhausted(f"{said}{where}; this is not a fault in the plan or in bobc", hint, "descriptors")


def memory_exhausted(doing: str | None = None) -> ResourceExhausted:
    """The ResourceExhausted for a MemoryError: out of memory, with the memory limit in force."""
    where = f" ({doing})" if doing else ""
    return ResourceExhausted(f"out of memory{where}: the memory limit (ulimit -v) is {_limit('RLIMIT_AS')}; "
                             f"this is not a fault in the plan or in bobc",
                             "free memory or raise the memory limit (ulimit -v), then run again", "memory")


def raised_text(error: BaseException) -> str:
    """`TYPE: MESSAGE` of an exception out of a user's Python file (a reference kernels or --kernels
    file), for a one-line refusal; a SystemExit says the call that raised it: `sys.exit(0)` in a
    kernels file ended bobc with that status, no message and nothing published (exit 0 for a run
    that wrote nothing; probe s40 newuser4 finding 1)."""
    if isinstance(error, SystemExit):
        return f"SystemExit: sys.exit({error.code!r}) would end bobc itself"
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def stderr_line(line: str, stream=None) -> None:
    """Write `line` and a newline on stderr carrying a path's own bytes, as the C host prints
    them: a byte that is not UTF-8 (a path's 0xff, held as the surrogate '\\udcff' since
    os.fsdecode) is written as that byte, not as Python's escape (probe s31 hostexe finding 10).
    A stream without a byte buffer gets the text itself.  The one writer of such a line: the
    CLI's refusals and resource stops and the reference runner's notices (reference/safe_io.py)
    all use it.  It lives here, imported when bobc.cli is, so that saying a stop never imports
    anything: the import that ran out of memory or descriptors may be the reference package's
    own (probe s33 docs33 finding 3, tests/test_resource_stop_import_s33.py)."""
    stream = sys.stderr if stream is None else stream
    if stream is None:
        return
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        print(line, file=stream, flush=True)
        return
    try:
        data = os.fsencode(line + "\n")
    except UnicodeEncodeError:      # a character no path holds: as sys.stderr writes it
        data = (line + "\n").encode(getattr(stream, "encoding", None) or "utf-8", "backslashreplace")
    stream.flush()
    buffer.write(data)
    buffer.flush()
