"""A binary file given as the plan (a record, a host) is said to be no module source, with no
excerpt of binary noise; before, "the file is not UTF-8 text: byte 0xbf" with the bytes around it
shown as a source line (probe s32 errors finding 10; minor finding 5).  A text module with one
stray Latin-1 byte keeps its "not UTF-8" message at the byte (tests/language/test_module_files.py)."""
from __future__ import annotations

import struct

import pytest

from bobc.cli import main

RECORD = b"BOBREC01" + struct.pack("<4I", 1, 0, 65, 3) + bytes(range(256)) + struct.pack("<4f", 0.5, -1.25, 3e7, 1e-9)


@pytest.mark.parametrize("command", ["build", "check"])
def test_a_binary_plan_is_no_module_source(tmp_path, capsys, command):
    record = tmp_path / "record.bin"
    record.write_bytes(RECORD)
    argv = [command, str(record)] + (["-o", str(tmp_path / "host")] if command == "build" else [])
    assert main(argv) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (f"bobc {command}: {record}:1:1: error: the file is not a module source (a .bob text): "
                      "it holds binary data (byte 0x00 at offset 9)")
    assert len(err) == 2 and err[1].startswith("hint: name the plan module (.bob) to read"), err
    assert "UTF-8" not in "\n".join(err)


def test_binary_without_a_nul_is_named_by_its_control_bytes(tmp_path, capsys):
    noise = tmp_path / "noise.bin"
    noise.write_bytes(bytes([0x80 | (i * 37 % 127) if i % 3 else 1 + i % 8 for i in range(600)]))
    assert main(["check", str(noise)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert "the file is not a module source (a .bob text): it holds binary data (byte 0x01 at offset 0)" in err[0]
    assert len(err) == 2


def test_a_text_module_in_latin1_is_still_told_to_save_it_as_utf8(tmp_path, capsys):
    plan = tmp_path / "Latin.bob"
    plan.write_bytes(b"module Latin\n\ndef a : Bytes = b\"caf\xe9\"\n")
    assert main(["check", str(plan)]) == 1
    err = capsys.readouterr().err
    assert f"{plan}:3:22: error: the file is not UTF-8 text: byte 0xe9" in err and "save it as UTF-8" in err
