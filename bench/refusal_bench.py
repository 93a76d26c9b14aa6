"""How long `bobc check` takes to refuse a copy of Bob asking for 100,000 updates (issue 19).

The promise (docs/limits.md): a plan past a documented limit gets a message naming
the limit and the definition in under a second.  This runs `bobc check` on such a
copy as fresh processes and reports wall and CPU time (median/min/max).

    python bench/refusal_bench.py [--repeats N] [--updates N]

Prints the JSON result (committed as bench/results/refusal.json with its command).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
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
        text = source.read_text()
        if LINE not in text:
            raise SystemExit(f"refusal_bench: {source.relative_to(scratch)} no longer holds {LINE.strip()!r}: "
                             "nothing would ask for more updates (update LINE)")
        source.write_text(text.replace(LINE, LINE.replace("10", str(args.updates))))
        # this checkout's bobc, on this checkout's examples
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (str(REPO / "compiler"), os.environ.get("PYTHONPATH")) if p))
        walls, cpus, runs = [], [], []
        for _ in range(args.repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "bobc", "check",
                                   str(folder / "Bob/Build/NativeHost.bob")],
                                  capture_output=True, text=True, timeout=600, env=env)
            walls.append(time.monotonic() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            runs.append((done.returncode, done.stderr.splitlines()[0] if done.stderr else ""))

    def summary(raw):
        # the summary from the samples as recorded (to the millisecond), so it follows from them: a
        # median of the unrounded two could round the other way (0.249 against the samples' 0.248)
        xs = [round(x, 3) for x in raw]
        return {"median": round(statistics.median(xs), 3), "min": min(xs), "max": max(xs), "samples": xs}

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or None
    result = {"command": shlex.join(["python", "bench/refusal_bench.py", *sys.argv[1:]]),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "commit": commit, "updates": args.updates, "exit": runs[-1][0], "message": runs[-1][1],
              "wall_s": summary(walls), "cpu_s": summary(cpus), "cpus": os.cpu_count(),
              "platform": platform.platform(), "python": platform.python_version(),
              "load_average": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps(result, indent=2))
    refused = [k for k, (code, _) in enumerate(runs) if code != 1]        # a check that passed or crashed
    if refused:
        k = refused[0]
        print(f"refusal_bench: run {k + 1} was not the refusal timed here (exit {runs[k][0]}: "
              f"{runs[k][1] or 'no message'})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
