"""An instruction whose control code is written by hand, reading (or overwriting) what an automatically scheduled
variable-latency instruction writes (or still reads) on a scoreboard the scheduler picked, without waiting on that
scoreboard, is refused by the assembler at that instruction (probe s46 varlat finding 2, probe s47 simgaps2;
schedule.UNWAITED) -- the converse of tests/sass/test_unscored_variable_latency_s46.py.

Before, the scheduler counted the wait in its own books only (the written code kept as is), so `bobc asm` accepted it
and only bobc.sim's checker refused the read at run time ("reads R4 before waiting on scoreboard 0").  The oracle: a
global load's result lands hundreds of cycles after issue (ptxas 13 sets a write scoreboard on every LDG it emits and
its readers wait on it), and its address register is read after issue (the read scoreboard ptxas sets on a store's
data register, `[B------:R0:W-:...] STG`, waited before an overwrite), so no stall covers either.  The scoreboard
the refusal names is the one `bobc asm --listing` gives the producer when the reader waits on it; the control code
the hint writes runs in the simulator with its hazard checker on, to NumPy's x + x.  Kept accepted: a written code
that waits on it, an earlier stall of 0 (the interlocked encoding), and a program with no automatic producer (ptxas's
listings, tests/sim/test_checker_accepts_ptxas_s36.py)."""
import numpy as np
import pytest

from bobc.sass.assembler import assemble_kernel
from bobc.sim.kernel import Pointer, run_kernel
from tests.sass.test_unscored_variable_latency_s46 import _refusal   # assemble_kernel's BobcError

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])

HEAD = """.kernel unwaited
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][RZ+param+0x0]
    LDC.64 R6, c[0x0][RZ+param+0x8]
    IMAD.WIDE.U32 R2, R0, 0x4, R2
    IMAD.WIDE.U32 R6, R0, 0x4, R6
    LDG.E R4, [R2.64]
"""
READ = HEAD + """    {control} FADD R5, R4, R4
    STG.E [R6.64], R5
    EXIT
"""
OVERWRITE = HEAD + """    {control} MOV R4, 0x3f800000
    FADD R5, R4, R4
    STG.E [R6.64], R5
    EXIT
"""
GUARD = HEAD + """    {control} ISETP.GT.AND P0, PT, R4, RZ, PT
    FADD R5, R4, R4
    STG.E [R6.64], R5
    EXIT
"""
# the store reads R5 late (its read scoreboard), a written MOV then overwrites R5 at once
WAR = HEAD + """    FADD R5, R4, R4
    STG.E [R6.64], R5
    {control} MOV R5, 0x0
    EXIT
"""
INTERLOCK = HEAD + """    [B------:R-:W-:Y:S00] NOP
    [B------:R-:W-:-:S05] FADD R5, R4, R4
    STG.E [R6.64], R5
    EXIT
"""


def _run(text: str, target: str, tmp_path, want=None) -> None:
    path = tmp_path / "ok.sass"
    path.write_text(text)
    x = np.linspace(-3, 3, 32, dtype=np.float32)
    out = run_kernel(path, target, (1,), (32,), [Pointer("x"), Pointer("y")],
                     {"x": x, "y": np.zeros(32, np.float32)})
    want = (x.astype(np.float64) * 2).astype(np.float32) if want is None else want
    np.testing.assert_array_equal(out["y"], want)


def _scoreboard_of_the_load(target: str, tmp_path) -> int:
    """The write scoreboard bobc gives the automatic LDG when its reader is automatic too (its own listing)."""
    path = tmp_path / "auto.sass"
    path.write_text(READ.format(control=""))
    load = next(i for i in assemble_kernel(path, target).instructions if i.text.startswith("LDG"))
    return load.control.write_barrier


@TARGETS
@pytest.mark.parametrize("text, access, register", [
    (READ, "reads", "R4"), (OVERWRITE, "overwrites", "R4"), (GUARD, "reads", "R4")])
def test_unwaited_reader_refused_at_its_line_s47(target, text, access, register, tmp_path):
    board = _scoreboard_of_the_load(target, tmp_path)
    error = _refusal(text.format(control="[B------:R-:W-:-:S05]"), target, tmp_path)
    message = f"{error} {error.hint}"
    assert (error.span.line, error.span.column) == (9, 5), error.span
    assert f"{access} {register}, which LDG.E R4, [R2.64] at 0x60" in message
    assert f"scoreboard {board}" in message and "does not wait on it" in message
    waits = "".join(str(b) if b == board else "-" for b in range(6))
    assert f"wait on scoreboard {board}: [B{waits}:R-:W-:-:S05]" in error.hint


@TARGETS
def test_overwrite_before_the_store_reads_refused_s47(target, tmp_path):
    error = _refusal(WAR.format(control="[B------:R-:W-:-:S05]"), target, tmp_path)
    assert (error.span.line, error.span.column) == (11, 5), error.span
    assert "overwrites before it reads R5, which STG.E [R6.64], R5 at 0x80" in str(error)
    assert "read scoreboard" in str(error) and "wait on read scoreboard" in error.hint


@TARGETS
@pytest.mark.parametrize("text", [READ, OVERWRITE, WAR])
def test_the_hint_runs_s47(target, text, tmp_path):
    """The control code the hint writes assembles and runs with the checker on: x + x (OVERWRITE: 1 + 1 = 2, the MOV's
    value doubled; WAR: the store's x + x, stored before the MOV's overwrite)."""
    error = _refusal(text.format(control="[B------:R-:W-:-:S05]"), target, tmp_path)
    fixed = error.hint.split(": ", 1)[1].split("; or write", 1)[0]
    control = fixed.split("]", 1)[0] + "]"
    want = np.full(32, 2.0, np.float32) if text is OVERWRITE else None
    _run(text.format(control=control), target, tmp_path, want)


@TARGETS
def test_an_interlock_before_the_reader_accepted_s47(target, tmp_path):
    """A stall of 0 (Y:S00) before the written reader waits for every outstanding result, as the checker holds."""
    _run(INTERLOCK, target, tmp_path)


ADDRESS = HEAD + """    {control} MOV R2, 0x0
    FADD R5, R4, R4
    STG.E [R6.64], R5
    EXIT
"""


@TARGETS
def test_a_wait_on_the_result_completes_the_reads_s47(target, tmp_path):
    """Overwriting the automatic load's address register R2 (read on its read scoreboard) after waiting on the load's
    write scoreboard alone is accepted -- the result lands after the operands are read, as the checker holds (its
    Unread.wsb) -- and runs to x + x; waiting on neither is refused as an overwrite before the load reads it."""
    board = _scoreboard_of_the_load(target, tmp_path)
    waits = "".join(str(b) if b == board else "-" for b in range(6))
    _run(ADDRESS.format(control=f"[B{waits}:R-:W-:-:S05]"), target, tmp_path)
    error = _refusal(ADDRESS.format(control="[B------:R-:W-:-:S05]"), target, tmp_path)
    assert "overwrites before it reads R2, which LDG.E R4, [R2.64] at 0x60" in str(error)
