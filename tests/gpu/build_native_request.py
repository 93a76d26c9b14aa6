"""Write the synthetic request programs for a GPU node without lark:
    python tests/gpu/build_native_request.py .device/native-request
requestProgram.bin and requestLoads.bin are tests/native/plans/Native/Request.bob's programs
(canonical bytes, the plan language's nativePhysicalProgramBytes); tests/gpu/test_native_request.py
builds their hosts with bobc.native and runs them on the GPU against the reference interpreter."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))
sys.path.insert(0, str(REPO / "tests" / "native"))

NAMES = ("requestProgram", "requestLoads")


def build(folder: Path) -> Path:
    from native_helpers import PLANS, load_module, program_bytes

    folder.mkdir(parents=True, exist_ok=True)
    module = load_module(PLANS / "Native" / "Request.bob")
    for name in NAMES:
        (folder / f"{name}.bin").write_bytes(program_bytes(module, name))
    return folder


if __name__ == "__main__":
    print(build(Path(sys.argv[1] if len(sys.argv) > 1 else ".device/native-request")))
