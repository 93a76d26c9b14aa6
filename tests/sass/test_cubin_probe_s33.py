"""`bobc asm --cubin` held to ptxas's own cubins (probe s33 "cubin", /work/notes/s33/probe-cubin.md):
each record compared field by field with the cubin ptxas writes of the same kernel.

1/2 KPARAM_INFO: one record per parameter, every byte the code reads in one, as ptxas's (a listing's
own records kept; --parameter-sizes for a source; 8-byte words and a last 4-byte one by default).
3 FRAME_SIZE / MIN_STACK_SIZE from the encoded frame-opening word, whatever its spelling.
4 a read of constant bank 2 or 3 (data the cubin does not carry) refused at the instruction.
5 .note.nv.cuinfo's SM version the target's (0x5a on sm_90), as ptxas writes it.
6 launch bounds kept (MAX_THREADS, REQNTID, CTA_PER_CLUSTER), never more threads than the
  registers allow.  7 USETMAXREG: --register-count, or a listing's REGCOUNT.  8 program headers
  as ptxas lays them out.  9 static shared memory past ptxas's bound refused.  10 NUM_BARRIERS
  from the encoded words.  11 kernel names that are no PTX identifier refused.
"""
from __future__ import annotations

import shutil
import struct
import subprocess

import pytest

from bobc.cli import main
from bobc.nvtools import nvdisasm, ptxas
from bobc.targets import TARGETS

KPARAM, CBANK_PARAM_SIZE, MAX_THREADS, REQNTID, CTA_PER_CLUSTER = 0x17, 0x19, 0x05, 0x10, 0x3D
REGCOUNT, FRAME_SIZE, MIN_STACK_SIZE, NUM_BARRIERS = 0x2F, 0x11, 0x12, 0x4C


def _sections(image: bytes) -> dict[str, tuple[int, bytes, tuple]]:
    """name -> (type, bytes, the raw header fields) of an ELF64 file."""
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx]
    out = {}
    for h in headers[1:]:
        name_at = names[4] + h[0]
        name = image[name_at:image.index(b"\0", name_at)].decode()
        out[name] = (h[1], image[h[4]:h[4] + h[5]] if h[1] != 8 else b"", h)
    return out


def _records(data: bytes) -> list[tuple[int, bytes]]:
    """(attribute, payload) of an .nv.info section's records."""
    out, at = [], 0
    while at < len(data):
        fmt, attr, value = struct.unpack_from("<BBH", data, at)
        if fmt == 4:
            out.append((attr, data[at + 4:at + 4 + value]))
            at += 4 + value
        else:
            out.append((attr, struct.pack("<H", value)))
            at += 4
    return out


def _kernel_records(image: bytes, kernel: str, attr: int) -> list[bytes]:
    return [p for a, p in _records(_sections(image)[f".nv.info.{kernel}"][1]) if a == attr]


def _kparams(image: bytes, kernel: str) -> list[tuple[int, int, int, int]]:
    """(ordinal, offset, size, flags) of each KPARAM_INFO record (index word dropped), by ordinal."""
    out = []
    for payload in _kernel_records(image, kernel, KPARAM):
        _, ordinal, offset, flags = struct.unpack("<IHHI", payload)
        out.append((ordinal, offset, flags >> 18, flags))
    return sorted(out)


def _kernel_info(image: bytes, attr: int) -> list[int]:
    """.nv.info (per-kernel, keyed by symbol) record values."""
    return [struct.unpack("<II", p)[1] for a, p in _records(_sections(image)[".nv.info"][1]) if a == attr]


def _asm(tmp_path, text_or_path, arch, *options, name="k.sass"):
    if isinstance(text_or_path, str):
        source = tmp_path / name
        source.write_text(text_or_path)
    else:
        source = text_or_path
    out = tmp_path / (source.stem + f".{arch}.cubin")
    rc = main(["asm", str(source), "--arch", arch, "--cubin", "-o", str(out), *options])
    return rc, (out.read_bytes() if rc == 0 else None)


