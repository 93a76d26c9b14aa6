"""An --entry naming no definition is shown with its control characters as '?', so the refusal
stays one line (probe s42 cli3 finding 5): `bobc check PLAN --entry $'a\\nb'` printed "defines no a",
a line break, then "b, the native host a check certifies".  README: "Every mistake a user can make
... gets one message"; errors.printable is how every other refusal shows a name the user gave (`bobc
eval PLAN $'a\\nb'` said "no definition a?b").  Expected: the name with '?' for each control
character, one error line and one hint line."""
from __future__ import annotations

import pytest

from bobc.cli import main

MODULE = "module Probe.Names\n\ndef number : Nat = 7\n"


@pytest.mark.parametrize("command", ["check", "build"])
@pytest.mark.parametrize("entry, shown", [("a\nb", "a?b"), ("a\tb", "a?b"), ("a\rb\x7f", "a?b?")])
def test_an_unknown_entry_is_one_line(tmp_path, capsys, command, entry, shown):
    plan = tmp_path / "Probe/Names.bob"
    plan.parent.mkdir()
    plan.write_text(MODULE)
    words = [command, str(plan), "--entry", entry] + (["-o", str(tmp_path / "host")] if command == "build" else [])
    assert main(words) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith(f"bobc {command}: error: Probe.Names defines no {shown}, the native host "), lines
    assert len(lines) == 2 and lines[1].startswith("hint: "), lines
    assert not (tmp_path / "host").exists()
