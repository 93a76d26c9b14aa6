"""Find why a coppelius-gemm kernel is wrong on a GPU: variants of the generator's code on
small and large shapes, each variant's worst error (in units of ref_gemm.error_bound) and
where the wrong elements are, in one run.

    PYTHONPATH=compiler python3 bench/gpu/coppelius_gemm_diagnose.py

Variants (text edits of gemm.generate's output, the generator's constants changed, or the
scheduler's control codes rewritten by a rule):
current (the committed sources), depbar0 (wait for every copy group), bar_end (a second
BAR.SYNC at the end of each slice), base0 (shared from 0, not 0x400), stages2 (a 2-stage
ring), serial (the scheduler's control codes with stall 15 and every short scoreboard waited
on every instruction); old (DEPBAR with stall 1 and no yield, as scheduled before the fix),
old_hmma4 (old + every HMMA at least 4 cycles apart), depbar15 (DEPBAR with stall 15);
stages2_RULE: the 2-stage ring under RULE.

First run (H200, cubins without NUM_BARRIERS): current wrong only at 256 x 2304 x 768,
depbar0 right everywhere, bar_end and base0 as wrong as current, stages2 wrong from
64 x 64 x 128 on (one block: warp 0 only); serial right everywhere.  Second run: the cubins
with NUM_BARRIERS just as wrong.  ptxas gives every DEPBAR a stall of 4 and the yield bit;
the scheduler gave it 1 (compiler/bobc/sass/schedule.py DEPBAR_STALL).
"""
from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np
import cupy as cp

REPO = Path(__file__).resolve().parents[2]
PREFIX = "coppelius-gemm"   # the model's name for its product kernels (examples/coppelius)
sys.path.insert(0, str(REPO / "compiler"))
from bobc.sass import assemble_kernel                  # noqa: E402
from bobc.sass import cubin as cubin_module            # noqa: E402
from bobc.sass.cubin import write_cubin                 # noqa: E402
from bobc.sass.generate import gemm                     # noqa: E402
from bobc.targets import TARGETS                        # noqa: E402

spec = importlib.util.spec_from_file_location(
    "ref_gemm", REPO / "examples" / "coppelius" / "coppelius_model" / "ref_gemm.py")
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)
TARGET = TARGETS[f"sm_{cp.cuda.Device().compute_capability}"]
TMP = Path(tempfile.mkdtemp())


def recontrol(text: str, rule) -> str:
    """The same code with every control code explicit: the scheduler's, passed through
    rule(instruction text, Control) -> Control."""
    path = TMP / "s.sass"
    path.write_text(text)
    a = assemble_kernel(path, TARGET)
    at = {}
    for name, address in a.labels.items():
        at.setdefault(address, []).append(name)
    lines = [l for l in text.splitlines() if l.startswith(".")]
    for i in a.instructions:
        for name in at.get(i.address, []):
            lines.append(f"{name}:")
        lines.append(f"    {rule(i.text, i.control).text()} {i.text}")
    return "\n".join(lines) + "\n"


def _set(c, **changes):
    fields = dict(stall=c.stall, yield_bit=c.yield_bit, write_barrier=c.write_barrier,
                  read_barrier=c.read_barrier, wait_mask=c.wait_mask)
    fields.update(changes)
    if fields["stall"] > 11:
        fields["yield_bit"] = 0                    # stalls 12..15 are only valid with yield
    return type(c)(**fields)


def serial(text, c):
    """Stall 15 everywhere, every short scoreboard waited (SB0, the copy groups, only by DEPBAR)."""
    return _set(c, stall=15, wait_mask=c.wait_mask | 0b111110)


def old_depbar(text, c):
    """DEPBAR as scheduled before 2026-12-01: stall 1, no yield."""
    return _set(c, stall=1, yield_bit=1) if text.startswith("DEPBAR") else c


def old_depbar_hmma4(text, c):
    c = old_depbar(text, c)
    return _set(c, stall=max(c.stall, 4)) if text.startswith("HMMA") else c


def depbar15(text, c):
    return _set(c, stall=15) if text.startswith("DEPBAR") else c


RULES = {"old": old_depbar, "serial": serial, "old_hmma4": old_depbar_hmma4, "depbar15": depbar15}


def variant_text(layout: str, name: str) -> tuple[str, int]:
    """name: [stages2_]RULE or current / stages2 / depbar0 / base0 (see the docstring)."""
    v = gemm.VARIANTS[layout]
    saved = (gemm.SHARED_BASE, gemm.STAGES)
    try:
        if name == "current":
            text = (REPO / "examples/coppelius/Realization/Nvidia/SM86" / f"{v.identity(PREFIX)}.sass").read_text()
            return text, gemm.shared_bytes(v)
        if name == "base0":
            gemm.SHARED_BASE = 0
        if name.startswith("stages2"):
            gemm.STAGES = 2
        text = gemm.generate(v, PREFIX)
        if name == "depbar0":
            text = text.replace(f"DEPBAR.LE SB0, {gemm.STAGES - 2:#x}", "DEPBAR.LE SB0, 0x0")
        rule = RULES.get(name.removeprefix("stages2_"))
        if rule is not None:
            text = recontrol(text, rule)
        return text, gemm.shared_bytes(v)
    finally:
        gemm.SHARED_BASE, gemm.STAGES = saved


