"""Every record-check refusal names the byte of the input file its word lies at, and a wrong
size is counted with its digits grouped (probe s42 recordfmt2, findings 4 and 6).

Before, a word, below, index or same refusal named the check and the word's index only
(`value word 7 is 300, not below 41`): a user had to work out offset + i x stride to find the
byte in the file; and the size refusal printed `6192000 bytes, expected exactly 258` where every
other count is grouped (certify/limits.py shown_bytes: `6,192,000 bytes`).  Now the C plan host
(runtime_c rt_record_verify, through rt_tool's sample contract) and bobc.reference.host
check_record (`bobc run --reference`, `bobc sim`) print the same text: `WHAT [I] at byte N ...`.

The expected bytes are computed here by hand from rt_sample.h's layout (restated: magic at 0, the
u64 version at 8, 37 (key, value) byte pairs from 16, 37 u32 value words from 90, 5 u32 queries
from 238), offset + i x stride for the i the test breaks, never read from bobc; the grouped counts
are Python's own `{n:,}` format.
"""
from __future__ import annotations

import shutil
import struct
import subprocess

import pytest

from bobc.plan.host import RecordCheck
from bobc.reference.errors import BadInputRecord, FileRefused
from bobc.reference.host import check_record

SOURCES = ["nv_status.c", "nv_targets.c", "nv_shim.c", "host_runtime.c", "host_io.c", "plan_fill.c", "host_settings.c"]
PAIRS_AT, WORDS_AT, QUERIES_AT = 16, 16 + 2 * 37, 16 + 2 * 37 + 4 * 37      # rt_sample.h, by hand
# rt_sample.h's checks (rt_tool input-check's contract), restated as check_record reads them
SAMPLE_CHECKS = (
    RecordCheck("bytes", "magic", 0, data=b"RTSAMPLE"),
    RecordCheck("word", "version", 8, 8, value=3),
    RecordCheck("index", "key", PAIRS_AT, 1, 2, 37),
    RecordCheck("below", "value word", WORDS_AT, 4, 4, 37, 41),
    RecordCheck("same", "pair's value", PAIRS_AT + 1, 1, 2, 37, other=WORDS_AT, other_width=4, other_stride=4),
    RecordCheck("below", "query", QUERIES_AT, 4, 4, 5, 41),
)
SAMPLE_RECORD_BYTES = QUERIES_AT + 4 * 5


def _record() -> bytes:
    """A record rt_sample's checks accept: key k's value (3k + 1) mod 41, its byte and its word."""
    values = [(3 * k + 1) % 41 for k in range(37)]
    return (b"RTSAMPLE" + struct.pack("<Q", 3) + b"".join(bytes([k, v]) for k, v in enumerate(values))
            + struct.pack("<37I", *values) + struct.pack("<5I", 40, 0, 7, 7, 12))


def _patched(offset: int, fmt: str, value) -> bytes:
    out = bytearray(_record())
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


# name -> (the record, the refusal after "input record PATH: "), each offset by hand
CASES = {
    "magic": (b"RTSAMPLX" + _record()[8:], "magic at byte 0 is not 'RTSAMPLE'"),
    "version": (_patched(8, "<Q", 2), "version at byte 8 is 2, expected 3"),
    "big-endian version": (_patched(8, ">Q", 3),
                           "version at byte 8 is 216172782113783808, expected 3 (its bytes reversed: the record was "
                           "written big-endian; write it little-endian)"),
    "key 7": (_patched(PAIRS_AT + 7 * 2, "<B", 8),
              f"key 7 at byte {PAIRS_AT + 7 * 2} names 8 (the 37 must list 0..36 in order)"),
    "value word 36": (_patched(WORDS_AT + 36 * 4, "<I", 300),
                      f"value word 36 at byte {WORDS_AT + 36 * 4} is 300, not below 41"),
    "query 4": (_patched(QUERIES_AT + 4 * 4, "<I", 41), f"query 4 at byte {QUERIES_AT + 4 * 4} is 41, not below 41"),
    # the pair's value byte of pair 11 against value word 11: both bytes named
    "pair's value 11": (_patched(PAIRS_AT + 1 + 11 * 2, "<B", 0),
                        f"pair's value 11 at byte {PAIRS_AT + 1 + 11 * 2} is 0, but the word at byte "
                        f"{WORDS_AT + 11 * 4} says {(3 * 11 + 1) % 41}"),
}


