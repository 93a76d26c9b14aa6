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
    "synthetic-commands": ("Commands", "synCommandsHost"),
    "synthetic-commands-fail": ("Commands", "synCommandsFailHost"),
}
# hosts whose reference-runner outcome the GPU test compares byte for byte: written
# beside the host as NAME.reference.json (the device machine cannot run the reference)
REFERENCE = ("synthetic-commands", "synthetic-commands-fail")


def reference_outcome(plan) -> dict:
    """The reference host's train run on the GPU test's record: status, message, outputs."""
    import numpy as np
    from bob_model import formats
    from bobc.reference.host import CommandsFailed, ReferenceHost

    record = formats.encode_input_record(formats.InputRecord((np.arange(256) * 7 + 3) % 256, [97, 98, 99]))
    published: dict[str, bytes] = {}
    kernels = {region.identity: (lambda memory, context: None) for region in plan.program.regions}
    host = ReferenceHost(plan, kernels, publish_output=lambda name, data: published.__setitem__(name, data))
    try:
        outcome = host.run("train", record, None)
    except CommandsFailed as stopped:
        return {"status": stopped.exit_code, "message": stopped.message, "outputs": {}}
    import hashlib
    checkpoint = outcome.publications[-1][1]          # the checkpoint, published with the others
    return {"status": 0, "message": "", "outputs": {name: data.hex() for name, data in published.items()},
            "checkpoint_sha256": hashlib.sha256(checkpoint).hexdigest()}


def build(folder: Path, target_name: str = "sm_90") -> None:
    from bobc import pipeline
    from bobc.host import generate
    from bobc.targets import target_named

    sys.path.insert(0, str(REPO / "examples/bob"))
    target = target_named(target_name)
    folder.mkdir(parents=True, exist_ok=True)
    for name, (module, entry) in HOSTS.items():
        built = pipeline.compile_plan(REPO / "tests/platform/Synthetic" / f"{module}.bob", target,
                                      include=[REPO / "examples/bob"], entry=entry)
        generate.build_host(built, target, folder / name)
        if name in REFERENCE:
            import json
            (folder / f"{name}.reference.json").write_text(json.dumps(reference_outcome(built.plan), indent=1))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    build(Path(sys.argv[1]))
