#!/usr/bin/env python3
"""Where one Coppelius update's time goes, launch by launch (H200, CuPy).

The update's launches (coppelius_model.graph, our kernels through device.CupyBackend) are
issued one by one from Python with an event recorded between every two, --repeats times; launch
i's time is the median of (event after i) - (event before i): the kernel alone (the GPU idles
while Python issues the next), warm, on the data the update leaves (CuPy's backend launches each
product as its HMMA kernel; the seed host's sm_90 build runs the sm_90 products instead:
bench/results/sm90-gemm-h200.md).  Printed by launch, then summed by kernel.

    python3 bench/coppelius/launch_times.py --config large --json out.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for path in (REPO / "compiler", REPO / "examples" / "coppelius"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from coppelius_model import device, model  # noqa: E402
from coppelius_model.config import CONFIGS  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="large", choices=sorted(CONFIGS))
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    config = CONFIGS[args.config]
    with tempfile.TemporaryDirectory() as scratch:
        backend = device.CupyBackend(Path(scratch))
        cp = backend.cp
        runner = device.Runner(config, backend)
        runner.load(model.fresh_state(config, seed=0))
        data = (REPO / "tests/data/coppelius/tinyshakespeare-64k.txt").read_bytes()
        runner.stage(*model.context_at(data, 0, config.context))
        launches = runner.update_launches
        events = [cp.cuda.Event() for _ in range(len(launches) + 1)]
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            runner.launch_update(1)          # warm: modules loaded, clocks up
            stream.synchronize()
            patched = runner.adamw_words(1)
            samples = [[] for _ in launches]
            totals = []
            for _ in range(args.repeats + 2):
                events[0].record(stream)
                for index, prepared in enumerate(launches):
                    backend.launch(prepared, patched.get(index))
                    events[index + 1].record(stream)
                stream.synchronize()
                for index in range(len(launches)):
                    samples[index].append(cp.cuda.get_elapsed_time(events[index], events[index + 1]) * 1e3)
                totals.append(cp.cuda.get_elapsed_time(events[0], events[-1]))
    rows = []
    for raw, times in zip(runner.update_raw, samples):
        rows.append(dict(kernel=raw.kernel, what=raw.what, grid=list(raw.grid), us=statistics.median(times[2:])))
    by_kernel = defaultdict(lambda: [0, 0.0])
    for row in rows:
        by_kernel[row["kernel"]][0] += 1
        by_kernel[row["kernel"]][1] += row["us"]
    for index, row in enumerate(rows):
        print(f"{index:4d} {row['us']:8.2f} us  {row['kernel']:36s} {str(tuple(row['grid'])):16s} {row['what']}")
    print(f"\nupdate (events' span, median): {statistics.median(totals[2:]):.3f} ms over {len(rows)} launches; "
          f"sum of launches {sum(r['us'] for r in rows) / 1e3:.3f} ms")
    for kernel, (count, us) in sorted(by_kernel.items(), key=lambda kv: -kv[1][1]):
        print(f"{kernel:36s} {count:4d} launches {us / 1e3:8.3f} ms  {us / count:8.2f} us a launch")
    if args.json:
        args.json.write_text(json.dumps(dict(config=args.config, launches=rows,
                                             update_ms=statistics.median(totals[2:])), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
