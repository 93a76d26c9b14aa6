"""SHF with a shift amount from a register, on the GPU against the simulator (probe s28 sim,
finding 5): bobc.sim's op_SHF took the amount's low 7 bits, then clamped to 32 (64 for .U64),
so SHF.R.U32.HI by 128, 132 or 0x80000004 gave a, a >> 4, a >> 4.  Which rule the hardware
follows is not documented; this test asks it, for SHF.R.U32.HI, SHF.L.U32 and SHF.R.S32.HI over
amounts around every boundary, and holds the simulator to its bits.

Session 30 ran it on an H100 (sm_90; tests/gpu/logs/2026-12-05-s30-run-pytest_gpu.log): the GPU
clamps the whole 32-bit amount, as PTX's shr.u32 does (128, 256, 0x80000004 and 0xffffffff all
shift everything out: 0, or the sign for .S32), so op_SHF no longer masks the amount;
tests/sim/test_shift_amounts.py holds the simulator to those measured bits without a GPU.

On the device machine: tests/gpu/run.sh runs it with every GPU test."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")

KERNEL = (REPO / "tests" / "data" / "kernels" / "shift_amounts.sass").read_text()   # shared with tests/sim
AMOUNTS = [0, 1, 4, 31, 32, 33, 63, 64, 65, 127, 128, 132, 255, 256, 0x80000004, 0xFFFFFFFF]


def test_shift_amounts_the_simulator_gives_the_gpus_bits(tmp_path):
    from bobc.sim.kernel import run_kernel

    if cp.cuda.Device().compute_capability != "90":
        pytest.skip("the kernel is assembled for sm_90")
    (tmp_path / "shf.sass").write_text(KERNEL)
    done = subprocess.run([sys.executable, "-m", "bobc", "asm", "--arch", "sm_90", "shf.sass", "--cubin", "-o",
                           "shf.cubin", "--block-size", "32"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})
    assert done.returncode == 0, done.stderr
    amounts = np.array(AMOUNTS * 2, dtype=np.uint32)
    values = np.array([0x87654321] * 16 + [0x12345678] * 16, dtype=np.uint32)
    a, s, o = cp.asarray(values), cp.asarray(amounts), cp.zeros(96, dtype=cp.uint32)
    cp.RawModule(path=str(tmp_path / "shf.cubin")).get_function("shift_amounts")((1,), (32,), (a, s, o))
    cp.cuda.Device().synchronize()
    gpu = cp.asnumpy(o).reshape(32, 3)
    sim = run_kernel(KERNEL, "sm_90", 1, 32, ["a", "s", "o"],
                     {"a": values, "s": amounts, "o": np.zeros(96, np.uint32)})["o"].reshape(32, 3)
    for k in range(32):
        print(f"{values[k]:#010x} by {amounts[k]:#010x}: gpu {[hex(x) for x in gpu[k]]} sim {[hex(x) for x in sim[k]]}")
    assert (gpu == sim).all(), "the simulator's SHF shift amount rule is not the GPU's (see the lines above)"
