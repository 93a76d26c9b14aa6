"""bobc under unusual environments (probe s32 environ).

Finding 1: a plan in a folder whose name is not valid UTF-8 (a Latin-1 archive, an old file
system) is handed over by Python as a surrogate-escaped str (PEP 383); every key or digest that
takes a path encodes it back to its bytes (os.fsencode's surrogateescape), so check, build and
run --reference work as from a UTF-8 folder, cache on or off, instead of a UnicodeEncodeError
traceback.

Finding 2: a closed stdout (`>&-`: cron, systemd, a daemonised CI step; sys.stdout is None) is
treated as a stdout on /dev/full: the outputs are written, the message says it could not be
printed, and the exit code is the one README gives for that, never a traceback."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples/linear_regression"
PLAN = EXAMPLE / "LinReg/Build/NativeHost.bob"
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    path = os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])
    scratch = tmp_path_factory.mktemp("tmp")
    return {**os.environ, "BOBC_CACHE_DIR": str(tmp_path_factory.mktemp("cache")), "PYTHONPATH": path,
            "TMPDIR": str(scratch)}


def bobc(*args, env, **kw):
    kw.setdefault("capture_output", True)
    return subprocess.run([sys.executable, "-m", "bobc", *map(os.fsdecode, args)], env=env, timeout=300, **kw)


def _copy_example(folder: Path) -> Path:
    folder.mkdir()
    shutil.copytree(EXAMPLE / "LinReg", folder / "LinReg")
    shutil.copy(EXAMPLE / "reference_kernels.py", folder / "reference_kernels.py")
    return folder / "LinReg/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    base = tmp_path_factory.mktemp("plans")
    latin = Path(os.fsdecode(os.fsencode(base) + b"/lat\xe9"))       # not valid UTF-8
    return _copy_example(latin), _copy_example(base / "utf")


@pytest.mark.parametrize("cache", ["off", "on"])
def test_a_plan_in_a_folder_named_in_latin_1_checks(plans, env, cache):
    latin, utf = plans
    env = {**env, "BOBC_CACHE_DIR": "off"} if cache == "off" else env
    for _ in range(2):                                     # cold, then warm where the cache is on
        done = bobc("check", latin, env=env)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
        assert done.stdout == bobc("check", utf, env=env).stdout


@needs_gcc
@pytest.mark.parametrize("cache", ["off", "on"])
def test_a_plan_in_a_folder_named_in_latin_1_builds_the_same_host(plans, env, tmp_path, cache):
    latin, utf = plans
    env = {**env, "BOBC_CACHE_DIR": "off"} if cache == "off" else env
    done = bobc("build", latin, "-o", tmp_path / "latin", env=env)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert bobc("build", utf, "-o", tmp_path / "utf", env=env).returncode == 0
    assert (tmp_path / "latin").read_bytes() == (tmp_path / "utf").read_bytes()


def test_a_plan_in_a_folder_named_in_latin_1_runs_on_the_reference(plans, env, tmp_path):
    latin, utf = plans
    record = tmp_path / "record.bin"
    subprocess.run([sys.executable, str(EXAMPLE / "make_record.py"), "-o", str(record)], check=True,
                   capture_output=True, env=env, timeout=300)
    for name, plan in (("latin", latin), ("utf", utf)):
        for cache in ("off", env["BOBC_CACHE_DIR"]):
            done = bobc("run", plan, "train", "--reference", "--input", record,
                        "--checkpoint-out", tmp_path / f"{name}.ckpt",
                        "--predictions", tmp_path / f"{name}.pred", "--result", tmp_path / f"{name}.result",
                        env={**env, "BOBC_CACHE_DIR": cache})
            assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    for suffix in ("ckpt", "pred", "result"):
        assert (tmp_path / f"latin.{suffix}").read_bytes() == (tmp_path / f"utf.{suffix}").read_bytes()


def test_a_too_long_module_path_in_a_latin_1_folder_is_measured_in_its_bytes():
    from bobc.language.modules import path_too_long

    path = Path(os.fsdecode(b"/tmp/lat\xe9/" + b"x/" * 2100 + b"A.bob"))
    error = path_too_long("A", path)
    assert f"({1:,} parts, {len(os.fsencode(path)):,} bytes)" in error.message


def closed_stdout(*args, env):
    """bobc with descriptor 1 closed, as `bobc ARGS >&-` starts it."""
    return subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "bobc", *map(os.fsdecode, args)],
                          stderr=subprocess.PIPE, text=True, env=env, timeout=300)


def _one_line(done) -> str:
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    said = [line for line in done.stderr.splitlines() if not line.startswith("bobc: compiling the C runtime")]
    assert len(said) == 1, done.stderr
    return said[0]


def test_a_closed_stdout_for_version_is_one_line_and_exit_8(env):
    done = closed_stdout("--version", env=env)
    assert _one_line(done) == "bobc --version: error: cannot write to stdout: it is closed"
    assert done.returncode == 8


@pytest.mark.parametrize("command", ["check", "eval"])
def test_a_closed_stdout_for_a_command_that_prints_is_one_line_and_exit_8(env, command):
    done = closed_stdout(command, PLAN, *(["linRegNativeHost"] if command == "eval" else []), env=env)
    assert _one_line(done) == f"bobc {command}: error: cannot write to stdout: it is closed"
    assert done.returncode == 8


@needs_gcc
def test_a_closed_stdout_for_build_writes_the_host_and_says_so(env, tmp_path):
    done = closed_stdout("build", PLAN, "-o", tmp_path / "closed", env=env)
    assert _one_line(done) == ("bobc build: the output was written, but its message could not be printed on "
                               f"stdout (it is closed): wrote {tmp_path}/closed (sm_90)")
    assert done.returncode == 0
    assert bobc("build", PLAN, "-o", tmp_path / "open", env=env).returncode == 0
    assert (tmp_path / "closed").read_bytes() == (tmp_path / "open").read_bytes()


def test_a_closed_stdout_for_run_writes_the_outputs_and_says_so(env, tmp_path):
    record = tmp_path / "record.bin"
    subprocess.run([sys.executable, str(EXAMPLE / "make_record.py"), "-o", str(record)], check=True,
                   capture_output=True, env=env, timeout=300)
    outputs = {}
    for name, start in (("closed", closed_stdout), ("open", bobc)):
        done = start("run", PLAN, "train", "--reference", "--input", record, "--checkpoint-out", tmp_path / f"{name}.ckpt",
                     "--predictions", tmp_path / f"{name}.pred", "--result", tmp_path / f"{name}.result", env=env)
        assert done.returncode == 0, done.stderr
        outputs[name] = [(tmp_path / f"{name}.{suffix}").read_bytes() for suffix in ("ckpt", "pred", "result")]
    assert outputs["closed"] == outputs["open"]
    assert _one_line(done := closed_stdout("run", PLAN, "train", "--reference", "--input", record,
                                           "--checkpoint-out", tmp_path / "c", "--predictions", tmp_path / "p",
                                           "--result", tmp_path / "r", env=env)).startswith(
        "bobc run: the output was written, but its message could not be printed on stdout (it is closed): train: ")


def test_a_full_stdout_for_version_is_one_line_and_exit_8(env):
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "bobc", "--version"], stdout=full, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=300)
    assert _one_line(done) == "bobc --version: error: cannot write to stdout: No space left on device"
    assert done.returncode == 8


# Finding 3: gcc stopped by a path too long (a TMPDIR near PATH_MAX) is a temporary-folder problem,
# and a gcc that fails with no error in the C it was given is the C compiler's failure, not a bobc bug.

def _fake_gcc(tmp_path: Path, monkeypatch, body: str) -> None:
    import tempfile

    from bobc.host import gcc

    monkeypatch.setattr(tempfile, "tempdir", None)      # TMPDIR as the test set it
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "gcc"
    fake.write_text(f"#!/bin/sh\n{body}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert gcc.compiler() == str(fake)


def _gcc_build(tmp_path: Path):
    from bobc import cache
    from bobc.host import gcc

    include = tmp_path / "include"
    include.mkdir()
    main = tmp_path / "main.c"
    main.write_text("int main(void) { return 0; }\n")
    with pytest.raises(gcc.HostBuildError) as raised:
        with cache.process_temporaries():
            gcc.build([main], [include], tmp_path / "host")
    return raised.value


def test_gcc_stopped_by_a_path_too_long_says_so_with_the_tmpdir_hint(tmp_path, monkeypatch):
    from bobc.host import gcc
    from bobc.reference.safe_io import SHOWN_BYTES

    long = "/tmp/" + "/".join(["e" * 250] * 16)
    _fake_gcc(tmp_path, monkeypatch, f"printf '%s\\n' 'Assembler messages:' "
                                     f"\"Fatal error: can't create {long}/x.o: File name too long\" >&2; exit 1")
    error = _gcc_build(tmp_path)
    assert isinstance(error, gcc.HostResourceError) and error.kind == "name length"
    assert error.exit_code == 8
    assert "bobc bug" not in error.render()
    assert error.hint == f"point TMPDIR at a shorter path, then build again (gcc wrote in {tmp_path})"
    assert "(File name too long)" in error.message
    assert long not in error.message and max(map(len, error.message.split())) <= SHOWN_BYTES + 1   # path:


@pytest.mark.parametrize("body, said", [('echo "gcc: fake failure" >&2; exit 1', "gcc: fake failure"),
                                        ("exit 1", "(it printed nothing; its exit status was 1)")])
def test_a_gcc_that_fails_with_no_error_in_the_source_is_the_c_compilers_failure(tmp_path, monkeypatch, body, said):
    from bobc.host import gcc

    _fake_gcc(tmp_path, monkeypatch, body)
    error = _gcc_build(tmp_path)
    assert not isinstance(error, gcc.HostResourceError)
    assert "bobc bug" not in error.render()
    assert error.message == (f"the C compiler failed: {tmp_path}/bin/gcc could not build the host {tmp_path}/host, "
                             f"and reported no error in its source:\n{said}")
    assert "CC is not read" in error.hint


@pytest.mark.parametrize("said", ["host_plan.c:3:5: error: expected ';' before '}' token",
                                  "/usr/bin/ld: host_plan.o: in function `main':\n"
                                  "host_plan.c:(.text+0x5): undefined reference to `rt_missing'"])
def test_an_error_in_the_c_bobc_generated_is_still_a_bobc_bug(tmp_path, monkeypatch, said):
    _fake_gcc(tmp_path, monkeypatch, f"cat >&2 <<'END'\n{said}\nEND\nexit 1")
    error = _gcc_build(tmp_path)
    assert error.hint == "this is a bobc bug if the plan checked: please report it with the plan"


def test_the_host_linked_in_the_commands_folder_is_not_named_by_that_folder(tmp_path, monkeypatch):
    from bobc import cache
    from bobc.host import gcc

    _fake_gcc(tmp_path, monkeypatch, 'echo "gcc: fake failure" >&2; exit 1')
    main = tmp_path / "main.c"
    main.write_text("int main(void) { return 0; }\n")
    with pytest.raises(gcc.HostBuildError) as raised:
        with cache.process_temporaries() as process:
            gcc.build([main], [], process.folder / "bobc-host-x" / "host")
    assert "could not build the host, and" in raised.value.message
    assert cache.PROCESS_PREFIX not in raised.value.message


def _long_folder(tmp_path: Path, size: int) -> Path:
    folder = tmp_path
    while len(os.fsencode(folder)) < size - 250:
        folder = folder / ("d" * 200)
    folder = folder / ("d" * (size - len(os.fsencode(folder)) - 1))
    folder.mkdir(parents=True)
    return folder


def test_a_scratch_folder_in_a_tmpdir_near_path_max_is_one_message_with_the_shorter_path_hint(tmp_path, monkeypatch):
    import tempfile

    from bobc import cache
    from bobc.errors import TemporaryWriteFailure
    from bobc.reference.safe_io import SHOWN_BYTES

    long = _long_folder(tmp_path, 4070)       # a bobc-runtime-objects-* folder fits, its .lock does not
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    monkeypatch.setattr(tempfile, "tempdir", str(long))
    with pytest.raises(TemporaryWriteFailure) as raised:
        cache.scratch_folder("runtime-objects")
    assert raised.value.exit_code == 8
    assert raised.value.message.endswith(": File name too long")
    assert raised.value.hint.startswith("point TMPDIR at a shorter path (")
    assert max(map(len, raised.value.render().split())) <= SHOWN_BYTES + 10
    assert not [p for p in long.iterdir()]


# Finding 4: a umask that takes the owner's write permission (277, 222).

@pytest.fixture
def umask_277():
    old = os.umask(0o277)
    yield
    os.umask(old)


def test_the_folders_bobc_makes_for_its_temporaries_are_its_own_to_write_whatever_the_umask(tmp_path, monkeypatch,
                                                                                               umask_277):
    import stat
    import tempfile

    from bobc import cache

    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with cache.process_temporaries() as process:
        assert process.folder is not None and process.folder.name.startswith(cache.PROCESS_PREFIX)
        assert stat.S_IMODE(process.folder.stat().st_mode) == 0o700
        for kind in ("objects", "runtime-objects"):
            scratch = cache.scratch_folder(kind)
            assert stat.S_IMODE(scratch.stat().st_mode) == 0o700
            cache.release_scratch(scratch, remove=True)
        monkeypatch.setenv("BOBC_CACHE_DIR", "off")
        scratch = cache.scratch_folder("objects")
        assert scratch.parent == process.folder and stat.S_IMODE(scratch.stat().st_mode) == 0o700
        cache.release_scratch(scratch, remove=True)


def test_a_temporary_the_umask_makes_unwritable_says_the_umask(tmp_path, monkeypatch, umask_277):
    import errno
    import tempfile

    from bobc import cache
    from bobc.errors import TemporaryWriteFailure

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(TemporaryWriteFailure) as raised:
        with cache.process_temporaries() as process:
            path = process.folder / "bobc-host-x" / "host_plan.c"
            raise TemporaryWriteFailure(path, PermissionError(errno.EACCES, "Permission denied", str(path)))
    assert raised.value.hint == (f"the umask 0277 takes the owner's write permission from the files and folders bobc "
                                 f"makes, so it cannot write its own temporaries in {tmp_path}: set a umask such as "
                                 f"022 or 077, then run again")


def test_a_command_folder_that_cannot_be_made_is_said(tmp_path, monkeypatch, capsys):
    import errno
    import tempfile

    from bobc import cache

    def no_room(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(tempfile, "mkdtemp", no_room)
    with cache.process_temporaries() as process:
        assert process.folder is None
    assert capsys.readouterr().err == (f"bobc: warning: cannot make this command's temporary folder bobc-proc-* in "
                                       f"{tmp_path} (No space left on device): its temporaries go in that folder "
                                       f"itself\n")


# Finding 5: what the docs promise about modes and the C compiler.

def test_the_docs_say_the_hosts_mode_follows_the_umask_and_that_cc_is_not_read():
    native = (REPO / "docs/native-host.md").read_text()
    assert "mode 0755 less the umask" in native and "mode 0755\n" not in native
    for doc in ("README.md", "docs/cache.md"):
        assert "`CC` is not read" in " ".join((REPO / doc).read_text().split()), doc


def test_the_c_compiler_is_the_gcc_on_path_whatever_cc_says(tmp_path, monkeypatch):
    from bobc.host import gcc

    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    assert gcc.compiler() == (shutil.which("gcc") or shutil.which("cc"))