def _ptxas(tmp_path, ptx: str, arch: str, name: str = "p") -> tuple[bytes, str]:
    """ptxas's cubin of `ptx` and nvdisasm's -hex listing of it."""
    source, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.{arch}.cubin"
    source.write_text(ptx)
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(source)], check=True,
                   capture_output=True, text=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    (tmp_path / f"{name}.{arch}.sass").write_text(listing)
    return cubin.read_bytes(), str(tmp_path / f"{name}.{arch}.sass")


SCALE_PTX = """.version 8.0
.target {arch}
.address_size 64
.visible .entry scale(.param .u64 p_x, .param .u32 p_n, .param .f32 p_a){bounds}
{{
    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .f32 %f<3>; .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [p_x]; ld.param.u32 %r2, [p_n]; ld.param.f32 %f1, [p_a];
    mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5; setp.ge.s32 %p1, %r1, %r2; @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1; mul.wide.s32 %rd3, %r1, 4; add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f2, [%rd4]; mul.f32 %f2, %f2, %f1; st.global.f32 [%rd4], %f2;
DONE:
    ret;
}}
"""


# --- 1: a parameter block not a multiple of 8 ---------------------------------------------------

@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("size,expected", [(12, [(0, 0, 8), (1, 8, 4)]), (4, [(0, 0, 4)]), (16, [(0, 0, 8), (1, 8, 8)])])
def test_every_parameter_byte_is_in_a_record(arch, size, expected, tmp_path):
    rc, image = _asm(tmp_path, ".kernel p\n    LDC R2, c[0x0][param+0x0]\n    EXIT\n", arch, "--parameter-bytes", str(size))
    assert rc == 0
    records = _kparams(image, "p")
    assert [r[:3] for r in records] == expected
    assert sum(r[2] for r in records) == size
    assert _kernel_records(image, "p", CBANK_PARAM_SIZE) == [struct.pack("<H", size)]


# --- 2: the kernel's real parameters --------------------------------------------------------------

