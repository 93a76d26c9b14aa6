#!/usr/bin/env python3
"""Where a kernel's warps wait, instruction by instruction: Nsight Compute's stall samples from
its source page (SASS), summed over every profiled launch of the same kernel.

    ncu --cache-control none -k regex:gemm -c 9 --section SourceCounters --section WarpStateStats \\
        -o prof python3 bench/gpu/coppelius_gemm_profile.py
    ncu --import prof.ncu-rep --page source --csv --print-source sass > source.csv
    python3 bench/gpu/ncu_source_stalls.py source.csv [--at-least 1.0]

For each kernel: its samples, the share of each stall reason, then every instruction holding at
least --at-least percent of the kernel's samples with its three largest reasons (ncu's names
without the stall_ prefix: long_sb and short_sb are scoreboard waits, wait a fixed stall count,
barrier a BAR.SYNC waiting for the block's other warps, math a busy pipe).  Needs nothing but
the standard library, so it runs wherever the CSV is (bench/results/coppelius-gemm-h200-loop-
variants.txt has what it found)."""
from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict

SAMPLES = "Warp Stall Sampling (All Samples)"


def kernels(rows: list[list[str]]) -> dict[str, list[dict]]:
    """Kernel name -> per instruction (in address order) its source text, samples and stall
    reasons, summed over the kernel's launches (each launch is a block of the CSV that starts
    with a "Kernel Name" row and a header row)."""
    starts = [i for i, row in enumerate(rows) if row and row[0] == "Kernel Name"]
    out: dict[str, list[dict]] = {}
    for n, start in enumerate(starts):
        name, head = rows[start][1], rows[start + 1]
        end = starts[n + 1] if n + 1 < len(starts) else len(rows)
        column = {h: i for i, h in enumerate(head)}
        reasons = [h for h in head if h.startswith("stall_") and "Not Issued" not in h]
        body = [row for row in rows[start + 2:end] if len(row) == len(head)]
        summed = out.setdefault(name, [])
        if summed and len(summed) != len(body):
            raise SystemExit(f"{name}: launches with different code ({len(summed)} and {len(body)} instructions)")
        for k, row in enumerate(body):
            if len(summed) <= k:
                summed.append({"source": row[column["Source"]].strip(), "samples": 0, "reasons": defaultdict(int)})
            summed[k]["samples"] += int(row[column[SAMPLES]] or 0)
            for reason in reasons:
                summed[k]["reasons"][reason[len("stall_"):]] += int(row[column[reason]] or 0)
    return out


def report(name: str, code: list[dict], at_least: float) -> list[str]:
    total = sum(i["samples"] for i in code) or 1
    mix: dict[str, int] = defaultdict(int)
    for i in code:
        for reason, count in i["reasons"].items():
            mix[reason] += count
    lines = [f"== {name}: {total} samples, {len(code)} instructions",
             "   " + " ".join(f"{r}={c * 100 / total:.1f}%" for r, c in sorted(mix.items(), key=lambda x: -x[1]) if c)]
    for index, i in enumerate(code):
        if i["samples"] * 100 >= total * at_least:
            top = sorted(((c, r) for r, c in i["reasons"].items() if c), reverse=True)[:3]
            lines.append(f"{index:5d} {i['samples'] * 100 / total:5.1f}%  {i['source'][:64]:64s} "
                         + " ".join(f"{r}:{c}" for c, r in top))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    parser.add_argument("--at-least", type=float, default=1.0, help="percent of a kernel's samples to list an instruction")
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        rows = list(csv.reader(f))
    found = kernels(rows)
    if not found:
        print(f"{args.csv}: no kernel in it (was it written with --page source --csv?)", file=sys.stderr)
        return 1
    for name, code in found.items():
        print("\n".join(report(name, code, args.at_least)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