@pytest.fixture(scope="module")
def tool(repo, tmp_path_factory):
    runtime = repo / "runtime_c"
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    out = tmp_path_factory.mktemp("c") / "rt_tool"
    built = subprocess.run(["gcc", "-std=c11", "-O0", "-D_DEFAULT_SOURCE", f"-I{runtime}",
                            str(runtime / "tests/rt_tool.c"), *(str(runtime / s) for s in SOURCES), "-lm",
                            "-o", str(out)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-500:]
    return lambda *args: subprocess.run([str(out), *map(str, args)], capture_output=True, text=True, timeout=60)


def _c_said(done) -> str:
    assert done.returncode == 3 and done.stderr.startswith("host: error: "), done.stderr
    return done.stderr[len("host: error: "):].rstrip("\n")


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_refusal_names_its_words_byte_alike_in_c_and_python(tool, tmp_path, name):
    record, words = CASES[name]
    path = tmp_path / "bad.bin"
    path.write_bytes(record)
    expected = f"input record {path}: {words}"
    with pytest.raises(BadInputRecord) as caught:
        check_record(SAMPLE_CHECKS, SAMPLE_RECORD_BYTES, record, path)
    assert caught.value.host_form() == expected
    assert _c_said(tool("input-check", path)) == expected


@pytest.mark.parametrize("size", [0, 1, 257, 259, 999, 1000, 6_192_000])
def test_a_wrong_size_is_counted_grouped_alike_in_c_and_python(tool, tmp_path, size):
    """A shorter file after it is read (check_record), a longer one unread (safe_io's exact read,
    host_io.c's): both `N byte(s), expected exactly 258`, N grouped by threes."""
    from bobc.reference import safe_io

    path = tmp_path / "sized.bin"
    with open(path, "wb") as f:
        f.truncate(size)                  # sparse: 6 MB of nothing on disk
    expected = (f"input record {path}: {size:,} byte{'' if size == 1 else 's'}, expected exactly 258"
                f"{' (truncated)' if size < 258 else ''}")
    with pytest.raises(FileRefused) as caught:
        data = safe_io.read_input(path, BadInputRecord, SAMPLE_RECORD_BYTES, exact=True).data
        check_record(SAMPLE_CHECKS, SAMPLE_RECORD_BYTES, data, path)
    assert caught.value.host_form() == expected
    assert _c_said(tool("input-check", path)) == expected


EDGES = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10000, 99999, 100000, 999999, 1000000, 1048576,
         6192000, 1 << 30, 10 ** 12 - 1, 10 ** 12, 2 ** 63 - 1, 2 ** 63, 10 ** 19, 2 ** 64 - 1]


def test_c_groups_counts_as_python_does(repo, tmp_path):
    """runtime_c/host_runtime.h rt_grouped against certify/limits.py shown and Python's `{:,}` over
    the edges of every group of three digits, to 2^64 - 1."""
    from bobc.certify.limits import shown

    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    driver = tmp_path / "grouped.c"
    driver.write_text('#include "host_runtime.h"\n#include <stdio.h>\n#include <stdlib.h>\n'
                      "int main(void)\n{\n    char line[64], out[RT_GROUPED_BYTES];\n"
                      "    while (fgets(line, sizeof line, stdin))\n"
                      '        printf("%s\\n", rt_grouped(strtoull(line, NULL, 10), out));\n    return 0;\n}\n')
    built = subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", "-D_DEFAULT_SOURCE", f"-I{repo / 'runtime_c'}",
                            str(driver), "-o", str(tmp_path / "grouped")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-1000:]
    ran = subprocess.run([str(tmp_path / "grouped")], input="".join(f"{v}\n" for v in EDGES), capture_output=True,
                         text=True, timeout=60)
    assert ran.stdout.splitlines() == [f"{v:,}" for v in EDGES] == [shown(v) for v in EDGES]
