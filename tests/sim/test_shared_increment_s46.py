"""ptxas's shared increment, ATOMS.POPC.INC.32 RZ, [a] (probe s46 kernelauthor2, finding 8).

ptxas -O3 writes `atom.shared.add.u32 _, [a], 1` whose result goes unused -- CUDA's
`atomicAdd(&bins[b], 1)` in a shared histogram -- as ATOMS.POPC.INC.32 RZ, [a] on sm_86 and sm_90
(tools/ptx_corpus corpus3.ptx atomics and user_forms.ptx shared_atomic_loop, tests/sass/data).  The
simulator refused it as unmodeled, so ptxas's most common shared histogram could not be checked
here.  It runs as the PTX it is compiled from: each executing thread adds 1 to the word at its
address (lanes at one address each count).  A result register (which no ptxas code of the corpus
writes, and whose value NVIDIA does not publish) is refused by name."""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from bobc.nvtools import nvdisasm
from bobc.sass.assembler import assemble
from bobc.sim.faults import Unmodeled
from bobc.sim.kernel import Pointer, run_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import compile_ptx  # noqa: E402

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])

# bins[v & 63] += 1 for each of n values (threads past n count nothing), then each block adds its 64
# bins to the global ones; the increment's result is unused, so ptxas writes ATOMS.POPC.INC
PTX = """.version 8.0
.target sm_86
.address_size 64
.visible .entry hist(.param .u64 pin, .param .u64 pout, .param .u32 n)
{
 .reg .u32 %r<20>; .reg .u64 %rd<8>; .reg .pred %p<4>;
 .shared .align 4 .u32 h[64];
 ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; ld.param.u32 %r1, [n];
 mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r9, h;
 setp.lt.u32 %p1, %r2, 64; shl.b32 %r4, %r2, 2; add.u32 %r4, %r4, %r9;
 @%p1 st.shared.u32 [%r4], 0;
 bar.sync 0;
 mad.lo.u32 %r5, %r3, 256, %r2; setp.lt.u32 %p2, %r5, %r1;
 mul.wide.u32 %rd3, %r5, 4; add.u64 %rd3, %rd1, %rd3;
 @%p2 ld.global.u32 %r6, [%rd3];
 and.b32 %r6, %r6, 63; shl.b32 %r6, %r6, 2; add.u32 %r6, %r6, %r9;
 @%p2 atom.shared.add.u32 %r7, [%r6], 1;
 bar.sync 0;
 @%p1 ld.shared.u32 %r8, [%r4];
 mul.wide.u32 %rd4, %r2, 4; add.u64 %rd4, %rd2, %rd4;
 @%p1 red.global.add.u32 [%rd4], %r8;
 ret;
}
"""


@TARGETS
@pytest.mark.parametrize("n", [1, 37, 256, 700])
def test_ptxas_shared_histogram_counts_every_thread_s46(target, n):
    cubin = compile_ptx(PTX, target)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "k.cubin"
        path.write_bytes(cubin)
        listing = subprocess.run([nvdisasm(), "-c", str(path)], capture_output=True, text=True, check=True).stdout
    assert "ATOMS.POPC.INC.32 RZ, [" in listing          # ptxas's increment, the form under test
    rng = np.random.default_rng(n)
    x = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    x[: n // 2] = 9                                        # whole warps incrementing one word
    before = rng.integers(0, 100, 64).astype(np.uint32)
    out = run_kernel(cubin, target, grid=-(-n // 256), block=256, params=[Pointer("x"), Pointer("h"), np.uint32(n)],
                     buffers={"x": x, "h": before.copy()})["h"]
    assert (out == before + np.bincount(x & 63, minlength=64)).all()


@TARGETS
def test_an_increment_with_a_result_register_is_refused_s46(target):
    source = (".kernel k\n    S2R R0, SR_TID.X\n    IMAD.SHL.U32 R0, R0, 0x4, RZ\n"
              "    ATOMS.POPC.INC.32 R5, [R0+URZ]\n    EXIT\n")
    try:
        assemble(source, target)
    except Exception:                                      # a form ptxas never writes: not even encodable
        pytest.skip("the tables have no ATOMS.POPC.INC with a result register")
    with pytest.raises(Unmodeled) as caught:
        run_kernel(source, target, grid=1, block=32, params=[], shared_bytes=0x1000)
    assert "ATOMS.POPC.INC.32 with a result register (R5: ptxas writes RZ there" in caught.value.message
