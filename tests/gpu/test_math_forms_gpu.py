"""The math forms the assembler learned in session 36 (tools/ptx_corpus/math_forms.ptx: FRND, IABS,
I2I, BMSK, SGXT, 64-bit ISETP...EX, HSETP2, HFMA2 with a lane on C) run on the GPU: ptxas's cubin and
bobc's (`bobc asm --cubin` of nvdisasm's listing of it) store what the PTX ISA's definitions give,
computed with numpy (tests/sass/test_math_forms.py KERNELS) -- the same check the simulator passes
in CI, so the simulator and the GPU agree on these kernels.  And the raw bits of I2I's results
(tests/sass/data/i2i_bits.sass), which ptxas never shows (it re-extends them with PRMT): the GPU
must store what the simulator stores (i2i_bits_expected; an .S8 / .S16 result sign-extended).

The cubins are made where ptxas and nvdisasm are, by tests/gpu/prepare.sh (.device/math-forms);
tests/gpu/run.sh points MATH_FORMS at them."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")

from tests.sass.test_math_forms import INT_A, KERNELS, THREADS, _u32, assert_stores, i2i_bits_expected  # noqa: E402


@pytest.fixture(scope="module")
def folder(target) -> Path:
    if target.name != "sm_90":
        pytest.skip(f"the math-forms cubins are made for sm_90, not {target.name}")
    named = os.environ.get("MATH_FORMS")
    if not named or not Path(named, "math_forms.ptxas.cubin").is_file():
        pytest.fail("no math-forms cubins: run tests/gpu/prepare.sh where ptxas is, carry .device, and run "
                    "tests/gpu/run.sh (it sets MATH_FORMS)")
    return Path(named)


def _launch(cubin: Path, kernel: str, arguments: list, threads: int) -> None:
    module = cp.RawModule(path=str(cubin))
    module.get_function(kernel)((1,), (threads,), tuple(arguments))
    cp.cuda.Device().synchronize()


@pytest.mark.parametrize("which", ["ptxas", "bobc"])
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_math_forms_store_the_ptx_semantics_on_the_gpu(folder, kernel, which):
    inputs, want, extra = KERNELS[kernel]()
    cubin = folder / ("math_forms.ptxas.cubin" if which == "ptxas" else f"{kernel}.bobc.cubin")
    out = cp.zeros(want.shape, want.dtype)
    _launch(cubin, kernel, [out, *(cp.asarray(v) for v in inputs.values()), *extra], THREADS)
    assert_stores(f"GPU ({which})", kernel, cp.asnumpy(out), want)


def test_i2i_result_bits_on_the_gpu_are_the_simulators(folder):
    want = i2i_bits_expected(INT_A)
    out = cp.zeros(want.shape, want.dtype)
    _launch(folder / "i2i_bits.cubin", "i2i_bits", [cp.asarray(_u32(INT_A)), out], THREADS)
    got = cp.asnumpy(out)
    print("I2I S8 U8 S16 U16 of", INT_A.tolist(), "\n", got)
    assert got.tobytes() == want.tobytes(), f"the GPU's I2I bits differ from the simulator's:\n{got}\n!=\n{want}"
