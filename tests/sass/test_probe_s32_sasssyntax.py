"""Probe s32 (error catalog) findings on SASS sources and the asm/check options:

- 3: a float literal (a fraction, an exponent, INF/NAN) where an integer immediate goes was encoded as
  its binary32 bits (`IADD3 R0, R1, 1.5, RZ` added 0x3fc00000); it is refused at the operand.  Which
  immediates are integers comes from the tables (every opcode outside layouts' FLOAT_IMMEDIATE,
  DOUBLE_IMMEDIATE and HALF_OPCODES, and every narrower field), not a list of opcodes here.
- 6: a UTF-8 byte order mark at a source's start is skipped, as a module's is (docs/language.md), for
  the assembler and the `//@` contract lines alike; one anywhere else is named.
- 7: a missing `]` is named, at the bracket, not "expected an integer, found 'R2.6'".
- 8: an operand's problem (R300, UR300, a second guard, 0x4g, P7, 1.5e400) is refused at the operand.
- 5: an out-of-range --block-size / --parameter-bytes and an empty --entry are usage errors, exit 2.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.tables import layouts as L

ROOT = Path(__file__).resolve().parents[2]
PREDICT = ROOT / "examples/linear_regression/LinReg/kernels/linreg-predict.sass"


def _refusal(line: str, arch: str = "sm_86") -> BobcError:
    with pytest.raises(BobcError) as info:
        assemble(f"NOP\n  {line}\nEXIT\n", arch, source_name="k.sass")
    return info.value


def _at(error: BobcError) -> tuple[int, int, int]:
    return error.span.line, error.span.column, error.span.end_column


# -- finding 3 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("line,literal,message", [
    ("IADD3 R0, R1, 1.5, RZ", "1.5",
     "IADD3 takes an integer immediate, not the fraction 1.5: write its binary32 bits 0x3fc00000 if they are meant"),
    ("IMAD R0, R1, 2.7, RZ", "2.7", "IMAD takes an integer immediate, not the fraction 2.7: write its binary32 "
                                    "bits 0x402ccccd"),
    ("ISETP.GE.AND P0, PT, R0, 0.5, PT", "0.5", "ISETP takes an integer immediate, not the fraction 0.5"),
    ("LOP3.LUT R0, R1, 1.5, RZ, 0xc0, !PT", "1.5", "LOP3 takes an integer immediate, not the fraction 1.5"),
    ("LOP3.LUT R0, R1, R2, RZ, 1.5, !PT", "1.5", "LOP3's LUT is an integer, not the fraction 1.5"),
    ("SHF.L.U32 R0, R1, 2.5, RZ", "2.5", "SHF takes an integer immediate, not the fraction 2.5"),
    ("MOV R0, 2.0", "2.0", "MOV takes an integer immediate, not the float literal 2.0: write 2"),
    ("IADD3 R0, R1, 1e3, RZ", "1e3", "IADD3 takes an integer immediate, not the float literal 1e3: write 1000"),
    ("IADD3 R0, R1, +INF, RZ", "+INF", "IADD3 takes an integer immediate, not the float value +INF: write its "
                                       "binary32 bits 0x7f800000"),
    ("IADD3 R0, R1, 1e400, RZ", "1e400", "IADD3 takes an integer immediate, not the float value 1e400"),
])
def test_a_float_literal_on_an_integer_immediate_is_refused_at_the_operand(arch, line, literal, message):
    error = _refusal(line, arch)
    assert message in error.message, error.message
    column = 3 + line.index(literal)
    assert _at(error) == (2, column, column + len(literal))


def test_every_opcode_with_an_immediate_outside_the_float_sets_refuses_a_fraction():
    """General, by the tables: in every form of each target that takes an immediate (written
    0x1, it encodes), an opcode outside the float sets refuses 1.5 in that place, and a float
    opcode's 32-bit immediate takes it."""
    from bobc.sass.encoder import EncodeProblem, Encoder
    from bobc.sass.syntax import parse_instruction

    floats = L.FLOAT_IMMEDIATE | L.DOUBLE_IMMEDIATE | L.HALF_OPCODES
    refused, taken = set(), set()
    for arch in ("sm_86", "sm_90"):
        encoder = Encoder(arch)
        for key in encoder.forms:
            mnemonic, _, signature = key.partition(" ")
            kinds = signature.split(",")
            if "I" not in kinds or mnemonic.split(".")[0] in L.HALF_OPCODES:   # a packed pair: two immediates
                continue
            at = kinds.index("I")
            valid = _form_text(mnemonic, kinds, at, "0x1")
            try:
                inst = encoder.normalize(parse_instruction(valid))
                if encoder.key(inst) != key:
                    continue
                encoder.place_operands(inst)
            except (EncodeProblem, BobcError, ValueError):
                continue            # a form this sketch does not write validly
            inst = encoder.normalize(parse_instruction(_form_text(mnemonic, kinds, at, "1.5")))
            if inst.opcode in floats:
                encoder.place_operands(inst)
                taken.add(inst.opcode)
                continue
            with pytest.raises(EncodeProblem) as info:
                encoder.place_operands(inst)
            assert "integer" in str(info.value) and "1.5" in str(info.value), (arch, key, info.value)
            refused.add(inst.opcode)
    assert {"IADD3", "IMAD", "ISETP", "LOP3", "MOV", "SHF", "SEL", "PRMT", "I2F", "UIADD3"} <= refused, sorted(refused)
    assert {"FADD", "FMUL", "FFMA", "FSETP", "DADD"} <= taken, sorted(taken)


