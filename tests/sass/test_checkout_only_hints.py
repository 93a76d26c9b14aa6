"""What the assembler tells a user to do about an opcode or form it cannot encode names what that
user has (probe s30 packaging finding 5): learning a new form happens in a bobc checkout (its
tools/ptx_corpus and `python -m bobc.sass.learn`, which no package carries), and the opcodes it
encodes are a module of the package, named by its path in the package and as Python imports it
(it said tables/layouts.py, a path relative to no folder the user has)."""
import importlib.util
from pathlib import Path

import pytest

from bobc.cli import main


def _refusal(tmp_path, capsys, line: str) -> str:
    source = tmp_path / "k.sass"
    source.write_text(f".kernel k\n  {line} ;\n  EXIT ;\n")
    assert main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", "sm_90"]) == 1
    return capsys.readouterr().err


def test_an_unknown_form_says_learning_one_is_done_in_a_checkout(tmp_path, capsys):
    err = _refusal(tmp_path, capsys, "IADD3 R1, R2, R3, R4, R5")
    assert ("in a bobc checkout, add a PTX kernel to tools/ptx_corpus that makes ptxas emit it, or a sibling of "
            "the class with this operand kind, and relearn (python -m bobc.sass.learn)\n") in err
    assert importlib.util.find_spec("bobc.sass.learn") is not None


@pytest.mark.parametrize("opcode", ["FOOBAR", "PMTRIG"])   # NANOSLEEP is encoded since session 43
def test_an_unknown_opcode_names_the_table_as_a_module(tmp_path, capsys, opcode):
    err = _refusal(tmp_path, capsys, f"{opcode} R1, R2")
    hint = [line for line in err.splitlines() if line.startswith("hint: ")]
    assert len(hint) == 1 and hint[0].endswith("the opcodes it encodes are those of LAYOUTS in "
                                               "bobc/sass/tables/layouts.py (the module bobc.sass.tables.layouts)")
    import bobc
    from bobc.sass.tables.layouts import LAYOUTS

    assert (Path(bobc.__file__).parent / "sass" / "tables" / "layouts.py").is_file() and opcode not in LAYOUTS
