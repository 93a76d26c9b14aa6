"""The simulator runs ptxas's SASS for 64-bit subtraction and 64-bit atomics to the PTX ISA's meaning,
or refuses it by name (probe s38 sassforms5).  Each kernel is ptxas's (-O3) cubin of a small PTX kernel
(test_sim_probe_s37_sassforms3._kernel: a, b, c, d per thread, %rd13 = b:a, %rd14 = d:c), run in the
simulator with its control-code checker, against the PTX definition computed with Python integers:
- finding 1: `IMAD.WIDE.U32 R8, R3, 0x10, -R8` (mul.wide.u32 then sub.s64): the simulator dropped the
  '-' on the 64-bit addend and stored a * 16 + y for a * 16 - y, silently;
- finding 2: LEA with a carry-out and '-' on B or A (sub.s64 of a shifted value: LEA R12, P0, R2, -R7, 0x2
  then IADD3.X R13, ~R8, R13, RZ, P0, !PT): the negated operand enters the adder as ~x + 1, so x = 0
  carries; the simulator negated it as an integer (-0 = 0, no carry) and the high word came out one less;
- finding 3: 64-bit atomics (.S64, .F64) ran as 32-bit ones (the simulator refused only `.64`): memory's
  low word got a 32-bit min / add, silently; they were refused by name, and since probe s47 simgaps2 run on the
  64-bit word;
- findings 4-9 (16-bit MUFU, F2F of a bf16, the checker on divergent paths, PLOP3's `.SIGN` sources, '-' on
  LEA's A in the assembler): each test below says what it holds.
"""
from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from bobc.nvtools import nvdisasm, ptxas
from tests.sass.test_sim_probe_s37_sassforms3 import A, B, C, D, THREADS, _kernel

M64 = (1 << 64) - 1
ARCHES = ("sm_86", "sm_90")


def _cubin(name: str, arch: str, body: str, tmp_path) -> tuple[bytes, str]:
    """ptxas's cubin of the kernel and nvdisasm's text of it."""
    ptx, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.cubin"
    ptx.write_text(_kernel(name, arch, body))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    listing = subprocess.run([nvdisasm(), str(cubin)], check=True, capture_output=True, text=True).stdout
    return cubin.read_bytes(), listing


def _run(image: bytes, arch: str, name: str, out_words: int = 2 * THREADS) -> np.ndarray:
    from bobc.sim.kernel import run_kernel
    return run_kernel(image, arch, grid=1, block=THREADS, params=["out", "in", np.uint32(THREADS)],
                      buffers={"out": np.zeros(out_words, np.uint32), "in": np.concatenate([A, B, C, D])},
                      kernel_name=name)["out"]


def _want(definition) -> np.ndarray:
    """definition(x = b:a, y = d:c) -> the 64-bit result, for each thread."""
    return np.array([definition(int(a) | int(b) << 32, int(c) | int(d) << 32) & M64
                     for a, b, c, d in zip(A, B, C, D)], dtype=np.uint64)


STORE = " mov.b64 {%r10, %r11}, %rd20;"
SUBTRACTIONS = {  # name: (PTX body, the SASS form ptxas writes for it, the PTX definition)
    "wide_minus": ("mul.wide.u32 %rd20, %r2, 16; sub.s64 %rd20, %rd20, %rd14;" + STORE,
                   r"IMAD\.WIDE\.U32 R\d+, R\d+, 0x10, -R\d+", lambda x, y: ((x & 0xFFFFFFFF) << 4) - y),
    "shifted_minus": ("shl.b64 %rd20, %rd13, 2; sub.s64 %rd20, %rd20, %rd14;" + STORE,
                      r"LEA R\d+, P0, R\d+(\.reuse)?, -R\d+, 0x2", lambda x, y: (x << 2) - y),
    "minus_shifted": ("shl.b64 %rd21, %rd14, 2; sub.s64 %rd20, %rd13, %rd21;" + STORE,
                      r"LEA R\d+, P0, -R\d+(\.reuse)?, R\d+, 0x2", lambda x, y: x - (y << 2)),
}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(SUBTRACTIONS))
def test_subtraction_of_a_product_or_shift(name, arch, tmp_path, needs_ptxas, needs_nvdisasm):
    body, form, definition = SUBTRACTIONS[name]
    image, listing = _cubin(name, arch, body, tmp_path)
    assert re.search(form, listing), f"ptxas no longer writes {form!r} for {name}"
    got, want = _run(image, arch, name).view(np.uint64), _want(definition)
    # the inputs hold the operands that tell the readings apart: a zero low word subtracted (finding 2)
    assert got.tobytes() == want.tobytes(), f"{arch} {name}:\n{[hex(v) for v in got]}\n!=\n{[hex(v) for v in want]}"


