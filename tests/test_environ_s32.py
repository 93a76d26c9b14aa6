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
