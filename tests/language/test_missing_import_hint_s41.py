"""A name that a module on the search path declares exactly, but that the plan does not import,
is refused with the import that brings it -- even where a visible name is spelled like it (probe
messages6 s41: LinReg's NativeHost without `import LinReg.Model` was offered
"did you mean checkpointEnvelopePayloadBytesOf", not the import it lacked).

The expected place is counted by hand: `def y : Nat = aValue` is line 3 and "def y : Nat = " is 14
characters, so aValue is at column 15."""
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def test_an_exact_declaration_elsewhere_beats_a_spelling_guess(tmp_path):
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "M.bob").write_text("module A.M\ndef aValue : Nat = 1\n")
    (tmp_path / "P.bob").write_text("module P\ndef aValue2 : Nat = 2\ndef y : Nat = aValue\n")
    done = subprocess.run([sys.executable, "-m", "bobc", "check", "P.bob"], cwd=tmp_path,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPOSITORY / "compiler"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1
    assert "P.bob:3:15: error: unknown name aValue" in done.stderr
    assert "hint: aValue is defined in A.M: `import A.M` would bring it; P sees its own" in done.stderr
    assert "did you mean" not in done.stderr


def test_a_misspelt_name_declared_nowhere_still_gets_did_you_mean(tmp_path):
    (tmp_path / "P.bob").write_text("module P\ndef aValue2 : Nat = 2\ndef y : Nat = aValue3\n")
    done = subprocess.run([sys.executable, "-m", "bobc", "check", "P.bob"], cwd=tmp_path,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPOSITORY / "compiler"), "PATH": "/usr/bin:/bin"})
    assert "P.bob:3:15: error: unknown name aValue3" in done.stderr
    assert "hint: did you mean aValue2?" in done.stderr
