"""Build the synthetic platform hosts the GPU tests run (tests/gpu/test_platform_steps.py)
for sm_90 into a folder:

    .venv/bin/python tests/gpu/build_platform_hosts.py .device/platform-hosts

The device machine has no lark/lief, so the hosts are built here and carried
(tests/gpu/run.sh exports PLATFORM_HOSTS when .device/platform-hosts exists)."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HOSTS = {  # file name -> (synthetic module, host definition)
    "synthetic-reissue": ("Reissue", "synReissueHost"),
    "synthetic-staging": ("Staging", "synStagingHost"),
    "synthetic-interval": ("Interval", "synIntervalHost"),
}


def build(folder: Path, target_name: str = "sm_90") -> None:
    from bobc import pipeline
    from bobc.host import generate
    from bobc.targets import target_named

    target = target_named(target_name)
    folder.mkdir(parents=True, exist_ok=True)
    for name, (module, entry) in HOSTS.items():
        built = pipeline.compile_plan(REPO / "tests/platform/Synthetic" / f"{module}.bob", target,
                                      include=[REPO / "examples/bob"], entry=entry)
        generate.build_host(built, target, folder / name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    build(Path(sys.argv[1]))
