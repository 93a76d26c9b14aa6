"""A damaged host file (probe s33 fuzzrec, findings 2 and 3).

2. A host whose .bobc.manifest section is damaged (zeroed, a number edited, emptied through its
   header's size, renamed away) ran (`train` reached the GPU) while `bobc inspect` called it
   damaged, or (renamed) fine.  The version text now records the section's sha256 (its manifest
   identity): the host refuses to run, exit 9, naming the section, and inspect, dump and diff say
   the same words.
3. A host cut short, or with a broken ELF header (e_phoff 0), crashes before main; `bobc inspect`
   said "has no usable section table" or "fine".  It now says the file is truncated (its size
   against the size its headers need) or names the broken header field."""
from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys

import pytest

_SHDR = struct.Struct("<IIQQQQIIQQ")


def bobc(*args):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def _section_header(data: bytes, wanted: bytes) -> int:
    """The file offset of section `wanted`'s header (elf.h's ELF64 layout)."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3C)
    strings = _SHDR.unpack_from(data, shoff + _SHDR.size * shstrndx)[4]
    for i in range(shnum):
        at = shoff + _SHDR.size * i
        name = _SHDR.unpack_from(data, at)[0]
        if data[strings + name:data.index(0, strings + name)] == wanted:
            return at
    raise AssertionError(f"no section {wanted!r}")


def _zeroed(data: bytearray, at: int) -> None:
    _, _, _, _, offset, size, *_ = _SHDR.unpack_from(data, at)
    data[offset:offset + size] = bytes(size)


def _negative_dword(data: bytearray, at: int) -> None:
    """prologue.gpfifo_entry[0] made negative, the same length: the ELF stays valid."""
    _, _, _, _, offset, size, *_ = _SHDR.unpack_from(data, at)
    section = bytes(data[offset:offset + size])
    k = section.index(b'"gpfifo_entry": [') + len(b'"gpfifo_entry": [')
    n = section.index(b",", k) - k
    data[offset + k:offset + k + n] = b"-" + b"9" * (n - 1)


def _emptied(data: bytearray, at: int) -> None:
    struct.pack_into("<Q", data, at + 32, 0)          # sh_size


def _renamed(data: bytearray, at: int) -> None:
    struct.pack_into("<I", data, at, 0)               # sh_name: the empty name


@pytest.mark.parametrize("damage", [_zeroed, _negative_dword, _emptied, _renamed])
def test_a_damaged_manifest_section_is_refused_by_the_host_and_by_inspect(host, tmp_path, damage):
    data = bytearray(host.read_bytes())
    damage(data, _section_header(data, b".bobc.manifest"))
    damaged = tmp_path / "damaged-host"
    damaged.write_bytes(bytes(data))
    os.chmod(damaged, 0o755)
    run = subprocess.run([str(damaged), "train", "--input", str(tmp_path / "record.bin"), "--checkpoint-out",
                          str(tmp_path / "c"), "--predictions", str(tmp_path / "p"), "--result", str(tmp_path / "r")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 9, run.stderr
    assert ".bobc.manifest" in run.stderr and "damaged host file" in run.stderr, run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged-host"]
    for command, code in (("inspect", 1), ("dump", 1), ("diff", 2)):
        done = bobc(command, *((host,) if command == "diff" else ()), damaged)
        assert done.returncode == code, (command, done.stderr)
        assert "Traceback" not in done.stderr
        assert f"{damaged} is damaged" in done.stderr and ".bobc.manifest" in done.stderr, (command, done.stderr)
        assert "(the host refuses to run, exit 9)" in done.stderr, (command, done.stderr)


def test_the_version_text_records_the_manifest_sections_sha256(host):
    data = host.read_bytes()
    _, _, _, _, offset, size, *_ = _SHDR.unpack_from(data, _section_header(data, b".bobc.manifest"))
    version = subprocess.run([str(host), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0
    digest = hashlib.sha256(data[offset:offset + size]).hexdigest()
    assert f"manifest identity: sha256 {digest} " in version.stdout
    assert bobc("inspect", host).returncode == 0



def test_a_host_cut_short_is_said_truncated(host, tmp_path):
    data = host.read_bytes()
    for size in (40, 600_000, len(data) - 1):
        cut = tmp_path / f"cut-{size}"
        cut.write_bytes(data[:size])
        done = bobc("inspect", cut)
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith(f"bobc inspect: error: {cut} is truncated: it is {size} bytes, but its "), \
            done.stderr
        assert "copy it again" in done.stderr and "exit 139" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize("offset, packing, value, says", [
    (0x20, "<Q", 0, "e_phoff is 0x0"),
    (0x18, "<Q", 0, "e_entry 0x0 lies in none of its LOAD segments"),
    (0x36, "<H", 0x20, "e_phentsize is 32, not 56"),
    (0x3A, "<H", 0x10, "e_shentsize is 16, not 64"),
])
def test_a_broken_elf_header_names_the_field(host, tmp_path, offset, packing, value, says):
    data = bytearray(host.read_bytes())
    struct.pack_into(packing, data, offset, value)
    broken = tmp_path / "broken"
    broken.write_bytes(bytes(data))
    for command in ("inspect", "dump"):
        done = bobc(command, broken)
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith(f"bobc {command}: error: {broken} has a broken ELF header: {says}"), done.stderr
