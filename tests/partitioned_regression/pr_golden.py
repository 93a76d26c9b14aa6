"""Seed 003's golden device images in tests/partitioned_regression/golden/; regenerate them
(from the repository root) with

    .venv/bin/python tests/partitioned_regression/pr_golden.py

kernels: the raw instruction streams of PartitionedRegression/Realization/*.sass for sm_86 and
sm_90.  images: the four components (program table, QMDs, pushbuffer, GPFIFO) of the training
peer's device program and of the prediction's, for sm_86, as the seed's artifacts embed them.
Regenerate only after a deliberate change, and say why in the commit.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "golden"
REPOSITORY = HERE.parents[2]
sys.path.insert(0, str(REPOSITORY / "examples/partitioned_regression"))

KERNELS = ("coordinate-linear-step", "coordinate-update")
REALIZATION = REPOSITORY / "examples/partitioned_regression/PartitionedRegression/Realization"
UUID = bytes(range(0x10, 0x20))


def kernel_images():
    from bobc.sass import assemble_kernel
    from bobc.targets import TARGETS
    return {f"{kernel}.{arch}.bin": bytes(assemble_kernel(REALIZATION / f"{kernel}.sass", TARGETS[arch]).code)
            for kernel in KERNELS for arch in ("sm_86", "sm_90")}


def plan_images():
    from partitioned_regression import artifacts as A
    training = A.parse_embedded(A.worker_artifact(UUID, 0, 47001, 0, 1, 8, profile="coordinateRTXA5000"))
    prediction = A.parse_embedded(A.prediction_artifact(UUID, 1, profile="coordinateRTXA5000"))
    out = {}
    for name, artifact in (("training", training), ("prediction", prediction)):
        for component, data in artifact.images.items():
            out[f"{name}-sm_86.{component}.bin"] = data
    return out


if __name__ == "__main__":
    for name, data in {**kernel_images(), **plan_images()}.items():
        (HERE / name).write_bytes(data)
        print(f"wrote {name} ({len(data)} bytes)")
