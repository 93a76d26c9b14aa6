"""A one-off experiment (session 6): does the system-scope membar at every grid's end
(QMD CWD_MEMBAR_TYPE L1_SYSMEMBAR, compiler/bobc/nvidia/encode.py) cost the update its time?

Setup, here: `tests/gpu/prepare.sh --large` (.device/coppelius-host), then in a scratch worktree
with encode.py's CWD_MEMBAR_TYPE set to 3 (L1_MEMBAR, GPU scope) `BOBC_CACHE_DIR=off python
tests/gpu/build_coppelius_host.py /work/main/.device/exp-membar --large`.  On the GPU, from the
repository root: `python3 bench/coppelius_host/membar_experiment.py OUTDIR`.  Each host trains
the seed's run from the same fresh checkpoint, twice, alternating; the update's median time
through the pushbuffer and the outputs' digests are compared.
Result: results/coppelius-host-2026-12-01-2345-membar-experiment.txt (no gain).
"""
import hashlib, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path
REPO = Path.cwd()
sys.path[:0] = [str(REPO / "compiler"), str(REPO / "examples/coppelius")]
from coppelius_host import checkpoint as C
import json
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
scratch = Path(tempfile.mkdtemp())
lines = []
for config, name in (("small", "coppelius-host"), ("large", "coppelius-host-large")):
    steps = json.loads((REPO / ".device/coppelius-host/hosts.json").read_text())[name]["updates_per_invocation"]
    fresh = scratch / f"fresh-{config}.ckpt"; fresh.write_bytes(C.encode(C.fresh(config, 0), config, steps))
    digests = {}
    for rep in range(2):
        for variant in ("coppelius-host", "exp-membar"):
            work = scratch / f"{config}-{variant}-{rep}"; work.mkdir()
            times = work / "times.log"
            cmd = [str(REPO / ".device" / variant / name), "train", "--input", str(REPO / ".device/coppelius-host/text.stream"),
                   "--checkpoint", str(fresh), "--checkpoint-out", str(work / "c"), "--predictions", str(work / "p"), "--result", str(work / "r")]
            t = time.perf_counter(); d = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "NATIVE_SUBMIT_TIMES": str(times)}); el = time.perf_counter() - t
            rows = [l.split() for l in times.read_text().splitlines() if l.strip()]
            ent = [r[1] for r in rows]; up = max(set(ent), key=ent.count)
            ts = sorted(int(r[2]) for r in rows if r[1] == up)
            dg = tuple(hashlib.sha256((work / f).read_bytes()).hexdigest()[:12] for f in "cpr") if d.returncode == 0 else None
            digests.setdefault(variant, []).append(dg)
            line = f"{config} {variant} rep {rep}: exit {d.returncode} {el:.3f} s; update median {statistics.median(ts)/1e6:.3f} ms p10 {ts[len(ts)//10]/1e6:.3f} p90 {ts[9*len(ts)//10]/1e6:.3f}; outputs {dg}"
            print(line, flush=True); lines.append(line)
            if d.returncode: print(d.stderr[-2000:], flush=True)
    same = len({x for v in digests.values() for x in v}) == 1
    line = f"{config}: all outputs identical across variants and repeats: {same}"; print(line, flush=True); lines.append(line)
(out / "membar.txt").write_text("\n".join(lines) + "\n")
