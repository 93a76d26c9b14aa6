"""A below check reads its words as its format says (NvidiaPlanHostCheckReadAs): a signed word is
bounded as a two's complement number, a binary32 or binary64 word as IEEE 754 orders it -- a NaN
is below no bound, -0 is below what 0 is below, -inf is below every bound but -inf and NaN --
alike in runtime_c's rt_record_verify (the built host), and reference/host.py check_record
(`bobc run --reference`, `bobc sim`); a refusal prints the word and the bound as the format
says.  A signed same check compares the numbers its words hold, each sign-extended from its own
width (a 1-byte -1 is a 2-byte -1).  Before (probe s42 recordfmt2 findings 1 and 2): `bobc check`
refused any format on a below check, so "finite and below 2.0" could not be said, and a signed
same of a 1-byte 0xff and a 2-byte 0xffff refused the record as "mixed 0 is -1, but the word at
byte 956 says -1".

The oracle is NumPy's comparison of the same bits viewed as <f4, <f8, <i1 .. <i8 (IEEE 754-2008
5.11 for the binary formats, two's complement for the signed), never bobc's own code; the printed
words are hand-computed ("%.9g" of binary32 0x40000000 is 2, 0xbfc00000 is -1.5)."""
from __future__ import annotations

import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bobc.cli import main
from bobc.plan.host import RecordCheck
from bobc.reference.errors import BadInputRecord
from bobc.reference.host import check_record
from tests.host.test_record_word_format_s41 import OUTPUTS, _bobc, refused_alike

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/linear_regression/LinReg"
END = "(constructor NvidiaPlanHostRecordChecks NvidiaPlanHostRecordChecksEnd)))"


def read_as(word_format: str, check: str) -> str:
    return (f"(constructor NvidiaPlanHostRecordCheck NvidiaPlanHostCheckReadAs "
            f"(constructor NvidiaPlanHostWordFormat NvidiaPlanHostWord{word_format}) "
            f"(constructor NvidiaPlanHostRecordCheck {check}))")


def _with_checks(folder: Path, checks: list[str]) -> Path:
    """LinReg with `checks` in place of its record checks' end"""
    shutil.copytree(EXAMPLE, folder / "LinReg")
    host = folder / "LinReg/Build/NativeHost.bob"
    text = host.read_text()
    assert text.count(END) == 1
    tail = "(constructor NvidiaPlanHostRecordChecks NvidiaPlanHostRecordChecksEnd)"
    for check in reversed(checks):
        tail = f"(constructor NvidiaPlanHostRecordChecks NvidiaPlanHostRecordChecksNext\n  {check}\n  {tail})"
    host.write_text(text.replace(END, tail + "))"))
    return host



SOURCES = ["nv_status.c", "nv_targets.c", "nv_shim.c", "host_runtime.c", "host_io.c", "plan_fill.c", "host_settings.c"]
FORMATS = {"signed": 1, "binary32": 2, "binary64": 3}      # host_runtime.h RT_WORD_*
VIEWS = {("signed", 1): "<i1", ("signed", 2): "<i2", ("signed", 4): "<i4", ("signed", 8): "<i8",
         ("binary32", 4): "<f4", ("binary64", 8): "<f8"}
# bit patterns worth comparing: zeros of both signs, infinities, NaNs (quiet, signalling, negative),
# the least subnormals, the extremes of each signed width, and small numbers of both signs
SPECIAL = {
    4: [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc00001, 1, 0x80000001,
        0x3f800000, 0xbf800000, 0x40000000, 0x7f7fffff, 0xff7fffff, 0x7fffffff, 0xffffffff],
    8: [0, 1 << 63, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001,
        1, (1 << 63) | 1, 0x3ff0000000000000, 0xbff0000000000000, (1 << 63) - 1, (1 << 64) - 1],
    2: [0, 1, 0x7fff, 0x8000, 0xffff, 0x8001],
    1: [0, 1, 0x7f, 0x80, 0xff, 0x81],
}


def _pairs(word_format: str, width: int) -> list[tuple[int, int]]:
    rng = random.Random(f"{word_format}{width}")
    bits = SPECIAL[width] + [rng.getrandbits(8 * width) for _ in range(12)]
    return [(w, b) for w in bits for b in bits]


