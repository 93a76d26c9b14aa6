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


# probe s32 today3 finding 3: the binary judgment came only after UTF-8 decoding failed, so a
# binary file whose bytes are valid UTF-8 (zeros, a record of bytes below 0x80) got a parse error
# with an excerpt of noise, and UTF-16 text was told to convert from latin1

# (a text module with one stray NUL is text, its NUL placed: tests/language/test_stray_nul_s45.py)
@pytest.mark.parametrize("data, at", [(bytes(100), 0), (b"BOBREC01" + bytes([1, 0, 0, 0, 65, 3]) * 20, 9)],
                         ids=["zeros", "record"])
def test_binary_data_that_is_valid_utf8_is_no_module_source(tmp_path, capsys, data, at):
    plan = tmp_path / "z.bin"
    plan.write_bytes(data)
    assert main(["check", str(plan)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (f"bobc check: {plan}:1:1: error: the file is not a module source (a .bob text): "
                      f"it holds binary data (byte 0x{data[at]:02x} at offset {at})")
    assert len(err) == 2 and err[1].startswith("hint: name the plan module (.bob) to read")


@pytest.mark.parametrize("data, shown, source", [
    ("module W\n".encode("utf-16-le"), "little-endian, no byte order mark", "utf-16le"),
    ("module W\n".encode("utf-16-be"), "big-endian, no byte order mark", "utf-16be"),
    (b"\xff\xfe" + "module W\n".encode("utf-16-le"), "little-endian, with a byte order mark", "utf-16"),
    (b"\xfe\xff" + "module W\n".encode("utf-16-be"), "big-endian, with a byte order mark", "utf-16"),
], ids=["le", "be", "le-bom", "be-bom"])
def test_utf16_text_is_named_with_its_conversion(tmp_path, capsys, data, shown, source):
    plan = tmp_path / "W.bob"
    plan.write_bytes(data)
    assert main(["check", str(plan)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"bobc check: {plan}:1:1: error: the file is not UTF-8 text: it is UTF-16 text ({shown})",
                   f"hint: module files are UTF-8; convert it (e.g. `iconv -f {source} -t utf-8 FILE > NEW.bob`) "
                   "and name the converted file"]


def test_a_text_module_with_a_rare_control_character_still_parses(tmp_path, capsys):
    plan = tmp_path / "C.bob"
    plan.write_bytes(b"module C\n-- a bell \x07 in a comment\ndef a : Nat = 1\n")
    assert main(["check", str(plan)]) == 0, capsys.readouterr().err
