"""Which .nv.info attribute describes a kernel's parameters, held to ptxas 13.5's own cubins.

ptxas writes one EIATTR_KPARAM_INFO record (0x17) per parameter while the parameter block is at
most 4352 bytes, and one EIATTR_KPARAM_INFO_V2 record (0x45, nvdisasm's name) per parameter for
any larger block (up to the 32764 bytes it accepts), whatever each parameter's size.  Each layout
below is compiled by ptxas from PTX (`.param .align 4 .b8 pN[SIZE]`, one array per parameter) and
written by `bobc asm --cubin --parameter-sizes`; the records must agree byte for byte.  The ELF and
.nv.info parsing here is this file's own (nothing of bobc.sass.cubin's tables is used).
"""
from __future__ import annotations

import struct
import subprocess

import pytest

from bobc.cli import main
from bobc.nvtools import nvdisasm, ptxas

ARCHES = ("sm_86", "sm_90")
# parameter sizes in bytes, each one `.param .align 4 .b8 p[N]`, laid end to end
LAYOUTS = [
    (4352,),                # the largest block with KPARAM_INFO records
    (8, 4344),              # 4352 again, two parameters
    (4356,),                # the smallest block with KPARAM_INFO_V2 records
    (8, 4344, 4),           # 4356 of small and large parameters: V2 for all three
    (8, 4352),
    (4, 8000, 4),
    (16380,),
    (16384,),               # past a KPARAM_INFO record's 14-bit size field
    (8, 8, 16384),
    (16380, 16380),
    (32764,),               # the most ptxas accepts ("0x7ffc max")
]


def _sections(image: bytes) -> dict[str, bytes]:
    """name -> contents of each section of an ELF64 little-endian file."""
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
    strings = headers[shstrndx][4]
    out = {}
    for name, _type, _flags, _addr, offset, size, *_ in headers[1:]:
        at = strings + name
        out[image[at:image.index(b"\0", at)].decode()] = image[offset:offset + size]
    return out


def _info_records(section: bytes) -> list[tuple[int, int, bytes | int]]:
    """(format, attribute, payload bytes for format 4, else the half-word value) of each record."""
    out, at = [], 0
    while at < len(section):
        fmt, attr, value = struct.unpack_from("<BBH", section, at)
        at += 4
        if fmt == 4:
            out.append((fmt, attr, section[at:at + value]))
            at += value
        else:
            out.append((fmt, attr, value))
    return out


def _parameter_facts(image: bytes, kernel: str):
    """(CBANK_PARAM_SIZE, [(attribute, payload)] of its 0x17 / 0x45 records in the order written)."""
    records = _info_records(_sections(image)[f".nv.info.{kernel}"])
    size = [v for f, a, v in records if a == 0x19]
    params = [(a, bytes(v)) for f, a, v in records if a in (0x17, 0x45)]
    return size, params


def _parameter_bank(image: bytes, kernel: str):
    """(offset, size) of PARAM_CBANK (0x0a: u32 symbol of .nv.constant0.<k>, then a u32 of the
    size << 16 | the offset in bank 0; the symbol is each file's own index, not compared), and the
    bytes of .nv.constant0.<k>."""
    sections = _sections(image)
    [payload] = [v for f, a, v in _info_records(sections[f".nv.info.{kernel}"]) if a == 0x0A]
    word, = struct.unpack_from("<I", payload, 4)
    return (word & 0xFFFF, word >> 16), len(sections[f".nv.constant0.{kernel}"])


