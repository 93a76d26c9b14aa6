"""Parameters of 1 and 2 bytes (PTX .u8 / .b8 / .s8, .u16 / .b16 / .f16), held to ptxas 13.5's own cubins.

ptxas writes a KPARAM_INFO (or, past a 4352-byte block, KPARAM_INFO_V2) record of size 1 or 2 for
such a parameter, at the offset its alignment gives (a .u8 then a .u32: 1 byte at 0, 4 at 4), and
ends the block (CBANK_PARAM_SIZE) at the last parameter's last byte; its code reads the bank in
32-bit words, a sub-word parameter with the bytes beside it.  `bobc asm --cubin` refused both the
records ("not a whole number of 4-byte words") and such a read ("bytes 6..7 belong to no
parameter").  Here each layout is compiled by the pinned ptxas for sm_86 and sm_90, and
(a) nvdisasm's listing of that cubin assembles back with ptxas's records byte for byte, and
(b) `--parameter-sizes` of the same sizes writes ptxas's records, offsets and bank.
The ELF and .nv.info parsing is tests/sass/test_kparam_info_v2.py's (its own, not bobc's).
"""
from __future__ import annotations

import subprocess

import pytest

from bobc.cli import main
from bobc.nvtools import nvdisasm, ptxas
from tests.sass.test_kparam_info_v2 import _parameter_bank, _parameter_facts

ARCHES = ("sm_86", "sm_90")
SCALAR_BYTES = {".u8": 1, ".s8": 1, ".b8": 1, ".u16": 2, ".b16": 2, ".f16": 2, ".u32": 4, ".f32": 4, ".u64": 8}

# (PTX parameter types, `--parameter-sizes` of the same layout as a user writes it); "[N]" is
# `.align 4 .b8 p[N]`, "[N/A]" `.align A .b8 p[N]`.  Blocks past 4352 bytes are KPARAM_INFO_V2's.
LAYOUTS = [
    ((".u8",), "1"),
    ((".u16",), "2"),
    ((".b8",), "1"),
    ((".f16",), "2"),
    ((".u8", ".u32"), "1,4"),
    ((".u32", ".u8", ".u16", ".u64"), "4,1,2,8"),
    ((".u8", ".u8", ".u16"), "1,1,2"),
    ((".u8", ".u64"), "1,8"),
    ((".u16", "[8]"), "2,8@4"),
    ((".f16", ".f32", ".u8", ".b16", ".u64", ".u8"), "2,4,1,2,8,1"),
    ((".s8", "[3/1]", ".u16"), "1,3,2"),
    ((".u16", "[4/2]"), "2,4@2"),
    ((".u8", "[6/2]", ".u8"), "1,6,1"),                     # a 6-byte record: ptxas writes one
    ((".u8", "[4344]", ".u16", ".u8"), "1,4344,2,1"),      # 4351 bytes: KPARAM_INFO
    ((".u8", "[4352]", ".u16"), "1,4352,2"),               # 4358 bytes: KPARAM_INFO_V2
    ((".u8", "[4400/8]", ".u8"), "1,4400@8,1"),
    (("[4356]", ".u8"), "4356,1"),
    ((".u16", "[8000]", ".f16", ".u64"), "2,8000,2,8"),
]


def _declaration(kind: str, index: int) -> str:
    if kind.startswith("["):
        size, _, align = kind[1:-1].partition("/")
        return f".param .align {align or 4} .b8 p{index}[{size}]"
    return f".param {kind} p{index}"


def _size(kind: str) -> int:
    return int(kind[1:-1].partition("/")[0]) if kind.startswith("[") else SCALAR_BYTES[kind]


def _alignment(kind: str) -> int:
    """PTX's: a scalar's size, an array's .align."""
    return int(kind[1:-1].partition("/")[2] or 4) if kind.startswith("[") else SCALAR_BYTES[kind]


