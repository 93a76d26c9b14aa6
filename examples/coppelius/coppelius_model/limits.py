"""The performance limit of one Coppelius update on the H200, or on another GPU named in GPUS
(docs/coppelius.md quotes this script's output).

    python -m coppelius_model.limits [CONFIG ...] [--gpu h200|h100]

Each launch of the update (graph.py) is charged its arithmetic and its memory
traffic: a matrix product 2 M N K flops per batch on the tensor cores (binary16
inputs, binary32 accumulation) and its operands read once and its results written
once; every other kernel the bytes it must read and write (the flops of an
elementwise kernel are negligible beside its bytes).  The limit of a launch is
the larger of its flops at the tensor cores' rate and its bytes at the memory
bandwidth; the update's limit is the sum over its launches (they run in order,
each depending on the one before).  The bandwidth-only and flops-only totals are
printed too.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

from .attention import head_dimension
from .config import LARGE, SMALL, CoppeliusConfig, named
from .graph import Launch, update_launches


@dataclass(frozen=True)
class Gpu:
    """A GPU's dense binary16 tensor rate (binary32 accumulation) and memory bandwidth."""

    name: str
    tensor_flops: float
    memory_bytes_per_second: float


GPUS = {
    # NVIDIA's H200 datasheet (SXM): dense FP16/BF16 989.5 TFLOP/s (1,979 with sparsity), HBM3e 4.8 TB/s
    "h200": Gpu("H200", 989.5e12, 4.8e12),
    # NVIDIA's H100 datasheet (SXM5, 80 GB HBM3): dense FP16/BF16 989.5 TFLOP/s (1,979 with sparsity), 3.35 TB/s
    "h100": Gpu("H100", 989.5e12, 3.35e12),
}
TENSOR_FLOPS = GPUS["h200"].tensor_flops                    # the GPU, the default
MEMORY_BYTES_PER_SECOND = GPUS["h200"].memory_bytes_per_second


def gpu_of(device_name: str) -> Gpu:
    """The GPUS entry of a device name as CUDA reports it ("NVIDIA H100 80GB HBM3"): H100 or H200."""
    for key, gpu in GPUS.items():
        if gpu.name in device_name:
            return gpu
    raise KeyError(f"no limit for GPU {device_name!r}: GPUS knows {', '.join(g.name for g in GPUS.values())}")


def _u32s(launch: Launch, word: int) -> tuple[int, int]:
    value = launch.words[word]
    return value & 0xFFFFFFFF, value >> 32


