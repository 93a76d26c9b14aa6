"""bobc's user cache: work whose result depends only on bytes we can hash, done once.

Entries live in `$XDG_CACHE_HOME/bobc` (default `~/.cache/bobc`; `BOBC_CACHE_DIR`
overrides) under a name derived from a SHA-256 of everything that decides their
content, so an entry is never stale: a changed input is a different name.  Entries
are written to a temporary name in the same folder and renamed into place, so a
reader sees a whole entry or none, and two builds racing write the same bytes.

Every entry is sealed: a file entry starts with a header holding the SHA-256 of its kind,
key and bytes, a folder entry holds a sealed listing (ENTRY_LISTING) of each file's SHA-256,
and both are checked on every read.  A damaged entry (truncated, empty, garbage, any bit
flipped) is a miss: the work is done again and the entry replaced, never used.
Temporaries that a killed build left behind (`.tmp-*`) are removed by the next build that
writes an entry, by lock, not by age: each temporary is flock-ed by the process writing it for
as long as it is in use (a scratch folder through its LOCK_NAME file), and a sweep removes only
one whose lock it can take at once, so a suspended build's or another machine's (a shared
cache, clocks that differ) is never removed under it.

The cache only ever saves time.  When the folder cannot be created or written (a
read-only home, a full disk), the work is done in a temporary folder as if the
cache were empty, and the build's output is the same; `BOBC_CACHE_DIR=off`
turns it off on purpose (in any case: `OFF` too).
"""
from __future__ import annotations

import fcntl   # at import, not at the first lock: under a descriptor limit the lock file and the signal wakeup pipe leave none for loading it
import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
from pathlib import Path

VERSION = b"bobc-cache-2"     # change when an entry's layout changes (it is in every key)
SEAL = b"bobc sealed entry\n"  # a file entry: SEAL, the SHA-256 of (kind, key, bytes), the bytes
ENTRY_LISTING = ".entry"      # a folder entry's sealed listing: "SHA-256 name" per file
STALE_SECONDS = 3600          # a `.tmp-*` folder with no lock file this far from now is no live build's
TOUCH_SECONDS = 3600          # a hit marks its entry used (mtime) when it was last marked longer ago
LOCK_NAME = ".lock"           # in a scratch folder: flock-ed by its builder while it lives


def folder() -> Path | None:
    """The cache folder, or None when caching is off."""
    override = os.environ.get("BOBC_CACHE_DIR")      # set and empty: as unset (docs/cache.md)
    if override is not None and override.lower() == "off":
        return None
    if override:
        return Path(override)
    base = user_cache_base()
    return None if base is None else base / "bobc"


