"""Conversions to or from binary64 or a 64-bit integer (F2F / I2F / F2I .F64, .S64, .U64) that set no write scoreboard
are variable latency, in `bobc asm` and in bobc.sim's checker alike (probe s47 simgaps2, finding 3).

Before session 47 the assembler timed such a result as a fixed-latency one of DEFAULT_LATENCY (6 cycles) while the
checker timed it as the FP64 unit's (10 for an ALU reader): `bobc asm` accepted automatic readers 6 cycles on that the
simulator refused, and the checker accepted hand-written readers 10 cycles on that nothing on the GPU promises.

The oracle is ptxas's own code (tests/sass/data/corpus-sm_86.tsv / corpus-sm_90.tsv, ptxas 13 -O3 and -O0 of
tools/ptx_corpus): it never reads such a result on a timing.  At -O3 it sets a write scoreboard on the conversion,
or leaves it unscored only where the reader waits on the scoreboard of a LATER instruction of the conversion queue
(I2F / F2I / F2F / MUFU / POPC / FLO / BREV, results in issue order: param_shapes.ptx convs' `I2F.U64 R11` read after
the wait on the later `F2F.F64.F32`'s SB0); at -O0 every instruction has a stall of 0 (interlocked).
test_ptxas_never_times_an_unscored_wide_conversion_s47 checks that on the corpus; the others hold the assembler and
the checker to it, the accepted code run to NumPy's float64 (2 * x of a binary32 x is exact in binary64)."""
from pathlib import Path

import numpy as np
import pytest

from bobc.sim.faults import Hazard
from bobc.sim.kernel import Pointer, run_kernel
from tests.sass.test_unscored_variable_latency_s46 import _refusal   # assemble_kernel's BobcError
from bobc.sim.latencies import fp64_conversion, wide_integer_conversion

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
DATA = Path(__file__).resolve().parent / "data"
XU = ("I2F", "F2I", "F2F", "MUFU", "POPC", "FLO", "BREV")

KERNEL = """.kernel wideconv
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][RZ+param+0x0]
    LDC.64 R6, c[0x0][RZ+param+0x8]
    IMAD.WIDE.U32 R2, R0, 0x4, R2
    IMAD.WIDE.U32 R6, R0, 0x8, R6
    [B------:R-:W0:-:S02] LDG.E R4, [R2.64]
    {control} F2F.F64.F32 R8, R4
{middle}    DADD R8, R8, R8
    STG.E.64 [R6.64], R8
    EXIT
"""


def _control(hi: int) -> dict:
    return {"stall": hi >> 41 & 0xF, "write": hi >> 46 & 7, "wait": hi >> 52 & 0x3F}


def _kernels(arch: str) -> dict:
    kernels: dict = {}
    for line in (DATA / f"corpus-{arch}.tsv").read_text().splitlines():
        text, _, hi, ref = line.split("\t")
        name, offset = ref.rsplit(":", 1)
        kernels.setdefault(name, []).append((int(offset, 16), text, int(hi, 16)))
    return {name: sorted(code) for name, code in kernels.items()}


