"""`bobc eval PLAN NAME` of a built-in (`Nat`, `Bytes`, `zero`, `Type`), a primitive (`nat-add`) or
a form's head (`succ`, `lambda`) says what the name is and how to evaluate it (probe s46
plantexts2).  docs/language.md ("Visibility"): a name in an expression is looked up among the
binders, the definitions, then the built-ins `Nat`, `Bytes`, `zero` and the primitives; `bobc eval`
evaluates a definition.  Before, each was "no definition nat-add in Q or its imports" with the hint
"names are looked up in the plan module and its imports" (as if an import were missing), and where
a module on the search path happened to define `Nat`, "add `import N3` to evaluate it" -- an import
that would only hide the built-in type.  A primitive's type is written from docs/language.md's
"Primitives" table (nat-add: a + b of two naturals)."""
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


def _eval(folder: Path, name: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bobc", "eval", "Q.bob", name], cwd=folder,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPOSITORY / "compiler"), "PATH": "/usr/bin:/bin",
                               "BOBC_CACHE_DIR": "off"})


@pytest.mark.parametrize("name, said, told", [
    ("Nat", "Nat is a built-in type, not a definition", "def x : Nat = 3"),
    ("Bytes", "Bytes is a built-in type, not a definition", "def x : Nat = 3"),
    ("zero", "zero is the built-in natural 0, not a definition", "def x : Nat = 3"),
    ("Type", "Type is the universe (Type n : Type n+1), not a definition", "def x : Nat = 3"),
    ("nat-add", "nat-add is a primitive, not a definition: nat-add : (pi unrestricted a : Nat . "
                "(pi unrestricted b : Nat . Nat))", "def x = (nat-add 1 2)"),
    ("bytes-length", "bytes-length is a primitive, not a definition: bytes-length : (pi unrestricted "
                     "a : Bytes . Nat)", "def x = (bytes-length b\"abc\")"),
    ("succ", "succ is a form of the language, not a definition", "def x : Nat = 3"),
])
def test_eval_of_a_builtin_says_what_it_is_s46(tmp_path, name, said, told):
    (tmp_path / "Q.bob").write_text("module Q\ndef r : Nat = 1\n")
    # a module beside the plan that defines Nat: the plan does not import it, and must not be told to
    (tmp_path / "N3.bob").write_text("module N3\ndef Nat : Type 0 = Bytes\n")
    done = _eval(tmp_path, name)
    assert done.returncode == 1, done.stdout
    assert f"bobc eval: error: {said}" in done.stderr, done.stderr
    assert told in done.stderr, done.stderr
    assert "import N3" not in done.stderr
    assert "names are looked up in the plan module and its imports" not in done.stderr


def test_a_definition_named_like_a_primitive_is_still_evaluated_s46(tmp_path):
    (tmp_path / "Q.bob").write_text("module Q\ndef nat-add : Nat = 7\n")
    done = _eval(tmp_path, "nat-add")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "7"
