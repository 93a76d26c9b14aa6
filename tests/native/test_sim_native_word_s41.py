"""`bobc sim PLAN native ...` (probe s41 peerfaults finding 3): the simulator runs plan hosts only
(docs/simulator.md), and a native host's program runs on bobc's reference interpreter
(docs/native-host.md, "The reference interpreter").  Before, sim said only "unknown operation
'native' (expected train or predict)", as if the word were misspelt; now it names the command
that runs the program.  Refused before the plan is read (no evaluation: fast)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def test_sim_of_a_native_word_names_the_reference_interpreter(tmp_path):
    plan = REPOSITORY / "tests/native/plans/Native/Peers.bob"
    done = subprocess.run([sys.executable, "-m", "bobc", "sim", str(plan), "native", "m", "w0", "--entry", "listener"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"bobc sim: error: bobc sim runs a plan host (train, predict), not a native host's program; "
                           f"run that on bobc's reference interpreter: `bobc run {plan} native ARGUMENTS... "
                           f"--reference --entry ENTRY` (docs/native-host.md, \"The reference interpreter\")\n"), done.stderr
    assert list(tmp_path.iterdir()) == []


def test_sim_of_another_word_is_still_the_hosts_refusal(tmp_path):
    """A word that is no operation at all keeps the host's own refusal (shared with the host)."""
    plan = REPOSITORY / "tests/native/plans/Native/Peers.bob"
    done = subprocess.run([sys.executable, "-m", "bobc", "sim", str(plan), "nativ"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})
    assert done.returncode == 2 and "unknown operation 'nativ' (expected train or predict)" in done.stderr, done.stderr
