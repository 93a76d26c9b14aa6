"""ex2.approx.f16 / .f16x2, tanh.approx.f16 / .f16x2 (both targets) and sm_90's tanh.approx.bf16(x2) /
ex2.approx.ftz.bf16(x2) run in the simulator (probe s44 simops).  ptxas writes MUFU.EX2.F16 / MUFU.TANH.F16 /
.BF16 for them, one a half (`MUFU.EX2.F16 R7, R2.H1` for an f16x2's high half); the simulator refused them by name
since probe s38 (before that it ran them as binary32 and stored 0 for ex2(0)), stopping the kernel -- and its front
end could not read the `.H1` operand at all.

These are approximations: NVIDIA publishes no table of the unit's results, only the PTX ISA's special values.  As
for binary32's MUFU (docs/simulator.md, "Arithmetic and its precision") the simulator stores the exact function's
value rounded to the format; these tests hold it to what is independent of that choice: the PTX ISA's specials
exactly (ex2(+-0) = 1, ex2(-inf) = +0, ex2(+inf) = +inf, tanh(+-0) = +-0, tanh(+-inf) = +-1, a NaN a NaN) and
every other result within one unit in the last place of the true value (Python's math.exp2 / math.tanh in binary64,
some 2^-40 from exact at these magnitudes, against the format's values listed from its definition in
tests/sass/test_sim_roundings_s44.py).  ex2.approx.ftz.bf16 flushes subnormal operands and results (.ftz).
tests/gpu/test_sim_probes_gpu.py runs the same kernels on the GPU and records the hardware's words beside the
simulator's."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tests.sass.test_sim_roundings_s44 import FORMATS, kernel, narrow, run, widen

F16_TINY, BF16_TINY = 2.0 ** -14, 2.0 ** -126

FUNCTIONS = {  # name: (PTX on the word %r2 -> %r10, format, function, halves, targets, flushes subnormals)
    "ex2_f16": ("mov.b32 {%h1, %h2}, %r2; ex2.approx.f16 %h3, %h1; cvt.u32.u16 %r10, %h3;", "f16", "ex2", 1,
                ("sm_86", "sm_90"), False),
    "ex2_f16x2": ("ex2.approx.f16x2 %r10, %r2;", "f16", "ex2", 2, ("sm_86", "sm_90"), False),
    "tanh_f16": ("mov.b32 {%h1, %h2}, %r2; tanh.approx.f16 %h3, %h1; cvt.u32.u16 %r10, %h3;", "f16", "tanh", 1,
                 ("sm_86", "sm_90"), False),
    "tanh_f16x2": ("tanh.approx.f16x2 %r10, %r2;", "f16", "tanh", 2, ("sm_86", "sm_90"), False),
    "tanh_bf16x2": ("tanh.approx.bf16x2 %r10, %r2;", "bf16", "tanh", 2, ("sm_90",), False),
    "ex2_bf16x2": ("ex2.approx.ftz.bf16x2 %r10, %r2;", "bf16", "ex2", 2, ("sm_90",), True),
}


def words_for(count: int = 2048) -> np.ndarray:
    """[4, count]: the a word's halves step through every 16-bit pattern's neighbourhood (pattern k * 16 + j), the
    specials first."""
    words = np.zeros((4, count), np.uint32)
    special = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x8001, 0x3C00,
               0xBC00, 0x3F80, 0xBF80, 0x4900, 0xC900]
    low = (np.arange(count, dtype=np.uint32) * np.uint32(32)) & np.uint32(0xFFFF)
    high = (low + np.uint32(16) + np.arange(count, dtype=np.uint32) % np.uint32(16)) & np.uint32(0xFFFF)
    low[:len(special)] = special
    high[:len(special)] = special[::-1]
    words[0] = low | high << np.uint32(16)
    return words


def check(name: str, a_words, got_words) -> tuple[list, list]:
    """(lines breaking what the PTX ISA fixes, lines beyond one ulp of the true value) for each half."""
    _, fmt, function, halves, _, flushes = FUNCTIONS[name]
    tiny = BF16_TINY if fmt == "bf16" else F16_TINY
    fixed, beyond = [], []
    for a, g in zip(np.asarray(a_words).tolist(), np.asarray(got_words).tolist()):
        for k in range(halves):
            x_bits, y_bits = a >> 16 * k & 0xFFFF, g >> 16 * k & 0xFFFF
            x = widen(x_bits, fmt)
            if flushes and abs(x) < tiny:
                x = math.copysign(0.0, x)
            got = widen(y_bits, fmt)
            where = f"{name}: x={x_bits:#06x} ({x!r}) -> {y_bits:#06x} ({got!r})"
            if math.isnan(x) or math.isinf(x) or x == 0:
                want = math.nan if math.isnan(x) else (
                    (math.inf if x > 0 else 0.0) if function == "ex2" and math.isinf(x) else
                    1.0 if function == "ex2" else math.copysign(1.0, x) if math.isinf(x) else x)
                same = (math.isnan(want) and FORMATS[fmt][4](y_bits)) or (got == want and
                                                                           math.copysign(1, got) == math.copysign(1, want))
                if not same:
                    fixed.append(where + f", PTX ISA: {want!r}")
                continue
            if FORMATS[fmt][4](y_bits):
                fixed.append(where + ", a NaN for a number")
                continue
            try:
                true = math.exp2(x) if function == "ex2" else math.tanh(x)
            except OverflowError:
                true = math.inf
            if flushes and abs(true) < tiny:
                true = 0.0
            # one ulp: the gap between the true value's rounding down and up in the format
            down, up = (widen(narrow(true, fmt, m), fmt) for m in ("rm", "rp"))
            if not (min(down, up) - (up - down if up != down else 0) <= got <= max(down, up) + (up - down)):
                if not (math.isinf(got) and math.isinf(up)):
                    beyond.append(where + f", true {true!r}")
    return fixed, beyond


@pytest.mark.parametrize(("name", "arch"), [(n, a) for n in sorted(FUNCTIONS) for a in FUNCTIONS[n][4]])
def test_16_bit_mufu_runs_within_an_ulp_and_to_the_ptx_specials(name, arch, tmp_path, needs_ptxas):
    words = words_for()
    got = run(name, arch, FUNCTIONS[name][0], words, tmp_path)
    fixed, beyond = check(name, words[0], got)
    assert not fixed and not beyond, f"{arch}:\n" + "\n".join((fixed + beyond)[:12])


def test_the_high_half_operand_is_read():
    """`MUFU.EX2.F16 R7, R2.H1` (ptxas's ex2.approx.f16x2 high half) parses: its source is R2's high 16 bits; an
    `.H1` anywhere else is refused as before, naming the operand."""
    from bobc.sim.kernel import run_kernel
    out = run_kernel(".kernel h\n    MOV R2, 0x3c000000\n    MUFU.EX2.F16 R7, R2.H1\n    MOV R4, c[0x0][0x160]\n"
                     "    MOV R5, c[0x0][0x164]\n    ULDC.64 UR4, c[0x0][0x118]\n    STG.E [R4.64], R7\n    EXIT\n", "sm_86", grid=1, block=1,
                     params=["out"], buffers={"out": np.zeros(1, np.uint32)}, check_hazards=False)["out"]
    assert out[0] == 0x4000                      # ex2(1.0) = 2.0
    from bobc.sim.sass_frontend import parse_line
    # the assembler takes F2F's .H1; the simulator reads .H1 on MUFU / F2FP alone and refuses the instruction, naming it
    assert re.match(r"cannot read operand 'R2\.H1' .*MUFU", parse_line(0, "F2F.F32.F16 R7, R2.H1", 0).unreadable)
    assert not parse_line(0, "MUFU.EX2.F16 R7, R2.H1", 0).unreadable


def sm90_cases() -> dict:
    """name -> (PTX for sm_90, input words [4, 2048]): for tests/gpu/test_sim_probes_gpu.py (ptxas's cubins), where
    check()'s first list is asserted (the PTX ISA's specials) and its second recorded."""
    return {f"s44_{name}": (kernel(f"s44_{name}", "sm_90", body), words_for())
            for name, (body, *_) in sorted(FUNCTIONS.items())}
