#!/usr/bin/env python3
"""Two Bob hosts timed against each other in one run: fresh-process `train` invocations,
alternating A, B, A, B... so that drift of the machine falls on both alike (issue 14:
"Bob's invocation time no worse than before, in the same run").

    python3 bench/gpu/ab_invocation.py --host A=.device/bob-host-old-sm_90 \
        --host B=.device/bob-host-sm_90 --reference .device/bob-reference --repeats 30 --out $OUT/ab

Each host keeps its default bring-up (nothing in the environment chooses one); the
outputs of every invocation of one host must be the same bytes.  Writes ab.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "compiler"))
from bob_bench import make_inputs  # noqa: E402


def once(host: Path, inputs: dict, folder: Path) -> tuple[float, bytes]:
    outs = [folder / name for name in ("out.ckpt", "out.pred", "out.result")]
    for path in outs:
        path.unlink(missing_ok=True)
    command = [str(host), "train", "--input", str(inputs["record"]), "--checkpoint", str(inputs["checkpoint"]),
               "--checkpoint-out", str(outs[0]), "--predictions", str(outs[1]), "--result", str(outs[2])]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, timeout=60)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{host}: exit {done.returncode}: {done.stderr.decode(errors='replace').strip()}")
    return took, b"".join(path.read_bytes() for path in outs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", action="append", required=True, help="NAME=PATH, two or more")
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    hosts = dict(item.split("=", 1) for item in args.host)
    times = {name: [] for name in hosts}
    outputs = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs = make_inputs(args.reference, folder)
        for name, path in hosts.items():          # one warm-up each, not counted
            once(Path(path), inputs, folder)
        for _ in range(args.repeats):
            for name, path in hosts.items():
                took, data = once(Path(path), inputs, folder)
                times[name].append(took * 1e3)
                if outputs.setdefault(name, data) != data:
                    raise SystemExit(f"{name}: an invocation's outputs differ from its first one's")
    report = {name: {"median_ms": statistics.median(t), "min_ms": min(t), "max_ms": max(t),
                     "samples_ms": t} for name, t in times.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ab.json").write_text(json.dumps({"hosts": hosts, "repeats": args.repeats, "times": report},
                                                 indent=1) + "\n")
    for name, r in report.items():
        print(f"{name}: median {r['median_ms']:.1f} ms (min {r['min_ms']:.1f}, max {r['max_ms']:.1f}) "
              f"over {args.repeats} fresh-process train invocations, alternating")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
