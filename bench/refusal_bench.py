"""How long `bobc check` takes to refuse a copy of Bob asking for 100,000 updates (issue 19).

The promise (docs/limits.md): a plan past a documented limit gets a message naming
the limit and the definition in under a second.  This runs `bobc check` on such a
copy as fresh processes and reports wall and CPU time (median/min/max).

    python bench/refusal_bench.py [--repeats N] [--updates N]

Prints the JSON result (committed as bench/results/refusal.json with its command).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINE = "def bobUpdatesPerInvocation : Nat = 10\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--updates", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "bob"
        shutil.copytree(REPO / "examples/bob", folder)
        source = folder / "Bob/TrainingRun.bob"
        source.write_text(source.read_text().replace(LINE, LINE.replace("10", str(args.updates))))
        walls, cpus, message = [], [], ""
        for _ in range(args.repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "bobc", "check",
                                   str(folder / "Bob/Build/NativeHost.bob")],
                                  capture_output=True, text=True, timeout=600)
            walls.append(time.monotonic() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            message = done.stderr.splitlines()[0] if done.stderr else ""
    summary = lambda xs: {"median": round(statistics.median(xs), 3), "min": round(min(xs), 3),
                          "max": round(max(xs), 3)}
    result = {"command": shlex.join(["python", "bench/refusal_bench.py", *sys.argv[1:]]),
              "updates": args.updates, "exit": done.returncode, "message": message,
              "wall_s": summary(walls), "cpu_s": summary(cpus), "cpus": os.cpu_count()}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
