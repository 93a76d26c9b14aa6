"""A conversion's data types are read in order, so the reorder hint never proposes the other order
(probe s41 nanprobes2 / asmconv finding 1): `F2F.F64.F16 R4, R2` (half -> double, not learned then) was
told "write F2F.F16.F64", which narrows a double to a half -- a different instruction.

Independent reason for the expectations: the PTX ISA's cvt names the destination type first
(cvt.f64.f16 widens, cvt.f16.f64 narrows) and nvdisasm's F2F / I2F / F2I spell them the same way;
the tables hold both orders as different words (F2F.F32.F64 and F2F.F64.F32, IDP.4A.S8.U8 and
IDP.4A.U8.S8), which nvdisasm decodes as different instructions."""
import pytest

from bobc.cli import main
import re

from bobc.sass.encoder import forms_for

TARGETS = pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
TYPE = re.compile(r"(?:BF|[USF])(?:8|16|32|64)")       # the PTX ISA's fundamental types, as nvdisasm spells them


def _asm(tmp_path, capsys, body: str, arch: str) -> tuple[int, str]:
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n" + body)
    code = main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", arch])
    return code, capsys.readouterr().err


@TARGETS
def test_a_conversion_with_its_types_reversed_is_not_told_to_swap_them(tmp_path, capsys, arch):
    # F2F.F32.F16 (half -> float: ptxas writes HADD2.F32 for it, so no corpus kernel has it) is not
    # F2F.F16.F32 (float -> half), which the tables have
    assert "F2F.F16.F32" in {k.split(" ")[0] for k in forms_for(arch)}
    code, err = _asm(tmp_path, capsys, "    F2F.F32.F16 R4, R2\n    EXIT\n", arch)
    assert code == 1
    assert "write F2F.F16.F32" not in err and "in the order" not in err
    assert f"no {arch} encoding for 'F2F.F32.F16 R,R'" in err
    assert "F2F.F16.F32 has these modifiers with the data types in another order: another instruction" in err


@TARGETS
def test_non_type_modifiers_in_another_order_still_get_the_reorder_hint(tmp_path, capsys, arch):
    # .RZ is a rounding mode, not a type: F2F.F16.RZ.F32 is F2F.F16.F32.RZ spelt in another order
    code, err = _asm(tmp_path, capsys, "    F2F.F16.RZ.F32 R4, R2\n    EXIT\n", arch)
    assert code == 1
    assert "F2F writes these modifiers in the order .F16.F32.RZ: write F2F.F16.F32.RZ" in err


@TARGETS
def test_no_form_with_two_types_is_ever_told_to_write_its_types_swapped(tmp_path, capsys, arch):
    """For every learned mnemonic with two data types whose swap is not learned too, the swapped
    spelling's refusal proposes no form with the types in the swapped order (and none at all)."""
    forms = forms_for(arch)
    mnemonics = {k.split(" ")[0] for k in forms}
    checked = 0
    for mnemonic in sorted(mnemonics):
        parts = mnemonic.split(".")
        types = [m for m in parts[1:] if TYPE.fullmatch(m)]
        if len(types) != 2 or types[0] == types[1]:
            continue
        i, j = parts.index(types[0]), parts.index(types[1])
        swapped = parts[:]
        swapped[i], swapped[j] = parts[j], parts[i]
        swapped = ".".join(swapped)
        if swapped in mnemonics:
            continue                                 # both orders learned: each its own instruction
        if f"{mnemonic} R,R" not in forms:
            continue                                 # the R,R forms: operands written plainly below
        code, err = _asm(tmp_path, capsys, f"    {swapped} R4, R2\n    EXIT\n", arch)
        assert code == 1, swapped
        assert f"write {mnemonic}" not in err and "in the order" not in err, (swapped, err)
        checked += 1
    assert checked >= 5, checked
