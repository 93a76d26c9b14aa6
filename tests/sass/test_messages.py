"""Refusals say what is wrong, at file:line:column, without blaming valid SASS (probe-sass
findings 10 and 11), and PRMT takes the .reuse ptxas writes on it."""
from __future__ import annotations

import subprocess
import sys

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble


@pytest.mark.parametrize("text,message,column", [
    ("@P9 MOV R0, R1", "guard '@P9': P9 is not a predicate (P0..P6, PT, or UP0..UP6, UPT; '!' negates)", 1),
    ("@!R0 MOV R0, R1", "guard '@!R0': R0 is not a predicate", 1),
    ("MOV R0, R1,", "trailing comma after the last operand of MOV", 1),
    ("STS [R0], R1,", "trailing comma after the last operand of STS", 1),
    # an operand's problem is refused at the operand (probe s32 sasssyntax finding 8)
    ("BRA 0x100000", "branch target 0x100000 is past the end of the code (0x30)", 5),
    ("F2I.TRUNC.NTZ R3, -|R2|", "F2I takes no '-' on this operand in this assembler", 19),
    ("FADD R0, R1, c[0x0][0x160].reuse", "modifier on an operand that takes none", 14),
])
def test_refusals_name_the_problem(text, message, column):
    for arch in ("sm_86", "sm_90"):
        with pytest.raises(BobcError) as info:
            assemble(f"NOP\n{text}\nEXIT\n", arch, source_name="k.sass")
        assert message in info.value.message
        assert (info.value.span.path, info.value.span.line, info.value.span.column) == ("k.sass", 2, column)


@pytest.mark.parametrize("label", ["R1", "UR4", "P0", "PT", "SR_TID.X", "B3"])
def test_a_label_spelled_like_a_register_is_refused(label):
    with pytest.raises(BobcError) as info:
        assemble(f"NOP\n{label}:\nEXIT\n", "sm_86", source_name="k.sass")
    assert f"label '{label}' is spelled like a register" in info.value.message
    assert info.value.span.line == 2


def test_a_bare_nan_is_a_float_word_not_a_label():
    assert assemble("FADD R0, R1, NAN\nEXIT\n", "sm_86").instructions[0].lo >> 32 == 0x7FC00000


def test_prmt_takes_reuse_as_ptxas_writes_it():
    """ptxas (sm_90, cvt.s32.s16): PRMT R7, R16.reuse, 0x9910, RZ = 0x0000991010077816, bit 122 set."""
    for arch in ("sm_86", "sm_90"):
        word = assemble("PRMT R7, R16.reuse, 0x9910, RZ\nEXIT\n", arch).instructions[0].word
        assert word & (1 << 64) - 1 == 0x0000991010077816 and word >> 122 & 1


def test_disasm_of_a_cubin_says_so(tmp_path):
    source = tmp_path / "k.sass"
    source.write_text("S2R R0, SR_TID.X\nEXIT\n")
    cubin = tmp_path / "k.cubin"
    run = lambda *a: subprocess.run([sys.executable, "-m", "bobc", *a], capture_output=True, text=True)
    assert run("asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(cubin)).returncode == 0
    done = run("disasm", str(cubin), "--arch", "sm_86")
    assert done.returncode != 0 and "is a cubin" in done.stderr and "nvdisasm -hex" in done.stderr
    assert "Traceback" not in done.stderr
