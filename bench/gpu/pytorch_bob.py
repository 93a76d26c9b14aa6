#!/usr/bin/env python3
"""Bob in PyTorch: what a user would run instead of the native host (issue 10).

Same data, same math as ../../shared/docs/bob.md: W is a 256 x 256 binary32
table, loss = mean cross-entropy of the rows (row b's logits W[b], target
target(b)), torch.optim.AdamW(lr 0.1, betas 0.9/0.999, eps 1e-8, weight decay
0.01).  Modes:

  invocation  one `train` (or `predict`) invocation as a script: reads the
              input record (or case.npz) and optional checkpoint, initial loss,
              3 predictions, 10 x (AdamW, loss + gradients), 3 predictions,
              writes predictions / result record / checkpoint in the project's
              formats; reports process start -> outputs written.
  eager       per-update time of one update (AdamW + cross-entropy forward and
              backward) in eager mode: each update waited for alone (wall clock)
              and back to back (CUDA events).
  graph       the same update captured once in a CUDA graph and replayed:
              per-replay wall clock (waited alone) and GPU time (CUDA events).
  all         eager then graph.

    python bench/gpu/pytorch_bob.py invocation --case ../shared/data/bob-reference/case.npz \\
        --out /tmp/torch-bob --check ../shared/data/bob-reference/expected-1.npz
    python bench/gpu/pytorch_bob.py all --json bench/results/pytorch-h200.json

Needs torch with CUDA (--device cpu runs the invocation and eager modes on the
CPU for a correctness check).  bench/run.py lists these and does not run them.
"""
from __future__ import annotations

import time

_SCRIPT_START = time.perf_counter()      # before the heavy imports; see process_seconds()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
try:
    import bobc  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "compiler"))
sys.path.insert(0, str(REPO / "examples/bob"))   # Bob's NumPy model (bob_model)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from bob_model.model import BobConfig  # noqa: E402
from bob_model.formats import (Checkpoint, decode_checkpoint, decode_input_record,  # noqa: E402
                                    encode_checkpoint, encode_predictions, encode_result,
                                    fresh_parameters)
from bobc.reference.publish import publish  # noqa: E402

LR, BETAS, EPS, WEIGHT_DECAY = 0.1, (0.9, 0.999), 1e-8, 0.01
UPDATES = 10
DEFAULT_CASE = REPO.parent / "shared/data/bob-reference/case.npz"


def process_seconds() -> float:
    """Seconds since this process started (from /proc), else since the script's first line."""
    try:
        ticks = os.sysconf("SC_CLK_TCK")
        start = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19]) / ticks
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return uptime - start
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - _SCRIPT_START


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ------------------------------------------------------------------- inputs
def load_inputs(args):
    """(targets u32[256], prompts u32[3], P, M, V, step) from a record + checkpoint or case.npz."""
    if args.input:
        record = decode_input_record(Path(args.input).read_bytes(), args.input)
        targets, prompts = record.targets, record.prompts
        if args.checkpoint:
            state = decode_checkpoint(Path(args.checkpoint).read_bytes(), BobConfig().contract,
                                      args.checkpoint)
            return targets, prompts, state.P, state.M, state.V, state.step
        zeros = np.zeros(65536, np.float32)
        return targets, prompts, fresh_parameters(b"bob-seed-v1"), zeros, zeros.copy(), 0
    case = np.load(args.case)
    return (case["targets"], case["prompts"], case["P"], case["M"], case["V"],
            int(case["step"]))


def make_learner(P, M, V, step, device, capturable=False):
    """W as a Parameter and an AdamW whose state resumes from (M, V, step)."""
    W = torch.nn.Parameter(torch.tensor(np.asarray(P, np.float32).reshape(256, 256),
                                        device=device))
    optimizer = torch.optim.AdamW([W], lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY,
                                  capturable=capturable)
    if step:
        step_device = device if capturable else torch.device("cpu")
        optimizer.state[W] = {
            "step": torch.tensor(float(step), dtype=torch.float32, device=step_device),
            "exp_avg": torch.tensor(np.asarray(M, np.float32).reshape(256, 256), device=device),
            "exp_avg_sq": torch.tensor(np.asarray(V, np.float32).reshape(256, 256), device=device),
        }
    return W, optimizer


