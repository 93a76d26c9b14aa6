"""Coppelius's `train` invocation against the same training in PyTorch (AMP), each a fresh
process timed from its start to its outputs written, at the small and the large
configuration, alternating, on one GPU (bench/coppelius_host/README.md).

    python bench/coppelius_host/bench.py HOSTS OUTDIR [--repeats 3] [--configs small,large]

HOSTS is a folder tests/gpu/build_coppelius_host.py wrote (with --large for the large
configuration): coppelius-host, coppelius-host-large, text.stream, hosts.json.  Writes
OUTDIR/coppelius-host-bench.json (every time, the medians and the ratios) and
OUTDIR/coppelius-host-bench.png (when matplotlib is there); the runs' checkpoints and outputs go
to a temporary folder, removed at the end.  Every host run also logs its ring entries
(NATIVE_SUBMIT_TIMES): the update's time through the seed's own pushbuffer, per update, is the
host's doorbell-to-semaphore time of the submission it issues once per step (median over the
run's updates).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for folder in (REPO / "compiler", REPO / "examples/coppelius"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

HOSTS = {"small": "coppelius-host", "large": "coppelius-host-large"}
OUTPUTS = ("checkpoint", "predictions", "result")     # what train_command's run writes into its folder


def fresh_checkpoint(config: str, steps: int, path: Path) -> Path:
    """The fresh checkpoint (seed 0) a host's `train` starts from, written to `path`."""
    from coppelius_host import checkpoint as C
    path.write_bytes(C.encode(C.fresh(config, 0), config, steps))
    return path


def train_command(host: Path, stream: Path, checkpoint: Path, out: Path) -> list[str]:
    """`HOST train` from `checkpoint` over `stream`, its three outputs (OUTPUTS) into folder `out`."""
    out.mkdir(parents=True, exist_ok=True)
    return [str(host), "train", "--input", str(stream), "--checkpoint", str(checkpoint),
            "--checkpoint-out", str(out / "checkpoint"), "--predictions", str(out / "predictions"),
            "--result", str(out / "result")]


def timed(command: list[str], what: str, env: dict | None = None, stderr: Path | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{what} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    if stderr is not None:
        stderr.write_text(done.stderr)
    return elapsed


def digests(folder: Path, names: tuple[str, ...]) -> dict:
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest()[:16] for name in names}


def variant(text: str) -> tuple[str, dict]:
    """NAME:VAR=VALUE[,VAR=VALUE...]: a host run under other native settings (docs/native-host.md)."""
    name, _, settings = text.partition(":")
    pairs = [item.partition("=") for item in settings.split(",") if item]
    if not name or not pairs or any(not key or not sep for key, sep, _ in pairs):
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME:VAR=VALUE[,VAR=VALUE...]")
    return name, {key: value for key, _, value in pairs}