def _registers(operands: str) -> set[int]:
    import re
    return {int(r) for r in re.findall(r"(?<![A-Z0-9_])R(\d+)", operands)}


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_ptxas_never_times_an_unscored_wide_conversion_s47(arch):
    """Every unscored wide conversion of the -O3 corpus whose result is read (straight-line, before a branch) is read
    after a wait on a scoreboard that a later instruction of the conversion queue set; every -O0 one under a stall
    of 0 before its reader.  The corpus holds both kinds (the counts below are floors, not the corpus's exact
    numbers)."""
    queued = interlocked = 0
    for name, code in _kernels(arch).items():
        for i, (offset, text, hi) in enumerate(code):
            words = text.split()
            if words[0].startswith("@"):
                words = words[1:]
            opcode, *mods = words[0].split(".")
            if opcode not in ("I2F", "F2I", "F2F") or _control(hi)["write"] != 7:
                continue
            if not (fp64_conversion(opcode, tuple(mods)) or wide_integer_conversion(opcode, tuple(mods))):
                continue
            dest = int(words[1].rstrip(",")[1:])
            # the destination's type is the first type modifier (F2F.F64.F32, I2F.F64.S64, F2I.S64.F64; F2I.F64's
            # destination is the default .S32): a 64-bit one fills a register pair
            types = [m for m in mods if m in ("F64", "F32", "F16", "BF16", "S64", "U64", "S32", "U32", "S16", "U16",
                                              "S8", "U8")]
            first = types[0] if types else None
            wide = (opcode in ("F2F", "I2F") and first == "F64") or (opcode == "F2I" and first in ("S64", "U64"))
            result = {dest, dest + 1} if wide else {dest}
            stall0 = _control(hi)["stall"] == 0
            later_xu: set[int] = set()         # scoreboards a later conversion-queue instruction set
            completed = False                  # a wait on one of them came before the reader
            for _, text2, hi2 in code[i + 1:]:
                words2 = text2.split()
                if words2[0].startswith("@"):
                    words2 = words2[1:]
                c = _control(hi2)
                waited = {b for b in range(6) if c["wait"] >> b & 1}
                operands = " ".join(words2[1:])
                reads = _registers(operands.split(",", 1)[1] if "," in operands and not words2[0].startswith(
                    ("STG", "STS", "ST.", "STL", "RED")) else operands)
                if reads & result:
                    if ":-O0" in name:
                        assert stall0, f"{arch} {name} {offset:#x} {text}: -O0 read without an interlock: {text2}"
                        interlocked += 1
                    else:
                        assert completed or waited & later_xu, (
                            f"{arch} {name} {offset:#x} {text}: ptxas reads it ({text2}) on a timing")
                        queued += 1
                    break
                if _registers(operands.split(",", 1)[0]) & result or words2[0].split(".")[0] in (
                        "BRA", "EXIT", "RET", "BSYNC", "BSSY", "CALL", "WARPSYNC"):
                    break
                completed = completed or bool(waited & later_xu)
                stall0 = stall0 or c["stall"] == 0
                if words2[0].split(".")[0] in XU and c["write"] != 7:
                    later_xu.add(c["write"])
    assert queued >= 2 and interlocked >= 50, (queued, interlocked)


def _run(text: str, target: str, tmp_path) -> None:
    path = tmp_path / "ok.sass"
    path.write_text(text)
    x = np.linspace(-3, 3, 32, dtype=np.float32)
    out = run_kernel(path, target, (1,), (32,), [Pointer("x"), Pointer("y")],
                     {"x": x, "y": np.zeros(32, np.float64)})
    np.testing.assert_array_equal(np.asarray(out["y"]).view(np.float64), x.astype(np.float64) * 2)


@TARGETS
def test_unscored_wide_conversion_refused_before_an_automatic_reader_s47(target, tmp_path):
    """`[B0-----:R-:W-:-:S01] F2F.F64.F32 R8, R4` then an automatic DADD: refused at the conversion (timed at 6 and
    accepted before), naming the DADD and the scoreboard to set."""
    error = _refusal(KERNEL.format(control="[B0-----:R-:W-:-:S01]", middle=""), target, tmp_path)
    assert (error.span.line, error.span.column) == (9, 5), error.span
    assert "sets no write scoreboard" in str(error) and "DADD R8, R8, R8" in str(error)
    control = error.hint.split("set a write scoreboard on it, ", 1)[1].split("]", 1)[0] + "]"
    assert control.startswith("[B0-----:R-:W") and not control.startswith("[B0-----:R-:W-"), control
    _run(KERNEL.format(control=control, middle=""), target, tmp_path)


@TARGETS
def test_the_checker_refuses_a_timed_read_s47(target, tmp_path):
    """Every control code written, the DADD 30 cycles after an unscored F2F.F64.F32 (more than the 10 the checker
    timed it at): refused by the checker as a read of a variable-latency result on no scoreboard."""
    middle = "    [B------:R-:W-:Y:S15] NOP\n"
    text = KERNEL.format(control="[B0-----:R-:W-:Y:S15]", middle=middle).replace(
        "    DADD R8, R8, R8", "    [B------:R-:W1:-:S02] DADD R8, R8, R8").replace(
        "    STG.E.64", "    [B-1----:R-:W-:-:S01] STG.E.64")
    path = tmp_path / "timed.sass"
    path.write_text(text)
    with pytest.raises(Hazard) as caught:
        run_kernel(path, target, (1,), (32,), [Pointer("x"), Pointer("y")],
                   {"x": np.zeros(32, np.float32), "y": np.zeros(32, np.float64)})
    assert "reads R8" in caught.value.reason and "sets no scoreboard" in caught.value.reason


@TARGETS
def test_a_later_conversion_completes_it_s47(target, tmp_path):
    """ptxas's pattern (param_shapes.ptx convs): the unscored conversion, a later conversion on SB1, the reader
    waiting on SB1 -- accepted by the assembler and the checker, and it runs to 2 * x."""
    middle = "    [B------:R-:W1:-:S02] F2F.F64.F32 R10, R4\n"
    _run(KERNEL.format(control="[B0-----:R-:W-:-:S01]", middle=middle), target, tmp_path)
