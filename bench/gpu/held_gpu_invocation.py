#!/usr/bin/env python3
"""How much of a `bob-host train` invocation is bringing an idle GPU up.

Times the same invocation (fresh process, start to outputs written) first with
nothing else holding the GPU, then while another process keeps a CUDA context
open (as `nvidia-smi -pm 1` / nvidia-persistenced would keep the driver's state
up between runs): the difference is what the driver spends initializing the GPU
on first open, which no host code can avoid.  Prints one JSON document.

    python3 bench/gpu/held_gpu_invocation.py --host .device/bench/bob-host \\
        --reference .device/bench/bob-reference [--repeats 5]

Needs numpy, and cupy for the holder process.  The GPU machine's own settings
are left as they are: the holder is an ordinary process, killed at the end.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bob_bench import make_inputs  # noqa: E402

HOLDER = "import cupy, sys, time; cupy.zeros(1).sum(); print('held', flush=True); time.sleep(600)"


def invocation_walls(host: Path, inputs: dict, folder: Path, repeats: int) -> list[float]:
    walls = []
    for k in range(repeats):
        command = [str(host), "train", "--input", str(inputs["record"]), "--checkpoint", str(inputs["checkpoint"]),
                   "--checkpoint-out", str(folder / f"{k}.ckpt"), "--predictions", str(folder / f"{k}.pred"),
                   "--result", str(folder / f"{k}.result")]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        walls.append(time.perf_counter() - start)
        if done.returncode:
            raise SystemExit(f"{host} exited {done.returncode}: {done.stderr}")
    return walls


def summary(walls: list[float]) -> dict:
    return {"median_ms": statistics.median(walls) * 1e3, "min_ms": min(walls) * 1e3, "max_ms": max(walls) * 1e3,
            "samples_ms": [w * 1e3 for w in walls]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", type=Path, required=True)
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs = make_inputs(args.reference, folder)
        invocation_walls(args.host, inputs, folder, 1)          # page cache, first-run effects
        idle = invocation_walls(args.host, inputs, folder, args.repeats)
        holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True)
        try:
            if holder.stdout.readline().strip() != "held":
                raise SystemExit("the holder process did not bring a CUDA context up")
            held = invocation_walls(args.host, inputs, folder, args.repeats)
        finally:
            holder.kill()
            holder.wait()
    print(json.dumps({"host": str(args.host), "nothing_else_holds_the_gpu": summary(idle),
                      "another_process_holds_a_context": summary(held)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
