"""A warm cache refuses exactly what a cold one does under --max-evaluation-steps (probe s30 cache
finding 1).  One step budget covers the type check and the plan's extraction; the verdict was
stored as soon as the check passed, so a run refused in extraction stored it, and the next run
skipped the check and gave extraction the whole budget: refused cold, accepted warm.  Now a
stored verdict stands in for the check only together with the stored plan (nothing evaluated)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BOB = REPO / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"

# the steps a cache-off load, check, extraction and certification of Bob take; and the check's own
_MEASURE = """
import os, sys
from pathlib import Path
from bobc import pipeline
from bobc.language import core
from bobc.targets import target_named
target = target_named("sm_90")
program = pipeline.load(Path(sys.argv[1]), target)
entry = pipeline.require_entry(program, None)
before = core._fuel[0]
program.check()
checked = before - core._fuel[0]
pipeline.check_and_certify(program, target, entry)
print(core._fuel[1] - core._fuel[0], checked)
"""


def bobc(*arguments, cache):
    return subprocess.run([sys.executable, "-m", "bobc", *arguments], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": str(cache),
                               "PYTHONPATH": str(REPO / "compiler")}, cwd=REPO)


@pytest.fixture(scope="module")
def needed():
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(BOB)], capture_output=True, text=True, check=True,
                          env={"PATH": "/usr/bin:/bin", "BOBC_CACHE_DIR": "off", "PYTHONPATH": str(REPO / "compiler")})
    total, checked = map(int, done.stdout.split())
    assert checked < total - 1, "the check alone must fit a budget extraction then runs out of"
    refused = bobc("check", str(BOB), "--max-evaluation-steps", str(total - 1), cache="off")
    passed = bobc("check", str(BOB), "--max-evaluation-steps", str(total), cache="off")
    assert refused.returncode == 1 and passed.returncode == 0, (refused.stderr, passed.stderr)
    return total


def _outcome(done):
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("command", ["check", "build"])
def test_a_budget_refused_cold_is_refused_warm_with_the_same_message(command, needed, tmp_path):
    cache = tmp_path / "cache"

    def run(where):
        extra = ["-o", str(tmp_path / "host")] if command == "build" else []
        return bobc(command, str(BOB), "--max-evaluation-steps", str(needed - 1), *extra, cache=where)

    off = _outcome(run("off"))
    assert off[0] == 1 and "evaluation steps: more than the limit of" in off[2] and "Traceback" not in off[2]
    for attempt in ("cold", "warm", "warm again"):
        assert _outcome(run(cache)) == off, attempt
    assert not (tmp_path / "host").exists()


def test_a_verdict_stored_by_one_command_does_not_lift_the_budget_of_another(needed, tmp_path):
    cache = tmp_path / "cache"
    host = tmp_path / "host"
    limit = ["--max-evaluation-steps", str(needed - 1)]
    checked = bobc("check", str(BOB), *limit, cache=cache)
    built = bobc("build", str(BOB), *limit, "-o", str(host), cache=cache)
    assert checked.returncode == built.returncode == 1 and not host.exists()
    assert built.stderr.split(": error: ", 1)[1] == checked.stderr.split(": error: ", 1)[1]


def test_a_budget_that_passes_cold_passes_warm(needed, tmp_path):
    cache = tmp_path / "cache"
    limit = ["--max-evaluation-steps", str(needed)]
    outcomes = [_outcome(bobc("check", str(BOB), *limit, cache=where)) for where in ("off", cache, cache, cache)]
    assert outcomes[0][0] == 0 and all(outcome == outcomes[0] for outcome in outcomes)
    hosts = []
    for index, where in enumerate(("off", cache, cache)):
        host = tmp_path / f"host{index}"
        done = bobc("build", str(BOB), *limit, "-o", str(host), cache=where)
        assert done.returncode == 0, done.stderr
        hosts.append(host.read_bytes())
    assert hosts[0] == hosts[1] == hosts[2]
