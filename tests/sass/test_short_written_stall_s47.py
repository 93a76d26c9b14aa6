"""A fixed-latency result read (or overwritten) by an AUTOMATICALLY scheduled instruction sooner than its latency,
because the stall before the reader is written by hand, is refused by the assembler at the written instruction whose
stall is to grow, naming the reader and the stall to write (probe s47 simgaps2 finding 4, probe s47 handstall;
schedule.HANDSTALL) -- the fixed-latency counterpart of tests/sass/test_unwaited_scoreboard_s47.py.

Before, the scheduler lengthened automatic stalls only and, a written one in the way, kept it and accepted the read
("the author's responsibility"): `bobc asm` exited 0 and only bobc.sim's checker refused the read at run time ("reads
R5 4 cycles after its producer at 0x0070 issued; an FMA result needs 5").  An instruction's own control code cannot
delay it (it issues the previous instruction's stall later, and a fixed-latency result is on no scoreboard), and
written codes are kept as written (compiler/bobc/sass/README.md), so the author is told which stall to write.

The oracle is the simulator's hazard checker: the same timing with the reader's control code written too (so the
assembler leaves it to the author) is refused by the checker, and the control code the hint writes runs with the
checker on to NumPy's x + x.  Kept accepted: a same-pipe reader the written stall does cover (FMUL -> FMUL at 4
cycles, which the checker accepts too), and code with every control code written (ptxas's listings,
tests/sim/test_checker_accepts_ptxas_s36.py)."""
import numpy as np
import pytest

from bobc.errors import BobcError
from bobc.sim.faults import Hazard
from bobc.sim.kernel import Pointer, run_kernel
from tests.sass.test_unscored_variable_latency_s46 import _refusal   # assemble_kernel's BobcError

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])

HEAD = """.kernel handstall
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][RZ+param+0x0]
    LDC.64 R6, c[0x0][RZ+param+0x8]
    IMAD.WIDE.U32 R2, R0, 0x4, R2
    IMAD.WIDE.U32 R6, R0, 0x4, R6
    LDG.E R4, [R2.64]
"""
# the FADD waits on every scoreboard (the load's among them), its stall written: 4 cycles, a store reading an FMA
# result needs 5 (the checker's "an FMA result needs 5")
PRODUCER = HEAD + """    {control} FADD R5, R4, R4
    {store}STG.E [R6.64], R5
    EXIT
"""
# written stalls after the producer: the latest one, the MOV's before the store, is the one to grow
BETWEEN = HEAD + """    [B012345:R-:W-:-:S02] FADD R5, R4, R4
    [B------:R-:W-:-:S01] MOV R9, 0x1
    {control} MOV R10, 0x1
    STG.E [R6.64], R5
    EXIT
"""
# a same-pipe reader: FMUL reads an FMUL result 4 cycles later, which the checker accepts
SAME_PIPE = HEAD + """    [B012345:R-:W-:-:S04] FMUL R5, R4, R4
    FMUL R8, R5, R5
    STG.E [R6.64], R8
    EXIT
"""


def _run(text: str, target: str, tmp_path, want) -> None:
    path = tmp_path / "ok.sass"
    path.write_text(text)
    x = np.linspace(-3, 3, 32, dtype=np.float32)
    out = run_kernel(path, target, (1,), (32,), [Pointer("x"), Pointer("y")],
                     {"x": x, "y": np.zeros(32, np.float32)})
    np.testing.assert_array_equal(out["y"], want(x.astype(np.float64)).astype(np.float32))


def _hinted(error: BobcError) -> str:
    """The control code the hint writes ('stall 5: [B...:S05] FADD R5, R4, R4; or ...')."""
    fixed = error.hint.split(": ", 1)[1].split("; or", 1)[0]
    return fixed.split("]", 1)[0] + "]"


@TARGETS
def test_short_stall_refused_at_the_producer_s47(target, tmp_path):
    error = _refusal(PRODUCER.format(control="[B012345:R-:W-:-:S04]", store=""), target, tmp_path)
    assert (error.span.line, error.span.column) == (9, 5), error.span
    message = str(error)
    assert "FADD R5, R4, R4 at 0x70 is fixed latency" in message
    assert "STG.E [R6.64], R5 at 0x80 (" in message and "reads its R5 4 cycles after FADD issued" in message
    assert "needs 5" in message
    # hand-derived: the store issues S04 after the FADD, an FMA result needs 5 before a store reads it: one more
    assert error.hint.startswith("stall 5: [B012345:R-:W-:-:S05] FADD R5, R4, R4"), error.hint


@TARGETS
def test_the_checker_refuses_that_timing_s47(target, tmp_path):
    """The same issue times, the store's control code written too (the author's, so the assembler keeps it): the
    simulator's checker refuses the read -- the refusal above is a real hazard, not the scheduler's caution."""
    text = PRODUCER.format(control="[B012345:R-:W-:-:S04]", store="[B------:R-:W-:-:S02] ")
    path = tmp_path / "written.sass"
    path.write_text(text)
    x = np.linspace(-3, 3, 32, dtype=np.float32)
    with pytest.raises(Hazard, match="reads R5 4 cycles after its producer"):
        run_kernel(path, target, (1,), (32,), [Pointer("x"), Pointer("y")], {"x": x, "y": np.zeros(32, np.float32)})


@TARGETS
@pytest.mark.parametrize("text, line", [(PRODUCER, 9), (BETWEEN, 11)])
def test_the_hint_runs_s47(target, text, line, tmp_path):
    """The stall the hint writes assembles and runs with the checker on, to x + x."""
    written = "[B012345:R-:W-:-:S04]" if text is PRODUCER else "[B------:R-:W-:-:S01]"
    error = _refusal(text.format(control=written, store=""), target, tmp_path)
    assert error.span.line == line, error.span
    _run(text.format(control=_hinted(error), store=""), target, tmp_path, lambda x: x + x)


@TARGETS
def test_the_latest_written_stall_is_named_s47(target, tmp_path):
    error = _refusal(BETWEEN.format(control="[B------:R-:W-:-:S01]"), target, tmp_path)
    message = str(error)
    assert message.startswith("MOV R10, 0x1 at 0x90, after FADD R5, R4, R4 at 0x70"), message
    assert "STG.E [R6.64], R5 at 0xa0" in message and "4 cycles after FADD issued" in message
    # 2 + 1 + 1 = 4 cycles of written stalls, 5 needed: the MOV's S01 becomes S02
    assert error.hint.startswith("stall 2: [B------:R-:W-:-:S02] MOV R10, 0x1"), error.hint


@TARGETS
def test_a_covering_written_stall_accepted_s47(target, tmp_path):
    """FMUL -> FMUL in 4 cycles: the scheduler's FMA latency, and the checker runs it to x**4, each product rounded
    to binary32 (a float32 square is exact in float64, so one rounding per FMUL)."""
    def fourth(x):
        square = (x * x).astype(np.float32).astype(np.float64)
        return square * square
    _run(SAME_PIPE, target, tmp_path, fourth)


@TARGETS
def test_an_interlocked_producer_accepted_s47(target, tmp_path):
    """A stall of 0 (Y:S00) on the producer: the warp issues nothing more until its result is written, as the
    checker holds (hazards.py, the interlocked encoding) -- accepted, and runs to x + x."""
    _run(PRODUCER.format(control="[B012345:R-:W-:Y:S00]", store=""), target, tmp_path, lambda x: x + x)