def _form_text(mnemonic: str, kinds: list[str], immediate_at: int, immediate: str) -> str | None:
    """A text of the form `mnemonic kinds`, operand `immediate_at` written `immediate`."""
    sample = {"R": "R2", "U": "UR4", "P": "P1", "Q": "UP1", "C": "c[0x0][0x160]", "I": "0x1", "S": "SR_TID.X",
              "B": "B1", "T": "0x0"}
    ops = [immediate if i == immediate_at else sample.get(kind, "R2") for i, kind in enumerate(kinds)]
    return f"{mnemonic} {', '.join(ops)}"


def test_float_opcodes_still_take_fractions_and_integer_opcodes_integers():
    words = [i.lo >> 32 for i in assemble("FADD R0, R1, 1.5\nIADD3 R0, R1, 0x3fc00000, RZ\nIADD3 R0, R1, -0x1, RZ\n"
                                          "DADD R0, R2, 1.5\nHADD2 R0, R1, 1.5, -0.25\nEXIT\n", "sm_86").instructions]
    assert words[:4] == [0x3FC00000, 0x3FC00000, 0xFFFFFFFF, 0x3FF80000]


def test_a_fractional_branch_target_is_refused_at_the_operand():
    error = _refusal("BRA 1.5")
    assert "BRA's target 1.5 is no code address" in error.message
    assert _at(error)[:2] == (2, 7)


# -- finding 6 ---------------------------------------------------------------------------------

def test_a_source_starting_with_a_byte_order_mark_assembles_as_without(tmp_path):
    plain = PREDICT.read_bytes()
    bom = tmp_path / "linreg-predict.sass"
    bom.write_bytes(b"\xef\xbb\xbf" + plain)
    assert main(["asm", str(bom), "--arch", "sm_86", "-o", str(tmp_path / "a.bin")]) == 0
    assert main(["asm", str(PREDICT), "--arch", "sm_86", "-o", str(tmp_path / "b.bin")]) == 0
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()


def test_a_contract_line_on_line_1_after_a_byte_order_mark_is_read(tmp_path):
    from bobc.certify.kernels import parse_contract

    lines = PREDICT.read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith("//@"))
    body = "".join(lines[first:])
    assert body.startswith("//@ block 64")
    plain, bom = tmp_path / "plain" / "linreg-predict.sass", tmp_path / "bom" / "linreg-predict.sass"
    for path, data in ((plain, body.encode()), (bom, b"\xef\xbb\xbf" + body.encode())):
        path.parent.mkdir()
        path.write_bytes(data)
    with_mark, without = parse_contract(bom), parse_contract(plain)
    assert with_mark.block == without.block and with_mark.block[0] == 64
    assert with_mark.arguments == without.arguments and len(with_mark.arguments) == 4


