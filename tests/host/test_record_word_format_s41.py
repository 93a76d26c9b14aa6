"""A record check can say how its words are read (NvidiaPlanHostCheckReadAs with a
NvidiaPlanHostWordFormat: unsigned, signed, binary32, binary64), and a refused word is printed
as that format says, alike by the built host, `bobc run --reference` and `bobc sim` (probe s41
recordfmt finding 1: a binary32 feature of -1.5 was refused as "3217031168, expected 1065353216",
its bits, by all three).  A format that contradicts the check (binary32 of an 8-byte word, any
format on a bytes check, a non-unsigned one on an index check) is refused by `bobc check` where
the check was written (a below check reads a format since s42: test_record_below_format_s42.py).

The expected words are hand-computed from hand-chosen bit patterns, as C's printf and Python's
"%" formatting print them: binary32 0xbfc00000 is -1.5, 0x3f800000 is 1, 0x3eaaaaab is
1/3 rounded to binary32, "%.9g" 0.333333343; binary64 0x3fb999999999999a is 0.1 rounded,
"%.17g" 0.10000000000000001; 0x7fc00001 a quiet NaN, 0xff800000 -inf; the 4-byte word
0xfffffff9 is -7 in two's complement."""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/linear_regression/LinReg"
END = "(constructor NvidiaPlanHostRecordChecks NvidiaPlanHostRecordChecksEnd)))"
CHECK = 'NvidiaPlanHostCheckWord b"version" 8 8 linRegInputVersion'


def read_as(word_format: str, check: str) -> str:
    return (f"(constructor NvidiaPlanHostRecordCheck NvidiaPlanHostCheckReadAs "
            f"(constructor NvidiaPlanHostWordFormat NvidiaPlanHostWord{word_format}) "
            f"(constructor NvidiaPlanHostRecordCheck {check}))")


# LinReg's features from byte 16 (binary32): three checks on its first four words
CHECKS = [read_as("Binary32", 'NvidiaPlanHostCheckWord b"first feature" 16 4 0x3f800000'),
          read_as("Signed", 'NvidiaPlanHostCheckWord b"second feature" 20 4 0xfffffff9'),
          read_as("Binary64", 'NvidiaPlanHostCheckSame b"pair" 24 8 8 1 32 8 8')]


def _with_checks(folder: Path, checks: list[str]) -> Path:
    shutil.copytree(EXAMPLE, folder / "LinReg")
    host = folder / "LinReg/Build/NativeHost.bob"
    text = host.read_text()
    assert text.count(END) == 1
    host.write_text(text.replace(END, _nest(checks)))
    return host


def _nest(checks: list[str]) -> str:
    tail = "(constructor NvidiaPlanHostRecordChecks NvidiaPlanHostRecordChecksEnd)"
    for check in reversed(checks):
        tail = f"(constructor NvidiaPlanHostRecordChecks NvidiaPlanHostRecordChecksNext\n        {check}\n        {tail})"
    return tail + "))"


RECORDS = {   # name -> {offset: bytes}, the words the checks read
    "ok": {},
    "minus.bin": {16: struct.pack("<I", 0xbfc00000)},
    "nan.bin": {16: struct.pack("<I", 0x7fc00001)},
    "inf.bin": {16: struct.pack("<I", 0xff800000)},
    "third.bin": {16: struct.pack("<I", 0x3eaaaaab)},
    "signed.bin": {20: struct.pack("<I", 5)},
    "pair.bin": {24: struct.pack("<Q", 0x3fb999999999999a), 32: struct.pack("<Q", 0xfff0000000000000)},
}
GOOD = {16: struct.pack("<I", 0x3f800000), 20: struct.pack("<I", 0xfffffff9), 24: bytes(8), 32: bytes(8)}


@pytest.fixture(scope="module")
def formatted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recordfmt")
    module = _with_checks(folder, CHECKS)
    shutil.copy(REPO / "examples/linear_regression/reference_kernels.py", folder)
    record = folder / "record.bin"
    subprocess.run([sys.executable, str(REPO / "examples/linear_regression/make_record.py"), "-o", str(record)],
                   check=True, capture_output=True, timeout=120)
    good = bytearray(record.read_bytes())
    for name, words in RECORDS.items():
        data = bytearray(good)
        for at, word in {**GOOD, **words}.items():
            data[at:at + len(word)] = word
        (folder / (name if name != "ok" else "ok.bin")).write_bytes(data)
    built = _bobc("build", module, "--target", "sm_86", "-o", folder / "host", cwd=folder)
    assert built.returncode == 0, built.stderr
    return folder, module


def _bobc(*args, cwd) -> subprocess.CompletedProcess:
    environment = dict(os.environ, BOBC_CACHE_DIR="off")
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, env=environment,
                          timeout=600, cwd=cwd)


OUTPUTS = ["--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"]


@pytest.mark.parametrize("bad, words", [
    ("minus.bin", "first feature at byte 16 is -1.5, expected 1"),
    ("nan.bin", "first feature at byte 16 is nan (0x7fc00001), expected 1"),
    ("inf.bin", "first feature at byte 16 is -inf, expected 1"),
    ("third.bin", "first feature at byte 16 is 0.333333343, expected 1"),
    ("signed.bin", "second feature at byte 20 is 5, expected -7"),
    ("pair.bin", "pair 0 at byte 24 is 0.10000000000000001, but the word at byte 32 says -inf"),
])
def test_every_host_prints_the_refused_word_as_its_format(formatted, bad, words):
    folder, module = formatted
    refused_alike(folder, module, bad, words)