def charge(launch: Launch) -> tuple[float, float]:
    """(flops, bytes) of one launch."""
    kind = launch.kernel.removeprefix("coppelius-")
    if kind.startswith("gemm-"):
        m, n = _u32s(launch, 6)
        k, flags = _u32s(launch, 7)
        batches = launch.words[12] >> 32
        out = ((0 if flags & 8 else 4) + (2 if flags & 4 else 0) + (4 if flags & 1 else 0)
               + (4 if flags & 128 else 0))                 # U, the saved pre-activation gelu' reads
        outputs = 1 if flags & 16 else batches        # split K: the batches are one product's splits
        nbytes = (batches * (2 * m * k + 2 * k * n) + outputs * out * m * n + (4 * n if flags & 2 else 0)
                  + (4 * n if flags & 32 else 0))        # the column sums E (read from B already in shared memory)
        return 2.0 * m * n * k * batches, float(nbytes)
    if kind in ("layernorm-forward",):
        r, c = _u32s(launch, 6)
        return 0.0, float(r * c * (4 + 2) + 8 * r + 8 * c)
    if kind == "layernorm-backward":
        r, c = _u32s(launch, 8)
        add = launch.words[9] >> 32
        return 0.0, float(r * c * (4 + 4 + (4 if add else 0) + 4 + 2) + 8 * r + 4 * c)
    if kind == "layernorm-param-backward":
        r, c = _u32s(launch, 6)
        batches = _u32s(launch, 10)[0]          # one layer norm's bytes a batch
        return 0.0, float(batches * (r * c * 8 + 8 * r + 8 * c))
    if kind == "bias-backward":
        r, c = _u32s(launch, 2)
        return 0.0, float(2 * r * c + 4 * c)
    if kind == "attention-forward":             # q k^T and p16 v per head; qkv read, p16, p, o16 written
        t, h = _u32s(launch, 4)
        dh = head_dimension(launch.words)
        return 2.0 * 2 * h * t * t * dh, float(2 * t * 3 * h * dh + h * t * t * (2 + 4) + 2 * t * h * dh)
    if kind == "softmax-backward":
        rows, t = _u32s(launch, 3)
        return 0.0, float(rows * t * (4 + 4 + 2))
    if kind == "attention-backward-kv":
        # the two products it replaces, dv = p16^T dO and dk = dS^T q (2 T T dh a head each): p16 and
        # dS read (2 bytes a key each), dO and q read (2 T dh each a head), dv and dk written
        # binary32 and binary16 (T dh (4 + 2) each a head)
        t, h = _u32s(launch, 6)
        dh = 64                                       # the kernel's head dimension (its header)
        return 2.0 * 2 * t * t * dh * h, float(h * (t * t * (2 + 2) + 2 * t * dh * 2 + 2 * t * dh * (4 + 2)))
    if kind == "attention-backward":
        # the flops of the three launches it replaces (dP = dO v^T and dq = dS k: 2 T T dh a head
        # each); their bytes less what stays in shared memory (dP written and read, 4 + 4 bytes a
        # key; dS read back by dq's product, 2): dO, v and k read (2 T dh each a head), P read and
        # dS written (4 + 2 bytes a key), dq written binary32 and binary16
        t, h = _u32s(launch, 6)
        dh = 64                                       # the kernel's head dimension (its header)
        return 2.0 * 2 * t * t * dh * h, float(h * (2 * t * dh + 2 * t * dh + t * t * (4 + 2) + 2 * t * dh
                                                        + t * dh * (4 + 2)))
    if kind == "gelu-forward":
        return 0.0, float(_u32s(launch, 2)[0] * (4 + 2))
    if kind == "gelu-backward":
        return 0.0, float(_u32s(launch, 3)[0] * (4 + 4 + 2))
    if kind == "embedding-forward":
        t, c = _u32s(launch, 5)
        return 0.0, float(4 * t + t * c * (4 + 4 + 4 + 2))
    if kind == "embedding-backward":
        t, c = _u32s(launch, 5)
        return 0.0, float(4 * t + t * c * 4 + (256 + t) * c * 4)
    if kind == "cross-entropy":
        t, _ = _u32s(launch, 4)
        return 0.0, float(t * 256 * (4 + 2) + 8 * t)
    if kind == "nonfinite-check":
        return 0.0, float(4 * _u32s(launch, 2)[0])
    if kind == "adamw-half":
        n = launch.words[9] >> 32
        return 0.0, float(n * (16 + 14))          # reads P, G, M, V; writes P, M, V and the half copy
    if kind in ("loss-copy",):
        t, _ = _u32s(launch, 4)
        return 0.0, float(4 * t + 32)
    if kind == "copy":
        return 0.0, float(8 * _u32s(launch, 2)[0])
    raise KeyError(f"no charge for kernel {launch.kernel}")


def limit(config: CoppeliusConfig, gpu: Gpu = GPUS["h200"]) -> dict:
    flops = nbytes = seconds = 0.0
    for launch in update_launches(config):
        f, b = charge(launch)
        flops += f
        nbytes += b
        seconds += max(f / gpu.tensor_flops, b / gpu.memory_bytes_per_second)
    return dict(launches=len(update_launches(config)), flops=flops, bytes=nbytes, seconds=seconds,
                flop_seconds=flops / gpu.tensor_flops, byte_seconds=nbytes / gpu.memory_bytes_per_second)


def report(configs=(SMALL, LARGE), gpu: Gpu = GPUS["h200"]) -> str:
    lines = [f"{gpu.name}: {gpu.tensor_flops / 1e12:.1f} TFLOP/s (binary16 tensor cores, dense), "
             f"{gpu.memory_bytes_per_second / 1e12:.{1 if gpu.memory_bytes_per_second % 1e11 == 0 else 2}f} TB/s",
             f"{'config':7s} {'params':>11s} {'launches':>8s} {'GFLOP':>8s} {'MB':>9s} "
             f"{'flops ms':>9s} {'bytes ms':>9s} {'limit ms':>9s}"]
    for config in configs:
        r = limit(config, gpu)
        lines.append(f"{config.name:7s} {config.parameter_count:11,d} {r['launches']:8d} {r['flops'] / 1e9:8.1f} "
                     f"{r['bytes'] / 1e6:9.1f} {r['flop_seconds'] * 1e3:9.3f} {r['byte_seconds'] * 1e3:9.3f} "
                     f"{r['seconds'] * 1e3:9.3f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coppelius_model.limits",
                                     description="The performance limit of one Coppelius update.")
    parser.add_argument("configs", nargs="*", metavar="CONFIG",
                        help="small, large, tiny or a shape LAYERSxWIDTHxCONTEXT (default: small and large)")
    parser.add_argument("--gpu", type=str.lower, choices=sorted(GPUS), default="h200",
                        help="whose rates (default: h200; H100 or h100)")
    args = parser.parse_args(argv)
    try:
        configs = [named(name) for name in args.configs] or [SMALL, LARGE]
    except ValueError as error:
        parser.error(str(error))
    print(report(configs, GPUS[args.gpu]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
