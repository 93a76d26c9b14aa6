"""Bob's kernel sources and their committed golden images (tests/golden/kernels).

    python -m bobc.sass.golden     rewrites the golden images from the sources
"""
from __future__ import annotations

from pathlib import Path

from ..targets import TARGETS

REPO = Path(__file__).resolve().parents[3]
SOURCES = REPO / "specs" / "Realization" / "Nvidia" / "SM86"
GOLDEN = REPO / "tests" / "golden" / "kernels"
KERNELS = {name: SOURCES / f"{name}.sass"
           for name in ("bob-row-gather", "bob-loss-gradient", "bob-adamw", "bob-greedy-argmax")}
# Bob.Build.PhysicalComponents: each region's register budget
REGISTER_BUDGETS = {"bob-row-gather": 24, "bob-loss-gradient": 32, "bob-adamw": 32, "bob-greedy-argmax": 32}


def golden_path(kernel: str, arch: str) -> Path:
    return GOLDEN / f"{kernel}.{arch}.bin"


def main() -> int:
    from . import assemble_kernel
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for kernel, source in KERNELS.items():
        for arch in ("sm_86", "sm_90"):
            assembled = assemble_kernel(source, TARGETS[arch], register_budget=REGISTER_BUDGETS[kernel])
            golden_path(kernel, arch).write_bytes(assembled.code)
            print(f"{golden_path(kernel, arch).relative_to(REPO)}: {len(assembled.code)} bytes, "
                  f"{assembled.registers} registers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
