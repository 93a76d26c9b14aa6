"""Building the host with gcc: C11, warnings as errors, statically linked.

Static linking is what lets the host run on a GPU node that has only the
NVIDIA kernel driver: no libcuda, no CUDA runtime, no matching glibc needed.

The runtime's sources (runtime_c/) are the same for every plan, so they are
compiled once into objects kept in bobc's user cache (bobc/cache.py), named by a
hash of their sources and headers, the flags and the compiler; a build compiles
only the generated plan source and links it with those objects, in the order
the sources are listed.  The objects are exactly what compiling every source in
one gcc command makes (gcc names each object's STT_FILE symbol after the source's
base name, in both cases), so the host is byte-identical to one built without
the cache.  Objects and not an archive: `ar` + link on demand would order the
members differently, and the host would not be the same bytes.

The sources of a missing entry are compiled concurrently (compile_objects: at most one gcc per
CPU), each into its own object; which source a failure names does not depend on the order the
compilers finish in (the first failing source in the list's order).

`bobc build` starts that lookup and compile at its start, in a thread of its own, while it
evaluates the plan (compiled_early): library_objects then takes what that thread made, waiting for
the rest; a build that ends before its link stops the thread's compilers and removes what they
wrote (probe s43 buildearly).
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import threading
from pathlib import Path

from .. import cache
from .. import children
from ..children import Running, in_threads
from ..errors import BobcError

CFLAGS = ("-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_DEFAULT_SOURCE")
CACHE_KIND = "runtime-objects"
SOURCE_KIND = "objects"


class HostBuildError(BobcError):
    pass


def compiler() -> str:
    found = shutil.which("gcc") or shutil.which("cc")
    if not found:
        raise HostBuildError("no C compiler found (gcc or cc)",
                             hint="install gcc (Debian: apt-get install gcc)")
    return found


# The environment variables gcc documents as changing what it compiles or links ("Environment
# Variables Affecting GCC"): include and library search, its own programs' prefix, the input
# character set (the locale), and __DATE__/__TIME__.  Part of every key that names gcc.
GCC_ENVIRONMENT = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
                   "GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH", "GCC_COMPARE_DEBUG",
                   "SOURCE_DATE_EPOCH", "LANG", "LC_ALL", "LC_CTYPE")
HEADERS_KIND = "headers"


def _stamp(path: Path) -> str:
    try:
        status = path.stat()
        return f"{status.st_size} {status.st_mtime_ns} {status.st_ino}"
    except OSError:
        return "unreadable"


def compiler_identity(path: str) -> str:
    """What decides the objects a compiler makes besides the sources and the headers they
    include (library_key adds those): the driver's resolved path and its file's size,
    modification time and inode (an upgrade of gcc replaces the driver), the assembler found
    on PATH (the same), and the environment variables gcc reads (GCC_ENVIRONMENT).
    A stat rather than `gcc --version`: one process start less per build.  Taken again on every
    call, never kept for the process: a compiler upgraded while a process that builds lives is
    another compiler to its next build too (probe s35 inprocess finding 3)."""
    environment = "".join(f"\n{name}={os.environ[name]!r}" for name in GCC_ENVIRONMENT if name in os.environ)
    return _driver_identity(path, shutil.which("as") or "") + environment


def linker_identity() -> str:
    """The linker gcc links with, for a key of something linked (the native interpreter): gcc runs
    `ld` by its bare name (`gcc -print-prog-name=ld` prints `ld`), which collect2 finds on PATH
    (after COMPILER_PATH, which compiler_identity holds), so its resolved path, size, mtime and inode,
    as the assembler's.  A link's bytes are the linker's: another ld (gold or lld behind the `ld`
    symlink, a toolchain folder first on PATH) writes another executable (probe s37 repro finding 1)."""
    found = shutil.which("ld")
    if not found:
        return "ld none"
    resolved = Path(found).resolve()
    return f"ld {resolved} {_stamp(resolved)}"


def _driver_identity(path: str, assembler: str) -> str:
    resolved = Path(path).resolve()
    stamp = _stamp(resolved)
    if assembler:
        assembler_path = Path(assembler).resolve()
        stamp += f"\nas {assembler_path} {_stamp(assembler_path)}"
    return f"{resolved}\n{stamp}"


TEMPLATE_KIND = "templates"


def template_cache():
    """jinja2's compiled host template kept in bobc's user cache as sealed entries (bobc/cache.py
    checks each entry's SHA-256 before jinja2 unmarshals it), or None when the cache is off."""
    if cache.folder() is None:
        return None
    import jinja2

    class SealedBytecodeCache(jinja2.BytecodeCache):
        """One entry per template (its name, path and source's checksum) and jinja2 and Python
        version: a damaged entry is a miss, and the template is compiled again (about 10 ms)."""

        @staticmethod
        def _key(bucket) -> str:
            return cache.digest("jinja2 bytecode", jinja2.__version__, sys.version, bucket.key, bucket.checksum)

        def load_bytecode(self, bucket) -> None:
            data = cache.read(TEMPLATE_KIND, self._key(bucket))
            if data is not None:
                try:
                    bucket.bytecode_from_string(data)
                except Exception:
                    bucket.reset()

        def dump_bytecode(self, bucket) -> None:
            cache.write(TEMPLATE_KIND, self._key(bucket), bucket.bytecode_to_string())

    return SealedBytecodeCache()


def gcc_environment() -> dict[str, str]:
    """The environment every gcc bobc runs gets: bobc's own, with TMPDIR naming this command's
    temporary folder (tempfile.gettempdir(): the `bobc-proc-*` folder cache.process_temporaries
    made), so that gcc's own temporaries (cc*.s, cc*.o, cc*.res...) lie there: a build killed
    mid-compile leaves none of them in /tmp, and the next bobc command sweeps that folder whole
    (docs/cache.md; leftovers finding 2).  TMPDIR is not part of any cache key (it differs in
    every command): compiler_identity reads os.environ's GCC_ENVIRONMENT, which does not hold it,
    and TMPDIR decides only where gcc's scratch files go, never what it makes."""
    import tempfile

    environment = {**os.environ, "TMPDIR": tempfile.gettempdir()}
    # gcc, as and ld print their messages in the user's language (gettext: LANGUAGE, LC_ALL,
    # LC_MESSAGES, LANG), and resource_failure and _SOURCE_ERROR read them in English: under
    # LC_ALL=de_DE.UTF-8, `ulimit -f` was "the C compiler failed", exit 1, not exit 8 with its hint
    # (probe s34 locale finding 1).  So LC_MESSAGES is C, and LC_ALL, which would override it, is
    # handed to every other category instead: what gcc compiles (LC_CTYPE, its input character
    # set) is the user's, and gettext ignores LANGUAGE when LC_MESSAGES is C.
    everything = environment.pop("LC_ALL", "")
    if everything:
        environment.update((category, everything) for category in LOCALE_CATEGORIES)
    environment["LC_MESSAGES"] = "C"
    # gcc's preprocessor writes make dependencies to the file DEPENDENCIES_OUTPUT or
    # SUNPRO_DEPENDENCIES names ("Environment Variables Affecting GCC"), which a make-driven build
    # may have set: every gcc bobc runs wrote that file, the concurrent runtime compiles all at once,
    # naming bobc's temporaries -- an output the user never asked bobc for (probe s37 repro finding 4).
    for name in DEPENDENCY_OUTPUTS:
        environment.pop(name, None)
    return environment


# gcc's environment variables that make it write a file besides its output (make dependencies)
DEPENDENCY_OUTPUTS = ("DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES")


# glibc's locale categories other than LC_MESSAGES (locale(7)): what LC_ALL sets besides it.
LOCALE_CATEGORIES = ("LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY", "LC_PAPER", "LC_NAME",
                     "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION")


class HostResourceError(HostBuildError):
    """gcc ran out of something that is not bobc's to give: disk space (in the folder it writes
    its output to or in its temporary folder), the file size limit (`ulimit -f`), memory, or it
    was killed by a signal.  Not a bobc bug: the message says what ran out and the hint what to
    do.  Exit 8 (README: an output not written).  `kind`: "space", "file size", "memory" or
    "signal"; `words`: what happened, in the system's words (resource_failure)."""

    exit_code = 8

    def __init__(self, message: str, kind: str, words: str, hint: str):
        super().__init__(message, hint=hint)
        self.kind = kind
        self.words = words


# What gcc, cc1, as, ld and collect2 print when the system, not the source, stopped them (the
# system's words, as the message repeats them), read in their own lines only: a line gcc quotes
# from a source (`  12 |   text`) is never read for these.
_RESOURCE_WORDS = (("No space left on device", "space"), ("Disk quota exceeded", "space"),
                   ("File too large", "file size"), ("File size limit exceeded", "file size"),
                   ("out of memory", "memory"), ("Cannot allocate memory", "memory"),
                   ("virtual memory exhausted", "memory"), ("memory exhausted", "memory"),
                   ("File name too long", "name length"),
                   # EMFILE and ENFILE in the system's words, and ld's plugin framework's own: the limit of
                   # open files (`ulimit -n`) gcc inherits from bobc, or the system's table (probe s33 resources 6)
                   ("Too many open files in system", "descriptors"), ("Too many open files", "descriptors"),
                   ("out of file descriptors", "descriptors"))
_QUOTED = re.compile(r"^\s*\d*\s*\|")                       # gcc's source excerpt: `   12 |   code`
_COLLECT2 = re.compile(r"terminated with signal (\d+)")        # collect2: `ld terminated with signal 9 [Killed]`
# The signals that stop a compiler from outside (the driver's `Killed signal terminated program
# cc1` names them by strsignal): a crash signal (SIGSEGV, SIGABRT...) is a compiler's own fault.
_STOPPING = ("SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "SIGXCPU", "SIGXFSZ")


def resource_failure(returncode: int, diagnostics: str) -> tuple[str, str] | None:
    """(kind, what happened) when gcc failed for lack of a resource or was stopped by a signal,
    else None (a real compile or link error, or a compiler crash).  kind: "space", "file size",
    "memory", "descriptors" (the limit of open files), "name length" (a path longer than the file system takes: a TMPDIR near PATH_MAX)
    or "signal".  `returncode` negative: the gcc driver itself was killed by that
    signal.  `diagnostics`: what it printed."""
    import signal as signals

    lines = [line.lower() for line in diagnostics.splitlines() if not _QUOTED.match(line)]
    for words, kind in _RESOURCE_WORDS:
        if any(words.lower() in line for line in lines):
            return kind, words
    stopping = [getattr(signals, name) for name in _STOPPING if hasattr(signals, name)]
    number = -returncode if returncode < 0 else None
    for line in lines if number is None else ():
        found = _COLLECT2.search(line)
        if found and int(found.group(1)) in stopping:
            number = int(found.group(1))
            break
        for candidate in stopping:
            said = (signals.strsignal(candidate) or "").lower()
            if said and f"{said} signal terminated program" in line:
                number = candidate
                break
        if number is not None:
            break
    if number is None:
        return None
    try:
        name = signals.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    if name == "SIGXFSZ":
        return "file size", "SIGXFSZ"
    return "signal", f"a compiler process was killed by {name}"


def _folders(output: Path | None) -> list[str]:
    """The folders a failed gcc may have run out of space in, as a user names them: where its
    output goes (the cache folder when it lies in it) and its temporary folder (TMPDIR, outside
    this command's `bobc-proc-*` folder, which the command removes)."""
    import tempfile

    from ..errors import temporary_base
    from ..errors import shown

    found = []
    if output is not None:
        root = cache.folder()
        parent = Path(output).resolve().parent
        if root is not None and (root.resolve() == parent or root.resolve() in parent.parents):
            found.append(root)
        else:
            found.append(temporary_base(parent, folder=True))
    found.append(temporary_base(tempfile.gettempdir(), folder=True))
    return list(dict.fromkeys(shown(folder) for folder in found))


def _resource_error(kind: str, happened: str, what: str, diagnostics: str, output: Path | None) -> HostResourceError:
    folders = " and ".join(_folders(output))
    if kind == "space":
        hint = f"free space in {folders} (or point TMPDIR at a folder with room), then build again"
        said = f"no room to write in {folders} ({happened})"
    elif kind == "file size":
        hint = "raise the file size limit (ulimit -f), then build again"
        said = f"a file it wrote reached the file size limit, ulimit -f ({happened})"
    elif kind == "memory":
        hint = "free memory or raise the memory limit (ulimit -v), then build again"
        said = f"it ran out of memory ({happened})"
    elif kind == "descriptors":
        import errno

        from ..errors import _limit, descriptors_exhausted

        enfile = "too many open files in system" in happened.lower()
        hint = descriptors_exhausted(OSError(errno.ENFILE if enfile else errno.EMFILE, happened)).hint
        said = ("the system's table of open files is full" if enfile else
                f"it ran out of file descriptors: the limit of open files, ulimit -n, is {_limit('RLIMIT_NOFILE')}")
        said += f" ({happened})"
    elif kind == "name length":     # ENAMETOOLONG: TMPDIR near PATH_MAX (probe s32 environ finding 3)
        hint = f"point TMPDIR at a shorter path, then build again (gcc wrote in {folders})"
        said = f"a path it writes is longer than the file system takes ({happened})"
    else:
        hint = ("if the system ran out of memory (its OOM killer sends SIGKILL), free memory; "
                "then build again")
        said = happened
    return HostResourceError(f"gcc could not build {what}: {said}; this is not a fault in the plan "
                             f"or in bobc:\n{diagnostics}", kind, happened, hint)


# What shows that gcc refused the C it was given (a compile or link error of bobc's generated
# source or runtime), not that the compiler itself failed: `file.c:12:5: error: ...`, `file.c:
# In function`, ld's `undefined reference to` / `multiple definition of`.
_SOURCE_ERROR = re.compile(r"^\S+\.[ch]:(\d+:(\d+:)? (fatal )?error:| In function)"
                           r"|undefined reference to|multiple definition of", re.MULTILINE)
_LONG_PATH = re.compile(r"/[^\s'\"`:,;()\[\]]+")


def _shortened(diagnostics: str) -> str:
    """gcc's words with every path longer than a message shows cut as a message shows it
    (safe_io.shown: its start, "...", its end): a TMPDIR of 4,000 bytes is not printed whole."""
    from ..errors import SHOWN_BYTES, shown

    return _LONG_PATH.sub(lambda m: shown(m.group(0)) if len(os.fsencode(m.group(0))) > SHOWN_BYTES
                          else m.group(0), diagnostics)


def gcc_umask() -> int:
    """The umask gcc runs under: the user's, without its owner bits.  gcc makes its own
    temporaries (cc*.s, cc*.o) by the umask, so one that takes the owner's write bit (277, 222)
    made them unwritable to gcc itself ("cannot open ... for writing"); the group and other bits
    the user chose are kept.  Read without setting it (cache.current_umask): the runtime's early
    compile calls this in its own thread while the main thread runs."""
    return cache.current_umask() & 0o077


def _run(command: list[str], what: str, compilers: Running | None = None) -> None:
    """Run one gcc; its failure is a HostBuildError with what it printed.  A failure for lack of
    disk space, memory or the file size limit, a path too long, or a signal, is a
    HostResourceError that says so (resource_failure), naming the folders it writes in (its
    `-o` file's and its TMPDIR); a compile or link error of the C it was given is a bug in the C
    bobc generated, and its hint says so (docs/cache.md); any other failure (a gcc that exits
    non-zero printing no such error: a broken toolchain) is the C compiler's, said as that."""
    options = dict(text=True, env=gcc_environment(), umask=gcc_umask())
    if compilers is None:
        result = children.run(command, **options)
    else:
        result = compilers.run(command, **options)
    if result.returncode != 0:
        diagnostics = _shortened((result.stderr or result.stdout).strip())
        found = resource_failure(result.returncode, diagnostics)
        if found is not None:
            if not diagnostics:
                diagnostics = f"(gcc printed nothing; its exit status was {result.returncode})"
            output = Path(command[command.index("-o") + 1]) if "-o" in command[:-1] else None
            raise _resource_error(*found, what, diagnostics, output)
        if _SOURCE_ERROR.search(diagnostics):
            raise HostBuildError(f"gcc could not build {what}:\n{diagnostics}",
                                 hint="this is a bobc bug if the plan checked: please report it with the plan")
        said = diagnostics or f"(it printed nothing; its exit status was {result.returncode})"
        raise HostBuildError(f"the C compiler failed: {command[0]} could not build {what}, and reported "
                             f"no error in its source:\n{said}",
                             hint="check that this gcc compiles and links a C program (bobc runs the gcc "
                                  "on PATH, else cc; CC is not read), then build again")
    written = command[command.index("-o") + 1] if "-o" in command[:-1] else None
    if written is not None and not os.path.isfile(written):
        # exit 0 and no -o file (a stub or wrapper that does nothing): said as the C compiler's
        # failure, not a FileNotFoundError traceback where the object or host is read next, nor
        # a cache entry stored without its objects (probe s38 coverage finding 6)
        made = "object file" if "-c" in command else "executable"
        raise HostBuildError(f"the C compiler failed: {command[0]} could not build {what}: it exited 0 but wrote no "
                             f"{made}",
                             hint="check that this gcc compiles and links a C program (bobc runs the gcc "
                                  "on PATH, else cc; CC is not read), then build again")


def compile_objects(gcc: str, jobs: list[tuple[Path, Path, str]], include_dirs: list[Path],
                    compilers: Running | None = None) -> None:
    """Compile each (source, object, what) of `jobs` with `gcc -c`, at most os.cpu_count() at
    once.  When some fail, the error raised is the first failing job's in `jobs`' order (the one
    a serial compile would have stopped at), whatever order the compilers finished in; the jobs
    not yet started are not started.  Interrupted (Ctrl-C, SIGTERM), those running are stopped
    (SIGTERM, then SIGKILL: children.in_threads); after a job's failure, they are waited for.  No
    gcc outlives this.  `compilers`: where they are registered (the early compile's, which its
    cancel stops), else a Running of their own."""
    compilers = Running() if compilers is None else compilers

    def one(job: tuple[Path, Path, str]) -> None:
        source, output, what = job
        _run([gcc, *_flags(include_dirs), "-c", str(source), "-o", str(output)], what, compilers)

    workers = min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        for job in jobs:
            one(job)
        return
    in_threads(one, jobs, workers, "bobc-gcc", compilers)


COMPILING_NOTICE = "compiling the C runtime"


def compiling_notice(scratch: Path) -> None:
    """One line on stderr before the runtime's sources are compiled (seconds; a build says
    nothing else until it ends): why this build is slow, and whether the next one will be.
    `scratch`: the folder the objects are compiled in (inside the cache folder when that is
    writable, cache.scratch_folder).  Said by the runtime's early compile (_Early), it is held
    as the folder and worded when the build takes the objects, by the folder they ended in: a
    compile that a full cache sent to the command's temporary folder stored nothing, whatever
    the folder it began in (probe s43 cacherace finding 1)."""
    held = getattr(_HOLDING, "lines", None)
    if held is not None:
        held.append(scratch)
        return
    _say(_notice_line(scratch))


def _notice_line(scratch: Path) -> str:
    """compiling_notice's line for objects compiled in `scratch`."""
    root = cache.folder()
    if root is None:
        why = f"{cache.off_reason()}: every build compiles it"
    elif root.resolve() in scratch.resolve().parents:
        why = "once: later builds with this runtime and C compiler reuse it from the cache"
    else:
        from ..errors import shown

        why = f"the cache folder {shown(root)} cannot be written: every build compiles it"
        if _cache_full_this_command():
            why = f"the cache folder {shown(root)} has no room: this build stores nothing there"
    return f"bobc: {COMPILING_NOTICE} ({why})"     # a stderr that cannot take it does not stop the build


_HOLDING = threading.local()     # .lines: where this thread's lines go instead of stderr (_Early)


def _say(line: str) -> None:
    """One line on stderr (the compiling notice, a full cache's warning), or, said by the runtime's
    early compile (_Early), kept until the build takes its objects, where a build that compiled
    them then said it -- never before a plan's error, which ends the build first."""
    held = getattr(_HOLDING, "lines", None)
    if held is not None:
        held.append(line)
    else:
        cache._stderr_warning(line)


def _flags(include_dirs: list[Path]) -> list[str]:
    command = [*CFLAGS]
    for folder in include_dirs:
        command += ["-I", str(folder)]
    return command


def library_key(gcc: str, library: list[Path], include_dirs: list[Path], running: Running | None = None) -> str:
    """The cache key of `library`'s objects: every source's name and bytes, every header in
    the include folders, the flags, the compiler (compiler_identity), and each header outside
    the include folders that the sources include (the system's and any CPATH one: its path, size,
    mtime and inode; system_headers).  Not the include folders' paths, so a checkout and an
    installed copy of the same runtime share one entry."""
    parts: list[bytes | str] = [compiler_identity(gcc), " ".join(CFLAGS)]
    for source in library:
        parts += [source.name, source.read_bytes()]
    for folder in include_dirs:
        for header in sorted(folder.glob("*.h")):
            parts += [header.name, header.read_bytes()]
    own = cache.digest(*parts)
    if cache.folder() is None:
        return own                             # no entry to name: no preprocessor run for it
    return cache.digest(own, *system_headers(gcc, library, include_dirs, own, running))


def system_headers(gcc: str, library: list[Path], include_dirs: list[Path], own: str,
                   running: Running | None = None) -> list[str]:
    """'path size mtime inode' of every header outside `include_dirs` that `library`'s sources
    include, as `gcc -M` lists them.  The list is kept in the cache (HEADERS_KIND, under `own`,
    the key of everything else) with those stamps, and used while every stamp still holds: a
    warm build stats the headers instead of running the preprocessor (about 0.2 s)."""
    kept = cache.load(HEADERS_KIND, own, tuple)
    if kept is not None and all(isinstance(line, str) and " " in line for line in kept):
        if all(line == f"{line.split(' ', 1)[0]} {_stamp(Path(line.split(' ', 1)[0]))}" for line in kept):
            return list(kept)
    command = [gcc, *_flags(include_dirs), "-M", *(str(s) for s in library)]
    options = dict(text=True, env=gcc_environment(), umask=gcc_umask())
    result = children.run(command, **options) if running is None else running.run(command, **options)
    if result.returncode != 0:
        return ["unlisted"]                    # the compile itself will say what is wrong
    ours = {str(folder.resolve()) for folder in include_dirs}
    listed = sorted({Path(word).resolve() for word in result.stdout.replace("\\\n", " ").split()
                     if not word.endswith(":") and word.endswith(".h")})
    lines = tuple(f"{path} {_stamp(path)}" for path in listed if str(path.parent) not in ours)
    cache.store(HEADERS_KIND, own, lines)
    return list(lines)


def _in_cache(scratch: Path) -> bool:
    root = cache.folder()
    return root is not None and root.resolve() in scratch.resolve().parents


# the command (its temporaries folder, tempfile.gettempdir(): cache.process_temporaries makes one
# per command) whose compile found the cache folder full; None when none did.  Never a flag for the
# process: one full cache made every later command of a process that lives on compile outside the
# cache and store nothing, without a word, after the space was freed (probe s35 inprocess)
_warned_full_cache: str | None = None


def _cache_full_this_command() -> bool:
    import tempfile

    return _warned_full_cache is not None and _warned_full_cache == tempfile.gettempdir()


def _warn_full_cache(words: str) -> None:
    """One line on stderr, once per command: the cache folder had no room, so this build
    compiled outside it and stored nothing (docs/cache.md: a cache only saves work)."""
    global _warned_full_cache
    import tempfile

    from ..errors import shown

    if _cache_full_this_command():
        return
    _warned_full_cache = tempfile.gettempdir()
    _say(f"bobc: warning: the cache folder {shown(cache.folder())} has no room ({words}): "
         "this build compiled in a temporary folder and stored nothing in the cache; "
         "free space there to keep the saving")


def _compiled(kind: str, compile_in, notice=None) -> tuple[Path, bool]:
    """A scratch folder of `kind` (cache.scratch_folder: in the cache when it is writable) with
    `compile_in(folder)` done in it, and whether it may be published into the cache.  When the
    compile fails for lack of space (HostResourceError "space") in a scratch folder inside the
    cache, it is done again in a folder of this command's temporary folder, never stored, and
    one warning line says so (_warn_full_cache): a full cache folder loses the saving, not the
    build; the command's later compiles go there at once.  A compile that fails because its
    scratch folder inside the cache is gone (the cache folder deleted while it ran: docs/cache.md
    says that is always safe) is done again there too, silently (probe s43 cacherace finding 2).
    A failure there too is the error.
    `notice`: called with the scratch folder before compiling (compiling_notice)."""
    words = None
    if not _cache_full_this_command():
        scratch = cache.scratch_folder(kind)
        if notice is not None:
            notice(scratch)
        try:
            compile_in(scratch)
            return scratch, True
        except HostBuildError as error:
            removed = _in_cache(scratch) and not scratch.is_dir()
            cache.release_scratch(scratch, remove=True)
            if removed:
                notice = None                   # said already, of this same compile
            elif isinstance(error, HostResourceError) and error.kind == "space" and _in_cache(scratch):
                words = error.words
            else:
                raise
        except BaseException:
            cache.release_scratch(scratch, remove=True)
            raise
    import tempfile

    try:
        scratch = cache.own_folder(Path(tempfile.mkdtemp(prefix=f"bobc-{kind}-")))
    except OSError as failure:
        raise cache.temporary_failure(tempfile.gettempdir(), failure, folder=True) from None
    if words is None and notice is not None:
        notice(scratch)
    try:
        compile_in(scratch)
    except BaseException:
        cache.release_scratch(scratch, remove=True)
        raise
    if words is not None:
        _warn_full_cache(words)
    return scratch, False


def library_objects(gcc: str, library: list[Path], include_dirs: list[Path]) -> tuple[list[Path], Path | None]:
    """Objects for `library` (one per source, in order): from the cache, or compiled now
    (concurrently, after one line on stderr that says so: compiling_notice) -- or, when this
    command started them early (compiled_early: `bobc build` while it evaluates the plan), those,
    waited for here, with what their compile said.

    Returns the objects and a folder to delete after linking (None when they are cached).
    """
    early = _EARLY.pop(_early_key(gcc, library, include_dirs), None)
    if early is not None:
        return early.take()
    return _library_objects(gcc, library, include_dirs)


def _library_objects(gcc: str, library: list[Path], include_dirs: list[Path],
                     running: Running | None = None) -> tuple[list[Path], Path | None]:
    key = library_key(gcc, library, include_dirs, running)
    names = [source.with_suffix(".o").name for source in library]
    cached = cache.cached_folder(CACHE_KIND, key, names)      # checked: a damaged entry is a miss
    if cached is not None:
        return [cached / name for name in names], None
    scratch, storable = _compiled(CACHE_KIND, lambda scratch: compile_objects(
        gcc, [(source, scratch / name, f"the runtime source {source}") for source, name in zip(library, names)],
        include_dirs, running), compiling_notice)
    if not storable:
        return [scratch / name for name in names], scratch
    folder = cache.publish_folder(CACHE_KIND, key, scratch, names)
    if folder == scratch:
        return [scratch / name for name in names], scratch
    cache.release_scratch(scratch, remove=True)     # another build published the same objects first
    return [folder / name for name in names], None


def _host(output: Path) -> str:
    """The host a failed gcc was building, as a message names it: not by a path in this command's
    bobc-proc-* folder (gone when the command ends; bobc build links there, then moves the host
    to its -o)."""
    from ..errors import shown

    if any(parent.name.startswith(cache.PROCESS_PREFIX) for parent in Path(output).parents):
        return "the host"
    return f"the host {shown(output)}"


def source_object(gcc: str, source: Path, include_dirs: list[Path], output: Path) -> tuple[Path, Path | None]:
    """The object of one source (the generated plan source), from the cache when the same
    bytes were compiled before with the same headers, flags and compiler; else compiled now.
    Returns the object and a folder to delete after linking (None when it is cached)."""
    key = library_key(gcc, [source], include_dirs)
    name = source.with_suffix(".o").name
    cached = cache.cached_folder(SOURCE_KIND, key, [name])    # checked: a damaged entry is a miss
    if cached is not None:
        return cached / name, None
    scratch, storable = _compiled(SOURCE_KIND, lambda scratch: _run(
        [gcc, *_flags(include_dirs), "-c", str(source), "-o", str(scratch / name)], _host(output)))
    if not storable:
        return scratch / name, scratch
    folder = cache.publish_folder(SOURCE_KIND, key, scratch, [name])
    if folder == scratch:
        return scratch / name, scratch
    cache.release_scratch(scratch, remove=True)
    return folder / name, None


def build(sources: list[Path], include_dirs: list[Path], output: Path, static: bool = True,
          library: list[Path] = (), retry: bool = True) -> None:
    """Compile and link `sources` then `library` into `output`; a compiler diagnostic becomes
    a HostBuildError.  Every object is cached by content: `library` as one entry (the
    runtime), each of `sources` as its own (the generated plan source), so a build links
    objects only, in the order the sources are given, which gives the same bytes as
    compiling everything in one gcc command."""
    gcc = compiler()
    objects: list[Path] = []
    leftovers: list[Path] = []
    try:
        for source in sources:
            found, leftover = source_object(gcc, Path(source), include_dirs, output)
            objects.append(found)
            if leftover is not None:
                leftovers.append(leftover)
        if library:
            found_objects, leftover = library_objects(gcc, list(library), include_dirs)
            objects += found_objects
            if leftover is not None:
                leftovers.append(leftover)
        command = [gcc, *_flags(include_dirs), *(str(o) for o in objects), "-o", str(output)]
        if static:
            command.append("-static")
        command.append("-lm")
        try:
            _run(command, _host(output))
        except HostBuildError:
            if not retry or all(o.is_file() for o in objects):
                raise
            # an object the cache held is gone (the cache folder deleted while this build ran,
            # which docs/cache.md says is always safe): look them up, or compile them, again
            for leftover in leftovers:
                cache.release_scratch(leftover, remove=True)
            leftovers = []
            build(sources, include_dirs, output, static, library, retry=False)
    finally:
        for leftover in leftovers:
            cache.release_scratch(leftover, remove=True)


# The runtime's objects compiled while the plan is evaluated (probe s43 buildearly): they depend on
# no plan, yet a build compiled them only after evaluation, certification and the plan's own C.
_EARLY: dict = {}       # _early_key -> _Early: this command's early compile, until library_objects takes it


def _early_key(gcc: str, library, include_dirs) -> tuple:
    return gcc, tuple(str(source) for source in library), tuple(str(folder) for folder in include_dirs)


class _Early:
    """_library_objects run in a thread of its own (`bobc-gcc-early`), its gcc processes
    registered in `running` (so cancel can stop them) and its stderr lines held (_say)
    until the build takes the objects (take)."""

    def __init__(self, gcc: str, library: list[Path], include_dirs: list[Path]):
        self.running = Running()
        self.lines: list[str | Path] = []     # lines, and compiling_notice's folder
        self.result: tuple[list[Path], Path | None] | None = None
        self.error: BaseException | None = None
        self.taken = False
        # set when _work ends: waited on with the signals only noted (children.Noted), never with
        # Thread.join, which CPython 3.11 marks a thread stopped for good when a signal's exception
        # interrupts it (threading's bpo-45274 handling releases the running thread's own lock), so
        # a later join or is_alive said "ended" of a compile still running, and a SIGTERM left its
        # stubborn gcc processes to the exit; nor with a handler that raises inside the Event's wait
        # (a second signal there: "release unlocked lock")
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._work, args=(gcc, library, include_dirs),
                                       name="bobc-gcc-early", daemon=True)

    def _work(self, gcc, library, include_dirs) -> None:
        _HOLDING.lines = self.lines
        try:
            self.result = _library_objects(gcc, library, include_dirs, self.running)
        except BaseException as error:      # raised where the build takes the objects (take)
            self.error = error
        finally:
            _HOLDING.lines = None
            self.done.set()

    def take(self) -> tuple[list[Path], Path | None]:
        """Wait for the compile (a signal meanwhile ends the command: compiled_early's cancel stops
        it), say the lines it held, in order, as a compile done now says them; its objects and
        leftover folder (now the caller's), or its error."""
        with children.Noted() as signals:   # a signal's Ended: raised on leaving, then cancel stops the compile
            signals.wait(self.done)
        self.taken = True
        for line in self.lines:
            if isinstance(line, Path):      # compiling_notice's folder: a full cache sent them elsewhere
                if self.result is not None and self.result[0] and _cache_full_this_command():
                    line = self.result[0][0].parent
                line = _notice_line(line)
            _say(line)
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return self.result

    def cancel(self) -> None:
        """The build ended without taking the objects (the plan's error, a signal, another
        failure): its gcc processes stopped -- SIGTERM and their children, STOP_GRACE_S, then
        SIGKILL, as children.in_threads stops a pool -- and waited for, its scratch folder removed
        (by _compiled, as any failed compile's), a finished compile's leftover folder too (the
        cache off: no entry to keep); its lines and error are dropped.  A further signal while it
        waits cuts the grace short; the cancel still ends with every process reaped."""
        import signal

        if self.taken:
            return
        self.taken = True
        with children.Noted(raising=False) as signals:
            self.running.stop(signal.SIGTERM)
            if not signals.wait(self.done, children.STOP_GRACE_S):
                self.running.stop(signal.SIGKILL)
                signals.wait(self.done, since=None)
        if self.result is not None and self.result[1] is not None:
            cache.release_scratch(self.result[1], remove=True)


@contextlib.contextmanager
def compiled_early(sources):
    """`with compiled_early(sources):` the objects of `library` (the runtime's sources; `sources()`
    gives `library` and its `include_dirs`) are looked up in the cache and, on a miss, compiled in a
    thread of their own from now on (at most one gcc per CPU, as compile_objects), while the body
    evaluates the plan;
    library_objects with the same sources takes them (waiting for the rest of the compile, and
    saying what it said: the compiling notice, a full cache's warning, its error).  The objects
    and the host are the bytes a build that compiles them when it links makes: the same compile,
    only sooner.  Leaving the body without taking them (a plan's error, a signal, no host to link)
    stops and reaps every gcc, removes its scratch folder, and says nothing of it.  No C compiler,
    or a runtime whose sources cannot be listed: nothing is started, and the build says so where it
    needs them, after the plan's own errors; nor when no thread can start (`ulimit -u`, `ulimit -v`):
    the objects are compiled when the host is linked, as before."""
    early = None
    try:
        gcc = compiler()
        library, include_dirs = sources()
        early = _Early(gcc, list(library), list(include_dirs))
        early.thread.start()
    except (BobcError, RuntimeError, MemoryError):
        early = None
    if early is None:
        yield None
        return
    key = _early_key(gcc, library, include_dirs)
    _EARLY[key] = early
    try:
        yield early
    finally:
        if _EARLY.get(key) is early:
            del _EARLY[key]
        early.cancel()
