"""A function given too few or too many arguments is told so with the count (probe messages6 s41):
`(f 1)` of a two-argument f where a Nat belongs said only "type mismatch ... but has type (pi
unrestricted b : Nat . Nat)", never that an argument was missing; `(naturalAdd 1 2 3)` said
"after 2, the result has type Nat" without naming the function or what to remove.

Places are counted by hand: "def x : Nat = " is 14 characters (the application starts at column
15); in "def z : Nat = (naturalAdd 1 2 3)" the 3 is column 31."""
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
F = "def f = (lambda unrestricted a : Nat . (lambda unrestricted b : Nat . (naturalAdd a b)))\n"


def _check(tmp_path, body: str) -> str:
    (tmp_path / "T.bob").write_text(f"module T\nimport Std.Natural\n{F}{body}\n")
    done = subprocess.run([sys.executable, "-m", "bobc", "check", "T.bob"], cwd=tmp_path, capture_output=True,
                          text=True, env={"PYTHONPATH": str(REPOSITORY / "compiler"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1
    return done.stderr


def test_too_few_arguments_names_the_one_awaited(tmp_path):
    err = _check(tmp_path, "def x : Nat = (f 1)")
    assert "T.bob:4:15: error: in x: type mismatch" in err
    assert "hint: f is given 1 argument and still waits for the next one (b : Nat): too few arguments" in err


def test_a_function_alone_where_a_value_belongs(tmp_path):
    err = _check(tmp_path, "def x : Nat = f")
    assert "hint: f is given 0 arguments and still waits for the next one (a : Nat)" in err


def test_too_many_arguments_names_the_function_and_its_count(tmp_path):
    err = _check(tmp_path, "def z : Nat = (naturalAdd 1 2 3)")
    assert "T.bob:4:31: error: in z: too many arguments: after 2, the result has type Nat" in err
    assert "hint: naturalAdd takes 2 arguments and is given 3: remove this one" in err