def refused_alike(folder, module, bad, words):
    """`bobc run --reference`, `bobc sim` and the built ./host each refuse record `bad` with exit 3 and
    the same words after their own prefix."""
    expected = f"input record {bad}: {words}\n".encode()
    ran = _bobc("run", module, "train", "--reference", "--input", bad, *OUTPUTS, cwd=folder)
    assert ran.returncode == 3 and ran.stderr == b"bobc run: error: " + expected, ran.stderr
    sim = _bobc("sim", module, "train", "--target", "sm_86", "--input", bad, *OUTPUTS, cwd=folder)
    assert sim.returncode == 3 and sim.stderr == b"bobc sim: error: " + expected, sim.stderr
    native = subprocess.run(["./host", "train", "--input", bad, *OUTPUTS], capture_output=True, cwd=folder,
                            timeout=60)
    assert native.returncode == 3 and native.stderr == b"host: error: " + expected, native.stderr


def test_a_record_whose_words_hold_passes_the_formatted_checks(formatted):
    folder, module = formatted
    ran = _bobc("run", module, "train", "--reference", "--input", "ok.bin", *OUTPUTS, cwd=folder)
    assert ran.returncode == 0, ran.stderr


@pytest.mark.parametrize("check, words", [
    (read_as("Binary32", 'NvidiaPlanHostCheckWord b"version" 8 8 1'),
     "input check version reads 8-byte words as binary32, which is 4 bytes wide"),
    (read_as("Binary64", 'NvidiaPlanHostCheckSame b"version" 8 8 8 1 16 4 4'),
     "input check version reads 4-byte words as binary64, which is 8 bytes wide"),
    (read_as("Binary32", 'NvidiaPlanHostCheckBelow b"version" 8 8 8 1 5'),
     "input check version reads 8-byte words as binary32, which is 4 bytes wide"),
    (read_as("Binary32", 'NvidiaPlanHostCheckIndex b"version" 16 4 4 1'),
     "input check version is an index check, whose words are positions 0, 1, 2, ... (unsigned naturals)"),
    (read_as("Unsigned", 'NvidiaPlanHostCheckBytes b"version" 0 b"LINREG01"'),
     "input check version compares bytes, which have no word format"),
    (read_as("Signed", "NvidiaPlanHostCheckReadAs (constructor NvidiaPlanHostWordFormat NvidiaPlanHostWordSigned) "
                       '(constructor NvidiaPlanHostRecordCheck NvidiaPlanHostCheckWord b"version" 8 8 1)'),
     "input check 1 says its words' format twice"),
])
def test_a_format_the_check_cannot_have_is_refused_where_it_was_written(tmp_path, monkeypatch, capsys, check, words):
    shutil.copytree(EXAMPLE, tmp_path / "LinReg")
    host = tmp_path / "LinReg/Build/NativeHost.bob"
    text = host.read_text()
    old = f"(constructor NvidiaPlanHostRecordCheck {CHECK})"
    assert text.count(old) == 1
    host.write_text(text.replace(old, check))
    before = text[:text.index(old)]
    line, column = before.count("\n") + 1, len(before.rsplit("\n", 1)[-1]) + 1
    if "twice" in words:        # located at the second format, where the plan said it again
        column += check.find("(constructor NvidiaPlanHostRecordCheck NvidiaPlanHostCheckReadAs", 1)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "LinReg/Build/NativeHost.bob"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"bobc check: LinReg/Build/NativeHost.bob:{line}:{column}: error: linRegNativeHost: "
                          + words), err


def test_a_check_that_says_no_format_reads_unsigned_words():
    """Every plan written before formats (examples, seeds) keeps its meaning: no ReadAs, unsigned."""
    from bobc.plan.host import RecordCheck, WORD_FORMATS

    assert RecordCheck("word", "version", 8, 8).format == "unsigned" == WORD_FORMATS[0][1]


# -- mutants6: formats the check CAN have are accepted (an unsigned below / index check, a signed
# same check of two widths: signed has no width of its own), and a same check's OTHER width is held
# to the format too (docs: "each word it reads as wide as the format's") -- mutants of
# extract._check_format that refused every below / index check or read only one width passed.

def _checked(tmp_path, monkeypatch, check):
    shutil.copytree(EXAMPLE, tmp_path / "LinReg")
    host = tmp_path / "LinReg/Build/NativeHost.bob"
    text = host.read_text()
    old = f"(constructor NvidiaPlanHostRecordCheck {CHECK})"
    host.write_text(text.replace(old, check))
    monkeypatch.chdir(tmp_path)
    return main(["check", "LinReg/Build/NativeHost.bob"])


@pytest.mark.parametrize("check", [
    read_as("Unsigned", 'NvidiaPlanHostCheckBelow b"version" 8 8 8 1 5'),
    read_as("Unsigned", 'NvidiaPlanHostCheckIndex b"version" 16 4 4 1'),
    read_as("Signed", 'NvidiaPlanHostCheckSame b"version" 8 8 8 1 16 4 4'),
    read_as("Binary32", 'NvidiaPlanHostCheckWord b"version" 8 4 1'),
])
def test_a_format_the_check_can_have_is_accepted(tmp_path, monkeypatch, capsys, check):
    assert _checked(tmp_path, monkeypatch, check) == 0, capsys.readouterr().err


@pytest.mark.parametrize("check, words", [
    # width right, other width wrong; then width wrong, other width right
    (read_as("Binary32", 'NvidiaPlanHostCheckSame b"version" 8 4 4 1 16 8 8'), "reads 8-byte words as binary32"),
    (read_as("Binary64", 'NvidiaPlanHostCheckSame b"version" 8 4 4 1 16 8 8'), "reads 4-byte words as binary64"),
])
def test_both_widths_of_a_same_check_are_held_to_the_format(tmp_path, monkeypatch, capsys, check, words):
    assert _checked(tmp_path, monkeypatch, check) == 1
    assert f"input check version {words}, which is" in capsys.readouterr().err
