"""run_kernel(..., contract=True) holds one launch to its source's contract lines (probe s46
kernelauthor2, finding 2).

A kernel author checks a new kernel with run_kernel before any plan launches it, but run_kernel
read no `//@` line: a kernel declaring `//@ block 32` ran with 64 threads, one declaring a word
unused read it, and a store past a pointer's extent or through a `read` pointer passed -- the
contract was first judged when a whole plan was certified and simulated.  With contract=True
the launch is held as a plan's is (docs/kernel-contracts.md): the block, the words the code reads
against those declared (rule 1), every access inside the footprint the extents give on the
launch's own words, and each `//@ copy`.  Without it nothing changes."""
import numpy as np
import pytest

from bobc.errors import BobcError, UsageError
from bobc.sim.faults import OutOfBounds, SimulationFault
from bobc.sim.kernel import Pointer, run_kernel

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])

CONTRACT = """//@ block 32
//@ param 0 pointer read 4*lo[2] x
//@ param 1 pointer write 4*lo[2] y
//@ param 2 scalar n (u32)
"""
# y[t] = 2 x[t] for t < n (a block of 32; one launch of one block)
CODE = """.kernel twice
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC R6, c[0x0][RZ+param+0x10]
    ISETP.GE.U32.AND P0, PT, R0, R6, PT
    @P0 EXIT
    LDC.64 R2, c[0x0][RZ+param+0x0]
    LDC.64 R4, c[0x0][RZ+param+0x8]
    IMAD.WIDE.U32 R2, R0, 0x4, R2
    IMAD.WIDE.U32 R4, R0, 0x4, R4
    LDG.E R7, [R2.64]
    FADD R7, R7, R7
    STG.E [R4.64], R7
    EXIT
"""


def _run(source, target, n=20, block=32, **kw):
    x = np.arange(32, dtype=np.float32) - 7.5
    return x, run_kernel(source, target, grid=1, block=block, params=[Pointer("x"), Pointer("y"), np.uint32(n)],
                         buffers={"x": x, "y": np.full(32, -1, np.float32)}, **kw)["y"]


@TARGETS
def test_a_launch_that_keeps_its_contract_runs_s46(target):
    x, y = _run(CONTRACT + CODE, target, contract=True)
    assert (y[:20] == 2 * x[:20]).all() and (y[20:] == -1).all()


@TARGETS
def test_the_block_is_held_to_the_contracts_s46(target):
    source = CONTRACT + CODE
    _run(source, target, block=64)              # without contract=True: runs, as before
    with pytest.raises(BobcError) as caught:
        _run(source, target, block=64, contract=True)
    assert "block (64, 1, 1)" in caught.value.message and "//@ block 32" in caught.value.message
    assert caught.value.span.line == 1


@TARGETS
def test_a_read_of_a_word_declared_unused_is_refused_at_its_line_s46(target):
    source = CONTRACT.replace("//@ param 2 scalar n (u32)", "//@ param 2 unused") + CODE
    _run(source, target)
    with pytest.raises(BobcError) as caught:
        _run(source, target, contract=True)
    assert "reads parameter word 2" in caught.value.message and "declares it unused" in caught.value.message
    assert caught.value.span.line == 8           # LDC R6, c[0x0][RZ+param+0x10]


@TARGETS
def test_a_declared_pointer_the_code_never_reads_is_refused_s46(target):
    source = CONTRACT + "//@ param 3 pointer read 4 z\n" + CODE
    with pytest.raises(BobcError) as caught:
        _run(source, target, contract=True)
    assert "declares pointer word 3 (z) but its code never reads it" in caught.value.message


@TARGETS
def test_a_store_past_the_extent_is_refused_s46(target):
    # y's extent says 8 bytes (2 elements), the code stores n = 20
    source = CONTRACT.replace("write 4*lo[2] y", "write 8 y") + CODE
    _run(source, target)
    with pytest.raises(OutOfBounds) as caught:
        _run(source, target, contract=True)
    assert "the nearest declared pointer: param 1 (word " in caught.value.message
    assert "y: write 8 = 8 bytes, <kernel>:3)" in caught.value.message
    assert caught.value.span.line == 17          # STG.E [R4.64], R7


@TARGETS
def test_a_store_through_a_read_pointer_is_refused_s46(target):
    source = CONTRACT.replace("write 4*lo[2] y", "read 4*lo[2] y") + CODE
    with pytest.raises(OutOfBounds) as caught:
        _run(source, target, contract=True)
    assert caught.value.span.line == 17


@TARGETS
def test_a_copy_the_code_does_not_make_is_refused_s46(target):
    # the code doubles what the contract says it copies
    source = CONTRACT.replace("//@ param 2", "//@ copy 0 to 1 4*lo[2] x to y\n//@ param 2") + CODE
    with pytest.raises(SimulationFault) as caught:
        _run(source, target, contract=True)
    assert "declares a copy" in caught.value.message and "the kernel does not do the copy" in caught.value.message
    copying = source.replace("    FADD R7, R7, R7\n", "")
    x, y = _run(copying, target, contract=True)
    assert (y[:20] == x[:20]).all()


@TARGETS
def test_contract_needs_a_source_s46(target):
    from bobc.sass.assembler import assemble
    code = assemble(CONTRACT + CODE, target).code
    with pytest.raises(UsageError) as caught:
        _run(code, target, contract=True)
    assert "a SASS source" in str(caught.value)


@TARGETS
def test_a_source_with_no_instruction_is_refused_by_name_s46(target):
    # probe s46 kernelauthor2, finding 3: nvdisasm's "the instruction stream is not readable" before
    with pytest.raises(BobcError) as caught:
        _run("// nothing yet\n.kernel empty\n", target)
    assert "holds no instructions: a kernel is at least its EXIT" in caught.value.message