def load(layout: str, name: str):
    """A variant's function; a name ending in _nobar gets a cubin without NUM_BARRIERS (the
    cubins before the fix: the driver then gives the block no barrier)."""
    base, nobar = (name[:-6], True) if name.endswith("_nobar") else (name, False)
    text, shared = variant_text(layout, base)
    path = TMP / f"{layout}-{name}.sass"
    path.write_text(text)
    a = assemble_kernel(path, TARGET)
    cubin = TMP / f"{layout}-{name}.cubin"
    saved = cubin_module.barrier_count
    if nobar:
        cubin_module.barrier_count = lambda assembled: 0
    try:
        cubin.write_bytes(write_cubin(a, a.kernel_name, TARGET, gemm.PARAMETER_BYTES, gemm.THREADS))
    finally:
        cubin_module.barrier_count = saved
    module = cp.RawModule(path=str(cubin))
    return module, module.get_function(a.kernel_name), shared


def run(kernel, layout, m, n, k, a, b):
    _, function, shared = kernel
    A, B = cp.asarray(a), cp.asarray(b)
    d = cp.full(m * n, np.nan, dtype=cp.float32)
    lda = m if layout == "tn" else k
    ldb = k if layout == "nt" else n
    block = gemm.pack_parameters(A=A.data.ptr, B=B.data.ptr, D=d.data.ptr, M=m, N=n, K=k, lda=lda, ldb=ldb, ldd=n)
    function(gemm.grid(m, n), (gemm.THREADS,), tuple(np.frombuffer(block, dtype=np.uint64)), shared_mem=shared)
    cp.cuda.Device().synchronize()
    return d.get().reshape(m, n)


def operands(layout, m, n, k, seed, a_slice=None, b_slice=None):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((m, k))).astype(np.float16)     # logical A [m, k]
    b = (rng.standard_normal((k, n)) * 0.05).astype(np.float16)   # logical B [k, n]
    if a_slice is not None:
        keep = np.zeros(k, bool); keep[32 * a_slice:32 * a_slice + 32] = True
        a[:, ~keep] = 0
    if b_slice is not None:
        keep = np.zeros(k, bool); keep[32 * b_slice:32 * b_slice + 32] = True
        b[~keep, :] = 0
    stored_a = np.ascontiguousarray(a.T if layout == "tn" else a).ravel()
    stored_b = np.ascontiguousarray(b.T if layout == "nt" else b).ravel()
    A64, B64 = a.astype(np.float64), b.astype(np.float64)
    truth = A64 @ B64
    bound = ref.error_bound(np.abs(A64) @ np.abs(B64), k, truth)
    return stored_a, stored_b, truth, bound


def describe(got, truth, bound):
    err = np.abs(got.astype(np.float64) - truth)
    err[np.isnan(got)] = np.inf
    bad = err > bound
    ratio = np.nanmax(np.where(np.isfinite(err), err / np.maximum(bound, 1e-30), 1e9))
    if not bad.any():
        return f"ok (worst {ratio:.2f} of bound)"
    rows = np.nonzero(bad.any(1))[0]
    cols = np.nonzero(bad.any(0))[0]
    where = np.argwhere(bad)[:3].tolist()
    rb = sorted(set((rows // 16).tolist()))[:8]
    cb = sorted(set((cols // 8).tolist()))[:12]
    return (f"BAD {bad.sum()}/{bad.size} worst {ratio:.3g}x maxerr {np.max(err[np.isfinite(err)]):.3g} "
            f"rows16 {rb} cols8 {cb} e.g. {where} got {[float(got[tuple(p)]) for p in where]} "
            f"want {[round(float(truth[tuple(p)]), 4) for p in where]}")


SHAPES = [(64, 64, 32), (64, 64, 128), (64, 64, 160), (64, 64, 256), (128, 128, 256), (256, 2304, 768)]
VARIANT_NAMES = ["current", "old", "stages2", "stages2_old", "old_hmma4", "depbar15"]


def main():
    print(f"target {TARGET.name}", flush=True)
    kernels = {}
    for layout in ("nn", "nt", "tn"):
        for name in VARIANT_NAMES:
            try:
                kernels[layout, name] = load(layout, name)
            except Exception as e:          # a variant that does not assemble is reported, not fatal
                print(f"{layout} {name}: cannot build: {e}", flush=True)
    done = []
    for layout in ("nn", "nt", "tn"):
        for name in VARIANT_NAMES:
            if (layout, name) not in kernels:
                continue
            for m, n, k in SHAPES + [(256, 2304, 768)] * 2:
                if layout != "nn" and name not in ("current", "old") and m > 128:
                    continue
                seed = m + n + k + sum(1 for line in done if line == (layout, name, m, n, k))
                done.append((layout, name, m, n, k))
                a, b, truth, bound = operands(layout, m, n, k, seed)
                got = run(kernels[layout, name], layout, m, n, k, a, b)
                print(f"{layout} {name:8s} {m}x{n}x{k}: {describe(got, truth, bound)}", flush=True)
    # the current nn on one block, K = 256: one slice of A or B nonzero at a time
    for which in ("B", "A"):
        for s in range(8):
            kw = {"b_slice": s} if which == "B" else {"a_slice": s}
            a, b, truth, bound = operands("nn", 64, 64, 256, 7, **kw)
            got = run(kernels["nn", "current"], "nn", 64, 64, 256, a, b)
            print(f"nn current 64x64x256 only {which} slice {s}: {describe(got, truth, bound)}", flush=True)
    # determinism of the current nn on the large shape
    a, b, truth, bound = operands("nn", 256, 2304, 768, 1)
    runs = [run(kernels["nn", "current"], "nn", 256, 2304, 768, a, b) for _ in range(3)]
    same = [int((runs[0] != r).sum()) for r in runs[1:]]
    print(f"nn current 256x2304x768 repeated: elements differing from run 1: {same}", flush=True)


if __name__ == "__main__":
    main()
