"""Find why a split coppelius-gemm product (flag 16) is wrong on a GPU, if it is: variants of
the generated code on the large configuration's split shapes, in one run.

    PYTHONPATH=compiler python3 bench/gpu/coppelius_gemm_split_diagnose.py

For each variant and shape: D (NaN count, worst error in units of ref_gemm.error_bound),
each split's partial in the workspace W against its own float64 truth, the tickets after
the launch (zero when every tile's S blocks drew theirs), and a second run's D bit for bit.
Variants (text edits of gemm.generate's output):
current (the committed sources); noerrbar (the fences without ERRBAR, as first run on the
H200); serial (every control code stall 15 with every short scoreboard waited); strong (the
last block reads W with LDG.E.STRONG.SYS, past L1).
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import cupy as cp

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))
sys.path.insert(0, str(REPO / "bench" / "gpu"))
from bobc.sass import assemble_kernel                  # noqa: E402
from bobc.sass.cubin import write_cubin                 # noqa: E402
from bobc.sass.generate import gemm                     # noqa: E402
import coppelius_gemm_diagnose as base                  # noqa: E402  (recontrol, serial, describe, TARGET)

PREFIX = "coppelius-gemm"


def strong(text: str) -> str:
    head, rest = text.split("split_sum:\n", 1)
    loop, tail = rest.split("@P0 BRA split_sum", 1)

    def split(match):
        register, pointer, offset = int(match.group(1)), match.group(2), int(match.group(3), 16)
        return (f"LDG.E.STRONG.SYS R{register}, [{pointer}.64+{offset:#x}]\n"
                f"    LDG.E.STRONG.SYS R{register + 1}, [{pointer}.64+{offset + 4:#x}]")
    loop = re.sub(r"LDG\.E\.64 R(\d+), \[(R\d+)\.64\+(0x[0-9a-f]+)\]", split, loop)
    return head + "split_sum:\n" + loop + "@P0 BRA split_sum" + tail


def variant(layout: str, name: str) -> str:
    text = gemm.generate(gemm.VARIANTS[layout], PREFIX)
    if name == "noerrbar":
        text = "\n".join(line for line in text.splitlines() if "ERRBAR" not in line) + "\n"
    elif name == "serial":
        text = base.recontrol(text, base.serial)
    elif name == "strong":
        text = strong(text)
    return text


def load(layout: str, name: str):
    path = base.TMP / f"split-{layout}-{name}.sass"
    path.write_text(variant(layout, name))
    a = assemble_kernel(path, base.TARGET)
    cubin = base.TMP / f"split-{layout}-{name}.cubin"
    cubin.write_bytes(write_cubin(a, a.kernel_name, base.TARGET, gemm.PARAMETER_BYTES, gemm.THREADS))
    module = cp.RawModule(path=str(cubin))
    return module, module.get_function(a.kernel_name), gemm.shared_bytes(gemm.VARIANTS[layout])


def run(kernel, layout, m, n, k, splits, a, b, tickets):
    _, function, shared = kernel
    A, B = cp.asarray(a), cp.asarray(b)
    d = cp.full(m * n, np.nan, dtype=cp.float32)
    w = cp.full(gemm.split_workspace_bytes(m, n, splits) // 4, np.nan, dtype=cp.float32)
    lda = m if layout == "tn" else k
    ldb = k if layout == "nt" else n
    grid, block = gemm.split_parameters(layout, splits, w.data.ptr, tickets.data.ptr, A=A.data.ptr, B=B.data.ptr,
                                        D=d.data.ptr, M=m, N=n, K=k, lda=lda, ldb=ldb, ldd=n)
    function(grid, (gemm.THREADS,), tuple(np.frombuffer(block, dtype=np.uint64)), shared_mem=shared)
    cp.cuda.Device().synchronize()
    return d.get().reshape(m, n), w.get().reshape(splits, m, n)


SHAPES = [("nn", 256, 768, 3072, 4), ("nt", 256, 768, 2304, 4), ("tn", 256, 256, 768, 3), ("nn", 64, 128, 192, 3)]


def main():
    print(f"target {base.TARGET.name}", flush=True)
    for name in ("current", "noerrbar", "serial", "strong"):
        for layout, m, n, k, splits in SHAPES:
            try:
                kernel = load(layout, name)
            except Exception as e:          # a variant that does not assemble is reported, not fatal
                print(f"{layout} {name}: cannot build: {e}", flush=True)
                continue
            a, b, truth, bound = base.operands(layout, m, n, k, m + n + k)
            tickets = cp.zeros(gemm.split_ticket_bytes(m, n) // 4, dtype=cp.uint32)
            d, w = run(kernel, layout, m, n, k, splits, a, b, tickets)
            after = tickets.get()
            d2, _ = run(kernel, layout, m, n, k, splits, a, b, tickets)
            A = (a.reshape(k, m).T if layout == "tn" else a.reshape(m, k)).astype(np.float64)
            B = (b.reshape(n, k).T if layout == "nt" else b.reshape(k, n)).astype(np.float64)
            part = k // splits
            partials = []
            for s in range(splits):
                t = A[:, s * part:(s + 1) * part] @ B[s * part:(s + 1) * part]
                pb = base.ref.error_bound(np.abs(A[:, s * part:(s + 1) * part]) @ np.abs(B[s * part:(s + 1) * part]),
                                          part, t)
                partials.append(f"W{s} nan {int(np.isnan(w[s]).sum())} bad {int((np.abs(w[s] - t) > pb).sum())}")
            same = bool(np.array_equal(d, d2, equal_nan=True))
            print(f"{layout} {name:8s} {m}x{n}x{k} S={splits}: D nan {int(np.isnan(d).sum())}/{d.size} "
                  f"{base.describe(d, truth, bound)}; {'; '.join(partials)}; tickets after {sorted(set(after.tolist()))}; "
                  f"second run same {same}", flush=True)


if __name__ == "__main__":
    main()
