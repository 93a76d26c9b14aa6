"""Hostile-input fuzzing (issue 19): the C host, the reference runner and the compiler.

Every category is generated afresh each run from one seed, printed in the
header and the summary (BOBC_FUZZ_SEED=N repeats a run).  The default run
fits CI (a few minutes on 2 cores); BOBC_FUZZ_LONG=1 runs ten times as many
cases.  Every subprocess runs under a timeout; the counts of cases, verdicts
and findings are printed at the end of the session.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzzing import COUNTS, HERE, LONG, PLAN, REPO, SEED, run  # noqa: E402


def pytest_report_header(config):
    return f"fuzz seed {SEED} (BOBC_FUZZ_SEED={SEED} repeats it), {'long' if LONG else 'CI'} run"


def pytest_terminal_summary(terminalreporter):
    if not COUNTS:
        return
    terminalreporter.section(f"fuzz counts (seed {SEED})")
    for category in sorted(COUNTS):
        parts = ", ".join(f"{k}: {v}" for k, v in sorted(COUNTS[category].items()))
        terminalreporter.write_line(f"{category}: {parts}")


@pytest.fixture(scope="session")
def plan_files(tmp_path_factory):
    """The Bob plan's contract and a valid input record and checkpoint for it."""
    from bobc.commands.run import load_plan
    from bob_model.model import BobConfig
    from bob_model.formats import (Checkpoint, InputRecord, encode_checkpoint,
                                        encode_input_record, fresh_parameters)

    config = BobConfig.from_plan(load_plan(PLAN))
    record = encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [119, 116, 32]))
    zeros = np.zeros(65536, np.float32)
    checkpoint = encode_checkpoint(config.contract,
                                   Checkpoint(fresh_parameters(config.seed_identity), zeros, zeros, 20))
    return {"config": config, "contract": config.contract, "record": record,
            "checkpoint": checkpoint}


@pytest.fixture(scope="session")
def host(tmp_path_factory):
    """The Bob host, built as a user builds it; on this GPU-less machine it checks
    every input and output path and then exits 6 (no GPU), touching nothing."""
    out = tmp_path_factory.mktemp("host") / "bob-host"
    done = run([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", str(out)])
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="session")
def publish_tool(tmp_path_factory):
    runtime = REPO / "runtime_c"
    out = tmp_path_factory.mktemp("tool") / "publish_tool"
    sources = [HERE / "publish_tool.c", runtime / "host_io.c", runtime / "host_runtime.c"]
    done = run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-D_DEFAULT_SOURCE",
                f"-I{runtime}", *map(str, sources), "-lm", "-o", str(out)])
    assert done.returncode == 0, done.stderr
    return out
