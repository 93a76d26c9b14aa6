"""An operand the parser cannot read is refused as that, with what it looks like and the opcode's
forms -- not as an "undefined label" -- and an unknown opcode is refused before labels are
resolved (probe s28 asm finding 5); opcode suggestions are close names only, registers stop at
R254 / UR62 (R255 and UR63 are RZ's and URZ's encodings), labels are not spelled like registers
(finding 8)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble


def _error(text: str, arch: str = "sm_86") -> BobcError:
    with pytest.raises(BobcError) as info:
        assemble(f"NOP\n {text}\nEXIT\n", arch, source_name="k.sass")
    assert (info.value.span.path, info.value.span.line) == ("k.sass", 2)
    return info.value


@pytest.mark.parametrize("text,message", [
    ("PLOP3.LUT P6, PT, -R3.SIGN, R0.SIGN, R4.SIGN, 0x2, 0x0",
     "cannot read operand '-R3.SIGN' of PLOP3.LUT: register R3 with the suffix .SIGN: a register's sign bit "
     "(.SIGN) is read only as a source of PLOP3.LUT"),
    ("FADD R1, R3.SIGN.reuse, R2", "cannot read operand 'R3.SIGN.reuse' of FADD: register R3 with the suffix "
                                   ".SIGN: a register's sign bit (.SIGN) is read only as a source of PLOP3.LUT, "
                                   "written R2.SIGN or R2.reuse.SIGN"),
    ("ISETP.GE.AND P7, PT, R1, R2, PT", "cannot read operand 'P7' of ISETP.GE.AND: P7 is not a predicate (P0..P6, PT)"),
    # .H1 (a 16-bit source's high half) is read since session 43 (MUFU.EX2.F16 R1, R27.H1 assembles); .H2 is no suffix
    ("MUFU.EX2.F16 R1, R27.H2", "cannot read operand 'R27.H2' of MUFU.EX2.F16: register R27 with the suffix .H2"),
    ("FADD R1, R3.H2, R2", "cannot read operand 'R3.H2' of FADD"),
    ("FADD R1, R2.REUSE, R3", "cannot read operand 'R2.REUSE' of FADD: register R2 with .REUSE: write .reuse in lower case"),
    ("MOV r1, R2", "cannot read operand 'r1' of MOV: registers are written in upper case: R1"),
    ("FADD R1, -R3.SIGN, R2", "cannot read operand '-R3.SIGN' of FADD: register R3 with the suffix .SIGN"),
    ("VOTE.ANY R1, UPR, PT", "cannot read operand 'UPR' of VOTE.ANY: the uniform predicate file UPR"),
    ("MOV R1, %r1", "cannot read operand '%r1' of MOV: no register"),
    ("BRA P7", "cannot read operand 'P7' of BRA: P7 is not a predicate"),
])
def test_an_unreadable_operand_is_named_as_such(text, message):
    for arch in ("sm_86", "sm_90"):
        e = _error(text, arch)
        assert e.message.startswith(message), e.message
        assert "undefined label" not in e.message
        opcode = text.split()[0].split(".")[0]
        assert f"known {arch} forms of {opcode}: " in e.message


def test_the_forms_listed_are_the_opcodes_own():
    e = _error("ISETP.GE.AND P7, PT, R1, R2, PT")
    assert "ISETP.GE.AND P,P,R,R,P" in e.message and "more)" in e.message


def test_an_unknown_opcode_is_refused_before_its_labels():
    """IMMA's operands R8.ROW / R9.COL were reported as an undefined label 'R8.ROW'."""
    e = _error("IMMA.8816.S8.S8 R32, R8.ROW, R9.COL, R0")
    assert e.message == "unknown or unsupported opcode IMMA"
    assert "IMMA is an NVIDIA opcode this assembler does not encode" in e.hint and "did you mean" not in e.hint
    e = _error("FROBNICATE R0, nowhere")
    assert e.message == "unknown or unsupported opcode FROBNICATE"


def test_a_branch_to_a_missing_label_is_still_an_undefined_label():
    assert _error("BRA nowhere").message == "undefined label 'nowhere'"
    assert _error("@P0 BRA `(.L_x_9)").message == "undefined label '.L_x_9'"


@pytest.mark.parametrize("opcode,meant", [("FMULL", "FMUL"), ("LGD", "LD or LDG"), ("STGG", "STG"),
                                          ("IADD", "IADD3")])
def test_did_you_mean_names_close_opcodes_only(opcode, meant):
    e = _error(f"{opcode} R1, R2, R3")
    assert e.hint.startswith(f"did you mean {meant}")


@pytest.mark.parametrize("opcode", ["HSET2", "IMMA", "PMTRIG", "UP2UR"])   # NANOSLEEP (s43), USEL (s44) are encoded
def test_an_nvidia_opcode_it_lacks_gets_no_suggestion(opcode):
    e = _error(f"{opcode} R1, R2")
    assert "did you mean" not in e.hint and f"{opcode} is an NVIDIA opcode this assembler does not encode" in e.hint


def test_no_suggestion_for_a_name_far_from_every_opcode():
    e = _error("XYZZY R1")
    assert "did you mean" not in e.hint and "tables/layouts.py" in e.hint


@pytest.mark.parametrize("text,message", [
    ("MOV R1, R255", "register R255 does not exist (R0..R254, RZ); R255 is RZ's encoding: write RZ"),
    ("MOV R1, R256", "register R256 does not exist (R0..R254, RZ)"),
    ("UMOV UR63, 0x1", "uniform register UR63 does not exist (UR0..UR62, URZ); UR63 is URZ's encoding: write URZ"),
    ("UMOV UR64, 0x1", "uniform register UR64 does not exist (UR0..UR62, URZ)"),
])
def test_register_ranges_agree_with_their_messages(text, message):
    assert _error(text).message == message


@pytest.mark.parametrize("label", ["R3.SIGN", "P7", "UP9", "R300"])
def test_a_label_shaped_like_a_register_is_refused(label):
    with pytest.raises(BobcError) as info:
        assemble(f"NOP\n{label}:\nEXIT\n", "sm_86", source_name="k.sass")
    assert f"label '{label}' is spelled like a register" in info.value.message


def test_the_cli_says_cannot_read_in_one_line(tmp_path):
    source = tmp_path / "sign.sass"
    source.write_text("PLOP3.LUT P6, PT, -R3.SIGN, R0.SIGN, R4.SIGN, 0x2, 0x0\nEXIT\n")
    done = subprocess.run([sys.executable, "-m", "bobc", "asm", "--arch", "sm_86", str(source), "-o",
                           str(tmp_path / "x.bin")], capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{source}:1:19: error: cannot read operand '-R3.SIGN' of PLOP3.LUT" in done.stderr
