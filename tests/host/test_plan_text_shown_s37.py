"""A plan host prints a plan's strings (a record check's name in the input refusal, the host's
identity in its usage) on one line, a control character as '?' (docs/native-host.md: "Every
plan's bytes a host prints on a message line ... show a control character ... as `?`"): a name
holding a newline, ESC, CR or DEL split the message and drove the terminal, in the built host,
`bobc run --reference` and `bobc sim` alike (probe s37 cinject findings 1 and 2).  The built host
and the reference print the same words."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# the plan's own escapes: a quote, a backslash, comment marks, a trigraph, printf words, then
# a newline, ESC (a colour), CR, BEL and DEL
HOSTILE = rb'q\"\\ */ /* ??= %s%n\n\x1b[31mRED\r\x07\x7f'
SHOWN = r'q"\ */ /* ??= %s%n??[31mRED???'


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cinject")
    shutil.copytree(REPO / "examples/linear_regression/LinReg", folder / "LinReg")
    shutil.copy(REPO / "examples/linear_regression/reference_kernels.py", folder)
    module = folder / "LinReg/Build/NativeHost.bob"
    text = module.read_bytes()
    for old, suffix in ((b'b"linreg-native-host-v1"', b"id"), (b'b"magic"', b"magic"), (b'b"version"', b"version")):
        assert text.count(old) == 1
        text = text.replace(old, b'b"' + HOSTILE + suffix + b'"')
    module.write_bytes(text)
    record = folder / "record.bin"
    subprocess.run([sys.executable, str(REPO / "examples/linear_regression/make_record.py"), "-o", str(record)],
                   check=True, capture_output=True, timeout=120)
    good = record.read_bytes()
    (folder / "magic.bin").write_bytes(b"XXXXXXXX" + good[8:])
    (folder / "version.bin").write_bytes(good[:8] + bytes([7]) + good[9:])
    return folder, module


def _bobc(*args, cwd) -> subprocess.CompletedProcess:
    environment = dict(os.environ, BOBC_CACHE_DIR="off")
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, env=environment,
                          timeout=600, cwd=cwd)


def _outputs(folder: Path) -> list[str]:
    return ["--checkpoint-out", str(folder / "c.bin"), "--predictions", str(folder / "p.bin"),
            "--result", str(folder / "r.bin")]


# each word named at its byte (s42 recordoffset): the fixture's magic at 0, its version at byte 8 (good[8])
@pytest.mark.parametrize("bad, words", [("magic.bin", f"{SHOWN}magic at byte 0 is not 'LINREG01'"),
                                        ("version.bin", f"{SHOWN}version at byte 8 is 7, expected 1")])
def test_a_record_checks_name_is_one_line_on_every_host(hostile, bad, words):
    folder, module = hostile
    expected = f"input record {bad}: {words}\n".encode()
    ran = _bobc("run", module, "train", "--reference", "--input", bad, *_outputs(folder), cwd=folder)
    assert ran.returncode == 3 and ran.stderr == b"bobc run: error: " + expected, ran.stderr
    sim = _bobc("sim", module, "train", "--target", "sm_86", "--input", bad, *_outputs(folder), cwd=folder)
    assert sim.returncode == 3 and sim.stderr == b"bobc sim: error: " + expected, sim.stderr
    host = folder / "host"
    if not host.exists():
        built = _bobc("build", module, "--target", "sm_86", "-o", host, cwd=folder)
        assert built.returncode == 0, built.stderr
    native = subprocess.run([str(host), "train", "--input", bad, *_outputs(folder)], capture_output=True,
                            cwd=folder, timeout=60)
    assert native.returncode == 3 and native.stderr == b"host: error: " + expected, native.stderr


def test_the_usage_shows_the_identity_on_one_line(hostile):
    folder, module = hostile
    host = folder / "host"
    if not host.exists():
        built = _bobc("build", module, "--target", "sm_86", "-o", host, cwd=folder)
        assert built.returncode == 0, built.stderr
    native = subprocess.run(["./host", "--help"], capture_output=True, cwd=folder, timeout=60)
    assert native.returncode == 0, native.stderr
    line = f"The native host of {SHOWN}id.\n".encode()
    assert line in native.stdout and b"\x1b" not in native.stdout, native.stdout
    reference = _bobc("run", module, "train", "--reference", "--help", cwd=folder)
    assert reference.returncode == 0, reference.stderr
    assert line in reference.stdout and b"\x1b" not in reference.stdout, reference.stdout
