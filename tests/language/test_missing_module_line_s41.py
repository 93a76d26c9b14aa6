"""A module file without its `module` line is refused saying so, with the line to write
(probe-docs10 s41: "unexpected 'import': expected 'module'" with a hint about where imports go).

The names expected are derived by hand from the files written here and docs/language.md's rule
"module A.B.C -- first line: the module's name, matching its path A/B/C.bob": the plan file
A/N.bob is `module N` from A/ or `module A.N` from the folder above; imported as A.N by A/P.bob,
it must say `module A.N`.
"""
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def _check(folder: Path, plan: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bobc", "check", plan], cwd=folder,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPOSITORY / "compiler"), "PATH": "/usr/bin:/bin"})


def test_a_plan_file_without_module_line_names_the_line_to_write(tmp_path):
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "N.bob").write_text("-- a comment first\n\ndef x : Nat = 1\n")
    done = _check(tmp_path, "A/N.bob")
    assert done.returncode == 1
    # line 3, column 1: the `def` after a comment line and a blank line
    assert "A/N.bob:3:1: error: this file has no module line: it begins with 'def', where " \
           "`module NAME` must come first" in done.stderr
    assert "`module N` when its own folder is the one searched, `module A.N` when the folder " \
           "above A/ is" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_imported_file_without_module_line_gets_the_name_its_importer_asked_for(tmp_path):
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "N.bob").write_text("def x : Nat = 1\n")
    (tmp_path / "A" / "P.bob").write_text("module A.P\nimport A.N\ndef y : Nat = x\n")
    done = _check(tmp_path, "A/P.bob")
    assert done.returncode == 1
    assert "A/N.bob:1:1: error: this file has no module line: it begins with 'def'" in done.stderr
    # `import A.N` is line 2; A.N begins at column 8
    assert "hint: its first line should be `module A.N`; imported through A.P -> A.N " \
           "(A/P.bob:2:8)" in done.stderr


def test_a_capitalised_module_keyword_is_named_as_the_keyword(tmp_path):
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "Q.bob").write_text("Module A.Q\ndef x : Nat = 1\n")
    done = _check(tmp_path, "A/Q.bob")
    assert "A/Q.bob:1:1: error: the file's first word 'Module' is not the keyword `module`" \
           in done.stderr
    assert "did you mean `module` (keywords are lower case)?" in done.stderr
