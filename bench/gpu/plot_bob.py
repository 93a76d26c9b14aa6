#!/usr/bin/env python3
"""Plot bench/gpu/bob_bench.py's results: per-update time of the four variants
(ours, PyTorch eager, CUDA graph replay, empty-kernel floor) and the whole
invocation (ours, PyTorch eager), each as every sample with its median.

    python bench/gpu/plot_bob.py bench/results/bob-h200.json bench/results/bob-h200.png
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    source = Path(argv[0])
    target = Path(argv[1]) if len(argv) > 1 else source.with_suffix(".png")
    r = json.loads(source.read_text())
    torch_pu = r.get("pytorch_per_update", {})
    per_update = [
        ("ours\n(bob-host, GPU\ntimestamps)", r.get("ours_gpu", {}).get("samples_per_update_us", []), "C0"),
        ("PyTorch eager\n(CUDA events)", torch_pu.get("eager", {}).get("samples_us", []), "C3"),
        ("PyTorch CUDA graph\nreplay (events)", torch_pu.get("graph", {}).get("samples_us", []), "C1"),
        ("floor: empty kernels\nthrough bob-host\n(2 submissions)",
         r.get("floor_gpu", {}).get("samples_per_update_us", []), "C7"),
    ]
    for name, entry in r.get("variants", {}).items():
        values = entry.get("gpu", {}).get("samples_per_update_us", [])
        if name != "ours" and values:
            label = name.replace("bob-host-variant-", "")
            per_update.append((f"experiment:\n{label}\n(not the product)", values, "C2"))
    samples = r.get("invocation", {}).get("samples", {})
    invocation = [("ours\nbob-host train", samples.get("ours_wall_s", []), "C0"),
                  ("PyTorch eager\nscript", samples.get("pytorch_eager_wall_s", []), "C3")]

    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 6), gridspec_kw={"width_ratios": [2, 1]})
    for axis, rows, unit, title in ((left, per_update, "us", "One update (AdamW + loss/gradients), GPU time"),
                                    (right, invocation, "s", "One `train` invocation, fresh process\n"
                                                             "start to outputs written (wall)")):
        for x, (name, values, colour) in enumerate(rows):
            if not values:
                axis.text(x, 1, "not measured", ha="center", rotation=90)
                continue
            jitter = [x + 0.25 * ((i % 11) / 10 - 0.5) for i in range(len(values))]
            axis.scatter(jitter, values, s=10, alpha=0.5, color=colour)
            median = statistics.median(values)
            axis.hlines(median, x - 0.3, x + 0.3, color="k", lw=2)
            axis.annotate(f"{median:.3g} {unit}", (x + 0.32, median), va="center", fontsize=9)
        axis.set_xticks(range(len(rows)), [name for name, _, _ in rows], fontsize=8)
        axis.set_yscale("log")
        axis.set_ylabel(unit)
        axis.set_title(title, fontsize=10)
        axis.set_xlim(-0.6, len(rows) - 0.1)
        axis.grid(axis="y", which="both", alpha=0.3)
    name = r.get("machine", {}).get("nvidia_smi", {}).get("query", "").split(",")[0] or "GPU"
    fig.suptitle(f"Bob on {name}: {r.get('date', '')}, {r.get('repeats', '?')} repetitions "
                 f"(black: median)", fontsize=11)
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
