"""Every fault a kernel's launch raises names its place (probe s28 sim findings 1-4, 8): the
launch and instruction (.launch, .pc: what `bobc sim` turns into file:line:column), the first
faulting thread and block, a step limit that says the kernel probably loops and how to raise it,
and a deadlock that names its barriers; run_kernel honours .kernel, .registers and .shared."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.sim.faults import SimulationFault, Unmodeled
from bobc.sim.kernel import Pointer, run_kernel

from .conftest import REPO, above_shared_base, shared_base

TARGETS = ["sm_86", "sm_90"]


def fault_of(text, target="sm_86", **launch) -> SimulationFault:
    launch = {"grid": 1, "block": 32, "params": [], **launch}
    with pytest.raises(SimulationFault) as caught:
        run_kernel(text, target, **launch)
    return caught.value


def line_of(fault: SimulationFault) -> int:
    assert fault.span is not None, fault.message
    return fault.span.line


def test_an_unmodeled_modifier_names_the_instruction_its_line_and_the_first_thread():
    # (FADD.RZ was the example until probe s44 simops modelled it; a LOP3 with a predicate input stays refused)
    fault = fault_of(".kernel rz\n    S2R R0, SR_TID.X\n    LOP3.LUT P0, R2, R0, R0, RZ, 0xc0, P1\n    EXIT\n")
    assert isinstance(fault, Unmodeled)
    assert (fault.launch, fault.pc, line_of(fault)) == ("kernel rz", 0x10, 3)
    assert fault.message.startswith("kernel rz: instruction at 0x0010 (LOP3.LUT P0, R2, R0, R0, RZ, 0xc0, P1): "
                                    "LOP3.LUT with a predicate input")
    assert fault.message.endswith("; first faulting thread (0, 0, 0) of block (0, 0, 0) (warp 0, lane 0)")


def test_a_register_past_the_count_is_placed():
    fault = fault_of("    S2R R0, SR_TID.X\n    MOV R20, R0\n    EXIT\n", registers=8)
    assert "uses R20, but the QMD allocates 8 registers per thread" in fault.message
    assert (fault.pc, line_of(fault)) == (0x10, 2)
    assert "first faulting thread (0, 0, 0) of block (0, 0, 0)" in fault.message


@pytest.mark.parametrize("target", TARGETS)
def test_shared_memory_out_of_bounds_names_the_thread_that_strays(target):
    """Threads 64..127 of block (1, 0, 0) store past 256 bytes; the first of them is named."""
    text = (".kernel oobsh\n.shared 256\n    S2R R0, SR_TID.X\n    IMAD.SHL.U32 R8, R0, 0x4, RZ\n"
            "    STS [R8], R0\n    EXIT\n")
    base = shared_base(target)          # sm_90's first KiB is the system's: the kernel's bytes start past it
    fault = fault_of(above_shared_base(text, target), target, grid=(2, 1, 1), block=(128, 1, 1))
    assert (f"shared-memory access at {0x100 + base:#x} (4 bytes) lies outside the block's {256 + base} bytes"
            in fault.message), fault.message
    assert fault.message.endswith("first faulting thread (64, 0, 0) of block (0, 0, 0) (warp 2, lane 0)")
    assert (fault.launch, fault.pc, line_of(fault)) == ("kernel oobsh", 0x20, 5)


@pytest.mark.parametrize("target", TARGETS)
def test_a_global_access_out_of_bounds_names_the_thread_and_block(target):
    """Each thread loads x[64 * block + tid + 1]: only thread (63, 0, 0) of block (1, 0, 0) reads past x."""
    text = ("    S2R R0, SR_TID.X\n    S2R R1, SR_CTAID.X\n    ULDC.64 UR4, c[0x0][memory_descriptor]\n"
            "    LDC.64 R2, c[0x0][RZ+param+0x0]\n    IMAD R0, R1, 0x40, R0\n    IADD3 R0, R0, 0x1, RZ\n"
            "    IMAD.WIDE.U32 R2, R0, 0x4, R2\n    LDG.E R4, [R2.64]\n    EXIT\n")
    fault = fault_of(text, target, grid=2, block=64, params=[Pointer("x")], buffers={"x": np.zeros(128, np.float32)})
    assert "lies outside every arena resident (0 bytes past the end of x" in fault.message
    assert fault.message.endswith("; first faulting thread (63, 0, 0) of block (1, 0, 0) (warp 1, lane 31)")
    assert line_of(fault) == 8


def test_a_warp_wide_instruction_run_diverged_is_placed_at_its_thread():
    text = (".shared 512\n    S2R R0, SR_TID.X\n    ISETP.GE.U32.AND P0, PT, R0, 0x28, PT\n    @P0 EXIT\n"
            "    LDSM.16.M88.4 R4, [RZ]\n    EXIT\n")
    fault = fault_of(text, block=64)
    assert "a warp-wide instruction executed by part of a warp" in fault.message
    assert fault.message.endswith("first faulting thread (32, 0, 0) of block (0, 0, 0) (warp 1, lane 0)")
    assert line_of(fault) == 5


def test_an_endless_loop_stops_at_the_step_limit_with_where_and_how_to_raise_it():
    text = ".kernel spin\n    S2R R0, SR_TID.X\ntop:\n    IADD3 R0, R0, 0x1, RZ\n    BRA top\n"
    fault = fault_of(text, max_steps=1000)
    assert fault.pc in (0x10, 0x20) and line_of(fault) in (4, 5)
    assert "stopped there after 1,000 instructions issued, with 32 threads at it (the first thread (0, 0, 0) " \
           "of block (0, 0, 0)" in fault.message
    assert "the kernel probably loops forever" in fault.message
    assert "bobc sim --max-steps N, run_kernel(max_steps=N)" in fault.message


def test_a_kernel_under_the_step_limit_runs_and_one_just_over_it_stops():
    """The limit counts issues: 3 instructions of one warp, then EXIT (4 issues)."""
    text = "    S2R R0, SR_TID.X\n    IADD3 R0, R0, 0x1, RZ\n    IADD3 R0, R0, 0x1, RZ\n    EXIT\n"
    run_kernel(text, "sm_86", grid=1, block=32, params=[], max_steps=4)
    assert "stopped there after 3 instructions" in fault_of(text, max_steps=3).message
    with pytest.raises(BobcError, match="max_steps must be a positive number"):
        run_kernel(text, "sm_86", grid=1, block=32, params=[], max_steps=0)


def test_a_deadlock_names_each_barrier_its_instructions_and_counts():
    """Warp 0 waits at barrier 1, warp 1 at barrier 2, each for 64 threads (probe k/deadlock.sass)."""
    text = (".kernel deadlock\n    S2R R0, SR_TID.X\n    ISETP.GE.U32.AND P0, PT, R0, 0x20, PT\n    @P0 BRA other\n"
            "    BAR.SYNC.DEFER_BLOCKING 0x1, 0x40\n    EXIT\nother:\n    BAR.SYNC.DEFER_BLOCKING 0x2, 0x40\n    EXIT\n")
    fault = fault_of(text, grid=2, block=64)
    assert fault.message == (
        "kernel deadlock: every live thread waits at a barrier that too few threads reach (a deadlock on the "
        "GPU): in block (0, 0, 0), barrier 1: 32 threads wait at 0x0030 (BAR.SYNC.DEFER_BLOCKING 0x1, 0x40); "
        "it expects 64 threads, 32 have arrived; barrier 2: 32 threads wait at 0x0050 "
        "(BAR.SYNC.DEFER_BLOCKING 0x2, 0x40); it expects 64 threads, 32 have arrived (and 1 more block stuck)")
    assert (fault.pc, fault.places, line_of(fault)) == (0x30, (0x50,), 5)


def test_a_whole_block_barrier_deadlock_counts_exited_threads():
    text = ("    S2R R0, SR_TID.X\n    ISETP.GE.U32.AND P0, PT, R0, 0x20, PT\n    @P0 EXIT\n"
            "    BAR.SYNC.DEFER_BLOCKING 0x0, 0x60\n    EXIT\n")
    fault = fault_of(text, block=64)
    assert "barrier 0: 32 threads wait at 0x0030" in fault.message
    assert "it expects 96 threads, 32 have arrived" in fault.message


# ------------------------------------------------------------ run_kernel and the source's directives
REDUCE = """.kernel reduce
.shared 512
    S2R R0, SR_TID.X
    IMAD.SHL.U32 R8, R0, 0x4, RZ
    STS [R8], R0
    BAR.SYNC.DEFER_BLOCKING 0x0
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][RZ+param+0x0]
    LDS R9, [R8]
    IMAD.WIDE.U32 R2, R0, 0x4, R2
    STG.E [R2.64], R9
    EXIT
