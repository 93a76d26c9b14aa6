"""The output checks and the publication journal, held the same in bobc.reference.safe_io and
runtime_c/host_io.c (docs/runtime.md, "Files").

Each case is set up twice, alike, in two sibling folders of the same length: runtime_c's
rt_tool (`outputs PRED RESULT CKPT`: rt_io_recover, then rt_io_add_output for the three, as a
host does before the GPU) runs in one, safe_io.recover and OutputSet.add in the other; the two
must give the same exit code, the same message (in the form the native request host and its
reference twin print, compiler/bobc/reference/native_request.py) and leave the same files.

The cases are the probe's (notes s27, probe-runtime.md) findings:
  1. a journal never puts an older output back over a newer one (stale: refused, left);
  2. a journal's temporaries are `.NAME.tmp-XXXXXX` beside their destinations, and only
     `.NAME.bob-journal` beside its last destination NAME is a journal: else damaged, refused;
  5. an output a rename could not replace (immutable, append-only, another user's file in a
     sticky folder not the user's either) is refused before any work;
  6. a message keeps its reason however long its paths are.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import reachable_folder

from bobc.reference import safe_io
from bobc.reference.errors import OutputWriteFailure

SOURCES = ["nv_status.c", "nv_targets.c", "nv_shim.c", "host_runtime.c", "host_io.c", "plan_fill.c", "host_settings.c"]
OPTIONS = ("--predictions", "--result", "--checkpoint-out")
NAMES = ("p.bin", "r.bin", "c.bin")
ERR_BYTES = 512                      # runtime_c/host_runtime.h RT_ERR_BYTES
NOBODY = 65534


@pytest.fixture(scope="module")
def tool(repo):
    """rt_tool, built in a folder any user can reach (the sticky case runs it as another user)."""
    runtime = repo / "runtime_c"
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    folder = reachable_folder("bobc-io-tool-")
    folder.chmod(0o755)
    out = folder / "rt_tool"
    built = subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-D_DEFAULT_SOURCE",
                            f"-I{runtime}", str(runtime / "tests/rt_tool.c"),
                            *(str(runtime / s) for s in SOURCES), "-lm", "-o", str(out)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    yield out
    shutil.rmtree(folder, ignore_errors=True)


# ---- running both sides ----

def run_c(tool, folder: Path, paths, as_user=None) -> tuple[int, str]:
    drop = None
    if as_user is not None:
        def drop():
            os.setgid(as_user)
            os.setuid(as_user)
    done = subprocess.run([str(tool), "outputs", *map(str, paths)], cwd=folder, capture_output=True,
                          text=True, preexec_fn=drop, timeout=60)
    errors = [line[len("host: error: "):] for line in done.stderr.splitlines()
              if line.startswith("host: error: ")]
    assert len(errors) == (1 if done.returncode else 0), done.stderr
    return done.returncode, errors[0] if errors else ""


def reference(paths) -> tuple[int, str]:
    """safe_io's verdict, its message in the native request twin's form (native_request.py)."""
    try:
        safe_io.recover(paths)
        files = safe_io.OutputSet()
        for path, option in zip(paths, OPTIONS):
            files.add(path, option)
    except OutputWriteFailure as error:
        if error.part == "journal":
            return 8, f"journal {error.path}: {error.detail}; {error.hint}"
        return 8, f"output {error.path} ({error.part}): {error.detail}; nothing was written"
    return 0, ""


def run_reference(folder: Path, paths, as_user=None) -> tuple[int, str]:
    cwd = os.getcwd()
    if as_user is None:
        os.chdir(folder)
        try:
            return reference(list(map(str, paths)))
        finally:
            os.chdir(cwd)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                  # the child: another user, then safe_io
        try:
            os.close(read)
            os.setgid(as_user)
            os.setuid(as_user)
            os.chdir(folder)
            os.write(write, json.dumps(reference(list(map(str, paths)))).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    code, message = json.loads(text)
    return code, message


def tree(folder: Path) -> dict:
    """Every file under `folder` and its bytes (the folder's real path in them as <F>)."""
    real = os.fsencode(str(folder.resolve()))
    return {str(p.relative_to(folder)): (p.read_bytes().replace(real, b"<F>")
                                         if p.is_file() and not p.is_symlink() else None)
            for p in sorted(folder.rglob("*"))}


def both(tool, base: Path, setup, as_user=None) -> tuple[int, str, dict]:
    """Set the case up in base/c and base/r; run the C checks in one, safe_io in the other."""
    outcomes = []
    for side in ("c", "r"):
        folder = base / side
        folder.mkdir(parents=True)
        if as_user is not None:
            folder.chmod(0o755)
        paths = setup(folder)
        try:
            code, message = run_c(tool, folder, paths, as_user) if side == "c" else \
                run_reference(folder, paths, as_user)
        finally:
            clear_attributes(folder)
        real = str(folder.resolve())
        outcomes.append((code, message.replace(real, "<F>"), tree(folder)))
    (c_code, c_message, c_files), (r_code, r_message, r_files) = outcomes
    assert (c_code, c_message) == (r_code, r_message), f"C: {c_code} {c_message}\nreference: {r_code} {r_message}"
    assert c_files == r_files
    assert len(c_message.encode()) < ERR_BYTES - 1 and "\n" not in c_message
    return c_code, c_message, c_files


# ---- setting cases up ----

def age(path: Path, seconds: float) -> None:
    when = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(when, when), follow_symlinks=False)


