"""A stray NUL in the first 4096 bytes of an otherwise UTF-8 module (or kernel source) is refused
at its line and column with "delete it", as one past them always was (session 45, leftovers7;
probe s43 fuzz F4, left).

Before, one NUL near the start made the whole file "binary data (byte 0x00 at offset N)" at 1:1,
with the hint to name the plan module and give records to the command's options -- for a module
the user had just edited.  The line and column below are hand counts of the bytes written; a
record (its little-endian counts hold many zero bytes) stays binary data, and so does a file of
more NULs than a tool leaves by accident (source_bytes.STRAY_NULS).
"""
from __future__ import annotations

import struct

import pytest

from bobc.cli import main

NUL_HINT = 'hint: delete it (an editor or a tool wrote it); a zero byte in a byte string is written \\x00 (b"a\\x00b")'


@pytest.mark.parametrize("data, line, column", [
    (b"module A.M\n\ndef x : Nat = 1\0\ndef y : Nat = 2\n", 3, 16),     # after "def x : Nat = 1" (15 characters)
    (b"module A.M\n\0\n", 2, 1),
    (b"module A.M\n-- caf\xc3\xa9 \0\n", 2, 9),                          # columns count characters: "-- caf\xe9 " is 8
], ids=["after-a-value", "own-line", "after-a-two-byte-character"])
def test_a_stray_nul_in_a_module_is_placed_with_delete_it(tmp_path, capsys, data, line, column):
    plan = tmp_path / "A" / "M.bob"
    plan.parent.mkdir()
    plan.write_bytes(data)
    assert main(["check", str(plan)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"bobc check: {plan}:{line}:{column}: error: a NUL character (U+0000) in the text: a source holds none"
    assert err[-1] == NUL_HINT
    assert "binary data" not in "\n".join(err)


def test_a_stray_nul_in_a_kernel_source_is_placed_too(tmp_path, capsys):
    source = tmp_path / "k.sass"
    source.write_bytes(b".kernel k\n.registers 8\n    EXIT\0\n")
    assert main(["asm", str(source), "--arch", "sm_86", "-o", str(tmp_path / "k.bin")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"bobc asm: {source}:3:9: error: a NUL character (U+0000) in the text: a source holds none"
    assert not (tmp_path / "k.bin").exists()


@pytest.mark.parametrize("data, at", [
    (b"BOBREC01" + struct.pack("<4I", 1, 0, 65, 3) + b"x" * 100, 9),     # a record's counts: 11 zero bytes
    (b"module A.M\n" + b"\0" * 5 + b"\n", 11),                             # more than a stray few
], ids=["record", "five-nuls"])
def test_binary_data_stays_binary_data(tmp_path, capsys, data, at):
    plan = tmp_path / "z.bin"
    plan.write_bytes(data)
    assert main(["check", str(plan)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (f"bobc check: {plan}:1:1: error: the file is not a module source (a .bob text): "
                      f"it holds binary data (byte 0x00 at offset {at})")
