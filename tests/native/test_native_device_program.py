"""The GPU test's program (tests/native/plans/Native/Device.bob) on the CPU: the reference
interpreter carries out every device command, its two submissions by a NumPy stand-in for
the kernel; the C host without a GPU refuses the first submission by name, as the
reference does without a stand-in.  On the H200: tests/gpu/test_native_program.py."""
from __future__ import annotations

import struct

import numpy as np

from native_device_program import numpy_gpu, program_bytes
from native_helpers import run_reference


def test_reference_runs_the_device_program(tmp_path, both):
    from bobc.targets import SM90

    code, (_, _, _, entries) = program_bytes(bytes(range(16)), SM90, tmp_path)
    words = np.random.default_rng(3).integers(0, 2 ** 32, size=64, dtype=np.uint32)
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "in.bin").write_bytes(words.astype("<u4").tobytes())
    outcome = run_reference(code, folder, ["in.bin", "out1.bin", "out2.bin", "count.bin"], gpu=numpy_gpu)
    assert outcome.status == 0, outcome.stderr
    expected = (words & 0xFF).astype("<u4").tobytes()
    assert outcome.files["out1.bin"] == outcome.files["out2.bin"] == expected
    assert outcome.files["count.bin"] == struct.pack("<3Q", 2, 2, 2)

    c, reference = both(code, {"in.bin": words.tobytes()}, ["in.bin", "a.bin", "b.bin", "c.bin"], name="device")
    assert c.status == reference.status == 3
    assert c.stderr == reference.stderr
    assert c.stderr.startswith(f"native: command 15 (Submit): submission 0 (entry 0x{entries[0]:x}): this session "
                               f"has no GPU".encode())
