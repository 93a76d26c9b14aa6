"""docs/language.md's example of a printed binder renamed with `'` is the language as written and
what bobc prints (probe s39 docs8 finding 3): it quoted `K = (lambda B . ...)`, which does not
parse (a lambda names its multiplicity and type), and a printed type without the multiplicities
bobc prints.  The example's definition and expression are read from the page, run through `bobc
check`, and the type the page says is printed must be in the message, as printed."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def example() -> tuple[str, str, str]:
    text = " ".join((REPO / "docs" / "language.md").read_text(encoding="utf-8").split())
    m = re.search(r"prints with `'` added until its name is free: with `(def K = [^`]+)`, `\(K A\)` under a "
                  r"binder `A` \(`([^`]+)`\) prints as `([^`]+)`", text)
    assert m, "docs/language.md: the printed-binder example is not where this test reads it"
    return m.group(1), m.group(2), m.group(3)


def check(plan: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "bobc", "check", plan], capture_output=True, text=True,
                          timeout=300, env=env)


def test_the_printed_binder_example_is_what_bobc_check_prints(tmp_path):
    definition, expression, printed = example()
    plan = tmp_path / "Printed.bob"
    plan.write_text(f"module Printed\n\n{definition}\n\ndef w = {expression}\n", encoding="utf-8")
    done = check(plan, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "type mismatch" in done.stderr and f"\n    {printed}\n" in done.stderr, done.stderr
    # the printed type reads back: a definition of that type over the same A is well typed
    back = tmp_path / "Back.bob"
    back.write_text(f"module Back\n\n{definition}\n\ndef same = (lambda 0 A : Type 0 . (lambda 0 z : (K A) . "
                     f"(the {printed} z)))\n", encoding="utf-8")
    done = check(back, tmp_path)
    assert done.returncode == 0, done.stderr