def test_a_byte_order_mark_past_the_start_is_named(tmp_path):
    source = tmp_path / "k.sass"
    source.write_bytes("    S2R R0, SR_TID.X\n  \ufeffEXIT\n".encode())
    with pytest.raises(BobcError) as info:
        assemble(source.read_text(), "sm_86", source_name=str(source))
    assert "a byte order mark (U+FEFF) here: it is accepted only as the file's first character" in info.value.message
    assert (info.value.span.line, info.value.span.column) == (2, 3)


# -- finding 7 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("line,message,column", [
    ("LDG.E R8, [R2.64", "missing ']': the '[' of '[R2.64' is never closed", 11),
    ("LDG.E R8, desc[UR4][R2.64", "missing ']': the '[' of '[R2.64' is never closed", 20),
    ("MOV R0, c[0x0][0x160", "missing ']': the '[' of '[0x160' is never closed", 15),
    ("LDG.E R8, R2.64]", "']' with no '[' before it in 'R2.64]'", 16),
    ("LDG.E R8, [R2.64]]", "']' with no '[' before it in '[R2.64]]'", 18),
])
def test_an_unpaired_bracket_is_named_at_the_bracket(line, message, column):
    error = _refusal(line)
    assert message in error.message and "expected an integer" not in error.message, error.message
    assert _at(error)[:2] == (2, 2 + column)


# -- finding 8 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("line,operand,message", [
    ("FADD R0, R1, 1.5e400", "1.5e400", "1.5e400 is beyond binary32's range"),
    ("FMUL R9, R9, R300", "R300", "register R300 does not exist"),
    ("MOV R0, UR300", "UR300", "uniform register UR300 does not exist"),
    ("@P0 @P1 EXIT", "@P1", "a second guard '@P1': an instruction takes one guard predicate"),
    ("@!P7 EXIT", "@!P7", "guard '@!P7': P7 is not a predicate"),
    ("IMAD.WIDE.U32 R2, R0, 0x4g, R2", "0x4g", "cannot read operand '0x4g' of IMAD.WIDE.U32"),
    ("ISETP.GE.AND P7, PT, R0, 0x1, PT", "P7", "cannot read operand 'P7' of ISETP.GE.AND"),
    ("BRA nowhere", "nowhere", "undefined label 'nowhere'"),
    ("[B------:R-:W9:-:S04] EXIT", "[B------:R-:W9:-:S04]", "write barrier W9 is no scoreboard"),
])
def test_an_operand_problem_points_at_the_operand(line, operand, message):
    error = _refusal(line)
    assert message in error.message, error.message
    column = 3 + line.index(operand)
    assert _at(error) == (2, column, column + len(operand))


def test_the_cli_points_at_the_operand(tmp_path, capsys):
    source = tmp_path / "r.sass"
    source.write_text("    FMUL R9, R9, R300\n    EXIT\n")
    assert main(["asm", str(source), "--arch", "sm_86", "-o", str(tmp_path / "r.bin")]) == 1
    err = capsys.readouterr().err
    assert f"{source}:1:18: error: register R300 does not exist" in err
    assert err.splitlines()[-1] == " " * 19 + "^^^^"


# -- finding 5 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("options,message", [
    (["--block-size", "0"], "--block-size 0: a block has 1 to 1024 threads"),
    (["--parameter-bytes", "40000"], "--parameter-bytes 40000: a kernel takes 0 to 32764 bytes of parameters"),
    (["--parameter-bytes", "3"], "--parameter-bytes 3: a multiple of 4 is needed"),
])
def test_an_asm_option_out_of_range_is_a_usage_error(tmp_path, capsys, options, message):
    source = tmp_path / "k.sass"
    source.write_text("EXIT\n")
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(tmp_path / "k.cubin"), *options]) == 2
    assert f"bobc asm: error: {message}" in capsys.readouterr().err
    assert not (tmp_path / "k.cubin").exists()


@pytest.mark.parametrize("entry,message", [("", "option --entry has an empty value"),
                                           (" ", "option --entry has a blank value (' ')")])
def test_check_with_an_empty_entry_is_a_usage_error(capsys, entry, message):
    plan = ROOT / "examples/linear_regression/LinReg/Build/NativeHost.bob"
    assert main(["check", str(plan), "--entry", entry]) == 2
    err = capsys.readouterr().err
    assert f"bobc check: error: {message}" in err and "defines no" not in err