def _ptx(sizes, arch: str) -> str:
    params = ",\n".join(f"    .param .align 4 .b8 p{i}[{s}]" for i, s in enumerate(sizes))
    last = len(sizes) - 1
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(
{params}
)
{{
    .reg .b32 r<4>;
    .reg .b64 rd<2>;
    ld.param.u32 r1, [p{last}+{sizes[-1] - 4}];
    ld.param.u32 r2, [p0];
    add.s32 r3, r1, r2;
    cvt.u64.u32 rd1, r3;
    st.global.u32 [rd1], r3;
    ret;
}}
"""


def _ptxas_cubin(tmp_path, sizes, arch) -> bytes:
    source, cubin = tmp_path / f"k.{arch}.ptx", tmp_path / f"k.{arch}.cubin"
    source.write_text(_ptx(sizes, arch))
    subprocess.run([ptxas(), f"-arch={arch}", "-o", str(cubin), str(source)], check=True, capture_output=True)
    return cubin.read_bytes()


def _bobc_cubin(tmp_path, arch, *options) -> bytes:
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n        EXIT ;\n")
    out = tmp_path / f"bobc.{arch}.cubin"
    assert main(["asm", str(source), "--arch", arch, "--cubin", "-o", str(out), *options]) == 0
    return out.read_bytes()


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("sizes", LAYOUTS, ids=lambda s: "-".join(map(str, s)))
def test_parameter_records_are_ptxas_records(sizes, arch, tmp_path, needs_ptxas):
    theirs = _parameter_facts(_ptxas_cubin(tmp_path, sizes, arch), "k")
    ours = _parameter_facts(_bobc_cubin(tmp_path, arch, "--parameter-sizes", ",".join(map(str, sizes))), "k")
    assert theirs[0] == [sum(sizes)]
    # the oracle's own rule, so that a ptxas that changed it is noticed here first
    assert {a for a, _ in theirs[1]} == ({0x17} if sum(sizes) <= 4352 else {0x45})
    assert ours == theirs


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("sizes", LAYOUTS, ids=lambda s: "-".join(map(str, s)))
def test_parameter_bank_is_ptxas_bank(sizes, arch, tmp_path, needs_ptxas):
    """PARAM_CBANK (where the driver places the block and the code reads it) and the bank image:
    ptxas -arch=sm_86 moves a block of more than 4352 bytes from 0x160 to 0x1a80."""
    theirs = _parameter_bank(_ptxas_cubin(tmp_path, sizes, arch), "k")
    ours = _parameter_bank(_bobc_cubin(tmp_path, arch, "--parameter-sizes", ",".join(map(str, sizes))), "k")
    assert ours == theirs


def test_sm86_code_reading_a_large_block_at_the_small_base_is_refused(tmp_path, capsys):
    """A block of 8000 bytes lives at c[0x0][0x1a80] on sm_86: code reading c[0x0][0x160] (where a
    block of at most 4352 bytes would be) reads no parameter, and is refused at the instruction."""
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n        MOV R2, c[0x0][0x160] ;\n        EXIT ;\n")
    out = tmp_path / "k.cubin"
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(out), "--parameter-sizes", "8000"]) == 1
    err = capsys.readouterr().err
    assert f"{source}:2:" in err and "c[0x0][0x160]" in err and "c[0x0][0x1a80]" in err and "sm_86" in err
    assert not out.exists()
    # the same read is parameter byte 0 of a block of 4352 bytes or less, which stays at 0x160
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(out), "--parameter-sizes", "8"]) == 0


@pytest.mark.parametrize("arch", ARCHES)
def test_a_listing_with_v2_records_keeps_them(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """nvdisasm's listing of a ptxas cubin with KPARAM_INFO_V2 records assembles into a cubin with
    the same records (the listing's parameters are read back from them)."""
    sizes = (8, 4352)
    image = _ptxas_cubin(tmp_path, sizes, arch)
    cubin = tmp_path / f"k.{arch}.cubin"
    listing = tmp_path / f"k.{arch}.sass"
    listing.write_text(subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True,
                                      text=True).stdout)
    out = tmp_path / "again.cubin"
    assert main(["asm", str(listing), "--arch", arch, "--cubin", "-o", str(out)]) == 0
    assert _parameter_facts(out.read_bytes(), "k") == _parameter_facts(image, "k")
    assert _parameter_bank(out.read_bytes(), "k") == _parameter_bank(image, "k")


def test_sm86_block_read_from_the_code_is_placed_where_ptxas_places_it(tmp_path, capsys):
    """Without declared parameters the block is the bytes the code reads: on sm_86 a read at
    c[0x0][0x39bc] is the last word of an 8000-byte block at 0x1a80 (ptxas's layout of p[8000]),
    and a read at c[0x0][0x1260], past a 4352-byte block at 0x160 and short of 0x1a80, reads no
    parameter of either layout and is refused at the instruction."""
    source = tmp_path / "k.sass"
    out = tmp_path / "k.cubin"
    source.write_text(".kernel k\n        MOV R2, c[0x0][0x39bc] ;\n        EXIT ;\n")
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(out)]) == 0
    assert _parameter_bank(out.read_bytes(), "k") == ((0x1A80, 8000), 0x1A80 + 8000)
    assert {a for a, _ in _parameter_facts(out.read_bytes(), "k")[1]} == {0x45}
    source.write_text(".kernel k\n        MOV R2, c[0x0][0x1260] ;\n        EXIT ;\n")
    out.unlink()
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{source}:2:" in err and "c[0x0][0x1260]" in err and "c[0x0][0x1a80]" in err
    assert not out.exists()
