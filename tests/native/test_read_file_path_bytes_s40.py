"""A ReadFile whose argument is a path that is not UTF-8 (any bytes but NUL and '/' make a Linux
file name): the C host refuses a missing or short file naming the path as its bytes are,
exit 2 (docs/native-host.md, "Exit codes": a ReadFile's file missing or not its size); the
reference interpreter must say the same bytes.  It stopped with a UnicodeDecodeError traceback
(status 1) when the path it named could not be decoded as UTF-8 (session 40, found comparing
the seed 003 prediction host and `bobc run ... native --reference` on argument 0 = b"\\xff\\xfe").

The expected side is the C host's own output (runtime_c/native_host.c: the path's bytes as
given; a byte >= 0x80 is not a control character, so it is kept), compared byte for byte by
c_host_and_reference; and a path's name in the expected line is built from the bytes directly."""
from __future__ import annotations

import os

import pytest

from native_helpers import c_host_and_reference, nat, physical_program

END, READ_FILE = 0, 14


@pytest.mark.parametrize("name", [b"\xff\xfe", b"caf\xe9", b"ok-\xc3\xa9-then-\x80"])
def test_a_missing_file_whose_path_is_not_utf8_is_refused_alike(tmp_path, name):
    code = physical_program(bytes([READ_FILE]) + nat(0) + nat(0) + nat(8) + bytes([END]))
    status, stderr = c_host_and_reference(tmp_path, code, [os.fsdecode(name)])
    assert status == 2
    assert b"argument 0 " + name + b": cannot open: No such file or directory" in stderr


def test_a_short_file_whose_path_is_not_utf8_is_refused_alike(tmp_path):
    name = os.fsencode(tmp_path) + b"/\xff\xfe"       # absolute: the reference runs in pytest's folder
    with open(name, "wb") as short:
        short.write(b"1234")
    code = physical_program(bytes([READ_FILE]) + nat(0) + nat(0) + nat(8) + bytes([END]))
    status, stderr = c_host_and_reference(tmp_path, code, [os.fsdecode(name)])
    assert status == 2
    assert b"argument 0 " + name + b": 4 bytes, not the 8 the program reads" in stderr
