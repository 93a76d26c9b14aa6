"""Regenerate Bob's golden device images (`make golden`).

Builds examples/bob's native host plan for every target into
tests/golden/bob-<target>/ and prints, per target, what changed field by
field (bobc.nvidia.golden.compare) so the commit can say why.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"


def main() -> int:
    from bobc import pipeline
    from bobc.nvidia.encode import write_images
    from bobc.nvidia.golden import compare
    from bobc.targets import TARGETS

    for name, target in sorted(TARGETS.items()):
        golden = REPO / "tests" / "golden" / f"bob-{name}"
        built = pipeline.compile_plan(PLAN, target)
        with tempfile.TemporaryDirectory() as scratch:
            fresh = write_images(built.images, Path(scratch) / "images")
            changes = compare(golden, fresh) if golden.is_dir() else ["(new)"]
            if golden.is_dir():
                shutil.rmtree(golden)
            shutil.copytree(fresh, golden)
        print(f"{golden.relative_to(REPO)}: {len(changes)} change(s)")
        for line in changes[:50]:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
