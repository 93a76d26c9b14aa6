"""The int8-kernel forms the simulator learned to read in session 37 (tests/sass/test_int_forms.py, probe s37
sassforms4) on the GPU: IDP.4A / IDP.2A (dp4a / dp2a), F2IP.U8.F32 (cvt.rni.sat.u8.f32 / cvt.rzi.u8.f32), VABSDIFF / VABSDIFF4 (sad, vabsdiff4) and
sm_90's VIMNMX.S16x2 / .U16x2 / .RELU.  Each kernel's ptxas cubin and bobc's (from nvdisasm's listing of it),
made by tests/gpu/prepare.sh into .device/sim-probes, must store the PTX ISA's definitions the simulator is
tested against.  tests/gpu/run.sh points SIM_PROBES at them."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")

from tests.sass.test_int_forms import THREADS, gpu_cases  # noqa: E402

CASES = gpu_cases()


@pytest.fixture(scope="module")
def folder(target) -> Path:
    if target.name != "sm_90":
        pytest.skip(f"the probe cubins are made for sm_90, not {target.name}")
    named = os.environ.get("SIM_PROBES")
    if not named or not Path(named, "dot_products.ptxas.cubin").is_file():
        pytest.fail("no int-form cubins: run tests/gpu/prepare.sh where ptxas is, carry .device, and run "
                    "tests/gpu/run.sh (it sets SIM_PROBES)")
    return Path(named)


@pytest.mark.parametrize("which", ["ptxas", "bobc"])
@pytest.mark.parametrize("kernel", sorted(CASES))
def test_int_form_kernels_store_the_ptx_definitions_on_the_gpu(folder, kernel, which):
    _, inputs, want = CASES[kernel]
    module = cp.RawModule(path=str(folder / f"{kernel}.{which}.cubin"))
    out = cp.zeros(want.shape, cp.uint32)
    module.get_function(kernel)((1,), (THREADS,), (out, cp.asarray(inputs), np.uint32(THREADS)))
    cp.cuda.Device().synchronize()
    got = cp.asnumpy(out)
    assert got.tobytes() == want.tobytes(), f"GPU ({which}) {kernel}:\n{got}\n!=\n{want}"
