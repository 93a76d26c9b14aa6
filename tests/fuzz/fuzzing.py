"""Helpers shared by tests/fuzz (see conftest.py for the seed and the run's size)."""
from __future__ import annotations

import collections
import json
import os
import random
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
HERE = Path(__file__).resolve().parent
SEED = int(os.environ.get("BOBC_FUZZ_SEED") or random.SystemRandom().randrange(2 ** 32))
LONG = os.environ.get("BOBC_FUZZ_LONG", "") not in ("", "0")
SCALE = 10 if LONG else 1
COUNTS: dict = collections.defaultdict(collections.Counter)
TIMEOUT_S = 300                      # any one subprocess (a hang guard: a loaded 2-core CI is slow); a FIFO must not hang either side



def rng_for(name: str) -> random.Random:
    """A generator for one category, from the run's seed and the category's name."""
    return random.Random(f"{SEED}:{name}")


def run(command, **kw) -> subprocess.CompletedProcess:
    """A subprocess under TIMEOUT_S; a timeout is a finding (a hang), never a wait."""
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, **kw)
    except subprocess.TimeoutExpired as expired:
        raise AssertionError(f"hang: {command} ran past {TIMEOUT_S} s") from expired


class Verdicts:
    """Both runtimes on the same cases: the C host (one process per case) and the
    reference runner (one process for all).  The host's 6 (no GPU: everything
    it checks was accepted) is the reference's 0."""

    def __init__(self, host, workdir: Path):
        self.host = host
        self.workdir = workdir
        self.cases: list = []

    def add(self, label: str, folder: Path, op="train", input="record.bin", checkpoint=None,
            checkpoint_out="out.ckpt", predictions="pred.bin", result="result.bin"):
        self.cases.append({"label": label, "dir": str(folder), "op": op, "input": input,
                           "checkpoint": checkpoint, "checkpoint_out": checkpoint_out,
                           "predictions": predictions, "result": result,
                           "before": snapshot(folder)})

    def c_verdict(self, case) -> object:
        argv = [str(self.host), case["op"], "--input", case["input"]]
        if case["checkpoint"] is not None:
            argv += ["--checkpoint", case["checkpoint"]]
        argv += ["--checkpoint-out", case["checkpoint_out"], "--predictions", case["predictions"],
                 "--result", case["result"]]
        done = run(argv, cwd=case["dir"])
        if done.returncode < 0:
            return f"signal {-done.returncode}"
        return 0 if done.returncode == 6 else done.returncode

    def python_verdicts(self) -> list:
        cases_file = self.workdir / f"cases-{len(self.cases)}-{os.getpid()}.json"
        cases_file.write_text(json.dumps([{k: v for k, v in c.items() if k != "before"}
                                          for c in self.cases]))
        timeout = 120 + 60 * len(self.cases)       # reference_driver.py's CASE_ALARM_S each, and its start
        try:
            done = subprocess.run([sys.executable, str(HERE / "reference_driver.py"), str(PLAN),
                                   str(cases_file)], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            raise AssertionError("hang: the reference driver ran past its timeout") from expired
        assert done.returncode == 0, done.stderr[-2000:]
        verdicts = [json.loads(line) for line in done.stdout.splitlines()]
        assert len(verdicts) == len(self.cases), done.stderr[-2000:]
        return verdicts

    def compare(self, category: str) -> list:
        """Run every case on both sides; count; return the disagreements."""
        python = self.python_verdicts()
        differences = []
        for case, p in zip(self.cases, python):
            c = self.c_verdict(case)
            COUNTS[category]["cases"] += 1
            COUNTS[category][f"verdict {c}" if c == p else "disagreement"] += 1
            for side, verdict in (("C", c), ("reference", p)):
                if isinstance(verdict, str):
                    COUNTS[category][f"{side} {verdict.split(':')[0]}"] += 1
            if c != p:
                differences.append((case["label"], c, p))
            elif c != 0:         # refused by both: nothing written, nothing replaced
                after = snapshot(Path(case["dir"]))
                if after != case["before"]:
                    differences.append((case["label"], "refused but the folder changed",
                                        sorted(map(repr, set(after.items()) ^ set(case["before"].items())))))
                else:
                    COUNTS[category]["refused, folder untouched"] += 1
        return differences


def snapshot(folder: Path) -> dict:
    """Every entry under `folder`: its kind and, for a regular file, its bytes' CRC."""
    out = {}
    for path in sorted(folder.rglob("*")):
        relative = str(path.relative_to(folder))
        if path.is_symlink():
            out[relative] = "symlink -> " + os.readlink(path)
        elif path.is_file() and path.stat().st_size < (1 << 24):
            out[relative] = zlib.crc32(path.read_bytes())
        else:
            out[relative] = "other" if not path.is_dir() else "folder"
    return out
