"""Build seed 004's hosts for the H200 tests and the bench (bobc build needs lark,
which the GPU machine lacks: build here, carry OUTDIR to .device/coppelius-host).

    python tests/gpu/build_coppelius_host.py OUTDIR [--large]

Writes OUTDIR/coppelius-host (the seed's run: 4 publications x 50 updates),
OUTDIR/coppelius-host-short (1 publication of 4 updates: three invocations in a row are
compared with the NumPy reference after every publication; its periods are too short for a
watcher to catch a file renamed over another), OUTDIR/coppelius-host-large (--large: the large
configuration, the seed's run; for bench/coppelius_host), OUTDIR/text.stream (the tests' text,
tests/data/coppelius/tinyshakespeare-64k.txt) and OUTDIR/hosts.json (what each is).
tests/gpu/test_coppelius_host.py uses COPPELIUS_HOSTS=OUTDIR (tests/gpu/run.sh sets it when
.device/coppelius-host exists) or builds them itself where bobc can.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "coppelius"
TEXT = REPO / "tests" / "data" / "coppelius" / "tinyshakespeare-64k.txt"
for folder in (REPO / "compiler", EXAMPLE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

# name: (interval, publications, configuration); None: the plan's own run
HOSTS = {
    "coppelius-host": (None, None, "small"),
    "coppelius-host-short": (4, 1, "small"),
}
LARGE = {"coppelius-host-large": (None, None, "large")}


def build(out: Path, large: bool = False) -> dict:
    from coppelius_host import build as B
    from coppelius_model import stream

    out.mkdir(parents=True, exist_ok=True)
    numbers = B.seed_numbers()
    seed_run = (numbers["coppeliusRunCheckpointInterval"], numbers["coppeliusRunPublications"])
    described = {}
    for name, (interval, publications, config) in {**HOSTS, **(LARGE if large else {})}.items():
        B.build("sm_90", out / name, interval, publications, config)
        run_interval, run_publications = (interval, publications) if interval else seed_run
        described[name] = {"interval": run_interval, "publications": run_publications, "config": config,
                           "updates_per_invocation": run_interval * run_publications, "target": "sm_90"}
    (out / "text.stream").write_bytes(stream.from_bytes(TEXT.read_bytes()).encode())
    (out / "hosts.json").write_text(json.dumps(described, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return described


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--large", action="store_true", help="also the large configuration's host (bench)")
    arguments = parser.parse_args()
    for name, what in build(arguments.out, arguments.large).items():
        print(f"wrote {arguments.out / name}: {what}")