def _ptx(kinds, arch: str) -> str:
    """A kernel over `kinds` whose code ptxas reads in 32-bit words (the sub-word loads ptxas uses for a
    byte, or a half word at offset 2 of a word, LDC.U8 / ULDC.U8 / LDC.U16 / ULDC.U16, are
    tests/sass/test_subword_constant_loads.py's): each 2-byte parameter at a word's start through ld.param.b16 (ptxas reads its whole
    word), each 4-byte scalar and aligned array's last word; the sum stored through the first .u64
    (or to address 4096 without one), so that ptxas keeps the reads."""
    params = ",\n".join(f"    {_declaration(kind, i)}" for i, kind in enumerate(kinds))
    body, terms, offset = [], [], 0
    for i, kind in enumerate(kinds):
        size = _size(kind)
        offset += -offset % _alignment(kind)
        at, offset = offset, offset + size
        if size == 2 and at % 4 == 0:
            body += [f"    ld.param.b16 h{i}, [p{i}];", f"    cvt.u32.u16 r{i}, h{i};"]
        elif kind in (".u32", ".f32") or (kind.startswith("[") and size % 4 == 0 and "/" not in kind):
            body.append(f"    ld.param.u32 r{i}, [p{i}+{size - 4}];")
        else:
            continue
        terms.append(f"r{i}")
    out = next((i for i, kind in enumerate(kinds) if kind == ".u64"), None)
    body.append(f"    ld.param.u64 rd1, [p{out}];" if out is not None else "    mov.u64 rd1, 4096;")
    body.append("    mov.u32 r99, 0;")
    for term in terms:
        body.append(f"    add.s32 r99, r99, {term};")
    body += ["    cvta.to.global.u64 rd2, rd1;", "    st.global.u32 [rd2], r99;"]
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(
{params}
)
{{
    .reg .b32 r<100>;
    .reg .b16 h<32>;
    .reg .b64 rd<4>;
{chr(10).join(body)}
    ret;
}}
"""


def _ptxas_cubin(tmp_path, kinds, arch):
    source, cubin = tmp_path / f"k.{arch}.ptx", tmp_path / f"k.{arch}.cubin"
    source.write_text(_ptx(kinds, arch))
    subprocess.run([ptxas(), f"-arch={arch}", "-o", str(cubin), str(source)], check=True, capture_output=True)
    return cubin


def _ids(layout):
    return "_".join(k.strip(".[]").replace("/", "a") for k in layout[0])


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("layout", LAYOUTS, ids=_ids)
def test_parameter_sizes_write_ptxas_records(layout, arch, tmp_path, needs_ptxas):
    """(b): `--parameter-sizes` of the layout writes ptxas's records (ordinal, offset, size, the
    attribute), CBANK_PARAM_SIZE, PARAM_CBANK and the bank image."""
    kinds, sizes = layout
    image = _ptxas_cubin(tmp_path, kinds, arch).read_bytes()
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n        EXIT ;\n")
    out = tmp_path / "bobc.cubin"
    assert main(["asm", str(source), "--arch", arch, "--cubin", "-o", str(out), "--parameter-sizes", sizes]) == 0
    theirs = _parameter_facts(image, "k")
    # the oracle's own facts: the block ends at the last parameter's last byte
    assert theirs[0] == [max(int.from_bytes(p[6:8], "little") + int.from_bytes(p[8:12], "little")
                             if a == 0x45 else
                             int.from_bytes(p[6:8], "little") + (int.from_bytes(p[8:12], "little") >> 18)
                             for a, p in theirs[1])]
    assert _parameter_facts(out.read_bytes(), "k") == theirs
    assert _parameter_bank(out.read_bytes(), "k") == _parameter_bank(image, "k")


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("layout", LAYOUTS, ids=_ids)
def test_listing_assembles_back_with_ptxas_records(layout, arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """(a): nvdisasm's listing of ptxas's cubin (whose code reads 2-byte parameters as whole words,
    a last one past the block's end) assembles into a cubin with the same records and bank."""
    cubin = _ptxas_cubin(tmp_path, layout[0], arch)
    listing = tmp_path / f"k.{arch}.sass"
    listing.write_text(subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True,
                                      text=True).stdout)
    out = tmp_path / "again.cubin"
    assert main(["asm", str(listing), "--arch", arch, "--cubin", "-o", str(out)]) == 0
    image = cubin.read_bytes()
    assert _parameter_facts(out.read_bytes(), "k") == _parameter_facts(image, "k")
    assert _parameter_bank(out.read_bytes(), "k") == _parameter_bank(image, "k")