def put_journal(path: Path, pairs) -> bytes:
    """A journal in the documented form (docs/runtime.md, "Files")."""
    text = f"bob-journal 1 {len(pairs)}\n".encode()
    for temporary, destination in pairs:
        for name in (temporary, destination):
            raw = os.fsencode(str(name))
            text += str(len(raw)).encode() + b" " + raw + b"\n"
    path.write_bytes(text + b"end\n")
    return text + b"end\n"


def interrupted(folder: Path, journal_name: str = ".c.bin.bob-journal", temporaries=None):
    """Three old outputs (10 s old) and what a kill between the first and second renames of a
    publication leaves: the last two temporaries and the journal (5 s old)."""
    real = folder.resolve()
    temporaries = temporaries or [f".{name}.tmp-Ab3dE{i}" for i, name in enumerate(NAMES)]
    for name in NAMES:
        (folder / name).write_bytes(b"OLD")
        age(folder / name, 10)
    for temporary in temporaries[1:]:
        (folder / temporary).write_bytes(b"NEW")
    put_journal(folder / journal_name, [(real / t, real / n) for t, n in zip(temporaries, NAMES)])
    age(folder / journal_name, 5)
    return list(NAMES)


def can_set_attributes(folder: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    probe = folder / "attribute-probe"
    probe.write_bytes(b"")
    ok = subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode == 0
    subprocess.run(["chattr", "-i", str(probe)], capture_output=True)
    probe.unlink()
    return ok


def chattr(flag: str, path: Path) -> None:
    done = subprocess.run(["chattr", flag, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def clear_attributes(folder: Path) -> None:
    if shutil.which("chattr") is not None:
        for path in [folder, *folder.rglob("*")]:
            if not path.is_symlink():
                subprocess.run(["chattr", "-i", "-a", str(path)], capture_output=True)


# ---- the cases ----

def test_a_journal_is_completed_alike(tool, tmp_path):
    code, message, files = both(tool, tmp_path, interrupted)
    assert code == 0
    assert (files["p.bin"], files["r.bin"], files["c.bin"]) == (b"OLD", b"NEW", b"NEW")
    assert ".c.bin.bob-journal" not in files


def test_a_destination_newer_than_the_journal_makes_it_stale(tool, tmp_path):
    """Finding 1: a destination replaced after the journal was written is never rolled back."""
    def setup(folder):
        paths = interrupted(folder)
        (folder / "r.bin").write_bytes(b"NEWER")           # a later run published it
        return paths
    code, message, files = both(tool, tmp_path, setup)
    assert code == 8
    assert message == ("journal ./.c.bin.bob-journal: stale: <F>/r.bin was replaced after the journal was "
                       "written; nothing was renamed and the journal was kept: to keep the newer files, remove "
                       "it and the temporaries it lists (docs/runtime.md, Files)")
    assert (files["p.bin"], files["r.bin"], files["c.bin"]) == (b"OLD", b"NEWER", b"OLD")
    assert {".c.bin.bob-journal", ".r.bin.tmp-Ab3dE1", ".c.bin.tmp-Ab3dE2"} <= set(files)


def test_an_older_run_journal_in_another_folder_does_not_roll_a_later_run_back(tool, tmp_path):
    """Finding 1 as the probe found it: run 1 (checkpoint in B, the rest in A) killed between
    its renames; run 2 publishes A/p, A/r and C/c; run 3 names only B/c (and D/*)."""
    def setup(folder):
        for name in "ABCD":
            (folder / name).mkdir()
        real = folder.resolve()
        (folder / "A/p.bin").write_bytes(b"RUN1")
        age(folder / "A/p.bin", 10)
        (folder / "A/.r.bin.tmp-aaaaaa").write_bytes(b"RUN1")
        (folder / "B/.c.bin.tmp-bbbbbb").write_bytes(b"RUN1")
        put_journal(folder / "B/.c.bin.bob-journal", [
            (real / "A/.p.bin.tmp-cccccc", real / "A/p.bin"), (real / "A/.r.bin.tmp-aaaaaa", real / "A/r.bin"),
            (real / "B/.c.bin.tmp-bbbbbb", real / "B/c.bin")])
        age(folder / "B/.c.bin.bob-journal", 5)
        run2 = safe_io.OutputSet()                  # run 2 does not see run 1's journal (it is in B)
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            safe_io.recover(["A/p.bin", "A/r.bin", "C/c.bin"])
            for path, option in zip(["A/p.bin", "A/r.bin", "C/c.bin"], OPTIONS):
                run2.add(path, option)
                run2.stage(option, b"RUN2")
            run2.publish()
        finally:
            os.chdir(cwd)
        return ["D/p.bin", "D/r.bin", "B/c.bin"]
    code, message, files = both(tool, tmp_path, setup)
    assert code == 8 and "B/.c.bin.bob-journal: stale: <F>/A/p.bin was replaced" in message, message
    assert (files["A/p.bin"], files["A/r.bin"], files["C/c.bin"]) == (b"RUN2", b"RUN2", b"RUN2")
    assert "B/c.bin" not in files and "B/.c.bin.bob-journal" in files


@pytest.mark.parametrize("case", ["elsewhere", "right name, another folder", "named otherwise",
                                  "five letters", "a folder of its own"])
def test_a_journal_whose_temporary_is_not_beside_its_destination_is_damaged(tool, tmp_path, case):
    """Finding 2: the journal's temporaries are `.NAME.tmp-XXXXXX` beside their destinations,
    else it is damaged: refused, left, nothing renamed (the probe planted one naming a file
    elsewhere, which the host moved over an output)."""
    def setup(folder):
        (folder / "private").mkdir()
        (folder / "private/notes.txt").write_bytes(b"PRECIOUS")
        (folder / "private/.p.bin.tmp-Ab3dE0").write_bytes(b"ELSEWHERE")
        (folder / ".p.tmp").write_bytes(b"X")
        (folder / ".p.bin.tmp-Ab3dE").write_bytes(b"X")
        (folder / ".p.bin.tmp-Ab3dE0").write_bytes(b"X")
        (folder / "sub").mkdir()
        real = folder.resolve()
        temporary = {"elsewhere": real / "private/notes.txt",
                     "right name, another folder": real / "private/.p.bin.tmp-Ab3dE0",
                     "named otherwise": real / ".p.tmp",
                     "five letters": real / ".p.bin.tmp-Ab3dE",
                     "a folder of its own": real / "sub/../.p.bin.tmp-Ab3dE0"}[case]
        put_journal(folder / ".anything.bob-journal", [(temporary, real / "p.bin")])
        return list(NAMES)
    code, message, files = both(tool, tmp_path, setup)
    assert code == 8
    assert message.startswith("journal ./.anything.bob-journal: a damaged publication journal (its temporary ")
    assert message.endswith(" is not a .NAME.tmp-XXXXXX file beside its destination); it was left as it is; "
                            "see docs/runtime.md (Files) to finish or remove it")
    assert files["private/notes.txt"] == b"PRECIOUS" and "p.bin" not in files


def test_only_a_journal_named_after_its_last_destination_beside_it_counts(tool, tmp_path):
    """Finding 2: `.NAME.bob-journal` in the folder of its last destination NAME, else damaged;
    a name not of that pattern is no journal at all."""
    def misnamed(folder):
        return interrupted(folder, journal_name=".anything.bob-journal")
    code, message, files = both(tool, tmp_path / "misnamed", misnamed)
    assert code == 8 and "(it is not .NAME.bob-journal beside its last destination <F>/c.bin)" in message
    assert files["r.bin"] == b"OLD" and ".anything.bob-journal" in files

    def moved(folder):                                # named right, but its destinations are elsewhere
        (folder / "other").mkdir()
        real = folder.resolve() / "other"
        (folder / ".c.bin.tmp-Ab3dE2").write_bytes(b"NEW")
        put_journal(folder / ".c.bin.bob-journal", [(real / ".c.bin.tmp-Ab3dE2", real / "c.bin")])
        return ["other/p.bin", "other/r.bin", "c.bin"]
    code, message, files = both(tool, tmp_path / "moved", moved)
    assert code == 8 and "beside its last destination <F>/other/c.bin" in message

    def not_journals(folder):
        (folder / "c.bin.bob-journal").write_bytes(b"garbage")         # no leading '.'
        (folder / "..bob-journal").write_bytes(b"garbage")             # NAME empty
        (folder / ".c.bin.bob-journal~").write_bytes(b"garbage")
        return list(NAMES)
    code, message, files = both(tool, tmp_path / "not-journals", not_journals)
    assert code == 0


def test_damaged_and_incomplete_journals_are_refused_alike(tool, tmp_path):
    def damaged(folder):
        (folder / ".c.bin.bob-journal").write_bytes(b"bob-journal 1 3\n12 /not/a/pa")
        return list(NAMES)
    code, message, _ = both(tool, tmp_path / "damaged", damaged)
    assert code == 8 and "a damaged publication journal (an earlier invocation was interrupted)" in message

    def missing(folder):
        paths = interrupted(folder)
        (folder / ".c.bin.tmp-Ab3dE2").unlink()          # r's is there, so c's was never renamed
        return paths
    code, message, files = both(tool, tmp_path / "missing", missing)
    assert code == 8 and "its temporaries are missing (<F>/.c.bin.tmp-Ab3dE2)" in message
    assert files["c.bin"] == b"OLD"


# A journal's numbers are decimal digits and nothing else (docs/runtime.md's form): a sign, a
# space or a tab where the form has none is a damaged journal on both sides (host_io.c read them
# with sscanf and strtoul, which take both), and a count of many digits is read by its value, never
# a traceback (safe_io read it with int(), which refuses past Python's digit limit).  Both read
# the journal's first JOURNAL_BYTES - 1 bytes (host_io.c JOURNAL_BYTES): a longer one is damaged.
PADDED_COUNT = b"bob-journal 1 " + b"0" * 5000 + b"3\n"


@pytest.mark.parametrize("case, old, new, completed", [
    ("a signed count", b"bob-journal 1 3\n", b"bob-journal 1 +3\n", False),
    ("a count after two spaces", b"bob-journal 1 3\n", b"bob-journal 1  3\n", False),
    ("a tab between the header's words", b"bob-journal 1 3\n", b"bob-journal\t1 3\n", False),
    ("a signed path length", b"\n", b"\n+", False),
    ("a path length after a space", b"\n", b"\n ", False),
    ("a count of 5,000 digits", b"bob-journal 1 3\n", PADDED_COUNT, True),
    ("a count of 80,001 digits", b"bob-journal 1 3\n", b"bob-journal 1 " + b"0" * 80_000 + b"3\n", False),
], ids=lambda value: value if isinstance(value, str) else "")
def test_a_journal_not_in_its_form_is_damaged_alike(tool, tmp_path, case, old, new, completed):
    def setup(folder):
        paths = interrupted(folder)
        journal = folder / ".c.bin.bob-journal"
        journal.write_bytes(journal.read_bytes().replace(old, new, 1))
        age(journal, 5)
        return paths
    code, message, files = both(tool, tmp_path, setup)
    if completed:
        assert code == 0 and (files["r.bin"], files["c.bin"]) == (b"NEW", b"NEW"), message
    else:
        assert code == 8 and "a damaged publication journal" in message, message
        assert files["r.bin"] == b"OLD" and ".c.bin.bob-journal" in files


@pytest.mark.parametrize("case", ["immutable output", "append-only output", "append-only folder",
                                  "immutable folder"])
def test_an_output_a_rename_could_not_replace_is_refused_before_any_work(tool, tmp_path, case):
    """Finding 5: the immutable and append-only attributes (FS_IOC_GETFLAGS)."""
    if not can_set_attributes(tmp_path):
        pytest.skip("this filesystem or user cannot set file attributes (chattr)")

    def setup(folder):
        for name in NAMES:
            (folder / name).write_bytes(b"OLD")
        (folder / "sub").mkdir()
        if case == "immutable output":
            chattr("+i", folder / "r.bin")
        elif case == "append-only output":
            chattr("+a", folder / "r.bin")
        else:
            chattr("+a" if case == "append-only folder" else "+i", folder / "sub")
            return ["p.bin", "r.bin", "sub/c.bin"]
        return list(NAMES)
    code, message, files = both(tool, tmp_path, setup)
    assert code == 8
    expected = {"immutable output": "output r.bin (--result): it has the immutable attribute (lsattr shows "
                                    "'i'), so it cannot be replaced; clear it (chattr -i) or choose another path",
                "append-only output": "output r.bin (--result): it has the append-only attribute (lsattr "
                                      "shows 'a'), so it cannot be replaced; clear it (chattr -a) or choose "
                                      "another path",
                "append-only folder": "output sub/c.bin (--checkpoint-out): its folder sub has the append-only "
                                      "attribute (lsattr shows 'a'): nothing in it can be renamed; clear it "
                                      "(chattr -a) or choose another folder",
                "immutable folder": "output sub/c.bin (--checkpoint-out): its folder sub has the immutable "
                                    "attribute (lsattr shows 'i'): nothing in it can be replaced; clear it "
                                    "(chattr -i) or choose another folder"}[case]
    assert message == expected + "; nothing was written"
    assert sorted(files) == ["c.bin", "p.bin", "r.bin", "sub"]


@pytest.mark.skipif(os.geteuid() != 0, reason="acting as two users needs root")
def test_another_users_file_in_a_sticky_folder_is_refused_before_any_work(tool):
    """Finding 5: the kernel lets a user replace a file in a sticky folder only when the file or
    the folder is theirs; the host would find that out only at its renames, after the work."""
    base = reachable_folder("bobc-sticky-")      # a folder the other user reaches
    try:
        base.chmod(0o755)

        def setup(folder):
            sticky = folder / "shared"
            sticky.mkdir()
            os.chown(sticky, NOBODY - 1, NOBODY - 1)       # a third user's folder
            sticky.chmod(0o1777)
            (sticky / "r.bin").write_bytes(b"THEIRS")       # root's file
            (sticky / "p.bin").write_bytes(b"MINE")
            os.chown(sticky / "p.bin", NOBODY, NOBODY)
            return ["shared/p.bin", "shared/r.bin", "shared/c.bin"]
        (base / "theirs").mkdir(mode=0o755)
        code, message, files = both(tool, base / "theirs", setup, as_user=NOBODY)
        assert code == 8
        assert message == ("output shared/r.bin (--result): it cannot be replaced: it belongs to another user "
                           "(uid 0) and its folder shared is sticky and not yours; ask the owner to remove it, "
                           "or choose another path; nothing was written")
        assert files["shared/r.bin"] == b"THEIRS"

        def own(folder):                                    # one's own file there, and a new one: fine
            setup(folder)
            return ["shared/p.bin", "shared/new.bin", "shared/c.bin"]
        (base / "own").mkdir(mode=0o755)
        code, message, _ = both(tool, base / "own", own, as_user=NOBODY)
        assert code == 0, message
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_message_keeps_its_reason_however_long_its_paths_are(tool, tmp_path):
    """Finding 6: a path is shown shortened in the middle (its start and its file name kept), so
    the C host's 512-byte message still says what is wrong."""
    deep = "/".join(["d" * 200] * 3)

    def missing_folder(folder):
        (folder / deep).mkdir(parents=True)
        return [f"{deep}/nodir/p.bin", "r.bin", "c.bin"]
    code, message, _ = both(tool, tmp_path / "missing", missing_folder)
    assert code == 8 and message.endswith("/nodir does not exist; create it first; nothing was written")
    assert message.startswith(f"output {'d' * 32}") and ".../p.bin (--predictions)" in message

    def symlink(folder):
        (folder / deep).mkdir(parents=True)
        (folder / deep / "link").symlink_to("/etc/passwd")
        return ["p.bin", "r.bin", f"{deep}/link"]
    code, message, _ = both(tool, tmp_path / "symlink", symlink)
    assert code == 8 and message.endswith("is a symbolic link; only a regular file (or nothing) is replaced; "
                                          "nothing was written")

    def stale(folder):
        inner = folder / "d" / ("e" * 200) / ("f" * 200)
        inner.mkdir(parents=True)
        paths = interrupted(inner)
        (inner / "c.bin").write_bytes(b"NEWER")
        return [str(Path(inner.relative_to(folder)) / p) for p in paths]
    code, message, _ = both(tool, tmp_path / "stale", stale)
    assert code == 8 and message.endswith("was replaced after the journal was written; nothing was renamed and "
                                          "the journal was kept: to keep the newer files, remove it and the "
                                          "temporaries it lists (docs/runtime.md, Files)")


def test_a_path_with_a_newline_keeps_the_message_one_line(tool, tmp_path):
    """A control character in a path (a newline, a tab) is shown as '?', by both, so the one-line
    message promised for every failure stays one line (probe s27, runtime finding 10)."""
    def missing_folder(folder):
        return ["new\nline/p.bin", "r.bin", "c.bin"]
    code, message, _ = both(tool, tmp_path / "newline", missing_folder)
    assert code == 8 and message.startswith("output new?line/p.bin (--predictions)"), message


def test_shown_paths():
    assert safe_io.shown("a/b.bin") == "a/b.bin"
    long = "/start/" + "0" * 600 + "/c.bin"
    shown = safe_io.shown(long)
    assert len(shown) == safe_io.SHOWN_BYTES and shown.startswith("/start/000") and shown.endswith(".../c.bin")
    assert safe_io.shown("n" * 600) == "n" * 32 + "..." + "n" * 93
    accented = safe_io.shown("/" + "é" * 299)
    assert "..." in accented and "\ufffd" not in accented and len(accented.encode()) <= safe_io.SHOWN_BYTES
    assert safe_io.shown("a\nb/c\td\x7f.bin") == "a?b/c?d?.bin"
    assert "\n" not in safe_io.shown("/x\n" + "0" * 600 + "/c\n.bin")


def test_temporaries_have_the_form_a_journal_accepts(tmp_path):
    """The reference writes DIR/.NAME.tmp-XXXXXX (six letters or digits) as mkstemp does, so its
    own journals pass the check recover() makes."""
    output = safe_io._Output(str(tmp_path / "r.bin"), "--result", str(tmp_path), "r.bin",
                             str(tmp_path.resolve() / "r.bin"), None, b"x")
    temporary = safe_io._write_temporary(output)
    try:
        assert safe_io._temporary_beside(os.path.join(str(tmp_path.resolve()), os.path.basename(temporary)),
                                         str(tmp_path.resolve() / "r.bin")), temporary
    finally:
        os.unlink(temporary)


@pytest.mark.parametrize("length", [230, 231, 255])
def test_an_output_name_too_long_for_its_publication_files_is_refused_by_its_length(tool, tmp_path, length):
    """The publication writes `.NAME.tmp-XXXXXX`, `.NAME.bob-journal` and the journal's temporary
    `..NAME.bob-journal.tmp-XXXXXX` beside an output, so its name may have NAME_MAX - 25 bytes (230
    where names have 255): a longer one is refused before any work, naming the length, where it
    used to be refused by the trial file's own name (235 bytes and up, "File name too long") or,
    past the trial, at publication, after the work."""
    name = "n" * (length - 4) + ".bin"

    def long_name(folder):
        return ["p.bin", "r.bin", name]
    code, message, files = both(tool, tmp_path / str(length), long_name)
    assert os.pathconf(tmp_path, "PC_NAME_MAX") == 255
    if length <= 230:
        assert (code, message) == (0, "")
    else:
        assert (code, message) == (8, f"output {safe_io.shown(name)} (--checkpoint-out): its file name has {length} "
                                      f"bytes, and its folder . takes names of at most 255: the publication writes "
                                      f".NAME.tmp-XXXXXX and ..NAME.bob-journal.tmp-XXXXXX beside it, so an output's "
                                      f"name may have at most 230; choose a shorter one; nothing was written")
    assert files == {}                   # no trial file left behind


def test_the_longest_output_name_publishes_with_its_journal(tool, tmp_path):
    """Names of 230 bytes publish, journal and all, on both sides (rt_tool publish, OutputSet)."""
    for side in ("c", "r"):
        folder = tmp_path / side
        folder.mkdir()
        names = [folder / ("p" * 226 + ".bin"), folder / "r.bin", folder / ("c" * 226 + ".bin")]
        if side == "c":
            done = subprocess.run([str(tool), "publish", "run", *map(str, names)], capture_output=True, text=True,
                                  timeout=60)
            assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
            expected = [f"run {option}\n".encode() for option in OPTIONS]
        else:
            files = safe_io.OutputSet()
            for path, option in zip(names, OPTIONS):
                files.add(str(path), option)
                files.stage(option, option.encode())
            files.publish()
            expected = [option.encode() for option in OPTIONS]
        assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in names)
        assert [p.read_bytes() for p in names] == expected


# ---- the tests-only millisecond settings (BOBC_IO_TEST_PAUSE_MS, ..._LOCK_PAUSE_MS, ..._LOCK_GRACE_MS) ----

@pytest.mark.parametrize("text, ms", [("250", 250), ("099999", 10_000), ("", None), ("1234567", None),
                                      ("\u0663", None), ("+5", None), (" 5", None)])
def test_a_tests_only_pause_is_read_by_one_rule_as_the_host_reads_it(monkeypatch, text, ms):
    """host_io.c reads the three alike (test_ms: ASCII digits, six at most, capped at 10,000 ms);
    safe_io read the lock grace so and the two pauses by str.isdigit alone, so `1234567` (the host:
    no pause) paused 10 s and an Arabic-Indic three (the host: no pause) 3 ms."""
    for variable in (safe_io.PAUSE_VARIABLE, safe_io.LOCK_PAUSE_VARIABLE, safe_io.LOCK_GRACE_VARIABLE):
        monkeypatch.setenv(variable, text)
    assert safe_io._test_pause() == safe_io._test_pause(safe_io.LOCK_PAUSE_VARIABLE) == (ms or 0) / 1000
    assert safe_io._lock_grace_s() == (safe_io.LOCK_GRACE_MS if ms is None else ms) / 1000
