"""`bobc run --reference --kernels FILE`: the file is read as Python source whatever its name, and
a SyntaxError is said at the file and line CPython names (probe s38 coverage findings 2 and 3).

- `--kernels kernels.txt` holding the kernels was refused as "not a Python file" (exit 2): only
  its name's ending was judged (importlib finds no loader for `.txt`), where `python FILE` runs it.
- A kernels file importing a module that does not parse was said as "SyntaxError at line 3" of the
  kernels file, whose line 3 is the import's module's; a NUL byte in the file, which CPython 3.11
  refuses with no line, was said as "SyntaxError at line None"."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/linear_regression"
PLAN = EXAMPLE / "LinReg/Build/NativeHost.bob"
OUTPUTS = ["--checkpoint-out", "c.bin", "--predictions", "p.bin", "--result", "r.bin"]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    subprocess.run([sys.executable, str(EXAMPLE / "make_record.py"), "-o", str(tmp_path / "record.bin")], check=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(kernels: str) -> int:
    return main(["run", str(PLAN), "train", "--reference", "--input", "record.bin", *OUTPUTS, "--kernels", kernels])


def test_a_kernels_file_of_another_name_is_read_as_python(folder, capsys):
    (folder / "kernels.txt").write_bytes((EXAMPLE / "reference_kernels.py").read_bytes())
    assert _run("kernels.txt") == 0, capsys.readouterr().err
    assert (folder / "c.bin").stat().st_size > 0 and (folder / "r.bin").stat().st_size > 0
    # the same bytes as the file by its own name give
    assert main(["run", str(PLAN), "train", "--reference", "--input", "record.bin", "--checkpoint-out", "c2.bin",
                 "--predictions", "p2.bin", "--result", "r2.bin"]) == 0
    for name in ("c", "p", "r"):
        assert (folder / f"{name}.bin").read_bytes() == (folder / f"{name}2.bin").read_bytes(), name


def test_a_syntax_error_in_a_module_it_imports_names_that_module(folder, capsys):
    # a module name no other test imports: the run is in this process, and a module already in
    # sys.modules would not be read again
    (folder / "unparsable_helper_s38.py").write_text("\n\nx = (\n")
    (folder / "kernels.py").write_text("import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
                                       "import unparsable_helper_s38\nKERNELS = {}\n")
    assert _run("kernels.py") == 2
    err = capsys.readouterr().err
    assert err.startswith("bobc run: error: cannot load --kernels kernels.py: SyntaxError at line 3 of "
                          "unparsable_helper_s38.py: '(' was never closed\nhint: fix unparsable_helper_s38.py"), err
    assert not any((folder / f"{name}.bin").exists() for name in ("c", "p", "r"))


def test_a_syntax_error_of_its_own_is_its_line(folder, capsys):
    (folder / "kernels.py").write_text("KERNELS = {}\nx = (\n")
    assert _run("kernels.py") == 2
    err = capsys.readouterr().err
    assert err.startswith("bobc run: error: cannot load --kernels kernels.py: SyntaxError at line 2: "), err
    assert " of " not in err.splitlines()[0]


def test_a_nul_byte_is_no_line_none(folder, capsys):
    (folder / "kernels.py").write_bytes(b"KERNELS = {}\n\0\n")
    assert _run("kernels.py") == 2
    err = capsys.readouterr().err
    assert err.startswith("bobc run: error: cannot load --kernels kernels.py: SyntaxError"), err
    assert "None" not in err and "Traceback" not in err