def user_cache_base() -> Path | None:
    """The user's cache folder: `$XDG_CACHE_HOME` when it is an absolute path (the XDG Base
    Directory spec: a relative one is invalid and ignored), else `~/.cache`; None when there is no
    home folder (HOME unset and the user has no password entry: expanduser leaves "~", which was a
    folder named `~` in whatever folder bobc ran from; probe s34 locale findings 2 and 3)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg)
    home = os.path.expanduser("~")
    return Path(home) / ".cache" if os.path.isabs(home) else None


def off_reason() -> str:
    """Why folder() is None, as the notices say it: BOBC_CACHE_DIR=off (as the user wrote it:
    `OFF`, `Off` too), or no home folder."""
    override = os.environ.get("BOBC_CACHE_DIR")
    if override is not None and override.lower() == "off":
        return f"BOBC_CACHE_DIR={override}"     # only O, F and their lower cases lower to "off"
    return "HOME is unset and this user has no home folder, so there is no cache (set BOBC_CACHE_DIR for one)"


_said_not_a_folder: str | None = None      # the command (its temporary folder) that was told


def say_not_a_folder(root: Path | None = None) -> None:
    """When the cache folder's path names something that is not a folder (a regular file, a FIFO,
    a path through a file), say so in one line on stderr, once a command (bobc.cli.main runs each
    with its own temporary folder): no entry can be kept there, so the command runs without the
    cache -- as documented for a cache folder that cannot be written, the work done and the
    output the same -- and without this line a user who set BOBC_CACHE_DIR by mistake would not
    learn why every run is slow (probe s42 cli3, "Left").  A folder that is there is not judged
    here (an unwritable one: build's runtime notice says so; a full one: gcc's warning)."""
    global _said_not_a_folder
    root = folder() if root is None else root
    if root is None:
        return
    try:
        kind = None if stat.S_ISDIR(os.stat(root).st_mode) else "is not a folder"
    except NotADirectoryError:
        kind = "cannot be made (a part of its path is a file, not a folder)"
    except OSError:
        return                                  # missing (made when needed), unreadable: not this case
    if kind is None:
        return
    command = tempfile.gettempdir()
    if _said_not_a_folder == command:
        return
    _said_not_a_folder = command
    from .errors import shown

    if os.environ.get("BOBC_CACHE_DIR"):
        whence, fix = "BOBC_CACHE_DIR", "point BOBC_CACHE_DIR at a folder (or unset it for ~/.cache/bobc)"
    else:
        whence = "XDG_CACHE_HOME/bobc" if os.path.isabs(os.environ.get("XDG_CACHE_HOME", "")) else "~/.cache/bobc"
        fix = "move that file away, or point BOBC_CACHE_DIR at a folder"
    # the words of `bobc cache`'s refusal of the same folder (commands/cache.py)
    _stderr_warning(f"bobc: warning: the cache folder {shown(root)} ({whence}) {kind}: this command runs without a "
                    f"cache (the same work and output, done again next time); {fix}")


def digest(*parts: bytes | str) -> str:
    """A hex SHA-256 over `parts`, each length-prefixed so no two lists collide.  A str is taken
    as UTF-8, with the surrogate escapes Python gives a file name's bytes that are not UTF-8
    (PEP 383) turned back into those bytes, as os.fsencode does: a plan in a folder named in
    Latin-1 has a key (probe s32 environ finding 1), and every other str's bytes are unchanged.
    The filesystem encoding is in every key: entries hold strs (a module's path) that Python
    decoded from a file name's bytes by it, and the same bytes are another str under another one
    (the bytes C3 A9 are one letter under UTF-8, two surrogate escapes under ASCII: LC_ALL=C with
    PYTHONUTF8=0), so an entry one made was another's traceback (probe s34 locale finding 7)."""
    h = hashlib.sha256(VERSION)
    h.update(sys.getfilesystemencoding().encode() + b"\0")
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


_PACKAGE_IDENTITY: bytes | None = None


def package_identity() -> bytes:
    """A hash of bobc's own code and tables (every .py, .lark and .json of the package), and the
    evaluation limit in force: for entries whose content depends on more of bobc than can be
    listed by hand."""
    global _PACKAGE_IDENTITY
    if _PACKAGE_IDENTITY is None:
        import sys

        package = Path(__file__).resolve().parent
        files = []
        for folder, subfolders, names in os.walk(package):
            subfolders[:] = sorted(d for d in subfolders if d not in ("_share", "__pycache__"))
            files += [Path(folder) / n for n in names if n.endswith((".py", ".lark", ".json"))]
        parts: list[bytes | str] = [sys.version]
        for path in sorted(files):
            parts += [str(path.relative_to(package)), path.read_bytes()]
        _PACKAGE_IDENTITY = digest(*parts).encode()
    # a verdict found within one evaluation limit is not one within another (--max-evaluation-steps)
    from .language import limits

    return _PACKAGE_IDENTITY + b"|evaluation-steps=%d" % limits.EVALUATION_STEPS


def entry(kind: str, key: str) -> Path | None:
    """Where the entry `kind/key` lives (it may not exist yet); None when caching is off."""
    root = folder()
    return None if root is None else root / kind / key


def _seal_digest(kind: str, key: str, data: bytes) -> bytes:
    return bytes.fromhex(digest("sealed entry", kind, key, data))


def seal(kind: str, key: str, data: bytes) -> bytes:
    """`data` as stored under `kind/key`: with the SHA-256 that `unseal` checks."""
    return SEAL + _seal_digest(kind, key, data) + data


def unseal(kind: str, key: str, stored: bytes) -> bytes | None:
    """The bytes `seal` wrapped, or None when `stored` is not exactly what it made for `kind/key`."""
    start = len(SEAL) + 32
    if len(stored) < start or not stored.startswith(SEAL):
        return None
    data = stored[start:]
    return data if stored[len(SEAL):start] == _seal_digest(kind, key, data) else None


def _open_regular(path) -> int:
    """An open descriptor of `path` (through links) when it is a regular file; OSError otherwise.
    Opened without blocking, so a FIFO in its place is refused at once (a blocking open waits
    for a writer forever), and a device (a link to /dev/zero) is never read without end."""
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise OSError(f"{os.fspath(path)} is not a regular file")
    except BaseException:
        os.close(handle)
        raise
    return handle


def read_regular(path, limit: int | None = None) -> bytes | None:
    """The bytes of `path` when it is a regular file of at most `limit` bytes (any size without
    one); None when it is not one (missing, a folder, a FIFO, a device), cannot be read, or has
    more: what an entry, or a file an entry was made from, is compared by (a damaged entry is a
    miss, never a hang: probe s34 cache34 findings 1-3).  At most `limit` + 1 bytes are read."""
    try:
        handle = _open_regular(path)
    except OSError:
        return None
    with os.fdopen(handle, "rb") as file:
        try:
            data = file.read() if limit is None else file.read(limit + 1)
        except OSError:
            return None
    return None if limit is not None and len(data) > limit else data


def regular_sha256(path) -> str | None:
    """The SHA-256 (hex) of `path` when it is a regular file that can be read, else None (as read_regular)."""
    try:
        return _file_digest(path)
    except OSError:
        return None


def read(kind: str, key: str) -> bytes | None:
    """The bytes stored under `kind/key`, or None (missing, unreadable, not a regular file or
    damaged: a miss)."""
    path = entry(kind, key)
    if path is None:
        return None
    stored = read_regular(path)
    if stored is None:
        return None
    data = unseal(kind, key, stored)
    if data is not None:
        _touch(path)
    return data


def write(kind: str, key: str, data: bytes) -> None:
    """Store `data` under `kind/key` atomically; a failure to write only loses the saving."""
    path = entry(kind, key)
    if path is None:
        return
    _write_file(path, seal(kind, key, data))


def _write_file(path: Path, data: bytes) -> None:
    try:
        make_folders(path.parent)
        _sweep(path.parent.parent)
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                _lock(out.fileno())            # held until renamed: no sweep removes it meanwhile
                out.write(data)
                out.flush()
                try:
                    os.replace(temporary, path)
                except IsADirectoryError:      # a folder where the entry goes: damage, set aside
                    _discard(path)
                    os.replace(temporary, path)
        except BaseException:
            _remove(temporary)
            raise
    except OSError:
        say_not_a_folder(path.parent.parent)
        return


def _lock(handle: int, wait: bool = True) -> bool:
    """flock `handle` exclusively; without `wait`, False at once when another process holds it."""
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        return True
    except OSError:
        return False


def _touch(path: Path) -> None:
    """Mark the entry `path` used now (its mtime), so `prune` by age keeps entries in use."""
    try:
        if time.time() - path.stat().st_mtime > TOUCH_SECONDS:
            os.utime(path)
    except OSError:
        pass                                   # a read-only cache: only pruning by age is coarser


def load(kind: str, key: str, expected: type):
    """The object pickled under `kind/key` if it is an `expected`, else None: a missing or
    damaged entry is only a miss."""
    import pickle

    data = read(kind, key)
    if data is None:
        return None
    try:
        value = pickle.loads(data)
    except Exception:
        return None
    return value if isinstance(value, expected) else None


def store(kind: str, key: str, value) -> None:
    """Pickle `value` under `kind/key`; one too deep to pickle is only not stored.  With the cache
    off nothing is pickled: the bytes would only be thrown away (probe s40 buildspeed 1)."""
    import pickle

    if entry(kind, key) is None:
        return
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        return
    write(kind, key, data)


def _file_digest(path: Path) -> str:
    """The SHA-256 (hex) of the regular file `path`; OSError for anything else (a FIFO, a device)."""
    with os.fdopen(_open_regular(path), "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _listing(kind: str, key: str, folder: Path) -> dict[str, str] | None:
    """name -> SHA-256 of the files the sealed listing of the folder entry `folder` names, or None."""
    stored = read_regular(folder / ENTRY_LISTING)
    if stored is None:
        return None
    text = unseal(kind, key, stored)
    if text is None:
        return None
    listed = {}
    try:
        for line in text.decode("utf-8").splitlines():
            sha, name = line.split(" ", 1)
            listed[name] = sha
    except ValueError:
        return None
    return listed


def _folder_holds(kind: str, key: str, folder: Path, names) -> bool:
    """True when the folder entry `folder` has its sealed listing, the listing names every one
    of `names`, and every file it names has the bytes it was published with."""
    listed = _listing(kind, key, folder)
    if listed is None or not set(names) <= set(listed):
        return False
    try:
        return all(_file_digest(folder / name) == sha for name, sha in listed.items())
    except OSError:
        return False


def cached_folder(kind: str, key: str, names) -> Path | None:
    """The folder entry `kind/key` when it holds each of `names` exactly as published; None for a
    miss (absent, caching off, or damaged: a file missing, changed, truncated, or its listing)."""
    path = entry(kind, key)
    if path is None or not _folder_holds(kind, key, path, names):
        return None
    _touch(path)
    return path


def publish_folder(kind: str, key: str, built: Path, names) -> Path:
    """Move the finished folder `built` (holding `names`) into the cache as `kind/key`, with its
    sealed listing, atomically by rename; a damaged entry in the way is replaced.

    Returns the cached folder, or `built` itself when the cache is off or unwritable.
    When another process published the same key first, its folder (same content) is used.
    """
    path = entry(kind, key)
    if path is None:
        return built
    try:
        lines = "".join(f"{_file_digest(built / name)} {name}\n" for name in sorted(os.listdir(built))
                        if name not in (ENTRY_LISTING, LOCK_NAME))
        (built / ENTRY_LISTING).write_bytes(seal(kind, key, lines.encode("utf-8")))
        make_folders(path.parent)
    except OSError:
        say_not_a_folder(path.parent.parent)
        return built
    for attempt in range(2):
        try:
            os.rename(built, path)
            _remove(str(path / LOCK_NAME))     # published: no longer a scratch folder to guard
            release_scratch(built)
            return path
        except OSError:
            if _folder_holds(kind, key, path, names):
                return path                    # another build published it first
            if attempt == 0 and os.path.lexists(path):
                _discard(path)                 # a damaged entry: set it aside, then publish ours
    return built


def _discard(path: Path) -> None:
    """Remove the damaged entry `path` (a file or a folder): renamed away first, so no reader
    sees it half removed."""
    try:
        aside = tempfile.mkdtemp(prefix=".tmp-", dir=path.parent)
    except OSError:
        return
    try:
        os.rename(path, os.path.join(aside, "damaged"))
    except OSError:
        pass
    shutil.rmtree(aside, ignore_errors=True)


def scratch_folder(kind: str) -> Path:
    """A new empty folder to build an entry of `kind` in: inside the cache (so publishing is a
    rename on one file system) when it is writable, else in the system's temporary folder.
    Its LOCK_NAME file is flock-ed by this process until the folder is published or given to
    release_scratch (or the process ends): no other build's sweep removes it meanwhile."""
    root = folder()
    if root is not None:
        try:
            make_folders(root / kind)
            _sweep(root)
            return _locked(own_folder(Path(tempfile.mkdtemp(prefix=".tmp-", dir=root / kind))))
        except OSError:
            say_not_a_folder(root)
    base = tempfile.tempdir or temporary_root()
    try:
        made = own_folder(Path(tempfile.mkdtemp(prefix=f"bobc-{kind}-", dir=base)))
    except OSError as error:
        raise temporary_failure(base, error, folder=True) from None
    try:
        return _locked(made)
    except OSError as error:
        raise temporary_failure(made / LOCK_NAME, error) from None


def make_folders(path: Path) -> None:
    """mkdir -p `path` (the cache folder, a kind's folder in it), each folder it makes readable,
    writable and searchable by its owner whatever the umask, the rest of its mode as the umask
    leaves it: under a umask such as 277, mkdir's 0777 less it is 0500, a cache folder bobc made
    and then could never write an entry in, so every build said the cache folder "cannot be
    written" and compiled the runtime again (probe s43 cacherace finding 3).  Folders that were
    there already are left as they are."""
    missing = []
    at = Path(path)
    while not os.path.isdir(at) and at != at.parent:
        missing.append(at)
        at = at.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
            continue                            # another process made it first
        if current_umask() & 0o700:
            os.chmod(folder, (0o777 & ~current_umask()) | 0o700)


def own_folder(made: Path) -> Path:
    """The folder mkdtemp just made, readable, writable and searchable by its owner whatever the
    umask: mkdtemp's 0700 less a umask such as 277 is 0500, a folder bobc could not write its own
    temporaries in (probe s32 environ finding 4)."""
    try:
        os.chmod(made, 0o700)
    except OSError:
        pass
    return made


def current_umask() -> int:
    """The process's umask, read without changing it: Linux's /proc/self/status `Umask:` line
    (proc(5), since 4.7).  Setting it and setting it back (os.umask twice, the only other way) is
    a race once two threads do it -- `bobc build` compiles the runtime in a thread of its own
    (host/gcc.py compiled_early) -- which could leave the process with the other thread's
    temporary mask for good; that way is kept for a system without the line, under a lock."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


_UMASK_LOCK = threading.Lock()


def temporary_failure(path, error: OSError, folder: bool = False):
    """errors.TemporaryWriteFailure for the temporary `path`, with the hint that fits the cause."""
    from .errors import TemporaryWriteFailure

    failure = TemporaryWriteFailure(path, error, folder)
    _fit_hint(failure)
    return failure


def _fit_hint(failure) -> None:
    """A temporary not written for a path too long (ENAMETOOLONG: a TMPDIR near PATH_MAX) or for
    a umask that takes the owner's write permission (umask 277, 222: the folder is writable, the
    file or folder bobc just made in it is not) says so, not "point TMPDIR at a writable folder"."""
    import errno

    from .errors import temporary_base
    from .errors import shown

    base = shown(temporary_base(tempfile.tempdir or temporary_root(), folder=True))
    if failure.errno == errno.ENAMETOOLONG:
        failure.hint = f"point TMPDIR at a shorter path ({base} was used)"
    elif failure.errno == errno.EACCES and current_umask() & 0o200:
        failure.hint = (f"the umask {current_umask():04o} takes the owner's write permission from the files and "
                        f"folders bobc makes, so it cannot write its own temporaries in {base}: set a umask "
                        f"such as 022 or 077, then run again")


_HELD: dict[str, int] = {}      # scratch folder -> the open, flock-ed descriptor of its lock file


def _locked(scratch: Path) -> Path:
    """Lock the new scratch folder `scratch`: its lock file is made and locked under another name,
    then renamed to LOCK_NAME, so another command's sweep never finds LOCK_NAME there unheld (it
    leaves a young folder without one alone: sweep_leftover).  Made as LOCK_NAME and locked
    after, a sweep between the two took the lock and removed a live command's folder."""
    pending = scratch / (LOCK_NAME + ".pending")
    handle = None
    try:
        handle = os.open(pending, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        _lock(handle)
        os.rename(pending, scratch / LOCK_NAME)
    except OSError:
        if handle is not None:
            os.close(handle)
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    _HELD[str(scratch)] = handle
    return scratch


def release_scratch(scratch: Path, remove: bool = False) -> None:
    """Done with the scratch folder `scratch`: its lock is let go (after removing it, with `remove`).
    Its LOCK_NAME file goes last, and only when everything else in it went: a removal that failed
    part way (no descriptor left: `ulimit -n`) leaves the folder with its lock file, which no live
    process holds once this one lets it go, so the next command's sweep removes the rest
    (sweep_leftover) instead of keeping a lockless folder for STALE_SECONDS."""
    if remove:
        _empty_but_lock(scratch)
        try:
            left = [name for name in os.listdir(scratch) if name != LOCK_NAME]
        except OSError:
            left = None
        if left == []:
            shutil.rmtree(scratch, ignore_errors=True)
    handle = _HELD.pop(str(scratch), None)
    if handle is not None:
        os.close(handle)


def _empty_but_lock(scratch: Path) -> None:
    """Remove everything in the folder `scratch` but its LOCK_NAME file, as far as it can."""
    try:
        children = list(os.scandir(scratch))
    except OSError:
        return
    for child in children:
        if child.name == LOCK_NAME:
            continue
        try:
            if child.is_dir(follow_symlinks=False):
                shutil.rmtree(child.path, ignore_errors=True)
            else:
                os.unlink(child.path)
        except OSError:
            pass


_SWEPT: set[str] = set()


def _sweep(root: Path) -> None:
    """Once per command (process_temporaries) and cache folder, before the first entry is written
    (once per process for bobc used through its Python API without a command): remove the
    `.tmp-*` files and folders in each kind's folder that no live process holds (a build
    killed while writing left them).  Each is judged by its lock, whatever its age: a file
    by a lock on itself, a folder by its LOCK_NAME file; one that some process holds (a
    live build's, even one suspended for hours or on a machine whose clock differs) is left.
    A folder without a lock file (made by a bobc before locks, or killed between creating the
    folder and its lock) goes only when its mtime is over STALE_SECONDS from now, either way."""
    if str(root) in _SWEPT:
        return
    _SWEPT.add(str(root))
    try:
        kinds = [k.path for k in os.scandir(root) if k.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for kind in kinds:
        try:
            leftovers = [c.path for c in os.scandir(kind) if c.name.startswith(".tmp-")]
        except OSError:
            continue
        for leftover in leftovers:
            sweep_leftover(leftover)


def sweep_leftover(path: str) -> bool:
    """Remove the temporary `path` (a file, or a scratch folder) when no process holds its lock;
    True when it was removed."""
    is_folder = os.path.isdir(path) and not os.path.islink(path)
    lock = os.path.join(path, LOCK_NAME) if is_folder else path
    try:
        handle = os.open(lock, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        if not is_folder:
            return False                       # already gone
        try:
            age = time.time() - os.lstat(path).st_mtime
        except OSError:
            return False
        if abs(age) <= STALE_SECONDS:
            return False                       # lockless and recent: maybe being made right now
        shutil.rmtree(path, ignore_errors=True)
        return True
    except OSError:
        if not is_folder and os.path.islink(path):
            _remove(path)
            return True
        return False                           # not ours to judge (unreadable): leave it
    try:
        if not _lock(handle, wait=False):
            return False                       # a live process holds it
        if is_folder:
            shutil.rmtree(path, ignore_errors=True)
        else:
            _remove(path)
        return True
    finally:
        os.close(handle)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _size(path: str) -> int:
    try:
        if not os.path.isdir(path) or os.path.islink(path):
            return os.lstat(path).st_size
        return sum(os.lstat(os.path.join(top, name)).st_size
                   for top, _, names in os.walk(path) for name in names)
    except OSError:
        return 0


# The folders bobc writes in the cache (docs/cache.md's table; tests/test_cache_usage.py holds this
# to every kind the code stores under): what `bobc cache` counts as bobc's and --prune acts on.
KINDS = frozenset({"runtime-objects", "objects", "headers", "parsed", "lark", "kernels", "checked", "plans",
                   "programs", "outcomes", "artifacts", "parameter-reads", "written-before-read", "region-code",
                   "native-interpreter", "templates", "nvdisasm-runs"})
# The suffix after the key's 64 hex digits of each kind whose entries carry one (docs/cache.md's
# table: `native-interpreter/<key>-static`, native/interpreter.py's key); every other kind's
# entries are named by the key alone (cache.digest).
SUFFIXES = {"native-interpreter": "-static"}
_KEY = re.compile(r"[0-9a-f]{64}")
TEMPORARY = ".tmp-"             # tempfile's prefix for every temporary bobc makes in a kind's folder


def _is_entry(kind: str, name: str) -> bool:
    """Whether `name` in the folder of `kind` is an entry bobc wrote: exactly a key's 64 hex digits
    and the kind's suffix, nothing before or after (a user's `<key>.bak` or `<key>-notes.txt` there
    is not bobc's: counted in no number, never removed by prune)."""
    suffix = SUFFIXES.get(kind, "")
    return name.endswith(suffix) and _KEY.fullmatch(name[:len(name) - len(suffix)]) is not None


def _kinds(root: Path) -> tuple[list[os.DirEntry], list[os.DirEntry]]:
    """The folders of bobc's KINDS in `root` (real folders, not links), and everything else there."""
    ours, other = [], []
    for child in sorted(os.scandir(root), key=lambda c: c.name):
        (ours if child.name in KINDS and child.is_dir(follow_symlinks=False) else other).append(child)
    return ours, other


def usage(root: Path) -> tuple[dict[str, tuple[int, int]], tuple[int, int], list[str]]:
    """What the cache folder `root` holds (`bobc cache`), counted as prune judges it: bobc's
    entries by kind, kind -> (entries, bytes); bobc's temporaries (`.tmp-*`: count, bytes); and
    the names of everything else found there (`Documents/`, `kernels/notes.txt`), which is not
    bobc's, is left alone by prune and counted in neither (nor walked: a BOBC_CACHE_DIR naming a
    home folder by mistake is not read through).  A cache folder that cannot be read raises its
    OSError; a kind's folder that cannot be read is in `.unreadable` (Usage), counted in no number."""
    found: dict[str, tuple[int, int]] = {}
    temporaries = [0, 0]
    foreign: list[str] = []
    unreadable: list[tuple[str, OSError]] = []
    kinds, other = _kinds(root)     # a cache folder that cannot be read raises its OSError, as prune's does
    foreign += [c.name + ("/" if c.is_dir(follow_symlinks=False) else "") for c in other]
    for kind in kinds:
        try:
            children = sorted(os.scandir(kind.path), key=lambda c: c.name)
        except OSError as error:
            # counted in no number, and said: a size that leaves it out is not the cache's size
            unreadable.append((kind.name, error))
            continue
        entries = size = 0
        for child in children:
            if child.name.startswith(TEMPORARY):
                temporaries[0] += 1
                temporaries[1] += _size(child.path)
            elif _is_entry(kind.name, child.name):
                entries += 1
                size += _size(child.path)
            else:
                foreign.append(f"{kind.name}/{child.name}" + ("/" if child.is_dir(follow_symlinks=False) else ""))
        found[kind.name] = (entries, size)
    return Usage(found, (temporaries[0], temporaries[1]), foreign, unreadable)


class Usage(tuple):
    """What `usage` found: (found, temporaries, foreign), and `unreadable`: each of bobc's kind
    folders that could not be listed, with the system's error (its entries are in no number)."""

    def __new__(cls, found, temporaries, foreign, unreadable=()):
        made = super().__new__(cls, (found, temporaries, foreign))
        made.unreadable = list(unreadable)
        return made


class PruneResult(tuple):
    """What `prune` did: (entries removed, bytes freed), and `kept`: how many entries old enough to
    go could not be removed, with `reason`, the system's words for the first such failure (a
    read-only cache, a folder of someone else's); `unreadable`: (kind, OSError) of each kind's
    folder that cannot be listed, whose entries were not judged (README's exit 1: a file that is
    there but unreadable; probe s37 leftovers finding 3)."""

    def __new__(cls, removed: int, freed: int, kept: int = 0, reason: str | None = None, unreadable=()):
        made = super().__new__(cls, (removed, freed))
        made.kept, made.reason, made.unreadable = kept, reason, list(unreadable)
        return made


def _why(path: str, remove) -> str | None:
    """Remove `path` with `remove` (a function of the path); None when it is gone after, else the
    system's words for why it is not (what the removal said, or the folder's own refusal)."""
    said = None
    try:
        remove(path)
    except OSError as error:
        said = error.strerror or str(error)
    if not os.path.lexists(path):
        return None
    if said is None:                    # _discard swallows its errors: ask the folder for the reason
        folder = os.path.dirname(path)
        import errno

        said = os.strerror(errno.EACCES) if not os.access(folder, os.W_OK | os.X_OK) else "it is still there"
    return said


def prune(root: Path, days: float) -> PruneResult:
    """Remove from the cache folder `root` every entry not used for `days` days (a hit marks its
    entry used: _touch) and every temporary no live process holds; (entries removed, bytes freed),
    with `.kept` the entries old enough to go that could not be removed (and `.reason` why), so
    that `bobc cache --prune` says so and exits non-zero (probe s33 resources 10).  A cache folder
    that cannot be read raises its OSError.
    A build running meanwhile keeps what it uses: it marked each entry used within the hour, and
    `days` is at least a day (commands.cache.MIN_PRUNE_DAYS)."""
    cutoff = time.time() - days * 86400
    removed = freed = kept = 0
    reason = None
    unreadable: list[tuple[str, OSError]] = []
    kinds = [(k.name, k.path) for k in _kinds(root)[0]]
    for kind, kind_path in kinds:
        try:
            children = list(os.scandir(kind_path))
        except OSError as error:
            unreadable.append((kind, error))
            continue
        for child in children:
            temporary = child.name.startswith(TEMPORARY)
            if not (temporary or _is_entry(kind, child.name)):
                continue        # not an entry bobc named (a user's file, or BOBC_CACHE_DIR names a user's folder)
            size = _size(child.path)
            if temporary:
                if sweep_leftover(child.path):
                    freed += size
                continue
            try:
                if child.stat(follow_symlinks=False).st_mtime >= cutoff:
                    continue
            except OSError:
                continue
            if child.is_dir(follow_symlinks=False):
                why = _why(child.path, lambda path: _discard(Path(path)))
            else:
                why = _why(child.path, os.unlink)
            if why is None:
                removed += 1
                freed += size
            else:
                kept += 1
                reason = reason or why
    return PruneResult(removed, freed, kept, reason, unreadable)


PROCESS_PREFIX = "bobc-proc-"


class process_temporaries:
    """`with process_temporaries():` this command's temporaries (tempfile's default folder:
    `bobc build`'s bobc-build-*, the host's bobc-host-*, a scratch folder outside an unwritable
    cache) go in one folder of the system's temporary folder, `bobc-proc-*`, locked as a
    scratch folder is and removed at the end.  A command killed by SIGKILL leaves it; the next
    bobc command removes every `bobc-proc-*` no live process holds (sweep_leftover)."""

    def __enter__(self):
        global _ROOT
        # each command sweeps the cache's leftovers before its first entry (docs/cache.md: "the next
        # build that writes an entry"), not only a process's first (probe s36 inprocess2 finding 8)
        _SWEPT.clear()
        self.previous = tempfile.tempdir
        self.folder = None
        # tempfile.tempdir set by whoever runs bobc in process: their choice, as TMPDIR is the user's
        chosen = self.previous or os.environ.get("TMPDIR") or None
        if chosen is not None:
            try:
                chosen = os.path.abspath(chosen)   # as gettempdir gave it: not moved by a later chdir
            except OSError:
                pass
        unusable: list[tuple[str, OSError]] = []
        for base in ([chosen] if chosen else []) + [SYSTEM_TEMPORARY]:
            _sweep_processes(base)
            try:
                made = Path(tempfile.mkdtemp(prefix=PROCESS_PREFIX, dir=base))
            except OSError as error:
                _refuse_descriptors(error, f"making this command's temporary folder in {base}")
                if error.errno in _UNUSABLE_FOLDER:
                    unusable.append((base, error))     # missing, a file, not writable: named, not used
                    continue
                _warn_in_itself(base, error)            # no room, a path too long: in `base` itself
                _ROOT = tempfile.tempdir = base
                return self
            if unusable:
                _warn_unusable(unusable, base)
            _ROOT = base
            try:
                self.folder = _locked(own_folder(made))
            except OSError as error:
                _refuse_descriptors(error, f"locking this command's temporary folder in {base}")
                _warn_in_itself(base, error)
                tempfile.tempdir = base
                return self
            tempfile.tempdir = str(self.folder)
            return self
        raise _no_temporary_folder(unusable)

    def __exit__(self, kind, error, trace):
        global _ROOT
        tempfile.tempdir = self.previous
        if self.folder is not None:
            release_scratch(self.folder, remove=True)
        from .errors import TemporaryWriteFailure

        if isinstance(error, TemporaryWriteFailure):
            _fit_hint(error)
        _ROOT = None
        return False


# the folder a command's bobc-proc-* goes in when TMPDIR is unset or empty (docs/cache.md); never
# tempfile.gettempdir(), whose probe writes a file in each candidate and silently moves on to the
# next one -- /var/tmp, /usr/tmp, the current folder -- or dies with a traceback when none takes it
SYSTEM_TEMPORARY = "/tmp"
_ROOT: str | None = None        # the folder this command's bobc-proc-* (or its temporaries) went in


def temporary_root() -> str:
    """The folder this command's temporaries go in (its bobc-proc-* folder is made there):
    the one process_temporaries chose, else tempfile.tempdir when a caller set it, else $TMPDIR
    when set and not empty, else /tmp."""
    return _ROOT or tempfile.tempdir or os.environ.get("TMPDIR") or SYSTEM_TEMPORARY


def _errnos(*names: str) -> frozenset:
    import errno

    return frozenset(getattr(errno, name) for name in names if hasattr(errno, name))


# a folder that cannot hold temporaries at all, whatever is freed in it: missing, not a folder, a
# loop of links, not writable or searchable by this user, a read-only file system
_UNUSABLE_FOLDER = _errnos("ENOENT", "ENOTDIR", "ELOOP", "EACCES", "EPERM", "EROFS")


def _refuse_descriptors(error: OSError, doing: str) -> None:
    from .errors import descriptors_exhausted

    refusal = descriptors_exhausted(error, doing)
    if refusal is not None:
        raise refusal from None


def _stderr_warning(line: str) -> None:
    try:
        if sys.stderr is not None:
            print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _warn_in_itself(base: str, error: OSError) -> None:
    """bobc-proc-* could not be made in `base` for a reason other than the folder itself (no room,
    a path too long): the temporaries go in `base` itself, unswept if the command is killed."""
    from .errors import shown

    _stderr_warning(f"bobc: warning: cannot make this command's temporary folder {PROCESS_PREFIX}* in "
                    f"{shown(base)} ({error.strerror or error}): its temporaries go in that folder itself")


def _warn_unusable(unusable: list[tuple[str, OSError]], used: str) -> None:
    """TMPDIR names a folder no temporary can be made in: said in one line, and /tmp used."""
    from .errors import shown

    base, error = unusable[0]
    _stderr_warning(f"bobc: warning: TMPDIR={shown(base)} cannot hold temporaries ({error.strerror or error}): "
                    f"this command's temporaries go in {shown(used)}; point TMPDIR at a writable folder "
                    f"(or unset it)")


def _no_temporary_folder(unusable: list[tuple[str, OSError]]):
    """The TemporaryWriteFailure when neither $TMPDIR nor /tmp can hold a temporary folder."""
    from .errors import TemporaryWriteFailure
    from .errors import shown

    base, error = unusable[-1]
    failure = TemporaryWriteFailure(base, error, folder=True)
    if len(unusable) > 1:
        first, words = unusable[0]
        failure.message += f" (nor in TMPDIR={shown(first)}: {words.strerror or words})"
        failure.args = (failure.message,)
    failure.hint = "point TMPDIR at a writable folder with room, then run again"
    return failure


def _sweep_processes(base: str) -> None:
    """Remove every bobc-proc-* in `base` that no live process holds (sweep_leftover)."""
    try:
        leftovers = [e.path for e in os.scandir(base) if e.name.startswith(PROCESS_PREFIX)]
    except OSError:
        return
    for leftover in leftovers:
        sweep_leftover(leftover)
