"""What a large Fill payload costs gcc when the host's C is compiled: the generated file's payload
as string literals (compiler/bobc/host/generate.py c_bytes, today) against the list of decimal ints
it was before session 39 (probe s39 genc finding 5), at a few payload sizes -- gcc's wall time and
peak memory (its children's ru_maxrss), each compile a fresh process.

    .venv/bin/python bench/gcc_payload.py [--sizes 1,2,4]    # MiB

Uses LinReg's host (examples/linear_regression) with one Fill step added, rendered only (never run).
Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "compiler"))
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"

MEASURED = r"""
import resource, subprocess, sys, time
start = time.perf_counter()
ran = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(ran.returncode, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stderr.write(ran.stderr[-2000:])
"""


def int_list(data: bytes) -> str:
    """The form before session 39: one decimal int a byte."""
    return "{" + ", ".join(str(byte) for byte in data) + "}"


def render(built, target, payload: bytes, as_ints: bool) -> str:
    from bobc.host import generate
    from bobc.plan.host import make_step

    largest = max(built.plan.host.buffers, key=lambda b: b.extent)
    steps = (make_step("fill", host=largest.host, payload=payload), *built.plan.host.steps)
    plan = dataclasses.replace(built.plan, host=dataclasses.replace(built.plan.host, steps=steps))
    saved = generate.c_bytes
    if as_ints:
        generate.c_bytes = int_list
    try:
        return generate.render(dataclasses.replace(built, plan=plan), target)
    finally:
        generate.c_bytes = saved


def compile_once(source: str, folder: Path) -> tuple[float, float]:
    from bobc.host import gcc

    path = folder / "host_plan.c"
    path.write_text(source)
    done = subprocess.run([sys.executable, "-c", MEASURED, "gcc", *gcc.CFLAGS, "-I", str(REPO / "runtime_c"),
                           "-c", str(path), "-o", str(folder / "host_plan.o")], capture_output=True, text=True)
    code, wall, peak_kib = done.stdout.split()
    if code != "0":
        raise SystemExit(f"gcc failed:\n{done.stderr}")
    return float(wall), int(peak_kib) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2,4", help="payload sizes in MiB, comma-separated")
    args = parser.parse_args()
    from bobc import pipeline
    from bobc.targets import SM90

    built = pipeline.compile_plan(LINREG, SM90)
    rows = []
    with tempfile.TemporaryDirectory(prefix="gcc-payload-") as folder:
        for mib in (float(x) for x in args.sizes.split(",")):
            payload = random.Random(39).randbytes(int(mib * (1 << 20)))
            for form, as_ints in (("string literals (today)", False), ("decimal ints (before)", True)):
                source = render(built, SM90, payload, as_ints)
                wall, peak = compile_once(source, Path(folder))
                rows.append((mib, form, len(source) / (1 << 20), wall, peak))
    print(f"{platform.platform()}, {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{subprocess.run(['gcc', '--version'], capture_output=True, text=True).stdout.splitlines()[0]}")
    print("| payload MiB | form | C source MiB | gcc wall s | gcc peak MiB |")
    print("|---|---|---|---|---|")
    for mib, form, size, wall, peak in rows:
        print(f"| {mib:g} | {form} | {size:.1f} | {wall:.2f} | {peak:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
