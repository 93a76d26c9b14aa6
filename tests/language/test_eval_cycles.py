"""`bobc eval` refuses definitions that refer to each other in a cycle, as `bobc check` does
(probe s29 types finding 3): before, `eval` of a self-recursive function printed <function>,
a definition typed by one that needs it printed its value, and a call of a recursive function
ran six seconds into the stack limit with a message that never named the function."""
from __future__ import annotations

import subprocess
import sys

from .conftest import REPOSITORY

MODULE = """module Cycles

def f : (pi unrestricted n : Nat . Nat) = (lambda unrestricted n : Nat . (f n))
def y : Nat = (f 1)
def T : Type 0 = (nat-eliminate (lambda unrestricted c : Nat . Type 0) Nat (lambda unrestricted k : Nat . (lambda unrestricted b : Type 0 . Bytes)) a)
def a : T = 0
def fine : Nat = 3
"""


def bobc(tmp_path, *arguments):
    path = tmp_path / "Cycles.bob"
    path.write_text(MODULE, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "bobc", arguments[0], str(path), *arguments[1:]],
                          capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": "off",
                               "PYTHONPATH": str(REPOSITORY / "compiler")})


def first_line(done):
    return done.stderr.splitlines()[0].split(": error: ", 1)[1]


def test_eval_refuses_the_cycles_check_refuses_with_the_same_message(tmp_path):
    checked = bobc(tmp_path, "check")
    assert checked.returncode == 1
    assert first_line(checked) == "definitions refer to each other in a cycle: f -> f"
    for name in ("f", "y"):
        done = bobc(tmp_path, "eval", name)
        assert done.returncode == 1, done.stdout
        assert first_line(done) == "definitions refer to each other in a cycle: f -> f"
        assert "Cycles.bob:3:5" in done.stderr and "recurse with eliminate" in done.stderr
    for arguments in (("a",), ("T",), ("a", "--type")):
        done = bobc(tmp_path, "eval", *arguments)
        assert done.returncode == 1, done.stdout
        assert first_line(done) == "definitions refer to each other in a cycle: T -> a -> T"


def test_eval_checks_only_the_cycles_its_definition_reaches(tmp_path):
    done = bobc(tmp_path, "eval", "fine")
    assert done.returncode == 0 and done.stdout == "3\n"


def test_unchecked_deep_recursion_names_the_recursive_definition(tmp_path):
    done = bobc(tmp_path, "eval", "y", "--unchecked")
    assert done.returncode == 1
    assert first_line(done) == ("evaluation nests too deeply even with a 1 GiB stack, in "
                                "definition y, through f (its function calls nest deepest)")
    assert "hint: f likely calls itself without end" in done.stderr
