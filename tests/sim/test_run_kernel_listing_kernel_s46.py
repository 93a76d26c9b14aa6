"""run_kernel of an nvdisasm listing holding several kernels runs the one `kernel_name` names, with
the shared memory its listing declares (probe s46 kernelauthor2, finding 9).

A kernel author porting ptxas's SASS hands run_kernel the listing of a cubin of several kernels and
names one; run_kernel assembled the whole listing as one code stream and ran its first kernel under
the name given (the fault of a ptxas softmax named `kernel hist` and was gemv's), and took no shared
memory from the listing (`.nv.shared.<kernel>`, as a plan's region and a cubin's run take it).  Now
it runs the named kernel of the listing, refuses a name the listing does not hold (naming those it
holds) and a listing of several kernels with no name, and gives the block the listing's shared
memory, as for ptxas's cubin itself."""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from bobc.errors import BobcError
from bobc.nvtools import nvdisasm
from bobc.sim.kernel import Pointer, run_kernel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import compile_ptx  # noqa: E402

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])

# fill: y[t] = 7 (first in the listing: nvdisasm prints the kernels in reverse order of the PTX);
# reverse: y[t] = x[31 - t] through a shared array of 32 words
PTX = """.version 8.0
.target sm_86
.address_size 64
.visible .entry reverse(.param .u64 px, .param .u64 py)
{
 .reg .u32 %r<8>; .reg .u64 %rd<8>; .reg .f32 %f<2>;
 .shared .align 4 .f32 s[32];
 ld.param.u64 %rd1, [px]; ld.param.u64 %rd2, [py];
 mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4; add.u64 %rd4, %rd1, %rd3; add.u64 %rd5, %rd2, %rd3;
 ld.global.f32 %f1, [%rd4];
 mov.u32 %r2, s; shl.b32 %r3, %r1, 2; add.u32 %r4, %r2, %r3; st.shared.f32 [%r4], %f1;
 bar.sync 0;
 sub.u32 %r5, 31, %r1; shl.b32 %r5, %r5, 2; add.u32 %r5, %r2, %r5; ld.shared.f32 %f1, [%r5];
 st.global.f32 [%rd5], %f1;
 ret;
}
.visible .entry fill(.param .u64 px, .param .u64 py)
{
 .reg .u32 %r<4>; .reg .u64 %rd<8>;
 ld.param.u64 %rd2, [py];
 mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4; add.u64 %rd5, %rd2, %rd3;
 st.global.u32 [%rd5], 7;
 ret;
}
"""


def _listing(target: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "k.cubin"
        path.write_bytes(compile_ptx(PTX, target))
        return subprocess.run([nvdisasm(), "-hex", str(path)], capture_output=True, text=True, check=True).stdout


def _run(kernel, target, name):
    x = np.arange(32, dtype=np.float32) + 0.5
    return x, run_kernel(kernel, target, grid=1, block=32, params=[Pointer("x"), Pointer("y")],
                         buffers={"x": x, "y": np.zeros(32, np.float32)}, kernel_name=name)["y"]


@TARGETS
def test_the_named_kernel_of_a_listing_runs_with_its_shared_memory_s46(target):
    listing = _listing(target)
    assert listing.index(".text.fill") < listing.index(".text.reverse")
    x, y = _run(listing, target, "reverse")
    assert (y == x[::-1]).all()
    _, y = _run(listing, target, "fill")
    assert (y.view(np.uint32) == 7).all()
    # the same as ptxas's cubin run by name
    x, y = _run(compile_ptx(PTX, target), target, "reverse")
    assert (y == x[::-1]).all()


@TARGETS
def test_a_kernel_the_listing_lacks_is_refused_s46(target):
    listing = _listing(target)
    with pytest.raises(BobcError) as caught:
        _run(listing, target, "revers")
    assert "the listing holds 2 kernels (fill, reverse); kernel 'revers' is not one of them" in caught.value.message
    with pytest.raises(BobcError) as caught:
        _run(listing, target, None)
    assert "the listing holds 2 kernels (fill, reverse); name one" in caught.value.message


@TARGETS
def test_a_listing_file_not_ending_sass_is_not_run_as_words_s46(target, tmp_path):
    # a Path not ending .sass is a cubin or instruction words: a listing there was decoded as words,
    # nvdisasm's "Illegal instruction" at 0x0 the only message
    from bobc.errors import UsageError
    path = tmp_path / "k.lst"
    path.write_text(_listing(target))
    with pytest.raises(UsageError) as caught:
        _run(path, target, "reverse")
    assert f"{path} is text, not a cubin or instruction words" in str(caught.value)
    assert "a Path ending .sass" in str(caught.value)
    copy = tmp_path / "k.sass"
    copy.write_text(path.read_text())
    x, y = _run(copy, target, "reverse")
    assert (y == x[::-1]).all()
