"""bobc's user cache: work whose result depends only on bytes we can hash, done once.

Entries live in `$XDG_CACHE_HOME/bobc` (default `~/.cache/bobc`; `BOBC_CACHE_DIR`
overrides) under a name derived from a SHA-256 of everything that decides their
content, so an entry is never stale: a changed input is a different name.  Entries
are written to a temporary name in the same folder and renamed into place, so a
reader sees a whole entry or none, and two builds racing write the same bytes.

The cache only ever saves time.  When the folder cannot be created or written (a
read-only home, a full disk), the work is done in a temporary folder as if the
cache were empty, and the build's output is the same; `BOBC_CACHE_DIR=off`
turns it off on purpose.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

VERSION = b"bobc-cache-1"     # change when an entry's layout changes


def folder() -> Path | None:
    """The cache folder, or None when caching is off."""
    override = os.environ.get("BOBC_CACHE_DIR")
    if override == "off":
        return None
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "bobc"


def digest(*parts: bytes | str) -> str:
    """A hex SHA-256 over `parts`, each length-prefixed so no two lists collide."""
    h = hashlib.sha256(VERSION)
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
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


def read(kind: str, key: str) -> bytes | None:
    """The bytes stored under `kind/key`, or None."""
    path = entry(kind, key)
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def write(kind: str, key: str, data: bytes) -> None:
    """Store `data` under `kind/key` atomically; a failure to write only loses the saving."""
    path = entry(kind, key)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            _remove(temporary)
            raise
    except OSError:
        return


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
    """Pickle `value` under `kind/key`; one too deep to pickle is only not stored."""
    import pickle

    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except RecursionError:
        return
    write(kind, key, data)


def publish_folder(kind: str, key: str, built: Path) -> Path:
    """Move the finished folder `built` into the cache as `kind/key` (atomically, by rename).

    Returns the cached folder, or `built` itself when the cache is off or unwritable.
    When another process published the same key first, its folder (same content) is used.
    """
    path = entry(kind, key)
    if path is None:
        return built
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.rename(built, path)
        return path
    except OSError:
        return path if path.is_dir() else built


def scratch_folder(kind: str) -> Path:
    """A new empty folder to build an entry of `kind` in: inside the cache (so publishing is a
    rename on one file system) when it is writable, else in the system's temporary folder."""
    root = folder()
    if root is not None:
        try:
            (root / kind).mkdir(parents=True, exist_ok=True)
            return Path(tempfile.mkdtemp(prefix=".tmp-", dir=root / kind))
        except OSError:
            pass
    return Path(tempfile.mkdtemp(prefix=f"bobc-{kind}-"))


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
