"""Peak memory of one simulated Coppelius update (seed 004's host, small, sm_90), the simulation
alone: the host is built first in its own process (bench/coppelius_host/sim_variant.py's
`prepared`, BOBC_CACHE_DIR=off), then a fresh process runs sim_variant's `simulate` and reports its
peak resident memory (getrusage ru_maxrss), its CPU and wall time, and each output's sha256 prefix
(they must not change with a memory change).  --tree DIR also measures another checkout (say, the
commit before) on the same host build, one after the other.  Probe s39 simmem.

    .venv/bin/python bench/sim_memory.py [--tree OTHER_CHECKOUT]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PREPARE = """
import importlib.util, json, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("sim_variant", Path(sys.argv[1]) / "bench/coppelius_host/sim_variant.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
m.prepared(Path(sys.argv[2]))
"""

SIMULATE = """
import hashlib, importlib.util, json, resource, sys, time
from pathlib import Path
repo, prepared, runs = (Path(a) for a in sys.argv[1:4])
spec = importlib.util.spec_from_file_location("sim_variant", repo / "bench/coppelius_host/sim_variant.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
sys.path[:0] = [str(repo / "compiler"), str(repo / "examples" / "coppelius")]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start, cpu = time.perf_counter(), time.process_time()
m.simulate(prepared / "coppelius-host", prepared / "text.stream", prepared / "fresh.ckpt", runs, say=lambda *_: None)
print(json.dumps({"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu,
                  "rss_before_mib": before / 1024, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "outputs": {str(p.relative_to(runs)): hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                              for p in sorted(runs.rglob("*")) if p.is_file() and not p.name.startswith("start")}}))
"""


def run(tree: Path, code: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree / "compiler"), BOBC_CACHE_DIR="off")
    done = subprocess.run([sys.executable, "-c", code, str(tree), *args], cwd=tree, env=env, capture_output=True,
                          text=True)
    if done.returncode:
        raise SystemExit(f"{tree}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", default=[], help="another checkout to measure too")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="sim-memory-") as folder:
        prepared = Path(folder) / "prepared"
        run(REPO, PREPARE, str(prepared))
        for k, tree in enumerate([REPO, *(t.resolve() for t in args.tree)]):
            said = json.loads(run(tree, SIMULATE, str(prepared), str(Path(folder) / f"runs-{k}")).splitlines()[-1])
            rows.append((tree, said))
    print(f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| tree | peak RSS MiB | RSS before the simulation MiB | CPU s | wall s | outputs (sha256 prefixes) |")
    print("|---|---|---|---|---|---|")
    for tree, r in rows:
        outputs = ", ".join(f"{name} {digest}" for name, digest in r["outputs"].items())
        print(f"| {tree} | {r['rss_mib']:.0f} | {r['rss_before_mib']:.0f} | {r['cpu']:.1f} | {r['wall']:.1f} | {outputs} |")
    same = len({json.dumps(r["outputs"]) for _, r in rows}) == 1
    print("outputs identical" if same else "OUTPUTS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
