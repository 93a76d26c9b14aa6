"""The kernel sources under specs/ and their committed golden images (tests/golden/kernels).

    python -m bobc.sass.golden     rewrites the golden images from the sources

Every `<kernel>.sass` in SOURCES is a kernel (a `<kernel>.<target>.sass` beside it is its
variant for that target, bobc.kernel_search: `source` gives the one each target assembles);
its register budget is the base source's own `.registers` directive (the budget the plan's
region declares too: tests/plan/test_extract.py holds the two together).  Nothing here names
a model.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..kernel_search import variant_of, variant_suffix
from .source import read_source
from ..targets import TARGETS

REPO = Path(__file__).resolve().parents[3]
SOURCES = REPO / "specs" / "Realization" / "Nvidia" / "SM86"
GOLDEN = REPO / "tests" / "golden" / "kernels"
KERNELS = {path.stem: path for path in sorted(SOURCES.glob("*.sass")) if variant_suffix(path) is None}
_REGISTERS = re.compile(r"^\s*\.registers\s+(\S+)", re.MULTILINE)


def declared_budget(source: Path) -> int:
    """The `.registers N` a kernel source declares (every kernel under SOURCES declares one)."""
    found = _REGISTERS.search(read_source(source))
    if found is None:
        raise ValueError(f"{source}: no .registers directive; a kernel under {SOURCES} declares its budget")
    return int(found.group(1), 0)


REGISTER_BUDGETS = {name: declared_budget(path) for name, path in KERNELS.items()}


def source(kernel: str, arch: str) -> Path:
    """The source `kernel` is assembled from for target `arch`: its variant for it, else its base."""
    return variant_of(KERNELS[kernel], arch)


def golden_path(kernel: str, arch: str) -> Path:
    return GOLDEN / f"{kernel}.{arch}.bin"


def main() -> int:
    from . import assemble_kernel
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for kernel in KERNELS:
        for arch in TARGETS:
            assembled = assemble_kernel(source(kernel, arch), TARGETS[arch],
                                        register_budget=REGISTER_BUDGETS[kernel])
            golden_path(kernel, arch).write_bytes(assembled.code)
            print(f"{golden_path(kernel, arch).relative_to(REPO)}: {len(assembled.code)} bytes, "
                  f"{assembled.registers} registers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
