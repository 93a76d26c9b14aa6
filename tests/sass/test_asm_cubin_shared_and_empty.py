"""`bobc asm --cubin` carries the source's `.shared N` (a listing's .nv.shared.<kernel> size) as the
kernel's static shared memory, where it dropped it (probe s28 asm, finding 4); `bobc disasm` of an
empty file says it is empty (it printed nvdisasm's words about a temporary file); a source line of
a megabyte is quoted cut in the message, not whole (probe s28 docs, finding 6)."""
from __future__ import annotations

import subprocess
import sys

import pytest


def sections(path) -> dict[str, int]:
    """Section name -> size of an ELF64 little-endian file (the cubin), read by hand."""
    import struct

    data = path.read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    entsize, count, names = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entsize) for i in range(count)]
    table = headers[names][4]
    out = {}
    for name, _type, _flags, _addr, _offset, size, *_ in headers:
        out[data[table + name:data.index(b"\0", table + name)].decode()] = size
    return out


def bobc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_cubin_carries_the_static_shared_memory(tmp_path, arch):
    # 512 bytes past 0x400 (sm_90 keeps the first KiB; its .nv.shared.<k> counts it, as ptxas's does)
    (tmp_path / "k.sass").write_text(".kernel k\n.shared 1536\n    S2R R0, SR_TID.X\n    STS [R0+0x400], RZ\n    EXIT\n")
    done = bobc("asm", "--arch", arch, "k.sass", "--cubin", "-o", "k.cubin", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = sections(tmp_path / "k.cubin")
    assert found.get(".nv.shared.k") == 1536, found


def test_disasm_of_an_empty_file_says_so(tmp_path):
    (tmp_path / "empty.bin").write_bytes(b"")
    done = bobc("disasm", "--arch", "sm_86", "empty.bin", cwd=tmp_path)
    assert done.returncode == 1 and "empty.bin is empty: no instruction to disassemble" in done.stderr
    assert "/tmp/" not in done.stderr.replace(str(tmp_path), "")


def test_a_megabyte_operand_is_quoted_cut(tmp_path):
    (tmp_path / "k.sass").write_text(".kernel k\n    MOV R0, " + "Q" * 1_000_000 + "\n    EXIT\n")
    done = bobc("asm", "--arch", "sm_86", "k.sass", "-o", "k.bin", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert len(done.stderr) < 2000, len(done.stderr)
