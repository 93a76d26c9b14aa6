"""How long the language takes on the Bob plan: load, evaluate, type check.

Each measurement loads a fresh Program (definitions are cached per program,
so reusing one would time a dictionary lookup).  Evaluation uses no
compiler-native-encode handlers: what is timed is the language, not the SASS
assembler or the image encoder, and the definitions chosen need no machine
code (the launch counts must not).  Two synthetic cases time the hot paths:
a 10^6-step nat-eliminate and a fold over a 65536-cell list.

    python bench/eval_bench.py [--repeats N] [--out bench/results/eval.json]

Prints the JSON it writes (bench/run.py reads it from stdout).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "compiler"))

from bobc.language import Intrinsics, load_program  # noqa: E402
from bobc.targets import SM86  # noqa: E402
from bobc.language import modules  # noqa: E402
from bobc.language.check import check_program  # noqa: E402

PLAN = REPO / "examples/bob/Bob/Build/PhysicalComponents.bob"
EVALUATED = ["bobLaunchCount", "bobSubmissionCount", "bobArenaBytes", "bobDeviceHazard",
             "bobInverseRows"]

SYNTHETIC = """module Synthetic

family List : Type 0
constructor ListEmpty
constructor ListCons
field unrestricted head : Nat
field unrestricted tail : (family List)
end-family

def count : Nat = (nat-eliminate (lambda unrestricted k : Nat . Nat) 0
  (lambda unrestricted k : Nat . (lambda unrestricted below : Nat . (nat-add below 1))) 1000000)
def list : (family List) = (nat-eliminate (lambda unrestricted k : Nat . (family List))
  (constructor List ListEmpty)
  (lambda unrestricted k : Nat . (lambda unrestricted rest : (family List) .
    (constructor List ListCons k rest))) 65536)
def sum : Nat = (eliminate List (lambda unrestricted c : (family List) . Nat) list
  (branch ListEmpty . 0)
  (branch ListCons h t induction . (nat-add induction h)))
"""


def deep_force(program, value):
    """Force a value and everything inside it (no machine code is reached here)."""
    stack = [value]
    cells = 0
    while stack:
        item = program.force(stack.pop())
        cells += 1
        stack.extend(getattr(item, "fields", ()))
    return cells


def timed(function, repeats, setup=None):
    """Run `function(setup())` (or `function()`) `repeats` times; time only the function."""
    samples = []
    result = None
    for _ in range(repeats):
        prepared = setup() if setup is not None else None
        start = time.perf_counter()
        result = function(prepared) if setup is not None else function()
        samples.append(time.perf_counter() - start)
    return {"min_s": min(samples), "median_s": statistics.median(samples),
            "mean_s": statistics.fmean(samples), "repeats": repeats}, result


def fresh():
    return load_program(PLAN, intrinsics=Intrinsics(), target=SM86)


def fresh_cold():
    """Load with the process's parse cache emptied: every module parsed again."""
    modules._PARSED.clear()
    return fresh()


def commit():
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(REPO / "bench/results/eval.json"))
    args = parser.parse_args(argv)

    results = {}
    results["load cold (parse + resolve)"], program = timed(fresh_cold, args.repeats)
    results["load warm (resolve; parse trees cached)"], _ = timed(fresh, args.repeats)
    results["load cold (parse + resolve)"]["modules"] = len(program.modules)
    results["load cold (parse + resolve)"]["definitions"] = sum(
        len(s.definitions) for s in program.scopes.values())

    # each on a freshly loaded program (loading is not timed): nothing cached
    for name in EVALUATED:
        stats, value = timed(lambda p: p.value(name), args.repeats, setup=fresh)
        stats["value"] = value.value
        results[f"evaluate {name}"] = stats

    stats, cells = timed(lambda p: deep_force(p, p.value("bobSubmissionSchedule")),
                         args.repeats, setup=fresh)
    stats["cells"] = cells
    results["force bobSubmissionSchedule completely"] = stats

    stats, checker = timed(check_program, args.repeats, setup=fresh)
    stats["definitions_checked"] = len(checker.checked_bodies)
    results["type check (all modules)"] = stats

    # the whole Bob plan: every module loaded cold, type checked, extracted, certified,
    # the kernels assembled and the device images encoded (bobc.pipeline.compile_plan);
    # the parse cache is emptied before each repeat: every module is parsed again
    from bobc import pipeline
    from bobc.targets import TARGETS

    host_plan = REPO / "examples/bob/Bob/Build/NativeHost.bob"
    for name in sorted(TARGETS):
        def whole(_, target=TARGETS[name]):
            return pipeline.compile_plan(host_plan, target)
        stats, built = timed(whole, args.repeats, setup=modules._PARSED.clear)
        stats["images_bytes"] = sum(len(getattr(built.images, k)) for k in ("program", "qmd", "push", "gpfifo"))
        results[f"whole Bob plan to images, {name} (NativeHost.bob)"] = stats

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "Synthetic.bob"
        path.write_text(SYNTHETIC, encoding="utf-8")
        for name in ("count", "sum"):
            stats, value = timed(lambda p: p.value(name), max(1, args.repeats // 2),
                                 setup=lambda: load_program(path, target=SM86))
            stats["value"] = value.value
            results[f"synthetic {name}"] = stats

    report = {
        "command": shlex.join([Path(sys.executable).name, "bench/eval_bench.py", *(argv or sys.argv[1:])]),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": {"platform": platform.platform(), "processor": platform.processor(),
                    "cpu_count": os.cpu_count(), "python": platform.python_version()},
        "plan": str(PLAN.relative_to(REPO)),
        "results": results,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
