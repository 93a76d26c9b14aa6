"""An explicit control code that gives a variable-latency instruction no write scoreboard, followed by
automatically scheduled readers of its result, is refused by the assembler at the producer (probe s46
varlat, finding 1; schedule.UNSCORED).

Before, the scheduler timed such a producer as a fixed-latency one (DEFAULT_LATENCY) and `bobc asm`
accepted it; only bobc.sim's checker refused the read at run time.  The oracle: a global load, S2R and
MUFU are variable latency (ptxas 13 sets a write scoreboard on every one it emits at -O3 and its readers
wait on it), so no stall covers their results.  Kept accepted, as the checker accepts them and ptxas
relies on them: a later load of the same in-order queue that sets a scoreboard (the automatic reader then
waits on that one), and the interlocked encoding (stall 0, ptxas -O0).  Accepted code runs in the
simulator, its hazard checker on, to x + x computed with NumPy."""
import numpy as np
import pytest

from bobc.errors import BobcError
from bobc.sass.assembler import assemble_kernel
from bobc.sim.kernel import Pointer, run_kernel

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])

HEAD = """.kernel varlat
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][RZ+param+0x0]
    LDC.64 R6, c[0x0][RZ+param+0x8]
    IMAD.WIDE.U32 R2, R0, 0x4, R2
    IMAD.WIDE.U32 R6, R0, 0x4, R6
"""
LOAD = HEAD + """    {control} LDG.E R4, [R2.64]
    FADD R5, R4, R4
    STG.E [R6.64], R5
    EXIT
"""
QUEUE = HEAD + """    [B------:R-:W-:-:S01] LDG.E R4, [R2.64]
    [B------:R-:W2:-:S02] LDG.E R5, [R2.64]
    FADD R5, R4, R5
    STG.E [R6.64], R5
    EXIT
"""
SPECIAL = """.kernel varlat
    [B------:R-:W-:-:S01] S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R6, c[0x0][RZ+param+0x8]
    IMAD.WIDE.U32 R6, R0, 0x4, R6
    I2FP.F32.U32 R5, R0
    STG.E [R6.64], R5
    EXIT
"""
MUFU = HEAD + """    LDG.E R4, [R2.64]
    [B0-----:R-:W-:-:S01] MUFU.EX2 R4, R4
    FADD R5, R4, R4
    STG.E [R6.64], R5
    EXIT
"""


def _refusal(text: str, target: str, tmp_path) -> BobcError:
    path = tmp_path / "k.sass"
    path.write_text(text)
    with pytest.raises(BobcError) as caught:
        assemble_kernel(path, target)
    return caught.value


def _run(text: str, target: str, tmp_path) -> np.ndarray:
    path = tmp_path / "ok.sass"
    path.write_text(text)
    x = np.linspace(-3, 3, 32, dtype=np.float32)
    out = run_kernel(path, target, (1,), (32,), [Pointer("x"), Pointer("y")],
                     {"x": x, "y": np.zeros(32, np.float32)})
    np.testing.assert_array_equal(out["y"], (x.astype(np.float64) * 2).astype(np.float32))
    return out["y"]


@TARGETS
@pytest.mark.parametrize("text, producer_line, reader, register", [
    (LOAD.format(control="[B------:R-:W-:-:S02]"), 8, "FADD R5, R4, R4", "R4"),
    (SPECIAL, 2, "IMAD.WIDE.U32 R6, R0, 0x4, R6", "R0"),
    (MUFU, 9, "FADD R5, R4, R4", "R4"),
])
def test_unscored_producer_refused_s46(target, text, producer_line, reader, register, tmp_path):
    error = _refusal(text, target, tmp_path)
    message = f"{error} {error.hint}"
    assert (error.span.line, error.span.column) == (producer_line, 5), error.span
    assert "sets no write scoreboard" in message and reader in message and f"reads its {register}" in message
    assert "set a write scoreboard on it" in message and "waits on scoreboard" in message


@TARGETS
def test_the_hint_runs_s46(target, tmp_path):
    """The control code the hint writes, W0 on the load, runs with the checker on."""
    error = _refusal(LOAD.format(control="[B------:R-:W-:-:S02]"), target, tmp_path)
    assert "[B------:R-:W0:-:S02] LDG.E R4, [R2.64]" in error.hint
    _run(LOAD.format(control="[B------:R-:W0:-:S02]"), target, tmp_path)


@TARGETS
def test_in_order_queue_and_interlock_accepted_s46(target, tmp_path):
    """A later load of the global queue on SB2 completes the unscored one: the automatic FADD waits on SB2.
    A stall of 0 waits for every outstanding result."""
    _run(QUEUE, target, tmp_path)
    _run(LOAD.format(control="[B------:R-:W-:Y:S00]"), target, tmp_path)
