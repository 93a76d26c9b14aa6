"""Build seed 003's hosts for one GPU: both training peers (fresh and resumed), the prediction.

    python tests/gpu/build_partitioned_regression_hosts.py GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx OUTDIR [--minor N] [--port P]

The GPU's UUID is baked into each host (seed 003's OpenDevice carries it), so the hosts are
built for the card they run on: tests/gpu/test_partitioned_regression.py calls this on the GPU
machine with the UUID nvidia-smi reports (or uses PR_HOSTS, a folder this wrote).  Writes
OUTDIR/{worker0,worker1,worker0-resume,worker1-resume,prediction} and OUTDIR/hosts.txt, which
records the UUID, minor, port and step count built in (recorded_port reads the port back).  The
test builds with its run's own port (tests/conftest.py `port`), so two suites on one machine never
meet; PORT is only this script's default.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/partitioned_regression"
PORT = 47311                 # the command line's default (--port); the tests pass their run's own
STEPS = 4096                 # one pass over the 4096 rows a run


def uuid_bytes(text: str) -> bytes:
    """b"GPU-8f1c2a3b-..." as nvidia-smi prints it -> its 16 bytes."""
    digits = text.strip().removeprefix("GPU-").replace("-", "")
    if len(digits) != 32:
        raise SystemExit(f"build_partitioned_regression_hosts: {text!r} is not a GPU UUID (GPU- and 32 hex digits)")
    return bytes.fromhex(digits)


def plan_text(uuid: bytes, minor: int, port: int = PORT, steps: int = STEPS) -> str:
    literal = 'b"' + "".join(f"\\x{b:02x}" for b in uuid) + '"'
    worker = lambda k, resume: f"(coordinateH200Worker {literal} {minor} {k} {port} {resume} 1 {steps})"
    return ("module Pair\n\nimport PartitionedRegression.Build.Workers\n\n"
            f"def worker0 : Bytes = {worker(0, 0)}\n"
            f"def worker1 : Bytes = {worker(1, 0)}\n"
            f"def worker0Resume : Bytes = {worker(0, 1)}\n"
            f"def worker1Resume : Bytes = {worker(1, 1)}\n"
            f"def prediction : Bytes = (coordinateH200Prediction {literal} {minor} 2)\n")


HOSTS = {"worker0": "worker0", "worker1": "worker1", "worker0-resume": "worker0Resume",
         "worker1-resume": "worker1Resume", "prediction": "prediction"}


def bobc_environment() -> dict:
    """bobc from this checkout; pure-Python wheels carried in .whl/ (lark: the device machine has
    none installed) are importable straight from their files."""
    import os
    paths = [str(REPO / "compiler"), *map(str, sorted((REPO / ".whl").glob("*.whl")))]
    existing = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths + ([existing] if existing else []))}


def hosts_record(uuid: bytes, minor: int, port: int, steps: int = STEPS) -> str:
    """hosts.txt: what the hosts of a folder were built with."""
    return f"uuid {uuid.hex()} minor {minor} port {port} steps {steps}\n"


def recorded_port(folder: Path) -> int:
    """The port the hosts in `folder` (written by build) were built with, from its hosts.txt."""
    import re

    found = re.search(r"\bport (\d+)\b", (Path(folder) / "hosts.txt").read_text(encoding="utf-8"))
    if not found:
        raise ValueError(f"{Path(folder) / 'hosts.txt'} names no port")
    return int(found.group(1))


def build(uuid: bytes, minor: int, out: Path, port: int = PORT) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    plan = out / "Pair.bob"
    plan.write_text(plan_text(uuid, minor, port), encoding="utf-8")
    built = {}
    for name, entry in HOSTS.items():
        done = subprocess.run([sys.executable, "-m", "bobc", "build", str(plan), "--entry", entry, "--target", "sm_90",
                               "-I", str(EXAMPLE), "-o", str(out / name)], cwd=REPO, capture_output=True, text=True,
                              env=bobc_environment())
        if done.returncode != 0:
            raise RuntimeError(f"bobc build --entry {entry} failed (exit {done.returncode}):\n{done.stderr}")
        built[name] = out / name
    (out / "hosts.txt").write_text(hosts_record(uuid, minor, port), encoding="utf-8")
    return built


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("uuid")
    parser.add_argument("out", type=Path)
    parser.add_argument("--minor", type=int, default=0)
    parser.add_argument("--port", type=int, default=PORT)
    arguments = parser.parse_args()
    for name, path in build(uuid_bytes(arguments.uuid), arguments.minor, arguments.out, arguments.port).items():
        print(f"wrote {path}")
