"""`Nat` or `Bytes` written where a family's name goes (probe s46 plantexts2 finding 3).  They are
built-in types (docs/language.md, "Expressions": `Nat`, `Bytes`), not families: recursion on a
natural is `(nat-eliminate motive base step n)`, and neither takes `(family ...)`, `(constructor
...)`, `(record ...)` or `(eliminate ...)`.  Before, `(eliminate Nat motive 5 ...)` was "unknown
family Nat" with a hint listing the modules searched (as for a family left unimported), which
sends a user looking for a module.  Places counted by hand: line 3 is the definition, and
"def r : Nat = (eliminate " is 25 characters, so the family's name is at column 26."""
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
MOTIVE = "(lambda unrestricted n : Nat . Nat)"


def _check(tmp_path, definition: str) -> subprocess.CompletedProcess:
    (tmp_path / "P.bob").write_text(f"module P\n\n{definition}\n")
    return subprocess.run([sys.executable, "-m", "bobc", "check", "P.bob"], cwd=tmp_path,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPOSITORY / "compiler"), "PATH": "/usr/bin:/bin",
                               "BOBC_CACHE_DIR": "off"})


@pytest.mark.parametrize("definition, column, name, told", [
    (f"def r : Nat = (eliminate Nat {MOTIVE} 5 (branch zero . 0))", 26, "Nat",
     "(nat-eliminate motive base step n)"),
    ("def r : Type 0 = (family Nat)", 26, "Nat", "write Nat alone"),
    ("def r : Type 0 = (family Bytes)", 26, "Bytes", "write Bytes alone"),
    ("def r : Nat = (constructor Nat succ 3)", 28, "Nat", "(succ n)"),
    ("def r : Bytes = (record Bytes)", 25, "Bytes", 'b"..."'),
])
def test_builtin_type_where_a_family_goes_s46(tmp_path, definition, column, name, told):
    done = _check(tmp_path, definition)
    assert done.returncode == 1, done.stdout
    assert f"P.bob:3:{column}: error: {name} is a built-in type, not a family" in done.stderr, done.stderr
    assert told in done.stderr, done.stderr
    assert "modules searched" not in done.stderr
    assert "Traceback" not in done.stderr


def test_a_family_called_nat_of_ones_own_is_still_a_family_s46(tmp_path):
    """A module may declare a family Nat of its own; then (family Nat) is that family."""
    done = _check(tmp_path, "family Nat : Type 0\nconstructor Z\nend-family\ndef r : Type 0 = (family Nat)")
    assert done.returncode == 0, done.stderr
