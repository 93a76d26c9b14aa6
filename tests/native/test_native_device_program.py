"""The GPU test's program (tests/native/plans/Native/Device.bob) on the CPU: the reference
interpreter carries out every device command, its two submissions by a NumPy stand-in for
the kernel; the C host without a GPU refuses the first submission by name, as the
reference does without a stand-in.  On the H200: tests/gpu/test_native_program.py."""
from __future__ import annotations

import struct

import numpy as np
import pytest

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



@pytest.mark.parametrize("kernels, words", [
    ("def SUBMIT(machine, entry):\n    raise ValueError('boom\\nsecond line')\n",
     "--kernels kernels.py: SUBMIT raised ValueError at line 2: boom"),
    ("import sys\nsys.path.insert(0, __file__.rsplit('/', 1)[0])\nimport helper\n\n\n"
     "def SUBMIT(machine, entry):\n    helper.check(entry)\n",
     "--kernels kernels.py: SUBMIT raised AssertionError at line 7 (raised in helper.py line 2): no device here"),
], ids=["in-submit", "in-a-helper"])
def test_an_exception_in_the_kernels_submit_is_one_line_naming_the_file(tmp_path, kernels, words):
    """`bobc run PLAN native --reference --kernels FILE`: an exception out of FILE's SUBMIT ends the
    program as the GPU not finishing (status 4), in one line naming the file, its line and the
    exception (a traceback before), nothing published; one raised in a helper the kernels call
    names that file too."""
    from bobc.commands.run import load_module
    from bobc.targets import SM90

    code, (_, _, _, entries) = program_bytes(bytes(range(16)), SM90, tmp_path)
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "in.bin").write_bytes(bytes(256))
    (folder / "helper.py").write_text("def check(entry):\n    assert entry is None, 'no device here'\n")
    (folder / "kernels.py").write_text(kernels)
    gpu = load_module(str(folder / "kernels.py"), "bobc_native_gpu_test", "--kernels").SUBMIT
    outcome = run_reference(code, folder, ["in.bin", "out1.bin", "out2.bin", "count.bin"], gpu=gpu)
    assert outcome.status == 4
    assert outcome.stderr == (f"native: command 15 (Submit): submission 0 (entry 0x{entries[0]:x}): {words}; "
                              f"nothing was published\n").encode()
    assert "out1.bin" not in outcome.files
