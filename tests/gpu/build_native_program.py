"""Write the native device program's template for a GPU node without lark:
    python tests/gpu/build_native_program.py .device/native-program
program-sm_90.bin is tests/native/plans/Native/Device.bob's program (canonical bytes) for
sm_90 with PLACEHOLDER where the GPU's UUID goes; tests/gpu/test_native_program.py puts the
node's UUID there (a 16-byte bytes field: same length, so the bytes are exactly those the
plan language gives for that UUID) and builds the host with bobc.native."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))
sys.path.insert(0, str(REPO / "tests" / "native"))

PLACEHOLDER = b"NATIVE-UUID-SLOT"


def build(folder: Path) -> Path:
    from bobc.targets import SM90
    from native_device_program import program_bytes

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        code, _ = program_bytes(PLACEHOLDER, SM90, Path(scratch))
    assert code.count(PLACEHOLDER) == 1
    path = folder / "program-sm_90.bin"
    path.write_bytes(code)
    return path


if __name__ == "__main__":
    print(build(Path(sys.argv[1] if len(sys.argv) > 1 else ".device/native-program")))
