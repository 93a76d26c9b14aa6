"""Every entry of bobc's user cache is checked before it is used (docs/cache.md: "A damaged
entry is a miss"; probe s28 determinism findings 1, 2 and 7): a truncated, empty, garbage or
one-bit-flipped entry of any folder is rebuilt and replaced, and the build's output is byte
for byte the one `BOBC_CACHE_DIR=off` gives, exit 0, never a crash, a different host or a
misleading error."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bobc import cache

REPO = Path(__file__).resolve().parents[1]
BOB = REPO / "examples/bob/Bob/Build/NativeHost.bob"
NATIVE = REPO / "tests/native/plans/Native/Commands.bob"
# what a build that compiles the runtime's objects again (their entry damaged) says first on stderr
COMPILING = "bobc: compiling the C runtime (once: later builds with this runtime and C compiler reuse it from the cache)\n"
FOLDER_KINDS = ("objects", "runtime-objects")      # folder entries (host/gcc.py); the rest are files

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


# --- the damage: each kind of it, at positions across an entry ---------------------------------

def bit_positions(size: int) -> list[int]:
    """Bit numbers across an entry of `size` bytes: every bit of the first 64 bytes (the seal's
    header and checksum), of the last byte, and 200 more spread over the rest."""
    bits = set(range(min(size, 64) * 8)) | {size * 8 - 1 - i for i in range(8)}
    rng = random.Random(size)
    bits |= {rng.randrange(size * 8) for _ in range(200)}
    return sorted(b for b in bits if 0 <= b < size * 8)


def flipped(data: bytes, bit: int) -> bytes:
    changed = bytearray(data)
    changed[bit // 8] ^= 1 << (bit % 8)
    return bytes(changed)


def damages(data: bytes) -> dict[str, bytes]:
    """What a damaged copy of `data` may look like, by name (no bit flips: see bit_positions)."""
    rng = random.Random(len(data))
    return {"empty": b"", "truncated to one byte": data[:1], "truncated to half": data[:len(data) // 2],
            "one byte short": data[:-1], "one byte more": data + b"\0",
            "garbage": bytes(rng.randrange(256) for _ in range(len(data)))}


# --- the cache's own checks, entry by entry -----------------------------------------------------

@pytest.mark.parametrize("payload", [b"", b"x", bytes(range(256)) * 40])
def test_a_damaged_file_entry_is_a_miss_and_the_next_write_replaces_it(cache_dir, payload):
    key = cache.digest("an entry")
    cache.write("k", key, payload)
    path = cache.entry("k", key)
    stored = path.read_bytes()
    assert cache.read("k", key) == payload
    cases = [*damages(stored).items(), *((f"bit {b}", flipped(stored, b)) for b in bit_positions(len(stored)))]
    for name, damaged in cases:
        path.write_bytes(damaged)
        assert cache.read("k", key) is None, name
    cache.write("k", key, payload)
    assert cache.read("k", key) == payload
    assert cache.read("k", cache.digest("another key")) is None
    shutil.copy(path, cache.entry("k", "elsewhere"))       # an entry is sealed to its own kind and key
    assert cache.read("k", "elsewhere") is None and cache.read("other", key) is None


def test_a_damaged_pickle_entry_is_a_miss(cache_dir):
    key = cache.digest("a pickle")
    cache.store("k", key, (1, "two", b"three"))
    path = cache.entry("k", key)
    stored = path.read_bytes()
    for bit in bit_positions(len(stored)):
        path.write_bytes(flipped(stored, bit))
        assert cache.load("k", key, tuple) is None, bit
    path.write_bytes(stored)
    assert cache.load("k", key, tuple) == (1, "two", b"three")


def _published(tmp_path, key="k1") -> Path:
    built = cache.scratch_folder("f")
    (built / "a.o").write_bytes(bytes(range(200)))
    (built / "b.o").write_bytes(b"\x7fELF" + bytes(100))
    return cache.publish_folder("f", key, built, ["a.o", "b.o"])


def test_a_damaged_folder_entry_is_a_miss_and_publishing_replaces_it(cache_dir, tmp_path):
    folder = _published(tmp_path)
    assert folder == cache_dir / "f" / "k1"
    assert cache.cached_folder("f", "k1", ["a.o", "b.o"]) == folder
    assert sorted(p.name for p in folder.iterdir()) == [cache.ENTRY_LISTING, "a.o", "b.o"]
    assert cache.cached_folder("f", "k1", ["a.o", "c.o"]) is None          # not a file it holds
    for name in ("a.o", "b.o", cache.ENTRY_LISTING):
        path = folder / name
        good = path.read_bytes()
        cases = [*damages(good).items(), *((f"bit {b}", flipped(good, b)) for b in bit_positions(len(good)))]
        for what, damaged in cases:
            path.write_bytes(damaged)
            assert cache.cached_folder("f", "k1", ["a.o", "b.o"]) is None, (name, what)
        path.unlink()
        assert cache.cached_folder("f", "k1", ["a.o", "b.o"]) is None, (name, "removed")
        assert _published(tmp_path) == folder                              # replaced in place
        assert cache.cached_folder("f", "k1", ["a.o", "b.o"]) == folder
        assert (folder / name).read_bytes() == good
    shutil.rmtree(folder)
    folder.write_bytes(b"a file where the folder goes")
    assert cache.cached_folder("f", "k1", ["a.o"]) is None
    assert _published(tmp_path) == folder and cache.cached_folder("f", "k1", ["a.o", "b.o"]) == folder
    assert not [p for p in (cache_dir / "f").iterdir() if p.name.startswith(".tmp-")]


def _returns(call, seconds: float = 20.0):
    """call()'s result, asserting it returns in time (a blocking open of a FIFO never does)."""
    import threading

    result = []
    worker = threading.Thread(target=lambda: result.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{call} blocked for {seconds} s"
    return result[0]


def _not_a_file(path: Path, how: str) -> None:
    """Put something that is not a regular file at `path`: a FIFO, or a link to a device that
    reads without end (/dev/zero)."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize("how", ["fifo", "link to /dev/zero"])
def test_an_entry_that_is_no_regular_file_is_a_miss_at_once_and_replaced(cache_dir, tmp_path, how):
    """A FIFO or a link to a device in an entry's place is damage: a miss at once, never a read
    that blocks forever (a FIFO) or fills memory (/dev/zero; probe s34 cache34 finding 1)."""
    key = cache.digest("not a file")
    cache.write("k", key, b"payload")
    _not_a_file(cache.entry("k", key), how)
    assert _returns(lambda: cache.read("k", key)) is None
    assert _returns(lambda: cache.load("k", key, bytes)) is None
    cache.write("k", key, b"payload")
    assert cache.read("k", key) == b"payload" and cache.entry("k", key).is_file()
    folder = _published(tmp_path)
    for name in (cache.ENTRY_LISTING, "a.o"):
        good = (folder / name).read_bytes()
        _not_a_file(folder / name, how)
        assert _returns(lambda: cache.cached_folder("f", "k1", ["a.o", "b.o"])) is None, name
        (folder / name).unlink()
        (folder / name).write_bytes(good)
        assert cache.cached_folder("f", "k1", ["a.o", "b.o"]) == folder


def test_a_file_entry_is_written_over_a_folder_in_its_place(cache_dir):
    key = cache.digest("in the way")
    cache.entry("k", key).mkdir(parents=True)
    (cache.entry("k", key) / "junk").write_bytes(b"junk")
    cache.write("k", key, b"payload")
    assert cache.read("k", key) == b"payload"


def test_off_in_any_case_turns_the_cache_off_and_creates_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for spelling in ("off", "OFF", "Off"):
        monkeypatch.setenv("BOBC_CACHE_DIR", spelling)
        assert cache.folder() is None
        cache.write("k", cache.digest("x"), b"data")
        scratch = cache.scratch_folder("f")
        assert cache.publish_folder("f", "k", scratch, []) == scratch and tmp_path not in scratch.parents
        shutil.rmtree(scratch)
    assert list(tmp_path.iterdir()) == []


def test_stale_temporaries_are_removed_and_a_live_build_s_are_kept(cache_dir, monkeypatch):
    monkeypatch.setattr(cache, "_SWEPT", set())
    old = time.time() - cache.STALE_SECONDS - 60
    (cache_dir / "objects" / ".tmp-killed").mkdir(parents=True)
    (cache_dir / "objects" / ".tmp-killed" / "host_plan.o").write_bytes(b"half")
    (cache_dir / "plans").mkdir()
    (cache_dir / "plans" / ".tmp-killed").write_bytes(b"half")
    (cache_dir / "plans" / ".tmp-live").write_bytes(b"being written")
    (cache_dir / "plans" / "notatemporary").write_bytes(b"an entry")
    for path in (cache_dir / "objects" / ".tmp-killed", cache_dir / "plans" / ".tmp-killed",
                 cache_dir / "plans" / "notatemporary", cache_dir / "plans" / ".tmp-live"):
        os.utime(path, (old, old))
    import fcntl

    with open(cache_dir / "plans" / ".tmp-live", "rb+") as live:   # its writer's lock (any age)
        fcntl.flock(live, fcntl.LOCK_EX)
        cache.write("plans", cache.digest("new"), b"entry")
    assert not (cache_dir / "objects" / ".tmp-killed").exists()
    assert sorted(p.name for p in (cache_dir / "plans").iterdir()) == \
        sorted([".tmp-live", "notatemporary", cache.digest("new")])


# --- whole builds from a damaged cache ----------------------------------------------------------

def bobc(*arguments, cache_folder) -> subprocess.CompletedProcess:
    env = {**os.environ, "BOBC_CACHE_DIR": str(cache_folder), "PYTHONPATH": str(REPO / "compiler")}
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, arguments)], capture_output=True,
                          text=True, env=env, cwd=REPO)


def entries(root: Path) -> list[tuple[str, str, Path]]:
    """(kind, key, path) of every entry in the cache folder `root`."""
    found = []
    for kind in sorted(p for p in root.iterdir() if p.is_dir()):
        for entry in sorted(kind.iterdir()):
            if not entry.name.startswith(".tmp-"):
                found.append((kind.name, entry.name, entry))
    return found


def damage_all(root: Path, how: str) -> int:
    """Damage every file of every entry in `root` (a folder entry's files, not its listing) as
    `how` says: one of damages()' names, or "bit P" for the bit P per mille into each file."""
    count = 0
    for kind, key, path in entries(root):
        files = [f for f in path.iterdir() if f.name != cache.ENTRY_LISTING] if path.is_dir() else [path]
        for file in files:
            data = file.read_bytes()
            if how.startswith("bit "):
                bit = min(len(data) * 8 - 1, len(data) * 8 * int(how.split()[1]) // 1000 + 3)
                file.write_bytes(flipped(data, bit))
            else:
                file.write_bytes(damages(data)[how])
            count += 1
    return count


def assert_every_entry_holds(root: Path, monkeypatch) -> None:
    monkeypatch.setenv("BOBC_CACHE_DIR", str(root))
    for kind, key, path in entries(root):
        if kind in FOLDER_KINDS:
            names = [f.name for f in path.iterdir() if f.name != cache.ENTRY_LISTING]
            assert cache.cached_folder(kind, key, names) == path, (kind, key)
        else:
            assert cache.read(kind, key) is not None, (kind, key)


HOW = ["empty", "truncated to half", "garbage", "bit 0", "bit 500", "bit 999"]   # each bit class: the unit tests


@pytest.fixture(scope="module")
def bob_reference(tmp_path_factory):
    """Bob's sm_90 host and `bobc check` output with the cache off, and a warm cache."""
    folder = tmp_path_factory.mktemp("bob")
    built = bobc("build", BOB, "--target", "sm_90", "-o", folder / "reference", cache_folder="off")
    checked = bobc("check", BOB, "--target", "sm_90", cache_folder="off")
    assert built.returncode == checked.returncode == 0, built.stderr + checked.stderr
    warm = folder / "warm"
    for _ in range(2):
        assert bobc("build", BOB, "--target", "sm_90", "-o", folder / "warm-host", cache_folder=warm).returncode == 0
        assert bobc("check", BOB, "--target", "sm_90", cache_folder=warm).returncode == 0
    assert (folder / "warm-host").read_bytes() == (folder / "reference").read_bytes()
    kinds = {kind for kind, _, _ in entries(warm)}
    assert kinds >= {"checked", "kernels", "lark", "objects", "outcomes", "parameter-reads", "parsed", "plans",
                     "programs", "runtime-objects", "templates"}, kinds
    return folder / "reference", checked.stdout, warm


@needs_gcc
@pytest.mark.parametrize("how", HOW)
def test_a_build_from_a_cache_with_every_entry_damaged_is_the_build_without_one(bob_reference, how, tmp_path,
                                                                               monkeypatch):
    """Every entry of every folder damaged at once: the build misses each (a damaged program
    record makes the modules parsed again, a damaged tree makes lark's tables read, a damaged
    plan makes the kernels read) and writes the same host as with the cache off."""
    reference, check_output, warm = bob_reference
    root = tmp_path / "cache"
    shutil.copytree(warm, root)
    assert damage_all(root, how) > 50
    built = bobc("build", BOB, "--target", "sm_90", "-o", tmp_path / "host", cache_folder=root)
    assert (built.returncode, built.stderr) == (0, COMPILING)       # the damaged runtime objects: compiled again
    assert (tmp_path / "host").read_bytes() == reference.read_bytes()
    checked = bobc("check", BOB, "--target", "sm_90", cache_folder=root)
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, check_output, "")
    assert_every_entry_holds(root, monkeypatch)             # each damaged entry was read and replaced
    again = bobc("build", BOB, "--target", "sm_90", "-o", tmp_path / "again", cache_folder=root)
    assert again.returncode == 0 and (tmp_path / "again").read_bytes() == reference.read_bytes()


@needs_gcc
@pytest.mark.parametrize("kind, offset, mask", [("plans", 0x4000, 1), ("objects", 0x1369, 4),
                                                ("templates", 0xbb9, 2), ("runtime-objects", 0x2000, 0x10)])
def test_the_probe_s_one_bit_flips_are_misses(bob_reference, kind, offset, mask, tmp_path):
    """probe s28 findings 1 and 2: these flips gave a segfault (templates) or a different host."""
    reference, _, warm = bob_reference
    root = tmp_path / "cache"
    shutil.copytree(warm, root)
    for _, _, path in [e for e in entries(root) if e[0] == kind]:
        for file in ([f for f in path.iterdir() if f.suffix == ".o"] if path.is_dir() else [path]):
            data = bytearray(file.read_bytes())
            data[(offset if file.suffix == ".o" else len(cache.SEAL) + 32 + offset) % len(data)] ^= mask
            file.write_bytes(bytes(data))
    built = bobc("build", BOB, "--target", "sm_90", "-o", tmp_path / "host", cache_folder=root)
    assert (built.returncode, built.stderr) == (0, COMPILING if kind == "runtime-objects" else "")
    assert (tmp_path / "host").read_bytes() == reference.read_bytes()


@pytest.fixture(scope="module")
def native_reference(tmp_path_factory):
    """A native artifact host (native-interpreter/, artifacts/) with the cache off, and a warm cache."""
    folder = tmp_path_factory.mktemp("native")
    arguments = ("build", NATIVE, "--entry", "arithmeticHost", "--target", "sm_86")
    assert bobc(*arguments, "-o", folder / "reference", cache_folder="off").returncode == 0
    warm = folder / "warm"
    for _ in range(2):
        assert bobc(*arguments, "-o", folder / "warm-host", cache_folder=warm).returncode == 0
    assert {"artifacts", "native-interpreter"} <= {kind for kind, _, _ in entries(warm)}
    return arguments, folder / "reference", warm


@needs_gcc
@pytest.mark.parametrize("how", ["truncated to half", "garbage", "bit 500"])
def test_a_native_artifact_from_a_damaged_cache_is_the_one_without_it(native_reference, how, tmp_path,
                                                                      monkeypatch):
    arguments, reference, warm = native_reference
    root = tmp_path / "cache"
    shutil.copytree(warm, root)
    damage_all(root, how)
    built = bobc(*arguments, "-o", tmp_path / "host", cache_folder=root)
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "host").read_bytes() == reference.read_bytes()
    assert_every_entry_holds(root, monkeypatch)


def test_docs_list_every_folder_the_cache_writes(bob_reference, native_reference):
    """docs/cache.md's table has a row for each folder a build and a check of Bob and a native
    artifact's build write (probe s28 finding 7: parameter-reads/ and native-interpreter/ had none)."""
    import re

    table = (REPO / "docs" / "cache.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z0-9-]+)/", table, re.MULTILINE))
    written = {kind for warm in (bob_reference[2], native_reference[2]) for kind, _, _ in entries(warm)}
    assert written <= documented, written - documented