ATOMICS = {  # name: (PTX, the opcode ptxas writes, the PTX definition of the stored word of start x and value y)
    # word 0 / 1 of out[2i] hold a / c before the atomic (start = c:a); atom's old value is stored over them, red's
    # word after it is loaded and stored
    "min_s64": ("atom.global.min.s64 %rd20, [%rd12], %rd14;", "MIN.S64", lambda x, y: x),
    "add_f64": ("atom.global.add.f64 %rd20, [%rd12], %rd14;", "ADD.F64", lambda x, y: x),
    "max_u64": ("red.global.max.u64 [%rd12], %rd14; ld.global.u64 %rd20, [%rd12];", "MAX.64", lambda x, y: max(x, y)),
    "add_u64": ("red.global.add.u64 [%rd12], %rd14; ld.global.u64 %rd20, [%rd12];", "ADD.64", lambda x, y: x + y),
}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(ATOMICS))
def test_64_bit_atomics_run_on_the_64_bit_word(name, arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """Refused by name from probe s38 (they had run as 32-bit atomics on the low word); since probe s47 simgaps2 they
    run as the PTX ISA defines them on the 64-bit word (tests/sim/test_atomics64_s47.py): atom's old value is the
    whole start word c:a (a register pair), red.max.u64 / red.add.u64 leave max(c:a, d:c) unsigned / c:a + d:c
    modulo 2^64 there (Python integers)."""
    body, opcode, definition = ATOMICS[name]
    prologue = "mul.wide.u32 %rd16, %r1, 8; add.s64 %rd12, %rd2, %rd16; st.global.v2.u32 [%rd12], {%r2, %r4};"
    image, listing = _cubin(name, arch, f"{prologue} {body} mov.b64 {{%r10, %r11}}, %rd20;", tmp_path)
    assert opcode in listing, f"ptxas no longer writes {opcode} for {name}"
    got = _run(image, arch, name).view(np.uint64)
    want = np.array([definition(int(a) | int(c) << 32, int(c) | int(d) << 32) & M64 for a, c, d in zip(A, C, D)],
                    dtype=np.uint64)
    assert got.tobytes() == want.tobytes(), f"{arch} {name}:\n{[hex(v) for v in got]}\n!=\n{[hex(v) for v in want]}"


# Finding 4 (MUFU.EX2.F16 / .TANH.F16 / .TANH.BF16 run as binary32, storing 0 for ex2.approx.f16(0)) was refused by
# name here; probe s44 simops models them: tests/sass/test_sim_mufu16_s44.py.


def _bf16_value(bits: int) -> float:
    """A bfloat16's value: the binary32 whose high 16 bits these are (its definition)."""
    return float(np.array([bits << 16], np.uint32).view(np.float32)[0])


@pytest.mark.parametrize("lane", ["low", "high"])
def test_bf16_to_f16_conversion(lane, tmp_path, needs_ptxas, needs_nvdisasm):
    """Finding 5: F2F.F16.BF16 (cvt.rn.f16.bf16, sm_90) read its operand as a binary32 (the bf16 0x3f80,
    1.0, as the tiny 0x00003f80) and stored 0; now the bf16's value rounded to binary16, nearest even
    (numpy's float64 -> float16 is IEEE's; a bf16 is exact in binary64).  A NaN need only be a NaN."""
    pick = "%h1" if lane == "low" else "%h2"
    body = f"mov.b32 {{%h1, %h2}}, %r2; cvt.rn.f16.bf16 %h3, {pick}; cvt.u32.u16 %r10, %h3;"
    image, listing = _cubin(f"bf16_f16_{lane}", "sm_90", body, tmp_path)
    assert "F2F.F16.BF16 R" in listing
    got = _run(image, "sm_90", f"bf16_f16_{lane}")[0::2]
    halves = [(int(a) >> (0 if lane == "low" else 16)) & 0xFFFF for a in A]
    with np.errstate(over="ignore"):                    # past 65504: infinity, IEEE's round to nearest
        want = np.array([_bf16_value(h) for h in halves]).astype(np.float16).view(np.uint16).astype(np.uint32)
    nan = np.isnan(want.astype(np.uint16).view(np.float16))
    got_nan = np.isnan((got & 0xFFFF).astype(np.uint16).view(np.float16))
    assert (got_nan == nan).all() and (got[~nan] == want[~nan]).all(), \
        f"{[hex(v) for v in got]}\n!=\n{[hex(v) for v in want]}"


def _fns(mask: int, base: int, offset: int) -> int:
    """PTX fns.b32 (the ISA's Semantics, literally): the offset-th set bit of mask from base."""
    if offset == 0:
        return base if mask >> base & 1 else 0xFFFFFFFF
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if mask >> pos & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return 0xFFFFFFFF


@pytest.mark.parametrize("arch", ARCHES)
def test_divergent_paths_writing_and_reading_a_register(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """Finding 6: ptxas's fns.b32 on sm_90 branches three ways on the offset's sign; the negative path's
    `BREV R4, R4` sets scoreboard 2 and the zero path's `LOP3.LUT R4, R4, R5, RZ, 0xc0, !PT` reads R4 with no
    wait on it -- other threads, whose R4 the BREV does not write.  The checker refused ptxas's code
    ("reads R4 before waiting on scoreboard 2"); a read now waits only for writes its own threads issued.
    The offsets (c mod 7 - 3) give each path threads; the base is below 32 as the ISA requires."""
    body = ("and.b32 %r5, %r3, 31; rem.u32 %r6, %r4, 7; sub.s32 %r6, %r6, 3; fns.b32 %r10, %r2, %r5, %r6;")
    image, listing = _cubin("fns", arch, body, tmp_path)
    got = _run(image, arch, "fns")[0::2]
    want = [_fns(int(a), int(b) & 31, int(c) % 7 - 3) for a, b, c in zip(A, B, C)]
    assert {(int(c) % 7 - 3 > 0) - (int(c) % 7 - 3 < 0) for c in C} == {-1, 0, 1}
    assert got.tolist() == want, f"{arch} fns"


def _divergent(reader_threads: str) -> str:
    """SASS: threads 0..15 ("others") or 0..7 ("writers") write R4 with BREV (scoreboard 2); the rest
    branch to `reads`, which reads R4 without waiting on scoreboard 2.  With "others" the BREV's threads
    branch past it, so only the other threads read; with "writers" they fall into it too."""
    # "writers": threads 0..7 issue the BREV, then fall into the reader with the others
    split = f"ISETP.GE.U32.AND P0, PT, R1, {'0x10' if reader_threads == 'others' else '0x8'}, PT"
    return f"""[B------:R-:W0:-:S01] S2R R1, SR_TID.X
[B0-----:R-:W-:-:S06] {split}
[B------:R-:W-:-:S06] MOV R4, 0x1234
[B------:R-:W-:-:S06] MOV R5, 0xff
[B------:R-:W-:-:S06] @P0 BRA reads
[B------:R-:W2:-:S02] BREV R4, R4
[B------:R-:W-:-:S06] {"BRA done" if reader_threads == "others" else "NOP"}
reads:
[B------:R-:W-:-:S06] LOP3.LUT R6, R4, R5, RZ, 0xc0, !PT
done:
[B--2---:R-:W-:-:S06] NOP
[B------:R-:W-:-:S05] EXIT
"""


def test_a_divergent_read_waits_only_for_its_own_threads_writes():
    """Finding 6's rule and its limit: the other threads' read passes; a read by threads that issued the
    BREV (they fall through into it) before its scoreboard is waited is still refused."""
    from bobc.sim.faults import Hazard
    from bobc.sim.kernel import run_kernel
    run_kernel(_divergent("others"), "sm_90", grid=1, block=32, params=[])
    with pytest.raises(Hazard, match=r"reads R4 before waiting on scoreboard 2"):
        run_kernel(_divergent("writers"), "sm_90", grid=1, block=32, params=[])


def _saturated(v: int) -> int:
    return max(-2**31, min(2**31 - 1, v)) & 0xFFFFFFFF


def _s32(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


SATURATING = {  # PTX .sat on s32: the exact result clamped to the s32 range
    "add_sat": ("add.sat.s32 %r10, %r2, %r3;", lambda a, b, c: _s32(a) + _s32(b)),
    "sub_sat": ("sub.sat.s32 %r10, %r2, %r3;", lambda a, b, c: _s32(a) - _s32(b)),
    "mad_hi_sat": ("mad.hi.sat.s32 %r10, %r2, %r3, %r4;", lambda a, b, c: (_s32(a) * _s32(b) >> 32) + _s32(c)),
}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(SATURATING))
def test_saturating_s32_arithmetic_reads_sign_bits(name, arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """Finding 7: ptxas tests a saturating s32 sum for overflow on the operands' and the sum's sign bits,
    `PLOP3.LUT P0, PT, R2.SIGN, R5.SIGN, R0.SIGN, 0x2, 0x0`; the simulator could not read `R2.SIGN`
    (refused).  Now a PLOP3 source `.SIGN` is the register's bit 31."""
    body, definition = SATURATING[name]
    image, listing = _cubin(name, arch, body, tmp_path)
    assert re.search(r"PLOP3\.LUT P\d, PT, R\d+(\.reuse)?\.SIGN, ", listing), f"ptxas no longer writes .SIGN for {name}"
    got = _run(image, arch, name)[0::2]
    want = [_saturated(definition(int(a), int(b), int(c))) for a, b, c in zip(A, B, C)]
    assert got.tolist() == want, f"{arch} {name}"


def test_sign_is_read_only_on_plop3():
    """`.SIGN` elsewhere (no instruction ptxas writes) is unreadable, not read as the whole register."""
    from bobc.sim.sass_frontend import parse_line
    assert "is read only as a source of PLOP3" in parse_line(0, "IADD3 R0, R2.SIGN, R3, RZ", 0).unreadable
    assert "is read only as a source of PLOP3" in parse_line(0, "PLOP3.LUT P0, PT, -R2.SIGN, PT, PT, 0x2, 0x0", 0).unreadable
    assert parse_line(0, "PLOP3.LUT P0, PT, R2.reuse.SIGN, R5.SIGN, R0.SIGN, 0x2, 0x0", 0).unreadable == ""


@pytest.mark.parametrize("arch", ARCHES)
def test_negated_a_on_lea_assembles_to_ptxas_words(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """Finding 9: `bobc asm` refused ptxas's own `LEA R12, P0, -R7, R2, 0x2` ("LEA takes no '-' on this
    operand"); '-' on A is bit 72, REG_A's negate: ptxas's whole kernel assembles to its .text, and nvdisasm
    reads the words with '-' on A back (the plain and .HI forms)."""
    from bobc.cli import main
    from bobc.sass import assemble
    from bobc.sass.oracle import disassemble
    from bobc.targets import TARGETS
    from tests.sass.test_math_forms import _text
    body, form, _ = SUBTRACTIONS["minus_shifted"]
    ptx, cubin, listing, ours = (tmp_path / f"k.{x}" for x in ("ptx", "cubin", "sass", "bobc.cubin"))
    ptx.write_text(_kernel("minus_shifted", arch, body))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    listing.write_text(subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True,
                                      text=True).stdout)
    assert re.search(form, listing.read_text())
    assert main(["asm", str(listing), "--arch", arch, "--kernel", "minus_shifted", "--cubin", "-o", str(ours)]) == 0
    assert _text(ours.read_bytes(), "minus_shifted") == _text(cubin.read_bytes(), "minus_shifted")
    texts = ["LEA R12, P0, -R7, R2, 0x2", "LEA.HI R9, -R6, R13, RZ, 0x10", "LEA R4, -R5, R6, 0x3"]
    words = [assemble(f"{t}\nEXIT\n", arch).code[:16] for t in texts]
    assert all(int.from_bytes(w[8:], "little") >> 8 & 1 for w in words)          # bit 72
    assert [d.text for d in disassemble(b"".join(words), TARGETS[arch].nvdisasm_arch).lines] == texts
