"""User-facing behaviour: errors name file:line:column, explicit control codes win, the CLI works."""
from __future__ import annotations

import subprocess
import sys

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble, assemble_kernel
from bobc.sass.syntax import Control


def _error(text, arch="sm_86"):
    with pytest.raises(BobcError) as info:
        assemble(text, arch, source_name="k.sass")
    return info.value


def test_errors_carry_the_source_position():
    e = _error("MOV R1, R2\n   FADD R1, R2, R3, R4\n")
    assert (e.span.path, e.span.line, e.span.column) == ("k.sass", 2, 4)
    assert "FADD" in e.message
    assert _error("BRA nowhere\n").message == "undefined label 'nowhere'"
    assert "does not fit" in _error("ISETP.GE.AND P0, PT, R0, 0x100000000, PT\n").message
    assert "unknown constant symbol" in _error("MOV R0, c[0x0][bogus+0x4]\n").message
    assert "unknown or unsupported opcode" in _error("FROB R0\n").message
    assert "control code" in _error("[B------:R-:W-:Y:S4] NOP\n").message
    assert "no closing" in _error("[B------:R-:W-:-:S04 NOP\n").message
    assert "defined twice" in _error("a:\nNOP\na:\nNOP\n").message


def test_explicit_control_codes_are_kept():
    text = "[B0-2---:R3:W1:Y:S13] FADD R0, R1, R2\nFADD R3, R0, R0\nEXIT\n"
    a = assemble(text, "sm_86")
    assert a.instructions[0].control == Control(stall=13, yield_bit=0, write_barrier=1,
                                                read_barrier=3, wait_mask=0b101)
    assert Control.from_word(a.instructions[0].hi).text() == "[B0-2---:R3:W1:Y:S13]"


def test_parameters_resolve_per_target():
    for arch, base in (("sm_86", 0x160), ("sm_90", 0x210)):
        a = assemble("LDC R4, c[0x0][RZ+param+0x8]\nEXIT\n", arch)
        assert (a.instructions[0].lo >> 38) & 0xFFFF == base + 8


def test_register_budget_refused_by_name(tmp_path):
    source = tmp_path / "wide.sass"
    source.write_text(".kernel wide\n.registers 16\nMOV R20, RZ\nEXIT\n")
    with pytest.raises(BobcError) as info:
        assemble_kernel(source, "sm_86")
    assert "kernel 'wide' needs 23 registers" in info.value.message
    assert info.value.span.line == 3
    with pytest.raises(BobcError):
        assemble_kernel(source, "sm_86", register_budget=30)   # the tighter of the two budgets wins
    source.write_text(".kernel wide\nMOV R20, RZ\nEXIT\n")
    assert assemble_kernel(source, "sm_86", register_budget=23).registers == 23


def test_asm_and_disasm_commands(tmp_path, needs_nvdisasm):
    source = tmp_path / "k.sass"
    source.write_text("S2R R0, SR_TID.X\nSTG.E [R2.64], R0\nEXIT\n")
    out = tmp_path / "k.bin"
    run = lambda *a: subprocess.run([sys.executable, "-m", "bobc", *a], capture_output=True, text=True)
    done = run("asm", str(source), "--arch", "sm_90", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert len(out.read_bytes()) == 48
    done = run("disasm", str(out), "--arch", "sm_90")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # S2R is short-latency: its scoreboard comes from the short class (4, 5); the STG waits on it
    assert lines[0].endswith("S2R R0, SR_TID.X ;") and lines[0].startswith("/*0000*/ [B------:R-:W4:")
    assert "STG.E desc[UR4][R2.64], R0" in lines[1] and "[B----4-:" in lines[1]
    bad = tmp_path / "bad.sass"
    bad.write_text("NOP\nMOV R0,\n")
    done = run("asm", str(bad), "--arch", "sm_86", "-o", str(out))
    assert done.returncode == 1 and "bad.sass:2:" in done.stderr and "Traceback" not in done.stderr


def test_unknown_opcode_gets_a_did_you_mean_and_a_caret_under_the_opcode():
    e = _error("NOP\n    @P0 FMULL R1, R2, R3\n")
    assert e.message == "unknown or unsupported opcode FMULL"
    assert "FMUL" in e.hint
    # the caret underlines the opcode (column 9..13), not the whole line
    assert (e.span.line, e.span.column, e.span.end_column) == (2, 9, 14)


def test_unknown_form_names_nearest_forms_and_the_encoding_class():
    e = _error("FMNMX R1, R2, 0x5, 0x6\n")
    assert "no sm_86 encoding for 'FMNMX R,R,I,I'" in e.message
    assert "known forms, nearest first: FMNMX R,R,I,P;" in e.message
    assert "encoding class {FMNMX, FSEL" in e.message


def test_asm_writes_a_cubin_nvdisasm_reads(tmp_path, needs_nvdisasm):
    """bobc asm --cubin from a ptxas listing as printed: nvdisasm reads the cubin, finds the
    kernel's code, and it is the code of the listing."""
    import gzip
    import re
    from bobc.nvtools import nvdisasm
    from bobc.sass.learn import CORPUS
    listing = gzip.decompress((CORPUS / "listings" / "corpus3.sm_90.lst.gz").read_bytes()).decode()
    source = tmp_path / "corpus3.sass"
    source.write_text(listing)
    out = tmp_path / "k.cubin"
    run = lambda *a: subprocess.run([sys.executable, "-m", "bobc", *a], capture_output=True, text=True)
    done = run("asm", str(source), "--arch", "sm_90", "-o", str(out), "--cubin")
    assert done.returncode == 1 and "name one" in done.stderr      # 11 kernels: which one?
    done = run("asm", str(source), "--arch", "sm_90", "-o", str(out), "--cubin", "--kernel", "local_memory")
    assert done.returncode == 0, done.stderr
    read = subprocess.run([nvdisasm(), "-hex", str(out)], capture_output=True, text=True)
    assert read.returncode == 0 and read.stderr == "", read.stderr
    assert ".text.local_memory" in read.stdout and "EIATTR_FRAME_SIZE" in read.stdout
    assert "LDL" in read.stdout and "STL" in read.stdout
    # the frame the code opens (IADD3 R1, R1, -0xc0, RZ) is declared
    assert "0x000000c0" in read.stdout.split("EIATTR_FRAME_SIZE")[1].split("EIATTR")[0]

    # the code nvdisasm finds in the cubin is the listing's, word for word: ptxas's encodings
    # printed in the listing (/* 0x... */) against nvdisasm's reading of the cubin bobc wrote
    def words(text: str) -> list[str]:
        section = text.split(".text.local_memory:", 1)[1].split("//----", 1)[0]
        return re.findall(r"/\* (0x[0-9a-f]{16}) \*/", section)

    listed = words(listing)
    assert len(listed) > 100 and words(read.stdout) == listed
