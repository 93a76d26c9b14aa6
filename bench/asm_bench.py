"""probe s42 buildspeed, as run for bench/results/build-speed-s42.md:

    cd TREE && PYTHONHASHSEED=0 PYTHONPATH=TREE/compiler python bench/asm_bench.py TREE [ROUNDS]

In-process: assemble every .sass under examples/ and specs/ for sm_86 and sm_90 (launched), caches
cleared each round; prints CPU median of ROUNDS and a sha256 over every result (code, registers, etc.)."""
import sys, time, hashlib, statistics
from pathlib import Path
from bobc.sass import assembler, syntax
from bobc.targets import target_named
import os; root = Path(sys.argv[1]); os.chdir(root); rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
files = sorted(p for d in ("examples", "specs") for p in Path(d).rglob("*.sass"))
jobs = []
for arch in ("sm_86", "sm_90"):
    t = target_named(arch)
    for f in files:
        parts = f.name.split(".")
        if len(parts) == 3 and parts[1] != arch:
            continue
        jobs.append((f, t))
times = []; digest = None
for r in range(rounds):
    syntax._parsed_source.cache_clear()
    h = hashlib.sha256(); n = 0; bad = 0
    c0 = time.process_time(); results = []
    for f, t in jobs:
        try:
            results.append(assembler.assemble_kernel(f, t, launched=True))
        except Exception as e:
            results.append(e)
    times.append(time.process_time() - c0)
    for a in results:
        if isinstance(a, Exception):
            bad += 1; h.update(repr(a).encode()); continue
        n += 1
        h.update(repr(a).encode()); h.update(repr(a.flow).encode())
    digest = h.hexdigest()
print(f"{len(jobs)} jobs ({n} assembled, {bad} refused) cpu median {statistics.median(times):.3f} s min {min(times):.3f} samples {[round(x,3) for x in times]} sha {digest[:16]}")
