#!/usr/bin/env python3
"""Where does an sm_90 product kernel (bobc.sass.generate.gemm_sm90) fail?  A diagnostic.

Builds the nt kernel (2 stages) cut short at successive points -- an EXIT inserted after a label
of the generated source: after the barriers' set-up, after the prologue's copies, after the first
step's wait, after the loop, the whole kernel -- and launches each on a 64 x 64 x 64 product in a
process of its own (a timeout is a hang).  SANITIZE=1 runs each under compute-sanitizer and prints
its report (the faulting instruction's offset: how session 14 found an SYNCS.ARRIVE reading its
mbarrier address too soon after the UIADD3 that wrote it).

    PYTHONPATH=$PWD/compiler:/tmp/site python3 bench/gpu/sm90_gemm_bisect.py OUTDIR
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))

CUTS = [("after-initialised", "initialised:", 1), ("after-prologue", "prologue_done:", 1),
        ("after-first-wait", "step:", 2), ("after-loop", "epilogue:", 0), ("whole", None, 0)]

RUNNER = r"""
import sys, numpy as np, cupy as cp
sys.path.insert(0, sys.argv[4])
from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
from bobc.sass.generate import gemm, gemm_sm90
m = n = k = 64
stride = int(sys.argv[3])
rng = np.random.default_rng(1)
a = cp.asarray(rng.standard_normal((m, k)).astype(np.float16))
b = cp.asarray(rng.standard_normal((n, k)).astype(np.float16))
d = cp.full((m, n), np.nan, dtype=cp.float32)
rank = int(sys.argv[6])
maps = cp.asarray(np.frombuffer(b"".join(encode_tiled(TiledTensor("float16", int(x.data.ptr), (k, rows, 1)[:rank],
    (2 * k, stride)[:rank - 1], (64, 64, 1)[:rank], swizzle="128b")) for x, rows in ((a, m), (b, n))), dtype=np.uint8))
words = gemm.pack_parameters(A=int(a.data.ptr), B=int(b.data.ptr), D=int(d.data.ptr), M=m, N=n, K=k, lda=k, ldb=k, ldd=n)
words += np.array([maps.data.ptr, maps.data.ptr + 128], dtype=np.uint64).tobytes()
f = cp.RawModule(path=sys.argv[1]).get_function(sys.argv[2])
f((1, 1, 1), (128,), tuple(np.frombuffer(words, dtype=np.uint64)), shared_mem=int(sys.argv[5]))
cp.cuda.Device().synchronize()
ref = cp.asnumpy(a.astype(cp.float32) @ b.astype(cp.float32).T)
got = cp.asnumpy(d)
print("max error", float(np.nanmax(np.abs(got - ref))) if not np.isnan(got).all() else "D untouched")
"""


def cut(text: str, label: str | None, skip: int) -> str:
    if label is None:
        return text
    lines = text.splitlines()
    at = lines.index(label) + 1 + skip
    return "\n".join(lines[:at] + ["    EXIT"] + lines[at:]) + "\n"


def main() -> int:
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.sass.generate import gemm, gemm_sm90
    from bobc.targets import TARGETS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path, help="folder for the cut kernels' .sass and .cubin")
    folder = parser.parse_args().outdir
    target = TARGETS["sm_90"]
    folder.mkdir(parents=True, exist_ok=True)
    text = gemm_sm90.generate(gemm.VARIANTS["nt"], "probe-gemm", 2)
    run_cuts(folder, target, text, "nt-2-stages", gemm_sm90.shared_bytes(2), 3)
    return 0


def run_cuts(folder, target, text, design, shared, rank):
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.sass.generate import gemm
    for name, label, skip in CUTS:
        name = f"{design}-{name}"
        source = folder / f"{name}.sass"
        source.write_text(cut(text, label, skip))
        assembled = assemble_kernel(source, target)
        cubin = folder / f"{name}.cubin"
        cubin.write_bytes(write_cubin(assembled, assembled.kernel_name, target, gemm.PARAMETER_BYTES + 16, 128))
        for stride in (8192,):
            try:
                import os
                prefix = ["compute-sanitizer", "--print-limit", "5"] if os.environ.get("SANITIZE") else []
                done = subprocess.run([*prefix, sys.executable, "-c", RUNNER, str(cubin), assembled.kernel_name, str(stride),
                                       str(REPO / "compiler"), str(shared), str(rank)], capture_output=True, text=True,
                                      timeout=60)
                if os.environ.get("SANITIZE"):
                    print(done.stdout[:2500], flush=True)
                errors = [line for line in done.stderr.splitlines() if "Error" in line]
                status = (done.stdout.strip() if done.returncode == 0 else
                          "error: " + (errors or done.stderr.strip().splitlines() or ["?"])[0][-150:])
            except subprocess.TimeoutExpired:
                status = "hang"
            print(f"{name:40s} {status}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
