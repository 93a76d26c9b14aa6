"""run_kernel(..., contract=True) holds a launch to its source's `//@ require` lines too (probe s47
gemmrequire finding 2; docs/kernel-contracts.md "Requirements", docs/simulator.md).

The contract mode held a launch to `//@ block`, the words the code reads and its pointers' extents,
but not to the shapes the kernel declares it serves: a kernel's test run at a shape its code does
not serve passed the contract mode (or faulted later, far from the cause), where a plan launching
it so is refused at build time.  Now the run is refused before it starts, in the certifier's
words (the word, its value, the rule and the contract line), at the requirement's line and column.
Without contract=True nothing changes."""
from pathlib import Path

import numpy as np
import pytest

from bobc.errors import BobcError
from bobc.sim.kernel import Pointer, run_kernel
from tests.sim.test_run_kernel_contract_s46 import CODE   # y[t] = 2 x[t] for t < n, one block of 32

REPO = Path(__file__).resolve().parents[2]
GEMM = REPO / "examples/coppelius/Realization/Nvidia/SM86/coppelius-gemm-nn.sass"
TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])

# y[t] = 2 x[t] for t < n; the kernel serves n a multiple of 4 from 4 to 32 (a block of 32 threads)
CONTRACT = """//@ block 32
//@ param 0 pointer read 4*lo[2] x
//@ param 1 pointer write 4*lo[2] y
//@ param 2 scalar n (u32)
//@ require lo[2] multiple of 4 n: whole groups of 4
//@ require lo[2] from 4 to 32 n: one block's threads
"""


def _run(target, n, **kw):
    x = np.arange(32, dtype=np.float32) - 7.5
    return x, run_kernel(CONTRACT + CODE, target, grid=1, block=32, params=[Pointer("x"), Pointer("y"), np.uint32(n)],
                         buffers={"x": x, "y": np.full(32, -1, np.float32)}, kernel_name="twice.sass", **kw)["y"]


@TARGETS
def test_a_launch_within_its_requirements_runs_s47(target):
    x, y = _run(target, 20, contract=True)
    assert (y[:20] == 2 * x[:20]).all() and (y[20:] == -1).all()


@TARGETS
@pytest.mark.parametrize("n, line, said", [
    (18, 5, "lo[2] is 18 on this launch, and its kernel twice serves only lo[2] a multiple of 4 "
            "(twice.sass:5: //@ require lo[2] multiple of 4: n: whole groups of 4)"),
    (36, 6, "lo[2] is 36 on this launch, and its kernel twice serves only lo[2] from 4 to 32 "
            "(twice.sass:6: //@ require lo[2] from 4 to 32: n: one block's threads)"),
])
def test_a_launch_off_its_requirements_is_refused_at_the_line_s47(target, n, line, said):
    x, y = _run(target, n)                      # without contract=True: runs, as before (n = 36: 32 threads)
    assert (y[:min(n, 32)] == 2 * x[:min(n, 32)]).all()
    with pytest.raises(BobcError) as caught:
        _run(target, n, contract=True)
    assert caught.value.message == f"kernel twice: {said}"
    # the place: the requirement's expression on its line (column 13, after '//@ require ')
    assert (caught.value.span.path, caught.value.span.line, caught.value.span.column) == ("twice.sass", line, 13)
    assert "shapes its contract admits" in caught.value.hint


def test_a_generated_product_off_its_tiling_is_refused_before_it_runs_s47():
    """The generated products (bobc.sass.generate.gemm) declare whole 64 x 64 tiles, 32 k a slice: a
    run at M = 96 would write rows 96..127 of D past its 96 rows; held to the contract it is refused,
    in the certifier's words (the kernel named by its `.kernel` symbol, as run_kernel names it), before
    a block runs."""
    m, n, k = 96, 64, 32
    a, b, d = np.zeros((m, k), np.float16), np.zeros((k, n), np.float16), np.zeros((m, n), np.float32)
    params = [Pointer("A"), Pointer("B"), Pointer("D"), np.uint64(0), np.uint64(0), np.uint64(0),
              np.uint32(m), np.uint32(n), np.uint32(k), np.uint32(0), np.uint32(k), np.uint32(n),
              np.uint32(n), np.uint32(0), np.uint32(0), np.uint32(0), np.uint32(0), np.uint32(0),
              np.float32(1.0), np.uint32(1), np.uint64(0), np.uint64(0), np.uint64(0), np.uint64(0)]
    with pytest.raises(BobcError) as caught:
        run_kernel(GEMM, "sm_86", grid=(1, 2, 1), block=128, params=params, buffers={"A": a, "B": b, "D": d},
                   contract=True)
    number = next(i for i, text in enumerate(GEMM.read_text().splitlines(), start=1)
                  if text.startswith("//@ require lo[6] "))
    assert caught.value.message.startswith(
        "kernel coppelius_gemm_nn: lo[6] is 96 on this launch, and its kernel coppelius_gemm_nn serves only lo[6] a "
        f"multiple of 64 (coppelius-gemm-nn.sass:{number}: //@ require lo[6] multiple of 64: M: whole 64-row tiles"), \
        caught.value.message
    assert (caught.value.span.line, caught.value.span.column) == (number, 13)
