"""The same partitioned training in PyTorch: two processes, torch.distributed with gloo over TCP
on 127.0.0.1, one all_reduce per step.

Worker k holds column x_k of the rows (binary32, on the GPU) and the targets; its w_k and a_k
are binary64 on the host.  A step takes row i mod N, as seed 003's peers do: the partial
w_k x_k is a binary32 product on the GPU (operands rounded to binary32) widened to binary64;
an all_reduce sums the two partials (gloo, binary64, CPU tensors); the error e = s - y and the
update are binary64 on the host; the gradient e x_k is again a binary32 product on the GPU.
(The all_reduce adds the partials in gloo's order; with two finite partials a + b = b + a, so
the sum is the ordered combine's bits.)

    python bench/partitioned_regression/pytorch_pair.py --steps 4096 --out result.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples/partitioned_regression"))

from partitioned_regression import reference as R  # noqa: E402

COORDINATES = [R.Coordinate(0.0, 0.0, 0.5, 0.05), R.Coordinate(0.25, -0.125, 0.25, 0.04)]


def worker(rank: int, steps: int, warmup: int, port: int, queue):
    import torch
    import torch.distributed as dist
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    data = R.generate()
    rows = len(data.targets)
    device = torch.device("cuda", 0)
    column = torch.tensor(data.features[:, rank], dtype=torch.float32, device=device)   # binary32 operands
    targets = data.targets
    c = COORDINATES[rank]
    w, a, decay, rate = c.weight, c.accumulator, c.decay, c.rate
    partial = torch.zeros(1, dtype=torch.float64)

    def step(i, w, a):
        row = i % rows
        x = column[row]
        partial[0] = float((torch.tensor(w, dtype=torch.float32, device=device) * x).item())   # GPU product, widened
        dist.all_reduce(partial)
        error = float(np.float64(partial[0].item()) - np.float64(targets[row]))
        gradient = float((torch.tensor(error, dtype=torch.float32, device=device) * x).item())
        a = float(np.float64(decay) * np.float64(a) + np.float64(gradient))
        w = float(np.float64(w) - np.float64(rate) * np.float64(a))
        return w, a

    for i in range(warmup):
        step(i, w, a)                      # warms CUDA and gloo; the result is discarded
    dist.barrier()
    torch.cuda.synchronize()
    started = time.perf_counter()
    for i in range(steps):
        w, a = step(i, w, a)
    dist.barrier()
    seconds = time.perf_counter() - started
    queue.put((rank, w, a, seconds))
    dist.destroy_process_group()


def run(steps: int, warmup: int = 64, port: int = 29531) -> dict:
    import torch.multiprocessing as mp
    context = mp.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=worker, args=(rank, steps, warmup, port, queue)) for rank in range(2)]
    for process in processes:
        process.start()
    results = sorted(queue.get(timeout=600) for _ in processes)
    for process in processes:
        process.join()
    seconds = max(r[3] for r in results)
    expected = R.train(R.generate(), COORDINATES, steps)
    same = all(R.bits(results[k][1]) == R.bits(expected[k].weight) for k in range(2))
    return {"steps": steps, "seconds": seconds, "steps_per_second": steps / seconds,
            "weights": [results[0][1], results[1][1]], "equals_reference": same}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4096)
    parser.add_argument("--out", type=Path)
    arguments = parser.parse_args()
    result = run(arguments.steps)
    print(json.dumps(result, indent=1))
    if arguments.out:
        arguments.out.write_text(json.dumps(result, indent=1) + "\n")