def update_times(log: Path) -> dict:
    """Per update through the pushbuffer, from a NATIVE_SUBMIT_TIMES log (docs/native-host.md:
    `N 0xENTRY NS` per submission): the ring entry issued most often is the update's (once a
    step); the median of its doorbell-to-semaphore times."""
    rows = [line.split() for line in log.read_text().splitlines() if line.strip()]
    entries = [row[1] for row in rows]
    update = max(set(entries), key=entries.count)
    times = [int(row[2]) for row in rows if row[1] == update]
    return {"entry": update, "updates": len(times), "doorbell_to_semaphore_ms": statistics.median(times) / 1e6,
            "p10_ms": sorted(times)[len(times) // 10] / 1e6, "p90_ms": sorted(times)[(9 * len(times)) // 10] / 1e6}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hosts", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--configs", default="small,large")
    parser.add_argument("--host-variant", type=variant, action="append", default=[], metavar="NAME:VAR=VALUE,...",
                        help="also time the host under these settings each repeat (e.g. pages-4k:"
                             "NATIVE_GPU_VIDEO_PAGES=4k, or profile:NATIVE_PROFILE=1, whose report is kept in "
                             "OUTDIR/CONFIG-NAME.stderr); its outputs must equal the plain run's")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    described = json.loads((args.hosts / "hosts.json").read_text())
    stream = args.hosts / "text.stream"
    report = {"repeats": args.repeats, "configs": {}}
    scratch = Path(tempfile.mkdtemp(prefix="coppelius-host-bench-"))
    try:
        run_configs(args, described, stream, report, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    write_report(args, report)
    return 0


def run_configs(args, described, stream, report, scratch) -> None:
    for config in args.configs.split(","):
        name = HOSTS[config]
        if name not in described:
            print(f"{config}: no {name} in {args.hosts} (build it with --large)", file=sys.stderr)
            continue
        what = described[name]
        steps, interval = what["updates_per_invocation"], what["interval"]
        fresh = fresh_checkpoint(config, steps, scratch / f"fresh-{config}.ckpt")
        work = scratch / config
        host_command = train_command(args.hosts / name, stream, fresh, work / "host")
        torch_command = [sys.executable, str(Path(__file__).with_name("torch_train.py")), "--config", config,
                         "--input", str(stream), "--checkpoint-out", str(work / "torch.ckpt"),
                         "--predictions", str(work / "torch.predictions"), "--result", str(work / "torch.result"),
                         "--steps", str(steps), "--interval", str(interval)]
        times = {"coppelius-host": [], "pytorch-amp": []}
        per_update = []
        variants = {label: {"settings": settings, "times_s": [], "update_through_pushbuffer": [], "same_outputs": []}
                    for label, settings in args.host_variant}
        for _ in range(args.repeats):
            issues = work / "issues.log"
            env = {**os.environ, "NATIVE_SUBMIT_TIMES": str(issues)}
            times["coppelius-host"].append(timed(host_command, f"{name} train", env))
            per_update.append(update_times(issues))
            plain = digests(work / "host", OUTPUTS)
            for label, settings in args.host_variant:
                stderr = args.out / f"{config}-{label}.stderr"
                elapsed = timed(host_command, f"{name} train ({label})", {**env, **settings}, stderr)
                variants[label]["times_s"].append(elapsed)
                variants[label]["update_through_pushbuffer"].append(update_times(issues))
                variants[label]["same_outputs"].append(digests(work / "host", OUTPUTS) == plain)
            times["pytorch-amp"].append(timed(torch_command, "torch_train.py"))
        medians = {k: statistics.median(v) for k, v in times.items()}
        report["configs"][config] = {"steps": steps, "interval": interval, "times_s": times, "median_s": medians,
                                     "pytorch_over_host": medians["pytorch-amp"] / medians["coppelius-host"],
                                     "update_through_pushbuffer": per_update}
        if variants:
            report["configs"][config]["host_variants"] = variants
        for label, seen in variants.items():
            update = statistics.median(u["doorbell_to_semaphore_ms"] for u in seen["update_through_pushbuffer"])
            print(f"{config} host {label} ({seen['settings']}): {statistics.median(seen['times_s']):.3f} s, one "
                  f"update {update:.3f} ms; outputs equal the plain run's: {all(seen['same_outputs'])}", flush=True)
        doorbell = statistics.median(u["doorbell_to_semaphore_ms"] for u in per_update)
        print(f"{config}: host {medians['coppelius-host']:.3f} s, PyTorch AMP {medians['pytorch-amp']:.3f} s, "
              f"ratio {report['configs'][config]['pytorch_over_host']:.2f}x ({steps} updates); one update through "
              f"the seed's pushbuffer {doorbell:.3f} ms (doorbell to semaphore, median)", flush=True)


def write_report(args, report) -> int:
    (args.out / "coppelius-host-bench.json").write_text(json.dumps(report, indent=1) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot", file=sys.stderr)
        return 0
    configs = list(report["configs"])
    figure, axis = plt.subplots(figsize=(6, 3.5))
    for k, (label, key) in enumerate((("coppelius-host train", "coppelius-host"), ("PyTorch AMP", "pytorch-amp"))):
        axis.bar([i + 0.4 * k for i in range(len(configs))],
                 [report["configs"][c]["median_s"][key] for c in configs], 0.4, label=label)
    axis.set_xticks([i + 0.2 for i in range(len(configs))], configs)
    axis.set_ylabel("seconds, fresh process to outputs written")
    axis.legend()
    figure.tight_layout()
    figure.savefig(args.out / "coppelius-host-bench.png", dpi=120)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