"""


def test_run_kernel_gives_a_block_the_shared_memory_its_source_declares():
    out = run_kernel(REDUCE, "sm_86", grid=1, block=128, params=[Pointer("o")], buffers={"o": np.zeros(128, np.uint32)})
    assert (out["o"] == np.arange(128)).all()
    # shared_bytes asks for more than .shared: the block gets it (the source's is a minimum)
    fault = fault_of(REDUCE.replace(".shared 512", ".shared 256"), block=128, params=[Pointer("o")],
                     buffers={"o": np.zeros(128, np.uint32)})
    assert fault.message.startswith("kernel reduce: instruction at 0x0020 (STS [R8], R0): shared-memory access at "
                                    "0x100 (4 bytes) lies outside the block's 256 bytes")
    run_kernel(REDUCE.replace(".shared 512", ".shared 256"), "sm_86", grid=1, block=128, params=[Pointer("o")],
               buffers={"o": np.zeros(128, np.uint32)}, shared_bytes=512)


def test_run_kernel_refuses_a_kernel_over_its_register_budget_as_the_assembler_does(tmp_path):
    text = ".kernel regs\n.registers 8\n    S2R R0, SR_TID.X\n    MOV R20, R0\n    EXIT\n"
    with pytest.raises(BobcError) as caught:
        run_kernel(text, "sm_86", grid=1, block=32, params=[])
    assert caught.value.message == ("kernel 'regs' needs 23 registers (highest R20 + 1 + 2 reserved), over its "
                                    "budget of 8")
    assert caught.value.span.line == 4
    source = tmp_path / "regs.sass"
    source.write_text(text.replace(".registers 8", ".registers 23"))
    run_kernel(source, "sm_86", grid=1, block=32, params=[])


def test_a_kernel_name_given_wins_over_the_sources():
    fault = fault_of(".kernel rz\n    LOP3.LUT P0, R2, RZ, RZ, RZ, 0xc0, P1\n    EXIT\n", kernel_name="mine")
    assert fault.message.startswith("kernel mine: instruction at 0x0000")


# ------------------------------------------------------------ bobc sim: file:line:column for each
def _plan_with(tmp_path, before: str, after: str):
    copy = tmp_path / "linear_regression"
    shutil.copytree(REPO / "examples" / "linear_regression", copy)
    kernel = copy / "LinReg" / "kernels" / "linreg-predict.sass"
    text = kernel.read_text()
    assert text.count(before) == 1
    kernel.write_text(text.replace(before, after))
    return copy, kernel


def _sim(tmp_path, copy, *extra):
    import subprocess
    import sys
    record = tmp_path / "record.bin"
    subprocess.run([sys.executable, str(copy / "make_record.py"), "-o", str(record)], check=True,
                   capture_output=True)
    return main(["sim", str(copy / "LinReg" / "Build" / "NativeHost.bob"), "train", "--target", "sm_86",
                 "--input", str(record), "--checkpoint-out", str(tmp_path / "c.bin"),
                 "--predictions", str(tmp_path / "p.bin"), "--result", str(tmp_path / "r.bin"), *extra])


def test_bobc_sim_places_an_unmodeled_instruction_in_its_source(tmp_path, capsys):
    refused = "LOP3.LUT P0, R14, R14, R12, RZ, 0xc0, PT"      # FADD.RZ until probe s44 simops modelled it
    copy, kernel = _plan_with(tmp_path, "    FADD R14, R14, R12\n", f"    {refused}\n")
    assert _sim(tmp_path, copy) == 7
    err = capsys.readouterr().err
    line = kernel.read_text().split("\n").index(f"    {refused}") + 1
    assert err.startswith(f"bobc sim: {kernel}:{line}:5: error: launch 1 (linreg-predict): instruction at ")
    assert "LOP3.LUT with a predicate input is not modeled; first faulting thread (0, 0, 0) of block (0, 0, 0)" in err
    assert f"\n      {refused}\n      ^" in err and "Traceback" not in err


def test_bobc_sim_stops_an_endless_loop_at_max_steps_in_its_source(tmp_path, capsys):
    copy, kernel = _plan_with(tmp_path, "    STG.E [R6.64], R14\n    EXIT\n",
                              "    STG.E [R6.64], R14\nhang:\n    IADD3 R15, R15, 0x1, RZ\n    BRA hang\n")
    assert _sim(tmp_path, copy, "--max-steps", "20000") == 7
    err = capsys.readouterr().err
    lines = kernel.read_text().split("\n")
    places = {f"{kernel}:{lines.index(s) + 1}:5" for s in ("    IADD3 R15, R15, 0x1, RZ", "    BRA hang")}
    head = err.split("\n")[0]
    assert re.match(r"bobc sim: (\S+): error: ", head).group(1) in places
    assert "stopped there after 20,000 instructions issued" in head
    assert "the kernel probably loops forever" in head and "--max-steps N" in head
