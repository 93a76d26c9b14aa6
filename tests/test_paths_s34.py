"""File paths a real user has (probe s34 paths): a name with a byte that is not UTF-8 printed on a
strict UTF-8 stdout (a UTF-8 locale such as en_US.UTF-8), a newline in a name given to any
command or in a plan's folder (file:line:column), and a plan path that begins with '-' after
`--`.  Each message stays one line, names the path with its own bytes (a control character as
'?', as the host's rt_io_shown and safe_io.shown show it), and never is a traceback."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINREG = REPO / "examples/linear_regression"
PLAN = LINREG / "LinReg/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    path = os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "BOBC_CACHE_DIR": str(tmp_path_factory.mktemp("cache")), "PYTHONPATH": path}


def bobc(*args, env, **kw):
    words = [a if isinstance(a, bytes) else os.fsencode(str(a)) for a in args]
    return subprocess.run([os.fsencode(sys.executable), b"-m", b"bobc", *words], capture_output=True,
                          env=env, timeout=300, stdin=subprocess.DEVNULL, **kw)


@pytest.fixture(scope="module")
def odd_host(tmp_path_factory, env):
    """A LinReg host in a folder whose name has the byte 0xff (not UTF-8)."""
    folder = os.fsencode(tmp_path_factory.mktemp("hosts")) + b"/odd\xffname"
    os.mkdir(folder)
    host = folder + b"/host"
    done = bobc("build", PLAN, "-o", host, env=env)
    assert done.returncode == 0, done.stderr
    return host


@pytest.mark.parametrize("command", ["diff", "inspect", "dump"])
def test_a_path_not_utf8_prints_on_a_strict_utf8_stdout(odd_host, env, command):
    strict = {**env, "PYTHONIOENCODING": "utf-8:strict"}
    words = [odd_host, odd_host] if command == "diff" else [odd_host]
    done = bobc(command, *words, env=strict)
    assert b"Traceback" not in done.stderr and done.returncode == 0, done.stderr
    if command != "dump":
        assert odd_host in done.stdout          # the path's own bytes, as stderr and the host print them


def test_an_unencodable_character_is_escaped_and_a_foreign_byte_kept(odd_host, env, tmp_path):
    other = tmp_path / "hé"
    shutil.copy(odd_host, other)
    done = bobc("diff", odd_host, other, env={**env, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert done.stdout == odd_host + b" and " + os.fsencode(tmp_path) + b"/h\\xe9 hold the same images and host plan\n"


COMMANDS = {"check": [], "eval": ["x"], "build": [], "asm": ["-o", "out.bin"], "disasm": [], "dump": [],
            "diff": [PLAN], "inspect": [], "run": ["--reference", "train"], "sim": ["train"]}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_missing_path_with_a_newline_is_named_on_one_line(tmp_path, env, command):
    done = bobc(command, "no\nthere", *COMMANDS[command], env=env, cwd=tmp_path)
    said = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in said, said
    assert said.count("\n") == 1 and said.endswith(": no?there\n"), said


@pytest.mark.parametrize("command", ["check", "build", "run"])
def test_a_link_to_a_name_with_a_newline_is_named_on_one_line(tmp_path, env, command):
    (tmp_path / "plan.bob").symlink_to("gone\nplan.bob")
    done = bobc(command, "plan.bob", *COMMANDS[command], env=env, cwd=tmp_path)
    said = done.stderr.decode()
    assert done.returncode == 2 and "(to gone?plan.bob, which does not exist)" in said, said
    assert said.splitlines()[0].endswith("not a module file" if command == "check" else "not a regular file")


def test_a_folder_given_with_a_newline_is_named_on_one_line(tmp_path, env):
    (tmp_path / "a\nb").mkdir()
    for command, said in (("check", "a?b is a folder, not a file"), ("eval", "a?b is a folder, not a plan module"),
                          ("inspect", "a?b is a folder, not a host executable")):
        done = bobc(command, "a\nb", *COMMANDS[command], env=env, cwd=tmp_path)
        first = done.stderr.decode().splitlines()[0]
        assert done.returncode == 2 and first.startswith(f"bobc {command}: error: {said}"), done.stderr


def test_a_sass_source_not_utf8_is_named_on_one_line(tmp_path, env):
    (tmp_path / "bad\nsource.sass").write_bytes(b"\xff\xfe")
    done = bobc("asm", "bad\nsource.sass", "-o", "out.bin", env=env, cwd=tmp_path)
    # b"\xff\xfe" is a UTF-16 byte order mark: named as such (bobc.source_bytes), the path on one line
    assert done.returncode == 1 and done.stderr.decode().splitlines()[0] == \
        "bobc asm: bad?source.sass:1:1: error: the file is not UTF-8 text: it is UTF-16 text " \
        "(little-endian, with a byte order mark)", done.stderr
    assert not (tmp_path / "out.bin").exists()


def test_file_line_column_under_a_folder_with_a_newline_stays_one_line(tmp_path, env):
    """A plan module's error names its file:line:column; the folder's newline is '?' there (and in
    --json's `where`), so the first line is the whole location and message."""
    root = tmp_path / "new\nline"
    shutil.copytree(LINREG / "LinReg", root / "LinReg")
    model = root / "LinReg" / "Model.bob"
    lines = model.read_text().count("\n")
    model.write_text(model.read_text() + "\nbroken : Nat\n")
    done = bobc("check", root / "LinReg/Build/NativeHost.bob", env=env, cwd=tmp_path)
    first = done.stderr.decode().splitlines()[0]
    assert done.returncode == 1, done.stderr
    assert first.startswith(f"bobc check: new?line/LinReg/Model.bob:{lines + 2}:1: error: "), done.stderr
    done = bobc("check", "--json", root / "LinReg/Build/NativeHost.bob", env=env, cwd=tmp_path)
    import json

    assert json.loads(done.stdout)["where"] == f"new?line/LinReg/Model.bob:{lines + 2}:1"


@pytest.mark.parametrize("command", [["run", "--reference"], ["sim"]])
def test_a_plan_path_beginning_with_a_dash_is_taken_after_double_dash(tmp_path, env, command):
    """`bobc run --reference -- -dir/P.bob train ...`: after `--` the first word is the plan (the
    command's --help: HOST_PART_RULE), even one beginning with '-'; before, the plan was read as
    an option and `train` as the plan ("no such file: train")."""
    shutil.copytree(LINREG / "LinReg", tmp_path / "-plans" / "LinReg")
    shutil.copy(LINREG / "reference_kernels.py", tmp_path / "-plans")
    made = subprocess.run([sys.executable, str(LINREG / "make_record.py"), "-o", str(tmp_path / "record.bin")],
                          capture_output=True, env=env, timeout=120)
    assert made.returncode == 0, made.stderr
    done = bobc(*command, "--", "-plans/LinReg/Build/NativeHost.bob", "train", "--input", "record.bin",
                "--checkpoint-out", "ckpt.bin", "--predictions", "pred.bin", "--result", "result.bin",
                env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert all((tmp_path / name).is_file() for name in ("ckpt.bin", "pred.bin", "result.bin"))


def test_an_output_path_past_the_hosts_path_buffer_is_refused_alike(tmp_path, env):
    """An output path of 4096 bytes or more (RT_IO_PATH_BYTES): the C host and `bobc run
    --reference` say the same line (the host's "path too long"), exit 8, nothing written."""
    shutil.copytree(LINREG / "LinReg", tmp_path / "plans" / "LinReg")
    shutil.copy(LINREG / "reference_kernels.py", tmp_path / "plans")
    plan = tmp_path / "plans/LinReg/Build/NativeHost.bob"
    assert bobc("build", plan, "-o", tmp_path / "host", env=env).returncode == 0
    made = subprocess.run([sys.executable, str(LINREG / "make_record.py"), "-o", str(tmp_path / "record.bin")],
                          capture_output=True, env=env, timeout=120)
    assert made.returncode == 0, made.stderr
    deep = "/".join(["d" * 200] * 21)                       # 4220 bytes, no folder of it there
    words = ["train", "--input", "record.bin", "--checkpoint-out", deep + "/ckpt.bin", "--predictions", "pred.bin",
             "--result", "result.bin"]
    host = subprocess.run([str(tmp_path / "host"), *words], capture_output=True, cwd=tmp_path, timeout=120)
    reference = bobc("run", plan, "--reference", *words, env=env, cwd=tmp_path)
    assert host.returncode == reference.returncode == 8, (host.stderr, reference.stderr)
    assert host.stderr.startswith(b"host: error: ") and reference.stderr.startswith(b"bobc run: error: ")
    assert host.stderr.split(b": ", 1)[1] == reference.stderr.split(b": ", 1)[1], (host.stderr, reference.stderr)
    assert host.stderr.endswith(b"(--checkpoint-out): path too long; nothing was written\n")
    assert not any((tmp_path / name).exists() for name in ("pred.bin", "result.bin"))


def test_diffs_verdict_names_a_path_with_a_newline_on_one_line(odd_host, env, tmp_path):
    other = tmp_path / "new\nline"
    shutil.copy(odd_host, other)
    done = bobc("diff", other, other, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{tmp_path}/new?line and {tmp_path}/new?line hold the same images and host plan\n".encode()


def test_the_example_tools_name_a_path_on_one_line_with_its_own_bytes(tmp_path):
    """make_record.py and upgrade_checkpoint.py name a path as bobc and the hosts do: a newline
    as '?', a byte that is not UTF-8 as itself (it was Python's `\\udcff` escape)."""
    make = [os.fsencode(sys.executable), os.fsencode(LINREG / "make_record.py"), b"-o"]
    done = subprocess.run([*make, b"no\ndir/x"], capture_output=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 8 and done.stderr.splitlines()[0] == (
        b"make_record.py: error: no?dir/x: cannot write output (-o): its folder no?dir does not exist; "
        b"create it first"), done.stderr
    done = subprocess.run([*make, b"no\xffdir/x"], capture_output=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 8 and done.stderr.startswith(b"make_record.py: error: no\xffdir/x: "), done.stderr
    upgrade = [os.fsencode(sys.executable), os.fsencode(REPO / "examples/partitioned_regression/upgrade_checkpoint.py")]
    for name, shown in ((b"no\nthere", b"no?there"), (b"no\xffthere", b"no\xffthere")):
        done = subprocess.run([*upgrade, name, b"a", b"b", b"c", b"d"], capture_output=True, cwd=tmp_path, timeout=120)
        assert done.returncode == 2 and done.stderr == (b"upgrade_checkpoint.py: error: the manifest (argument 0) "
                                                        + shown + b": cannot open: No such file or directory; "
                                                        b"nothing was rewritten\n"), done.stderr


def test_a_plan_path_beginning_with_a_dash_is_named_when_argparse_takes_it_for_an_option(tmp_path, env):
    done = bobc("check", "-plans/LinReg/Build/NativeHost.bob", env=env, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.decode().splitlines()[0] == (
        "bobc check: error: the following arguments are required: plan; '-plans/LinReg/Build/NativeHost.bob' was "
        "read as an option: give a path that begins with '-' after `--` or as ./-plans/LinReg/Build/NativeHost.bob")
    done = bobc("check", env=env, cwd=tmp_path)          # nothing read as an option: argparse's words alone
    assert done.stderr.decode().splitlines()[0] == "bobc check: error: the following arguments are required: plan"