@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_listing_parameters_are_ptxas_records(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """(u64, u32, f32): ptxas writes three records, 8 bytes at 0, 4 at 8, 4 at 12; so does bobc of its listing."""
    theirs, listing = _ptxas(tmp_path, SCALE_PTX.format(arch=arch, bounds=""), arch)
    rc, ours = _asm(tmp_path, _path(listing), arch)
    assert rc == 0
    assert _kparams(ours, "scale") == _kparams(theirs, "scale")
    assert [r[1:3] for r in _kparams(ours, "scale")] == [(0, 8), (8, 4), (12, 4)]
    assert _kernel_records(ours, "scale", CBANK_PARAM_SIZE) == _kernel_records(theirs, "scale", CBANK_PARAM_SIZE)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_parameter_sizes_option_writes_ptxas_records(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    theirs, _ = _ptxas(tmp_path, SCALE_PTX.format(arch=arch, bounds=""), arch)
    source = ".kernel scale\n    LDC.64 R2, c[0x0][param+0x0]\n    LDC R4, c[0x0][param+0x8]\n    LDC R5, c[0x0][param+0xc]\n    EXIT\n"
    rc, ours = _asm(tmp_path, source, arch, "--parameter-sizes", "8,4,4")
    assert rc == 0
    assert _kparams(ours, "scale") == _kparams(theirs, "scale")
    # an offset: (u32, u64) as C lays them out, 4 bytes at 0 and 8 at 8
    rc, ours = _asm(tmp_path, ".kernel q\n    LDC R2, c[0x0][param+0x0]\n    LDC.64 R4, c[0x0][param+0x8]\n    EXIT\n",
                    arch, "--parameter-sizes", "4,8@8", name="q.sass")
    assert rc == 0 and [r[1:3] for r in _kparams(ours, "q")] == [(0, 4), (8, 8)]


def test_a_read_outside_every_parameter_is_refused(tmp_path, capsys):
    rc, _ = _asm(tmp_path, ".kernel p\n    LDC R2, c[0x0][param+0x4]\n    EXIT\n", "sm_86", "--parameter-sizes", "4,4@8")
    err = capsys.readouterr().err
    assert rc == 1 and "k.sass:2:5" in err and "bytes 4..7 belong to no parameter" in err


# "6" was refused (not whole 4-byte words); ptxas writes a 6-byte record for `.align 2 .b8 p[6]`
# (tests/sass/test_subword_parameters.py), so a size of 0 is the refused one now
@pytest.mark.parametrize("sizes", ["0", "4,4@2", "8,4@4", "x"])
def test_bad_parameter_sizes_are_usage_errors(sizes, tmp_path, capsys):
    rc, _ = _asm(tmp_path, ".kernel p\n    EXIT\n", "sm_86", "--parameter-sizes", sizes)
    assert rc == 2 and "--parameter-sizes" in capsys.readouterr().err


# --- 3: the frame from the encoded word -----------------------------------------------------------

@pytest.mark.parametrize("spelling", ["IADD3 R1, R1, -0x80, RZ", "IADD3 R1, R1, -128, RZ", "IADD3 R1,R1,-0x80,RZ",
                                      "IADD3 R1, R1, 0xffffff80, RZ"])
def test_frame_size_whatever_the_spelling(spelling, tmp_path):
    rc, image = _asm(tmp_path, f".kernel fr\n    MOV R1, c[0x0][0x28]\n    {spelling}\n    STL [R1], RZ\n    EXIT\n", "sm_86")
    assert rc == 0
    assert _kernel_info(image, FRAME_SIZE) == [0x80] and _kernel_info(image, MIN_STACK_SIZE) == [0x80]


def test_frame_size_of_a_viadd_on_sm90(tmp_path):
    rc, image = _asm(tmp_path, ".kernel fr\n    MOV R1, c[0x0][0x28]\n    VIADD R1, R1, -128\n    STL [R1], RZ\n    EXIT\n", "sm_90")
    assert rc == 0 and _kernel_info(image, FRAME_SIZE) == [0x80]


# --- 4: constant banks the cubin does not carry ----------------------------------------------------

@pytest.mark.parametrize("bank", ["0x2", "0x3"])
def test_reading_another_constant_bank_is_refused(bank, tmp_path, capsys):
    rc, _ = _asm(tmp_path, f".kernel c\n    LDC R5, c[{bank}][0x10]\n    EXIT\n", "sm_86")
    err = capsys.readouterr().err
    assert rc == 1 and f"reads constant bank {bank}" in err and "k.sass:2:5" in err and not (tmp_path / "k.sm_86.cubin").exists()


# --- 5: cuinfo's SM version ----------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_cuinfo_is_ptxas_note(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    theirs, _ = _ptxas(tmp_path, SCALE_PTX.format(arch=arch, bounds=""), arch)
    rc, ours = _asm(tmp_path, ".kernel e\n    EXIT\n", arch)
    assert rc == 0
    mine, ptx = _sections(ours)[".note.nv.cuinfo"], _sections(theirs)[".note.nv.cuinfo"]
    assert mine[1] == ptx[1]
    assert mine[2][2] == ptx[2][2]           # flags (SHF_INFO_LINK on sm_90, as ptxas's)


# --- 6: launch bounds ----------------------------------------------------------------------------

def test_listing_max_threads_kept(tmp_path, needs_ptxas, needs_nvdisasm):
    theirs, listing = _ptxas(tmp_path, SCALE_PTX.format(arch="sm_86", bounds=" .maxntid 256, 1, 1"), "sm_86")
    rc, ours = _asm(tmp_path, _path(listing), "sm_86")
    assert rc == 0 and _kernel_records(ours, "scale", MAX_THREADS) == _kernel_records(theirs, "scale", MAX_THREADS)
    assert struct.unpack("<III", _kernel_records(ours, "scale", MAX_THREADS)[0]) == (256, 1, 1)


def test_listing_reqntid_kept(tmp_path, needs_ptxas, needs_nvdisasm):
    theirs, listing = _ptxas(tmp_path, SCALE_PTX.format(arch="sm_90", bounds=" .reqntid 64, 2, 1"), "sm_90")
    rc, ours = _asm(tmp_path, _path(listing), "sm_90")
    assert rc == 0 and _kernel_records(ours, "scale", REQNTID) == _kernel_records(theirs, "scale", REQNTID)
    assert _kernel_records(ours, "scale", MAX_THREADS) == _kernel_records(theirs, "scale", MAX_THREADS) == []


def test_contract_block_is_reqntid(tmp_path):
    rc, image = _asm(tmp_path, ".kernel b\n//@ block 64 2\n    EXIT\n", "sm_86")
    assert rc == 0 and [struct.unpack("<III", p) for p in _kernel_records(image, "b", REQNTID)] == [(64, 2, 1)]


def test_listing_cluster_kept(tmp_path, needs_ptxas, needs_nvdisasm):
    from pathlib import Path
    ptx = (Path(__file__).parents[2] / "tools" / "ptx_corpus" / "sm90_cluster.ptx").read_text()
    theirs, listing = _ptxas(tmp_path, ptx, "sm_90a", name="cl")
    rc, ours = _asm(tmp_path, _path(listing), "sm_90", "--kernel", "cluster_sum")
    assert rc == 0
    assert _kernel_records(theirs, "cluster_sum", CTA_PER_CLUSTER)
    assert _kernel_records(ours, "cluster_sum", CTA_PER_CLUSTER) == _kernel_records(theirs, "cluster_sum", CTA_PER_CLUSTER)


def test_threads_never_exceed_what_the_registers_allow(tmp_path, capsys):
    from bobc.sass.cubin import register_thread_bound
    for target in TARGETS.values():
        # ptxas: .maxntid 1024 caps a kernel at 64 registers (65536 / 1024)
        assert register_thread_bound(64, target) == 1024 and register_thread_bound(72, target) < 1024
        assert register_thread_bound(104, target) * 104 <= target.limits.register_file
    source = ".kernel big\n    MOV R100, RZ\n    STG.E [R2.64], R100\n    EXIT\n"
    rc, image = _asm(tmp_path, source, "sm_86")
    assert rc == 0
    registers = _kernel_info(image, REGCOUNT)[0]
    x, y, z = struct.unpack("<III", _kernel_records(image, "big", MAX_THREADS)[0])
    assert x * y * z * registers <= 65536 and x * y * z == register_thread_bound(registers, TARGETS["sm_86"])
    rc, _ = _asm(tmp_path, source, "sm_86", "--block-size", "1024")
    assert rc == 1 and "declares blocks of 1024 threads" in capsys.readouterr().err


# --- 7: USETMAXREG ---------------------------------------------------------------------------------

def test_usetmaxreg_hint_names_the_option(tmp_path, capsys):
    source = ".kernel up\n    [B------:R-:W-:-:S01] USETMAXREG.DEALLOC.CTAPOOL 40\n    EXIT\n"
    rc, _ = _asm(tmp_path, source, "sm_90")
    err = capsys.readouterr().err
    assert rc == 1 and "--register-count" in err and "k.sass:2:" in err
    rc, image = _asm(tmp_path, source, "sm_90", "--register-count", "128")
    assert rc == 0 and _kernel_info(image, REGCOUNT) == [128]


def test_usetmaxreg_listing_takes_its_regcount(tmp_path, needs_ptxas, needs_nvdisasm):
    from pathlib import Path
    ptx = (Path(__file__).parents[2] / "tools" / "ptx_corpus" / "sm90_async.ptx").read_text()
    theirs, listing = _ptxas(tmp_path, ptx, "sm_90a", name="as")
    rc, ours = _asm(tmp_path, _path(listing), "sm_90", "--kernel", "pipelined_product")
    assert rc == 0
    assert _kernel_info(ours, REGCOUNT) == [128]
    assert _kparams(ours, "pipelined_product") == _kparams(theirs, "pipelined_product")


# --- 8: program headers ----------------------------------------------------------------------------

def _phdrs(image):
    phoff, = struct.unpack_from("<Q", image, 0x20)
    count, = struct.unpack_from("<H", image, 0x38)
    return [struct.unpack_from("<IIQQQQQQ", image, phoff + 56 * i) for i in range(count)]


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_program_headers_covered_as_ptxas(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    rc, ours = _asm(tmp_path, ".kernel e\n    EXIT\n", arch)
    assert rc == 0
    phdrs = _phdrs(ours)
    phdr = next(p for p in phdrs if p[0] == 6)
    assert any(p[0] == 1 and p[2] <= phdr[2] and phdr[2] + phdr[5] <= p[2] + p[5] for p in phdrs)
    theirs, _ = _ptxas(tmp_path, SCALE_PTX.format(arch=arch, bounds=""), arch)
    their_phdr = next(p for p in _phdrs(theirs) if p[0] == 6)
    assert phdr[1] == their_phdr[1]          # R E on sm_86, R on sm_90
    if shutil.which("readelf"):
        path = tmp_path / "e.cubin"
        path.write_bytes(ours)
        done = subprocess.run(["readelf", "-l", str(path)], capture_output=True, text=True)
        assert "Error" not in done.stderr


# --- 9: static shared memory -------------------------------------------------------------------------

def test_static_shared_past_ptxas_bound_refused(tmp_path, capsys):
    source = ".kernel big\n.shared {n}\n    STS [RZ+0xfffc], RZ\n    EXIT\n"
    rc, _ = _asm(tmp_path, source.format(n=65536), "sm_86")
    assert rc == 1 and "static shared memory" in capsys.readouterr().err
    rc, image = _asm(tmp_path, source.format(n=49152), "sm_86")
    assert rc == 0 and _sections(image)[".nv.shared.big"][2][5] == 49152
    # ptxas -arch=sm_90a writes static shared memory up to the block's whole (0x38c00)
    rc, image = _asm(tmp_path, source.format(n=65536), "sm_90")
    assert rc == 0 and _sections(image)[".nv.shared.big"][2][5] == 65536


# --- 10: barriers in decimal ------------------------------------------------------------------------

@pytest.mark.parametrize("number", ["1", "0x1"])
def test_barrier_number_in_decimal(number, tmp_path):
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import barrier_count
    rc, image = _asm(tmp_path, f".kernel br\n    BAR.SYNC.DEFER_BLOCKING {number}\n    EXIT\n", "sm_86")
    assert rc == 0 and _kernel_records(image, "br", NUM_BARRIERS) == [struct.pack("<H", 2)]
    assert barrier_count(assemble_kernel(tmp_path / "k.sass", TARGETS["sm_86"])) == 2


# --- 11: kernel names ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name,why", [("a/b", "'/'"), ("1abc", "digit"), ("a-b", "'-'")])
def test_kernel_name_not_an_identifier(name, why, tmp_path, capsys):
    rc, _ = _asm(tmp_path, f".kernel {name}\n    EXIT\n", "sm_86")
    err = capsys.readouterr().err
    assert rc == 1 and "not a PTX identifier" in err and why in err


def test_file_stem_with_a_space_refused(tmp_path, capsys):
    rc, _ = _asm(tmp_path, "    EXIT\n", "sm_86", name="we ird-name.v2.sass")
    err = capsys.readouterr().err
    assert rc == 1 and "not a PTX identifier" in err and ".kernel NAME" in err


def test_identifiers_accepted(tmp_path):
    for name in ("_Z3fooPf", "x$y", "k2"):
        rc, _ = _asm(tmp_path, f".kernel {name}\n    EXIT\n", "sm_86")
        assert rc == 0, name


def _path(listing: str):
    from pathlib import Path
    return Path(listing)