def _numpy_below(word_format: str, width: int, w: int, bound: int) -> bool:
    view = VIEWS[word_format, width]
    a = np.frombuffer(w.to_bytes(width, "little"), view)[0]
    b = np.frombuffer(bound.to_bytes(width, "little"), view)[0]
    return bool(a < b)


CASES = [(f, w) for f, w in VIEWS]


@pytest.mark.parametrize("word_format, width", CASES)
def test_python_below_is_numpys_order(word_format, width):
    for w, bound in _pairs(word_format, width):
        check = RecordCheck("below", "x", 0, width, width, 1, bound, format=word_format)
        try:
            check_record((check,), width, w.to_bytes(width, "little"), "r.bin")
            passed = True
        except BadInputRecord:
            passed = False
        assert passed == _numpy_below(word_format, width, w, bound), (word_format, hex(w), hex(bound))


DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host_runtime.h"
/* stdin: FORMAT WIDTH BOUND WORD (hex) a line; stdout: 1 passed, 0 refused, a line */
int main(void)
{
    int format; unsigned width; unsigned long long bound, word;
    while (scanf("%d %u %llx %llx", &format, &width, &bound, &word) == 4) {
        rt_record_check check = { RT_CHECK_BELOW, "x", 0, width, width, 1, bound, NULL, 0, 0, 0, 0, format };
        rt_record_contract contract = { width, &check, 1 };
        unsigned char r[8];
        char err[RT_ERR_BYTES];
        for (unsigned i = 0; i < 8; i++) r[i] = (unsigned char)(word >> (8 * i));
        int rc = rt_record_verify(&contract, r, width, "r.bin", err);
        printf("%d\n", rc == 0);
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def driver(repo, tmp_path_factory):
    runtime = repo / "runtime_c"
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    folder = tmp_path_factory.mktemp("below")
    (folder / "driver.c").write_text(DRIVER)
    built = subprocess.run(["gcc", "-std=c11", "-O0", "-D_DEFAULT_SOURCE", f"-I{runtime}", str(folder / "driver.c"),
                            *(str(runtime / s) for s in SOURCES), "-lm", "-o", str(folder / "driver")],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    return folder / "driver"


def test_c_below_is_numpys_order(driver):
    lines, expected = [], []
    for word_format, width in CASES:
        for w, bound in _pairs(word_format, width):
            lines.append(f"{FORMATS[word_format]} {width} {bound:x} {w:x}")
            expected.append((word_format, width, hex(w), hex(bound), _numpy_below(word_format, width, w, bound)))
    ran = subprocess.run([str(driver)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
    got = [line == "1" for line in ran.stdout.split()]
    assert len(got) == len(expected)
    wrong = [e for e, g in zip(expected, got) if e[-1] != g]
    assert not wrong, wrong[:10]


def test_signed_same_compares_numbers_across_widths():
    """A 1-byte 0xff and a 2-byte 0xffff are both -1 (two's complement): the same; 0xff and
    0x00ff are not (-1 and 255), and the refusal says so."""
    check = RecordCheck("same", "mixed", 0, 1, 1, 1, other=2, other_width=2, other_stride=2, format="signed")
    check_record((check,), 4, b"\xff\x00\xff\xff", "r.bin")
    with pytest.raises(BadInputRecord, match="mixed 0 at byte 0 is -1, but the word at byte 2 says 255"):
        check_record((check,), 4, b"\xff\x00\xff\x00", "r.bin")


# LinReg's features from byte 16 (binary32), its targets' first word at 272 read as binary64, and
# byte 20 read as a 1-byte signed word: each bounded
CHECKS = [read_as("Binary32", 'NvidiaPlanHostCheckBelow b"feature" 16 4 4 1 0x40000000'),
          read_as("Binary64", 'NvidiaPlanHostCheckBelow b"wide" 24 8 8 1 0x0000000000000000'),
          read_as("Signed", 'NvidiaPlanHostCheckBelow b"small" 32 1 1 2 0xfe')]
GOOD = {16: struct.pack("<f", 1.5), 24: struct.pack("<d", -0.5), 32: struct.pack("<bb", -3, -128)}
RECORDS = {
    "ok": ({16: struct.pack("<f", float("-inf"))}, None),          # -inf is below 2
    "two.bin": ({16: struct.pack("<I", 0x40000000)}, "feature 0 at byte 16 is 2, not below 2"),
    "nan.bin": ({16: struct.pack("<I", 0x7fc00001)}, "feature 0 at byte 16 is nan (0x7fc00001), not below 2"),
    "inf.bin": ({16: struct.pack("<I", 0x7f800000)}, "feature 0 at byte 16 is inf, not below 2"),
    "negzero.bin": ({24: struct.pack("<Q", 1 << 63)}, "wide 0 at byte 24 is -0, not below 0"),
    "small.bin": ({33: b"\xfe"}, "small 1 at byte 33 is -2, not below -2"),
}


@pytest.fixture(scope="module")
def bounded(tmp_path_factory, repo):
    folder = tmp_path_factory.mktemp("recordbelow")
    module = _with_checks(folder, CHECKS)
    shutil.copy(repo / "examples/linear_regression/reference_kernels.py", folder)
    record = folder / "record.bin"
    subprocess.run([sys.executable, str(repo / "examples/linear_regression/make_record.py"), "-o", str(record)],
                   check=True, capture_output=True, timeout=120)
    good = bytearray(record.read_bytes())
    for name, (words, _) in RECORDS.items():
        data = bytearray(good)
        for at, word in {**GOOD, **words}.items():
            data[at:at + len(word)] = word
        (folder / (name if name != "ok" else "ok.bin")).write_bytes(data)
    built = _bobc("build", module, "--target", "sm_86", "-o", folder / "host", cwd=folder)
    assert built.returncode == 0, built.stderr
    return folder, module


@pytest.mark.parametrize("bad", [name for name in RECORDS if name != "ok"])
def test_every_host_bounds_the_word_as_its_format(bounded, bad):
    folder, module = bounded
    refused_alike(folder, module, bad, RECORDS[bad][1])


def test_a_record_within_every_bound_passes_them(bounded):
    folder, module = bounded
    ran = _bobc("run", module, "train", "--reference", "--input", "ok.bin", *OUTPUTS, cwd=folder)
    assert b"input record" not in ran.stderr, ran.stderr
    native = subprocess.run(["./host", "train", "--input", "ok.bin", *OUTPUTS], capture_output=True, cwd=folder,
                            timeout=60)
    assert b"input record" not in native.stderr, native.stderr      # past the checks (no GPU here: exit 1 after)


@pytest.mark.parametrize("check, said", [
    (read_as("Signed", 'NvidiaPlanHostCheckBelow b"b" 16 2 2 1 0x8000'),
     "input check b requires signed words below -32768, the least 2-byte signed word: every input record "
     "would be refused; give a greater bound"),
    (read_as("Binary32", 'NvidiaPlanHostCheckBelow b"b" 16 4 4 1 0xff800000'),
     "input check b requires binary32 words below -inf, which no binary32 word is below"),
    (read_as("Binary64", 'NvidiaPlanHostCheckBelow b"b" 16 8 8 1 0x7ff8000000000000'),
     "input check b requires binary64 words below a NaN (0x7ff8000000000000), which no binary64 word is below"),
    (read_as("Binary32", 'NvidiaPlanHostCheckBelow b"b" 16 4 4 1 0x100000000'),
     "input check b bounds 4-byte binary32 words by the bits 0x100000000, which no 4-byte word holds"),
    (read_as("Signed", 'NvidiaPlanHostCheckIndex b"b" 16 4 4 2'),
     "input check b is an index check, whose words are positions"),
])
def test_check_refuses_a_bound_no_word_is_below(tmp_path, capsys, check, said):
    module = _with_checks(tmp_path, [check])
    assert main(["check", str(module)]) != 0
    err = capsys.readouterr().err
    assert said in err and "NativeHost.bob:" in err, err


def test_a_signed_bound_of_zero_is_allowed(tmp_path, capsys):
    """Unsigned words below 0 are none (refused); signed words below 0 are the negative ones."""
    module = _with_checks(tmp_path, [read_as("Signed", 'NvidiaPlanHostCheckBelow b"b" 16 4 4 1 0')])
    assert main(["check", str(module)]) == 0, capsys.readouterr().err
