"""The device program of tests/native/plans/Native/Device.bob for a given UUID and target:
its canonical bytes, through the plan language (a generated module applying
deviceProgram to the images of tests/gpu/native_device_images.py)."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLANS = REPO / "tests" / "native" / "plans"
sys.path.insert(0, str(REPO / "tests" / "gpu"))

import native_device_images  # noqa: E402


def literal(data: bytes) -> str:
    return 'b"' + "".join(f"\\x{byte:02x}" for byte in data) + '"'


def program_bytes(uuid: bytes, target, folder: Path) -> tuple[bytes, tuple]:
    """(canonical bytes, the images) of the device program for `uuid` (16 bytes) on `target`."""
    from bobc.language import load_program
    from bobc.plan.intrinsics import default_intrinsics

    code, qmd, push, entries = native_device_images.images(target)
    module = folder / "DeviceRun.bob"
    module.write_text("module DeviceRun\n\nimport Runtime.NativePhysicalProgram\nimport Native.Device\n\n"
                      f"def run : (family NativePhysicalProgram) = (deviceProgram {literal(uuid)} {literal(code)}\n"
                      f"  {literal(qmd)} {literal(push)} {entries[0]} {entries[1]})\n", encoding="utf-8")
    program = load_program(module, include=[str(PLANS)], intrinsics=default_intrinsics(), target=target)
    program.check()
    encoder = program.definition("Runtime.NativePhysicalProgram.nativePhysicalProgramBytes")
    return bytes(program.apply(encoder.thunk, program.definition("run").thunk).value), (code, qmd, push, entries)


def numpy_gpu(machine, entry):
    """The reference's stand-in for the GPU: the kernel (out = in & 0xff) and the pushbuffer's
    semaphore release (payload k for the k-th submission)."""
    import numpy as np

    images = native_device_images
    words = np.frombuffer(machine.mapped_read(images.DATA, 256), dtype="<u4")
    machine.mapped_write(images.OUT, (words & 0xFF).astype("<u4").tobytes())
    machine.mapped_write(images.SEMAPHORE, len(machine.submitted).to_bytes(8, "little"))
