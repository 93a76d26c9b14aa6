#!/usr/bin/env python3
"""Fresh-process `bob-host train` invocations, both bring-ups, idle and held GPU (issue 21).

For each bring-up the host can use (BOBC_GPU_MAPPING=rm, the default for a plan
that needs no UVM, and BOBC_GPU_MAPPING=uvm), times N fresh-process invocations
(spawn to exit, outputs written) with nothing else holding the GPU, then N while
another process holds a CUDA context; checks that every invocation's three
outputs are the same bytes as the first one's (the two bring-ups must compute the
same thing); keeps one BOBC_GPU_TRACE=ioctl trace (every step and every ioctl) of
each bring-up; and times the same invocation written as a PyTorch script
(bench/gpu/pytorch_bob.py invocation), fresh processes too.  Writes invocation.json and invocation.md (and the traces)
to OUT.

    python3 bench/gpu/invocation_bench.py --host .device/bob-host-sm_90 \\
        --reference .device/bob-reference --out $OUT/invocation [--repeats 10] [--pytorch-repeats 3]

Needs numpy; torch with CUDA for the holder and the PyTorch script (without torch
the held-GPU and PyTorch rows are left out, and the report says so).  The GPU's
settings are left alone: the holder is an ordinary process, killed at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "compiler"))
from bob_bench import make_inputs  # noqa: E402

HOLDER = ("import torch, time; torch.zeros(1, device='cuda').sum().item(); print('held', flush=True); "
          "time.sleep(900)")
MAPPINGS = ("rm", "uvm")
OUTPUTS = ("ckpt", "pred", "result")


def invoke(host: Path, inputs: dict, folder: Path, mapping: str, tag: str, trace: Path | None = None) -> tuple:
    outs = {k: folder / f"{tag}.{k}" for k in OUTPUTS}
    command = [str(host), "train", "--input", str(inputs["record"]), "--checkpoint", str(inputs["checkpoint"]),
               "--checkpoint-out", str(outs["ckpt"]), "--predictions", str(outs["pred"]),
               "--result", str(outs["result"])]
    env = dict(os.environ, BOBC_GPU_MAPPING=mapping)
    env.pop("BOBC_GPU_TRACE", None)
    if trace:
        env["BOBC_GPU_TRACE"] = "ioctl"
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} (BOBC_GPU_MAPPING={mapping}) exited {done.returncode}:\n{done.stderr}")
    if trace:
        trace.write_text(done.stderr)
    return wall, tuple(outs[k].read_bytes() for k in OUTPUTS)


def summary(walls: list[float]) -> dict:
    return {"median_ms": round(statistics.median(walls) * 1e3, 2), "min_ms": round(min(walls) * 1e3, 2),
            "max_ms": round(max(walls) * 1e3, 2), "samples_ms": [round(w * 1e3, 2) for w in walls]}


def series(host, inputs, folder, mapping, repeats, reference_outputs, label) -> dict:
    walls = []
    for k in range(repeats):
        wall, outputs = invoke(host, inputs, folder, mapping, f"{mapping}-{label}-{k}")
        if outputs != reference_outputs:
            raise SystemExit(f"BOBC_GPU_MAPPING={mapping} ({label}) invocation {k}: outputs differ from the first "
                             "invocation's: the bring-ups must compute the same bytes")
        walls.append(wall)
    return summary(walls)


def pytorch_walls(reference: Path, folder: Path, repeats: int) -> dict:
    walls = []
    for k in range(repeats):
        command = [sys.executable, str(HERE / "pytorch_bob.py"), "invocation", "--case", str(reference / "case.npz"),
                   "--out", str(folder / f"torch-{k}")]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        walls.append(time.perf_counter() - start)
        if done.returncode:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return summary(walls)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", type=Path, required=True)
    parser.add_argument("--reference", type=Path, required=True, help="folder with the PyTorch case.npz")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--pytorch-repeats", type=int, default=3)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False

    report = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "command": " ".join([sys.executable, *sys.argv]), "host": str(args.host),
              "machine": {"node": platform.node(), "cpus": os.cpu_count()}, "repeats": args.repeats}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs = make_inputs(args.reference, folder)
        invoke(args.host, inputs, folder, "rm", "warm")                 # page cache, first-run effects
        _, first = invoke(args.host, inputs, folder, "rm", "first")
        for mapping in MAPPINGS:
            _, traced = invoke(args.host, inputs, folder, mapping, f"trace-{mapping}",
                               trace=args.out / f"trace-{mapping}-idle.txt")
            if traced != first:
                raise SystemExit(f"the traced {mapping} invocation's outputs differ from the first invocation's")
        report["idle"] = {m: series(args.host, inputs, folder, m, args.repeats, first, "idle") for m in MAPPINGS}
        if have_torch:
            holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True)
            try:
                if holder.stdout.readline().strip() != "held":
                    raise SystemExit("the holder process did not bring a CUDA context up")
                report["held"] = {m: series(args.host, inputs, folder, m, args.repeats, first, "held")
                                  for m in MAPPINGS}
                for mapping in MAPPINGS:
                    invoke(args.host, inputs, folder, mapping, f"trace-{mapping}-held",
                           trace=args.out / f"trace-{mapping}-held.txt")
            finally:
                holder.kill()
                holder.wait()
            if args.pytorch_repeats:
                report["pytorch_script"] = pytorch_walls(args.reference, folder, args.pytorch_repeats)
    report["outputs_identical"] = "every invocation's checkpoint, predictions and result were the same bytes"

    (args.out / "invocation.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = [f"# `bob-host train`, fresh processes ({report['date']})", "",
             f"Command: `{report['command']}`", "",
             "| bring-up | GPU | median | min | max |", "|---|---|---|---|---|"]
    gpu_state = {"idle": "nothing else holds it", "held": "another process holds a CUDA context"}
    for state in ("idle", "held"):
        for mapping in MAPPINGS:
            if state in report:
                r = report[state][mapping]
                lines.append(f"| {mapping} | {gpu_state[state]} | {r['median_ms']:.1f} ms | {r['min_ms']:.1f} ms "
                             f"| {r['max_ms']:.1f} ms |")
    if "pytorch_script" in report:
        t = report["pytorch_script"]
        lines.append(f"| PyTorch script | nothing else holds it | {t['median_ms']:.0f} ms | {t['min_ms']:.0f} ms "
                     f"| {t['max_ms']:.0f} ms |")
        lines += ["", f"PyTorch script median over the RM bring-up's idle median: "
                      f"{t['median_ms'] / report['idle']['rm']['median_ms']:.0f}x."]
    elif not have_torch:
        lines += ["", "No torch here: no held-GPU rows and no PyTorch script."]
    lines += ["", report["outputs_identical"] + "."]
    (args.out / "invocation.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
