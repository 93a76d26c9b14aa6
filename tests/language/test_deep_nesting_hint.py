"""'evaluation nests too deeply' says what can be true (probe s31 limits finding 5): in a checked
plan a definition cannot call itself (cycles are refused before anything runs, eliminate always
ends), so the hint is about a value too deep (a 1.2 M-cell list summed with eliminate, the case
docs/limits.md names), never "likely calls itself without end"; that hint stays for an unchecked
evaluation, where a definition may (tests/language/test_eval_cycles.py, test_size_limits.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEEP = """module Deep
family L : Type 0
constructor LCons
field unrestricted head : Nat
field unrestricted tail : (family L)
constructor LNil
end-family
def build : (pi unrestricted n : Nat . (pi unrestricted start : (family L) . (family L))) =
  (lambda unrestricted n : Nat . (lambda unrestricted start : (family L) .
    (nat-eliminate (lambda unrestricted k : Nat . (family L)) start
      (lambda unrestricted k : Nat . (lambda unrestricted below : (family L) . (constructor L LCons k below))) n)))
def sum : (pi unrestricted l : (family L) . Nat) =
  (lambda unrestricted l : (family L) . (eliminate L (lambda unrestricted x : (family L) . Nat) l
    (branch LCons h t ih . (nat-add h ih)) (branch LNil . 0)))
def big : (family L) = (nat-eliminate (lambda unrestricted k : Nat . (family L)) (constructor L LNil)
  (lambda unrestricted k : Nat . (lambda unrestricted below : (family L) . (build 60000 below))) 20)
def sbig : Nat = (sum big)
"""


def eval_deep(tmp_path, *options):
    (tmp_path / "Deep.bob").write_text(DEEP, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "bobc", "eval", str(tmp_path / "Deep.bob"), "sbig", *options],
                          capture_output=True, text=True, cwd=REPO,
                          env={"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": "off", "PYTHONPATH": str(REPO / "compiler")})


def test_a_checked_structure_too_deep_is_not_called_a_runaway_recursion(tmp_path):
    done = eval_deep(tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "error: evaluation nests too deeply even with a 1 GiB stack, in definition sbig, through sum " \
           "(its function calls nest deepest)" in done.stderr
    [hint] = [line for line in done.stderr.splitlines() if line.startswith("hint: ")]
    assert "calls itself without end" not in hint.replace("cannot be calling itself without end", "")
    assert hint.startswith("hint: sum recurses once a level of a value (or a chain of definitions) too deep "
                           "to evaluate"), hint
    assert "build it shallower (the depth limit: docs/limits.md)" in hint


def test_unchecked_it_may_still_be_a_runaway_recursion(tmp_path):
    done = eval_deep(tmp_path, "--unchecked")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "hint: sum likely calls itself without end (unchecked" in done.stderr
    assert "if it does not, the value it walks is too deep: build it shallower" in done.stderr
