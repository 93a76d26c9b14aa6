"""Refusals of a form the tables lack say what is true (session 43, helper asmgaps3; probe s43 newuser8 finding 2).

`UIMAD UR4, UR8, UR4, URZ` in an sm_86 nvcc -O3 listing was refused as "UIMAD is an sm_90 opcode, not one of
sm_86's" -- false: ptxas writes UIMAD for sm_86 (tests/sass/data/nvcc_o3/mlp_packed.sm_86.lst.gz) and nvdisasm
reads it there; the encoder inferred "the other target's opcode" from which tables hold forms of it.  Now that is
said only of the opcodes tables/arch.py declares a target lacks; any other is a form not learned, with the corpus
process.  And `ULEA UR5, UP0, UR4, UR6, 0x2` was refused as "ULEA takes 4 operands, not 5", a count ULEA's layout
places (its carry-out): now a form not learned, with the nearest forms.
"""
from __future__ import annotations

from bobc.cli import main
from bobc.sass.tables.arch import ENCODINGS


def _asm(tmp_path, capsys, body: str, arch: str) -> tuple[int, str]:
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n" + body)
    code = main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", arch])
    return code, capsys.readouterr().err


def test_an_opcode_this_target_has_but_has_not_learned_is_not_called_the_others(tmp_path, capsys, monkeypatch):
    """YIELD is an Ampere (sm_86) opcode as well as a Hopper one (the CUDA Binary Utilities' instruction set
    tables list it for both); until session 44 only sm_90's tables had a form of it (sm90_async.ptx; sm_86's came
    with user_forms.ptx), so the sm_86 tables are taken without it here.  The refusal must say the form is not
    learned for sm_86 and how to learn it, never "an sm_90 opcode, not one of sm_86's"."""
    from bobc.sass import encoder
    learned = encoder.forms_for
    monkeypatch.setattr(encoder, "forms_for", lambda arch: {k: f for k, f in learned(arch).items()
                                                            if arch != "sm_86" or not k.startswith("YIELD")})
    code, err = _asm(tmp_path, capsys, "    YIELD\n    EXIT\n", "sm_86")
    assert code == 1
    assert "is an sm_90 opcode" not in err
    assert "the sm_86 tables have no form of YIELD" in err and "not learned for sm_86" in err
    assert "tools/ptx_corpus" in err and "python -m bobc.sass.learn" in err


def test_an_opcode_declared_absent_is_still_called_the_other_targets(tmp_path, capsys):
    """VIADD / HGMMA: sm_90 opcodes (tables/arch.py `lacks`, with its reasons); the strong message stays."""
    for line in ("    VIADD R0, R0, R1\n", "    HGMMA.64x64x16.F32 R24, gdesc[UR4], RZ, !UPT\n"):
        code, err = _asm(tmp_path, capsys, line + "    EXIT\n", "sm_86")
        assert code == 1 and "is an sm_90 opcode, not one of sm_86's" in err, err


def test_the_lacks_tables_name_no_opcode_the_target_has_learned():
    """An opcode a target's tables hold is one it has: it cannot be in that target's `lacks`."""
    from bobc.sass.encoder import forms_for
    for name, encoding in ENCODINGS.items():
        learned = {k.split(" ")[0].split(".")[0] for k in forms_for(name)}
        assert not (encoding.lacks & learned), name
        assert set(encoding.instead) <= encoding.lacks, name


def test_an_operand_count_the_layout_places_is_a_form_not_learned(tmp_path, capsys):
    """ULEA's layout (Ud [Pu] Ra Sb Sc Ishift [Pp]) places seven operands; no learned form has seven.  That is
    a form not learned (nearest forms, how to learn it), not "ULEA takes 4, 5 or 6 operands, not 7"."""
    code, err = _asm(tmp_path, capsys, "    ULEA.HI.X UR4, UP0, UR5, UR8, UR9, 0x2, UP1\n    EXIT\n", "sm_90")
    assert code == 1
    assert "operands, not 7" not in err
    assert "no sm_90 encoding for 'ULEA.HI.X U,Q,U,U,U,I,Q'" in err and "known forms, nearest first" in err
    assert "python -m bobc.sass.learn" in err