def loss_and_gradients(W, targets):
    """Row losses (detached) and W.grad = d mean(row losses) / dW."""
    W.grad = None
    rows = F.cross_entropy(W, targets, reduction="none")
    rows.mean().backward()
    return rows.detach()


def predict(W, prompts):
    rows = W.detach()[prompts]
    valid = torch.isfinite(rows).all(dim=1)
    tokens = torch.where(valid, rows.argmax(dim=1), torch.zeros_like(prompts))
    return rows, tokens, valid


# --------------------------------------------------------------- invocation
def invocation(args, device) -> dict:
    targets_np, prompts_np, P, M, V, step = load_inputs(args)
    targets = torch.tensor(targets_np.astype(np.int64), device=device)
    prompts = torch.tensor(prompts_np.astype(np.int64), device=device)
    W, optimizer = make_learner(P, M, V, step, device)

    initial = loss_and_gradients(W, targets)
    before = predict(W, prompts)
    training = torch.zeros_like(initial)
    last = before
    if args.operation == "train":
        for _ in range(UPDATES):
            optimizer.step()
            training = loss_and_gradients(W, targets)
        last = predict(W, prompts)
        step += UPDATES
    sync(device)

    rows, tokens, valid = (t.cpu().numpy() for t in last)
    state = optimizer.state.get(W, {})
    M_out = state["exp_avg"].cpu().numpy() if state else np.asarray(M, np.float32)
    V_out = state["exp_avg_sq"].cpu().numpy() if state else np.asarray(V, np.float32)
    checkpoint = Checkpoint(W.detach().cpu().numpy(), M_out, V_out, step)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    publish(out / "predictions.bin", encode_predictions(tokens, valid.astype(np.uint32)))
    publish(out / "result.bin", encode_result(initial.cpu().numpy(), training.cpu().numpy(), rows))
    publish(out / "checkpoint.bin", encode_checkpoint(BobConfig().contract, checkpoint))
    report = {"mode": "invocation", "operation": args.operation,
              "process_start_to_outputs_written_s": process_seconds(),
              "script_start_to_outputs_written_s": time.perf_counter() - _SCRIPT_START,
              "mean_loss_before": float(initial.double().mean()),
              "mean_loss_after": float(training.double().mean()),
              "tokens_before": before[1].tolist(), "tokens": tokens.tolist(), "step": step}
    if args.check:
        report["check"] = check(args.check, initial, training, rows, tokens, checkpoint)
    return report


def check(path, initial, training, rows, tokens, checkpoint) -> dict:
    """Largest relative differences from an expected-*.npz, and whether tokens agree."""
    expected = np.load(path)

    def rel(a, b):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-30)))
    return {"initial_loss": rel(initial.cpu().numpy(), expected["initial_loss"]),
            "training_loss": rel(training.cpu().numpy(), expected["training_loss"]),
            "logit_rows": rel(rows, expected["logit_rows"]),
            "P": rel(checkpoint.P, expected["P"]), "M": rel(checkpoint.M, expected["M"]),
            "V": rel(checkpoint.V, expected["V"]),
            "tokens_equal": tokens.tolist() == expected["tokens"].tolist(),
            "step_equal": checkpoint.step == int(expected["step"])}


# ------------------------------------------------------------------ timing
def update_eager(W, optimizer, targets):
    """One update as the invocation does it: AdamW, then loss and gradients."""
    optimizer.step()
    optimizer.zero_grad(set_to_none=False)
    F.cross_entropy(W, targets).backward()


