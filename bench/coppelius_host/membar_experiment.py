"""A one-off experiment (session 6): does the system-scope membar at every grid's end
(QMD CWD_MEMBAR_TYPE L1_SYSMEMBAR, compiler/bobc/nvidia/encode.py) cost the update its time?

Setup, here: `tests/gpu/prepare.sh --large` (.device/coppelius-host), then in a scratch worktree
with encode.py's CWD_MEMBAR_TYPE set to 3 (L1_MEMBAR, GPU scope) `BOBC_CACHE_DIR=off python
tests/gpu/build_coppelius_host.py /work/main/.device/exp-membar --large`.  On the GPU, from the
repository root: `python3 bench/coppelius_host/membar_experiment.py OUTDIR`.  Each host trains
the seed's run from the same fresh checkpoint, twice, alternating; the update's median time
through the pushbuffer and the outputs' digests are compared.
Result: bench/results/coppelius-host-h200-membar-experiment.txt (no gain).
"""
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path.cwd()
sys.path[:0] = [str(REPO / "compiler"), str(REPO / "examples/coppelius")]
from coppelius_host import checkpoint as C  # noqa: E402

_spec = importlib.util.spec_from_file_location("coppelius_host_bench", Path(__file__).with_name("bench.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp())
    described = json.loads((REPO / ".device/coppelius-host/hosts.json").read_text())
    lines = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    for config, name in (("small", "coppelius-host"), ("large", "coppelius-host-large")):
        steps = described[name]["updates_per_invocation"]
        fresh = scratch / f"fresh-{config}.ckpt"
        fresh.write_bytes(C.encode(C.fresh(config, 0), config, steps))
        seen = set()
        for rep in range(2):
            for variant in ("coppelius-host", "exp-membar"):
                work = scratch / f"{config}-{variant}-{rep}"
                work.mkdir()
                times = work / "times.log"
                command = [str(REPO / ".device" / variant / name), "train",
                           "--input", str(REPO / ".device/coppelius-host/text.stream"), "--checkpoint", str(fresh),
                           "--checkpoint-out", str(work / "c"), "--predictions", str(work / "p"),
                           "--result", str(work / "r")]
                start = time.perf_counter()
                done = subprocess.run(command, capture_output=True, text=True,
                                      env={**os.environ, "NATIVE_SUBMIT_TIMES": str(times)})
                elapsed = time.perf_counter() - start
                update = bench.update_times(times)
                digests = (tuple(hashlib.sha256((work / f).read_bytes()).hexdigest()[:12] for f in "cpr")
                           if done.returncode == 0 else None)
                seen.add(digests)
                say(f"{config} {variant} rep {rep}: exit {done.returncode} {elapsed:.3f} s; update median "
                    f"{update['doorbell_to_semaphore_ms']:.3f} ms p10 {update['p10_ms']:.3f} p90 {update['p90_ms']:.3f}; "
                    f"outputs {digests}")
                if done.returncode:
                    print(done.stderr[-2000:], flush=True)
        say(f"{config}: all outputs identical across variants and repeats: {len(seen) == 1}")
    (out / "membar.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
