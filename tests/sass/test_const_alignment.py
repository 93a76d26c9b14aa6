"""A constant bank operand must name a whole 32-bit word: c[0x0][param+0x3d] is refused by name
(the encoding has no room for the low two bits, so it would silently read another word)."""
import pytest

from bobc.cli import main


@pytest.mark.parametrize("operand,resolved", [("c[0x0][param+0x3d]", "param+0x3d = 0x24d"),
                                              ("c[0x0][R2+0x3d]", "0x3d"), ("c[0x0][0x2]", "0x2")])
def test_a_misaligned_constant_offset_is_refused(tmp_path, capsys, operand, resolved):
    opcode = "LDC" if "R2" in operand else "MOV"
    source = tmp_path / "k.sass"
    source.write_text(f"{opcode} R1, {operand} ;\nEXIT ;\n")
    assert main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", "sm_90"]) == 1
    err = capsys.readouterr().err
    # at the constant (probe s32 sasssyntax finding 8)
    assert f"{source}:1:9" in err and f"constant offset {resolved} in c[0x0][...] is not a multiple of 4" in err


def test_an_aligned_constant_offset_assembles(tmp_path, capsys):
    source = tmp_path / "k.sass"
    source.write_text("MOV R1, c[0x0][param+0x3c] ;\nEXIT ;\n")
    assert main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", "sm_90"]) == 0
