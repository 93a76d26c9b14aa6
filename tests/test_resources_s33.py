"""bobc on a constrained machine (probe s33 resources): no temporary folder to be had, an
unusable TMPDIR, too few file descriptors, too little memory, a cache it cannot prune, a failed
--emit-images/--extract, --help into a full stdout.  Each condition is simulated without root:
an rlimit set in a subprocess, or an os call made to fail in process."""
from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def bobc_process(args, env=None, limits=(), cwd=None, stdout=subprocess.PIPE):
    """Run bobc in a subprocess with each (RLIMIT_*, value) of `limits` set before it starts."""
    def limited():
        for which, value in limits:
            resource.setrlimit(which, (value, resource.getrlimit(which)[1]))
    environment = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "bobc", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, env=environment, preexec_fn=limited, cwd=cwd, timeout=300)


def run_main(args):
    from bobc import cli

    return cli.main(list(args))


@pytest.fixture
def quiet_tmp(tmp_path, monkeypatch):
    """A TMPDIR of the test's own, the cache off, tempfile's folder not yet chosen."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    monkeypatch.setattr(tempfile, "tempdir", None)
    return folder


# -- finding 1: no usable temporary folder is one message, never a traceback --------------------

def test_a_file_size_limit_of_zero_is_no_traceback(tmp_path):
    """ulimit -f 0: Python's tempfile.gettempdir() probe (a 4-byte file in each candidate) failed
    everywhere and `bobc cache` (like every command) died with FileNotFoundError."""
    (tmp_path / "tmp").mkdir()
    done = bobc_process(["cache"], env={"TMPDIR": str(tmp_path / "tmp"), "BOBC_CACHE_DIR": str(tmp_path / "c")},
                        limits=[(resource.RLIMIT_FSIZE, 0)])
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert not list((tmp_path / "tmp").iterdir())       # its bobc-proc-* removed


def test_no_folder_for_temporaries_anywhere_is_one_message_exit_8(quiet_tmp, tmp_path, monkeypatch, capsys):
    from bobc import cache

    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    monkeypatch.setattr(cache, "SYSTEM_TEMPORARY", str(tmp_path / "no-tmp-either"), raising=False)
    assert run_main(["cache"]) == 8
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"cannot make a temporary folder in {tmp_path / 'no-tmp-either'}" in err
    assert f"TMPDIR={tmp_path / 'missing'}" in err
    assert "hint: point TMPDIR at a writable folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]      # nothing made in the cwd's place


# -- finding 3 (probe's 2): a TMPDIR that cannot be used is named, never silently replaced ------

def _where_temporaries_go(monkeypatch):
    from bobc.commands import cache as command

    seen = []

    def run(args):
        seen.append(tempfile.gettempdir())
        return 0
    monkeypatch.setattr(command, "run", run)
    return seen


@pytest.mark.parametrize("kind", ["missing", "a file"])
def test_an_unusable_tmpdir_is_named_and_tmp_used(quiet_tmp, tmp_path, monkeypatch, capsys, kind):
    from bobc import cache

    system = tmp_path / "system-tmp"
    system.mkdir()
    monkeypatch.setattr(cache, "SYSTEM_TEMPORARY", str(system), raising=False)
    named = tmp_path / "named"
    if kind == "a file":
        named.write_text("x")
    monkeypatch.setenv("TMPDIR", str(named))
    monkeypatch.chdir(tmp_path)
    seen = _where_temporaries_go(monkeypatch)
    assert run_main(["cache"]) == 0
    err = capsys.readouterr().err
    assert f"bobc: warning: TMPDIR={named} cannot hold temporaries" in err
    assert Path(seen[0]).parent == system and Path(seen[0]).name.startswith("bobc-proc-")


def test_a_read_only_tmpdir_is_named_and_tmp_used(quiet_tmp, tmp_path, monkeypatch, capsys):
    from bobc import cache

    system = tmp_path / "system-tmp"
    system.mkdir()
    monkeypatch.setattr(cache, "SYSTEM_TEMPORARY", str(system), raising=False)
    real = tempfile.mkdtemp

    def mkdtemp(*args, **options):      # what a folder the user cannot write answers
        if options.get("dir") == str(quiet_tmp):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(*args, **options)
    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(tempfile, "_get_default_tempdir", lambda: (_ for _ in ()).throw(
        FileNotFoundError(errno.ENOENT, "probe")), raising=False)   # the probe would fail the same way
    seen = _where_temporaries_go(monkeypatch)
    assert run_main(["cache"]) == 0
    err = capsys.readouterr().err
    assert f"TMPDIR={quiet_tmp} cannot hold temporaries (Permission denied)" in err
    assert Path(seen[0]).parent == system


def test_a_full_tmpdir_is_not_left_for_another_folder(quiet_tmp, tmp_path, monkeypatch, capsys):
    """The folder bobc-proc-* goes in is $TMPDIR itself, even when a file could not be written
    there (gettempdir's probe moved on to /tmp, /var/tmp or the current folder)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # what gettempdir()'s probe does when its 4-byte file finds no room in $TMPDIR: the next candidate
    monkeypatch.setattr(tempfile, "_get_default_tempdir", lambda: str(elsewhere))
    seen = _where_temporaries_go(monkeypatch)
    assert run_main(["cache"]) == 0
    assert Path(seen[0]).parent == quiet_tmp


# -- finding 6: too few file descriptors -------------------------------------------------------

def test_emfile_anywhere_in_a_command_names_the_descriptor_limit(quiet_tmp, monkeypatch, capsys):
    from bobc.commands import cache as command

    def run(args):
        raise OSError(errno.EMFILE, "Too many open files")
    monkeypatch.setattr(command, "run", run)
    assert run_main(["cache"]) == 8
    err = capsys.readouterr().err
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    shown = "unlimited" if soft == resource.RLIM_INFINITY else str(soft)
    assert f"too many open files: bobc reached its limit of open file descriptors (ulimit -n is {shown})" in err
    assert f"hint: raise the limit of open files (ulimit -n, now {shown}: 1024 or more" in err
    assert "Traceback" not in err


def test_enfile_names_the_systems_table(quiet_tmp, monkeypatch, capsys):
    from bobc.commands import cache as command

    monkeypatch.setattr(command, "run", lambda args: (_ for _ in ()).throw(OSError(errno.ENFILE, "x")))
    assert run_main(["cache"]) == 8
    assert "too many open files in the system: its table of open files is full" in capsys.readouterr().err


def test_another_oserror_is_still_a_bug(quiet_tmp, monkeypatch):
    from bobc.commands import cache as command

    monkeypatch.setattr(command, "run", lambda args: (_ for _ in ()).throw(OSError(errno.EIO, "x")))
    with pytest.raises(OSError):
        run_main(["cache"])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The linear-regression example's host and images, built once for this module's tests."""
    where = tmp_path_factory.mktemp("built")
    (where / "tmp").mkdir()
    done = bobc_process(["build", str(REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"),
                         "-o", str(where / "host"), "--emit-images", str(where / "images")],
                        env={"TMPDIR": str(where / "tmp"), "BOBC_CACHE_DIR": str(where / "cache")})
    assert done.returncode == 0, done.stderr
    return where


@pytest.mark.parametrize("what", ["host", "images"])
def test_a_real_descriptor_limit_on_dump_is_one_message(tmp_path, built, what):
    """A small ulimit -n on `bobc dump`: OSError tracebacks (nvidia/decode.py's temporary folder's
    cleanup, a subprocess's pipes) before.  Each limit from 6 to 13 either works or is the one
    message naming the limit (how many descriptors a dump needs depends on the machine)."""
    stopped = []
    for limit in range(6, 14):
        tmp = tmp_path / f"tmp{limit}"
        tmp.mkdir()
        done = bobc_process(["dump", str(built / what)], env={"TMPDIR": str(tmp), "BOBC_CACHE_DIR": "off"},
                            limits=[(resource.RLIMIT_NOFILE, limit)], stdout=subprocess.DEVNULL)
        assert "Traceback" not in done.stderr, (limit, done.stderr[-2000:])
        if done.returncode != 0:
            assert done.returncode == 8, (limit, done.stderr)
            assert f"hint: raise the limit of open files (ulimit -n, now {limit}:" in done.stderr, (limit, done.stderr)
            stopped.append(limit)
        assert not [p for p in tmp.iterdir() if not _swept(p)]


def _swept(folder: Path) -> bool:
    """Whether the next command's sweep removes `folder` (its owner is gone)."""
    from bobc import cache

    return cache.sweep_leftover(str(folder))


def test_gcc_out_of_descriptors_is_not_blamed_on_the_compiler():
    from bobc.host import gcc

    said = ("/usr/bin/ld: plugin framework: out of file descriptors. Try using fewer objects/archives\n"
            "/usr/bin/ld: cannot find -lm: Too many open files\ncollect2: error: ld returned 1 exit status")
    assert gcc.resource_failure(1, said) == ("descriptors", "Too many open files")
    error = gcc._resource_error("descriptors", "Too many open files", "the host", said, None)
    assert error.exit_code == 8 and "ulimit -n" in error.message and "ulimit -n" in error.hint
    assert gcc.resource_failure(1, "ld: x: Too many open files in system")[1] == "Too many open files in system"


def test_a_temporary_not_made_for_emfile_says_the_limit_not_tmpdir(tmp_path):
    from bobc.errors import TemporaryWriteFailure

    failure = TemporaryWriteFailure(tmp_path / "x", OSError(errno.EMFILE, "Too many open files"))
    assert "ulimit -n" in failure.hint and "TMPDIR" not in failure.hint


def test_a_scratch_folder_whose_removal_failed_is_swept_once_its_owner_is_gone(tmp_path, monkeypatch):
    """A removal that failed part way (EMFILE in rmtree) left the folder without its .lock, kept
    an hour by every later sweep; now the .lock stays, unheld, and the next sweep removes it."""
    from bobc import cache

    scratch = cache._locked(Path(tempfile.mkdtemp(prefix=cache.PROCESS_PREFIX, dir=tmp_path)))
    (scratch / "tmpsub").mkdir()
    (scratch / "tmpsub" / "stuck").write_text("x")
    real_unlink = os.unlink

    def unlink(path, *args, **options):
        if os.fspath(path).endswith("stuck"):
            raise OSError(errno.EMFILE, "Too many open files")
        return real_unlink(path, *args, **options)
    monkeypatch.setattr(os, "unlink", unlink)
    cache.release_scratch(scratch, remove=True)
    monkeypatch.setattr(os, "unlink", real_unlink)
    assert scratch.exists()
    assert cache.sweep_leftover(str(scratch)) is True
    assert not scratch.exists()


# -- finding 7: memory ---------------------------------------------------------------------------

def test_memory_error_is_one_message_with_the_limit(quiet_tmp, monkeypatch, capsys):
    from bobc.commands import cache as command

    def run(args):
        raise MemoryError
    monkeypatch.setattr(command, "run", run)
    assert run_main(["cache"]) == 8
    err = capsys.readouterr().err
    assert "bobc cache: error: out of memory" in err and "the memory limit (ulimit -v) is" in err
    assert "hint: free memory or raise the memory limit (ulimit -v)" in err


def test_a_deep_evaluation_falls_back_to_a_smaller_stack(monkeypatch):
    import threading

    from bobc.language import program

    real_start = threading.Thread.start

    def start(self):
        if threading.stack_size() >= 1 << 30:      # what ulimit -v 800000 answered
            raise RuntimeError("can't start new thread")
        return real_start(self)
    monkeypatch.setattr(threading.Thread, "start", start)
    calls = []

    def deep():
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            raise RecursionError
        return 42
    assert program._run_deep_uncollected(deep) == 42
    assert calls[-1] == "bobc-deep-evaluation"


def test_no_thread_at_all_names_the_memory_limit(monkeypatch):
    import threading

    from bobc.errors import ResourceExhausted
    from bobc.language import program

    def start(self):
        raise RuntimeError("can't start new thread")
    monkeypatch.setattr(threading.Thread, "start", start)

    def deep():
        raise RecursionError
    with pytest.raises(ResourceExhausted) as refused:
        program._run_deep_uncollected(deep)
    assert refused.value.exit_code == 8
    assert "ulimit -v" in refused.value.message and "ulimit -v" in refused.value.hint


# -- finding 9 (probe's 10): prune on entries it cannot remove -----------------------------------

def test_prune_says_how_many_it_could_not_remove_and_exits_nonzero(tmp_path, monkeypatch, capsys, quiet_tmp):
    from bobc import cache

    root = tmp_path / "cache"
    for n in range(3):
        entry = root / "objects" / (f"{n:x}" * 64)[:64]
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_bytes(b"x")
        old = time.time() - 90 * 86400
        os.utime(entry, (old, old))
    monkeypatch.setenv("BOBC_CACHE_DIR", str(root))
    real_unlink = os.unlink

    def refuse(path, *args, **options):     # a read-only cache, as an ordinary user meets it
        if "objects" in os.fspath(path):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_unlink(path, *args, **options)
    monkeypatch.setattr(os, "unlink", refuse)
    assert run_main(["cache", "--prune", "30"]) == 8
    captured = capsys.readouterr()
    assert "removed 0 entries" in captured.out
    assert "could not remove 3 entries not used for 30 days" in captured.err and "Permission denied" in captured.err
    monkeypatch.setattr(os, "unlink", real_unlink)
    assert run_main(["cache", "--prune", "30"]) == 0
    assert not list((root / "objects").iterdir())
    assert cache.prune(root, 30) == (0, 0)


# -- finding 11: a failed --emit-images / --extract leaves no new empty folder ------------------

def test_a_failed_write_leaves_no_folder_it_made(tmp_path):
    from bobc.commands._common import folder_made_for

    made = tmp_path / "imgs"
    with pytest.raises(OSError):
        with folder_made_for(made):
            made.mkdir()
            raise OSError(errno.EFBIG, "File too large")
    assert not made.exists()
    there = tmp_path / "there"
    there.mkdir()
    with pytest.raises(OSError):
        with folder_made_for(there):
            raise OSError(errno.EFBIG, "File too large")
    assert there.is_dir()


@pytest.mark.parametrize("command", ["extract", "emit-images"])
def test_a_write_past_the_file_size_limit_leaves_no_folder(tmp_path, built, command):
    (tmp_path / "tmp").mkdir()
    folder = tmp_path / "out"
    if command == "extract":
        args = ["inspect", str(built / "host"), "--extract", str(folder)]
    else:
        args = ["build", str(REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"),
                "--emit-images", str(folder)]
    done = bobc_process(args, env={"TMPDIR": str(tmp_path / "tmp"), "BOBC_CACHE_DIR": str(built / "cache")},
                        limits=[(resource.RLIMIT_FSIZE, 4096)])
    assert done.returncode == 8, done.stderr
    assert "the files there are unchanged" in done.stderr
    assert not folder.exists()


# -- finding 12: --help into a full stdout ------------------------------------------------------

@pytest.mark.parametrize("args", [["--help"], ["build", "--help"], ["cache", "-h"]])
def test_help_into_a_full_stdout_is_exit_8(args):
    with open("/dev/full", "w") as full:
        done = bobc_process(args, stdout=full)
    assert done.returncode == 8, done.stderr
    assert "error: cannot write to stdout: No space left on device" in done.stderr
    assert done.stderr.count("\n") == 1


def test_help_into_a_pipe_is_still_0():
    done = bobc_process(["build", "--help"])
    assert done.returncode == 0 and done.stdout.startswith("usage: bobc build")


# -- finding 6: run --reference's Submit out of descriptors is not the GPU's exit 7 ---------------

@pytest.mark.parametrize("failure", [OSError(errno.EMFILE, "Too many open files"), MemoryError()],
                         ids=["emfile", "memory"])
def test_submit_out_of_descriptors_or_memory_is_not_a_gpu_fault(tmp_path, failure):
    sys.path.insert(0, str(REPO / "tests" / "native"))
    try:
        from native_device_program import program_bytes
        from native_helpers import run_reference
    finally:
        sys.path.remove(str(REPO / "tests" / "native"))
    from bobc.errors import ResourceExhausted
    from bobc.targets import SM90

    code, _ = program_bytes(bytes(range(16)), SM90, tmp_path)
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "in.bin").write_bytes(bytes(256))

    def submit(machine, entry):
        raise failure
    expected = MemoryError if isinstance(failure, MemoryError) else ResourceExhausted
    with pytest.raises(expected) as raised:      # to cli._run: said there with the limit, never exit 7
        run_reference(code, folder, ["in.bin", "out1.bin", "out2.bin", "count.bin"], gpu=submit)
    if expected is ResourceExhausted:
        assert "ulimit -n" in raised.value.message
