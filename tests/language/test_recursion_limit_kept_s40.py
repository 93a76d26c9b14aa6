"""The Python API leaves the caller's recursion limit as it found it (docs/language.md, "Python
API").  load_program, Program.check and Program.value raised sys.setrecursionlimit to 20,000 and
left it so for the rest of the process (probe s40 roundtrip, left: hypothesis warned "The
recursion limit will not be reset"), where cli.main already put a command's caller's back.  The
expected value is the caller's own limit, read before the call; a deep value still evaluates
(the evaluator raises the limit, or moves to a big-stack thread, only while it runs)."""
from __future__ import annotations

import sys

from bobc.language import load_program
from bobc.targets import SM86


def test_loading_checking_and_evaluating_keep_the_callers_recursion_limit(tmp_path):
    depth = 195                       # within the nesting limit; deeper than 1000 frames evaluate in
    module = tmp_path / "Deep.bob"    # (tests/test_inprocess_compiles.py's deep module)
    module.write_text("module Deep\n\ndef deepValue = " + "(nat-add 1 " * depth + "0" + ")" * depth + "\n",
                      encoding="utf-8")
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)       # a fresh interpreter's default
    try:
        program = load_program(module, target=SM86)
        assert sys.getrecursionlimit() == 1000
        program.check()
        assert sys.getrecursionlimit() == 1000
        assert program.value("deepValue").value == depth
        assert sys.getrecursionlimit() == 1000
    finally:
        sys.setrecursionlimit(before)