def test_a_word_read_past_a_last_half_word_parameter_is_ptxas_code(tmp_path, needs_ptxas, needs_nvdisasm):
    """The oracle behind the word rule: ptxas reads a last .f16 at offset 12 of a 14-byte block as the
    whole word 12..15 (sm_86: c[0x0][0x16c]); bobc takes that listing."""
    cubin = _ptxas_cubin(tmp_path, (".u64", ".u32", ".f16"), "sm_86")
    text = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    assert "c[0x0][0x16c]" in text
    assert _parameter_facts(cubin.read_bytes(), "k")[0] == [14]
    listing = tmp_path / "k.sass"
    listing.write_text(text)
    assert main(["asm", str(listing), "--arch", "sm_86", "--cubin", "-o", str(tmp_path / "o.cubin")]) == 0


@pytest.mark.parametrize("sizes, message", [
    ("0", "has no bytes"),
    ("1,0", "has no bytes"),
    ("4,2@2", "overlaps the one before it, which ends at 4"),
    ("8,1@4", "overlaps the one before it, which ends at 8"),
])
def test_what_ptxas_never_writes_is_still_refused(sizes, message, tmp_path, capsys):
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n        EXIT ;\n")
    out = tmp_path / "k.cubin"
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(out), "--parameter-sizes", sizes]) == 2
    err = capsys.readouterr().err
    assert f"--parameter-sizes {sizes}" in err and message in err
    assert not out.exists()


def test_write_cubin_refuses_empty_and_overlapping_parameters():
    from bobc.errors import BobcError
    from bobc.sass.cubin import check_parameters

    check_parameters([(0, 1), (2, 2), (4, 4), (8, 8)], 16, "k")     # a .u8, .u16, .u32, .u64: ptxas's
    check_parameters([(0, 2), (4, 8)], 12, "k")
    for parameters, end, message in [([(0, 0)], 0, "has no bytes"),
                                     ([(0, 4), (2, 2)], 4, "overlaps the one before it"),
                                     ([(0, 1)], 4, "its parameters end at byte 1, but the parameter block has 4")]:
        with pytest.raises(BobcError, match=message):
            check_parameters(parameters, end, "k")


@pytest.mark.parametrize("sizes, read, message", [
    # the word 4..7 holds no byte of a parameter (a .u8 at 0, a .u32 at 8)
    ("1,4@8", "param+0x4", "bytes 4..7 belong to no parameter"),
    # a lone .u8's block is 1 byte: its word 0..3 is read whole, the next word is past it
    ("1", "param+0x4", "the code reads parameter bytes up to 8"),
])
def test_a_read_of_no_parameter_is_still_refused(sizes, read, message, tmp_path, capsys):
    source = tmp_path / "k.sass"
    source.write_text(f".kernel k\n    LDC R2, c[0x0][{read}]\n    EXIT\n")
    out = tmp_path / "k.cubin"
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(out), "--parameter-sizes", sizes]) == 1
    err = capsys.readouterr().err
    assert f"{source}:2:5" in err and message in err


def test_a_word_holding_a_byte_parameter_may_be_read(tmp_path):
    """`1,4`: the word 0..3 holds the .u8 (and 3 bytes of padding), read whole as ptxas's code does."""
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n    LDC R2, c[0x0][param+0x0]\n    LDC R3, c[0x0][param+0x4]\n    EXIT\n")
    out = tmp_path / "k.cubin"
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(out), "--parameter-sizes", "1,4"]) == 0
    facts = _parameter_facts(out.read_bytes(), "k")
    assert facts[0] == [8]