def summary(samples_s) -> dict:
    us = [s * 1e6 for s in samples_s]
    return {"unit": "us", "count": len(us), "median": statistics.median(us), "min": min(us),
            "mean": statistics.fmean(us)}


def eager(args, device) -> dict:
    targets_np, _, P, M, V, step = load_inputs(args)
    targets = torch.tensor(targets_np.astype(np.int64), device=device)
    W, optimizer = make_learner(P, M, V, step, device)
    F.cross_entropy(W, targets).backward()
    for _ in range(args.warmup):
        update_eager(W, optimizer, targets)
    sync(device)
    alone = []
    for _ in range(args.updates):
        start = time.perf_counter()
        update_eager(W, optimizer, targets)
        sync(device)
        alone.append(time.perf_counter() - start)
    report = {"mode": "eager", "update_waited_alone_wall": summary(alone)}
    start = time.perf_counter()
    for _ in range(args.updates):
        update_eager(W, optimizer, targets)
    sync(device)
    report["update_back_to_back_wall_per_update_us"] = (time.perf_counter() - start) / args.updates * 1e6
    if device.type == "cuda":
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(args.updates):
            update_eager(W, optimizer, targets)
        end.record()
        end.synchronize()
        report["update_back_to_back_gpu_per_update_us"] = begin.elapsed_time(end) * 1e3 / args.updates
    return report


def capture_update(W, optimizer, targets):
    """One update (cross-entropy forward and backward, then AdamW's step) captured in a CUDA
    graph, after three warm-up updates on a side stream (allocations, optimizer state), as
    the CUDA graphs documentation does; each replay is one more update."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(W, targets).backward()
            optimizer.step()
    torch.cuda.current_stream().wait_stream(side)
    captured = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(captured):
        F.cross_entropy(W, targets).backward()   # grads land in the graph's static .grad
        optimizer.step()
    return captured


def graph(args, device) -> dict:
    if device.type != "cuda":
        raise SystemExit("graph mode needs a CUDA device")
    targets_np, _, P, M, V, step = load_inputs(args)
    targets = torch.tensor(targets_np.astype(np.int64), device=device)
    W, optimizer = make_learner(P, M, V, step, device, capturable=True)
    captured = capture_update(W, optimizer, targets)
    for _ in range(args.warmup):
        captured.replay()
    torch.cuda.synchronize()
    alone = []
    for _ in range(args.updates):
        start = time.perf_counter()
        captured.replay()
        torch.cuda.synchronize()
        alone.append(time.perf_counter() - start)
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(args.updates):
        captured.replay()
    end.record()
    end.synchronize()
    return {"mode": "graph", "replay_waited_alone_wall": summary(alone),
            "replay_back_to_back_gpu_per_update_us": begin.elapsed_time(end) * 1e3 / args.updates}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["invocation", "eager", "graph", "all"])
    parser.add_argument("--operation", choices=["train", "predict"], default="train")
    parser.add_argument("--case", default=str(DEFAULT_CASE), help="case.npz (default inputs)")
    parser.add_argument("--input", help="input record (instead of --case)")
    parser.add_argument("--checkpoint", help="checkpoint to resume from (with --input)")
    parser.add_argument("--out", default="out/pytorch-bob", help="folder for the three outputs")
    parser.add_argument("--check", help="expected-*.npz to compare the invocation with")
    parser.add_argument("--updates", type=int, default=1000, help="timed updates")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--json", help="also write the report here")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: pass --device cpu for a CPU correctness run")

    reports = []
    if args.mode == "invocation":
        reports.append(invocation(args, device))
    if args.mode in ("eager", "all"):
        reports.append(eager(args, device))
    if args.mode in ("graph", "all"):
        reports.append(graph(args, device))
    report = {"command": " ".join([sys.executable, *sys.argv]),
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count(),
                          "torch": torch.__version__,
                          "device": (torch.cuda.get_device_name(device)
                                     if device.type == "cuda" else "cpu")},
              "results": reports}
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        publish(args.json, (text + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
