"""An import whose file path the file system cannot take (a part longer than a file name may
be, ENAMETOOLONG; or a path of too many parts) is refused at the import's file:line:column,
not a Python OSError traceback (probe s28 lang finding 2: Path.is_file() swallows ENOENT and
ELOOP but not ENAMETOOLONG)."""
from __future__ import annotations

import pytest

from bobc.language import load_program
from bobc.targets import SM86
from bobc.language.modules import ModuleError


@pytest.mark.parametrize("name, words", [
    ("A" * 300, "names a file or folder of 304 bytes, more than the 255 a file name may have"),
    (".".join(["B" * 50] * 100), "its path (100 parts,"),
    ("C." + "D" * 252, "names a file or folder of 256 bytes"),      # the part with .bob
])
def test_an_import_too_long_for_the_file_system(tmp_path, name, words):
    path = tmp_path / "Long.bob"
    path.write_text(f"module Long\nimport {name}\ndef x : Nat = 1\n", encoding="utf-8")
    with pytest.raises(ModuleError) as caught:
        load_program(path, target=SM86)
    error = caught.value
    assert error.span is not None and (error.span.line, error.span.column) == (2, 8)
    assert words in error.message and "cannot be a file" in error.message, error.message
    assert len(error.message) < 300             # the name is shortened, not printed whole


def test_the_cli_prints_it_without_a_traceback(tmp_path, capsys):
    from bobc.cli import main

    path = tmp_path / "Long.bob"
    path.write_text(f"module Long\nimport {'A' * 300}\n", encoding="utf-8")
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2:8: error: module " in err and "Traceback" not in err, err
