"""`bobc sim PLAN train --entry E` and `bobc run PLAN train --reference --entry E` with E a native
host's Bytes (probe s41 peerfaults finding 3, messages7): the words a plan host takes were asked
for one by one ("missing --input RECORD", then --checkpoint-out, --result, --predictions), and only
with all four given was E said to be a native host, which no words make a plan host.  Now a refusal
of the words with such an --entry says what E is and the command that runs it; words with no
--entry, or an --entry that is no native host, keep the words' refusal.  The expected texts are the
native host's hint (commands.run.native_entry_hint) with this plan's path and entry put in."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
# a native host's Bytes as seed 003's Pair.bob defines worker0 (docs/partitioned-regression.md), made
# of a platform fragment that evaluates in no time (tests/specs/test_native_programs_run.py)
PAIR = ("module Pair\n\nimport Runtime.OrderedCombine\nimport Runtime.NativePhysicalProgram\n\n"
        "def worker0 : Bytes = (nativePhysicalCommandsBytes (orderedCombineCommands 0 256 264 272 phEnd))\n")


@pytest.fixture
def plan(tmp_path):
    (tmp_path / "plan").mkdir()
    (tmp_path / "plan" / "Pair.bob").write_text(PAIR, encoding="utf-8")
    (tmp_path / "work").mkdir()
    return tmp_path / "plan" / "Pair.bob"


def bobc(*words, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *words], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})


@pytest.mark.parametrize("command", [("sim",), ("run", "--reference")], ids=["sim", "run"])
def test_a_native_entry_is_said_before_the_words_it_lacks(command, plan):
    work = plan.parent.parent / "work"
    done = bobc(command[0], str(plan), "train", *command[1:], "--entry", "worker0", cwd=work)
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        f"bobc {command[0]}: error: worker0 is Bytes (a native host, not a plan host); `bobc {command[0]}` runs a "
        f"plan host's train or predict\n"
        f"hint: run it with `bobc run {plan} native ARGUMENTS... --reference --entry worker0` "
        f"(docs/native-host.md, \"The reference interpreter\"), or build it with "
        f"`bobc build {plan} --entry worker0 -o HOST`\n"), done.stderr
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("entry", [(), ("--entry", "nosuch")], ids=["no-entry", "unknown-entry"])
def test_other_entries_keep_the_words_refusal(entry, plan):
    done = bobc("sim", str(plan), "train", *entry, cwd=plan.parent.parent / "work")
    assert done.returncode == 2 and done.stderr == "bobc sim: error: missing --input RECORD (see --help)\n", done.stderr
