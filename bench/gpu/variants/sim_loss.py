#!/usr/bin/env python3
"""Check loss-kernel sources on the CPU before timing them: the simulator runs each one
alone (seed 001's launch, hazard checker on) on the kernel tests' edge rows and random
rows, and its outputs are compared with a float64 reference at the GPU tests' tolerances
(tests/gpu/test_kernels.py).  Also reports registers and the loop's summed stalls.

    python3 bench/gpu/variants/sim_loss.py SOURCE.sass [...] [--arch sm_86|sm_90]
"""
from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "compiler"))

from bobc.sass import assemble_kernel  # noqa: E402
from bobc.sass.tables.arch import ENCODINGS  # noqa: E402
from bobc.sim import sass_frontend  # noqa: E402
from bobc.sim.executor import Launch, LaunchGeometry  # noqa: E402
from bobc.sim.memory import Buffer, Memory, Resident  # noqa: E402
from bobc.targets import TARGETS  # noqa: E402

LOG2E, LN2, INV_ROWS = 1.4426950408889634, 0.6931471805599453, 1.0 / 256


def rows(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """tests/gpu/test_kernels.py's edge rows over random ones."""
    rng = np.random.default_rng(seed)
    P = (rng.standard_normal((256, 256)) * 3).astype(np.float32)
    P[1] = 0.0
    P[2, :] = -1e30; P[2, 7] = 1e30
    P[3] = -8e37
    P[4] = rng.standard_normal(256).astype(np.float32) * 80
    P[5, 10] = 60.0
    targets = rng.integers(0, 256, 256).astype(np.uint32)
    targets[2] = 7
    return P, targets


def reference(P, targets):
    W = P.astype(np.float64)
    m = W.max(axis=1, keepdims=True)
    e = np.exp(W - m)
    s = e.sum(axis=1, keepdims=True)
    loss = np.log(s)[:, 0] - (W[np.arange(256), targets] - m[:, 0])
    G = e / s
    G[np.arange(256), targets] -= 1.0
    return loss, G / 256.0


def simulate(source: Path, arch: str, P, targets):
    target = TARGETS[arch]
    assembled = assemble_kernel(source, target)
    symbols = ENCODINGS[arch].symbols
    base = {"P": 0x10000000, "G": 0x10100000, "T": 0x10200000, "L": 0x10201000}
    data = {"P": P.reshape(-1).view(np.uint8).copy(),
            "G": np.full(65536, np.nan, np.float32).view(np.uint8).copy(),
            "T": targets.astype(np.uint32).view(np.uint8).copy(),
            "L": np.full(256, np.nan, np.float32).view(np.uint8).copy()}
    buffers = [Buffer(k, base[k], data[k]) for k in base]
    memory = Memory(buffers, [Resident(k, base[k], data[k].size) for k in base])
    words = [base["P"], base["G"], base["T"], base["L"], 0, 0,
             struct.unpack("<Q", struct.pack("<ff", LOG2E, LN2))[0],
             struct.unpack("<Q", struct.pack("<ff", INV_ROWS, 0.0))[0]]
    bank0 = bytearray(symbols["param"] + 64)
    bank0[symbols["memory_descriptor"]:symbols["memory_descriptor"] + 8] = (1).to_bytes(8, "little")
    bank0[symbols["param"]:symbols["param"] + 64] = struct.pack("<8Q", *words)
    nv_arch = {"sm_86": "SM86", "sm_90": "SM90"}[arch]
    geometry = LaunchGeometry(f"{source.name} ({arch})", (1, 1, 1), (256, 1, 1), assembled.registers,
                              bytes(bank0), nv_arch)
    code = sass_frontend.decode(assembled.code, nv_arch)
    Launch(geometry, code, memory, check_hazards=True).run()
    return data["L"].view(np.float32), data["G"].view(np.float32).reshape(256, 256), assembled


def loop_stalls(assembled) -> int:
    start = min(assembled.labels.values())
    return sum(i.control.stall for i in assembled.instructions if i.address >= start)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--arch", default="both")
    args = parser.parse_args(argv)
    arches = ["sm_86", "sm_90"] if args.arch == "both" else [args.arch]
    P, targets = rows(2)
    want_loss, want_G = reference(P, targets)
    failed = 0
    for source in args.sources:
        for arch in arches:
            loss, G, assembled = simulate(source, arch, P, targets)
            ok = bool(np.all(np.isfinite(loss)) and np.all(np.isfinite(G))
                      and np.allclose(loss, want_loss, rtol=1e-5, atol=2e-5)
                      and np.allclose(G, want_G, rtol=1e-4, atol=2e-9))
            err_l = np.max(np.abs(loss - want_loss) / (2e-5 + 1e-5 * np.abs(want_loss)))
            err_g = np.max(np.abs(G - want_G) / (2e-9 + 1e-4 * np.abs(want_G)))
            print(f"{source.name:44s} {arch} registers {assembled.registers:3d} loop stalls "
                  f"{loop_stalls(assembled):4d}  loss err/tol {err_l:.3f}  G err/tol {err_g:.3f}  "
                  f"{'ok' if ok else 'FAIL'}", flush=True)
            failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
