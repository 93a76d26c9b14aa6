"""Packed-half atomics in the simulator (probe s41 f16x2atoms): PTX atom / red .add.noftz.f16x2 (sm_86 and
sm_90) and .bf16x2 (sm_90: ptxas refuses them for sm_86), on global memory -- ptxas writes
RED / REDG / ATOMG .E.ADD.F16x2.RN (.BF16x2.RN), which the simulator refused as Unmodeled before -- and on
shared memory, where ptxas writes a loop of LDS, HADD2 / HFMA2.MMA and ATOMS.CAST.SPIN.

The expected words come from the PTX ISA (atom): "The floating-point operation .add ... rounds to nearest
even"; the f16x2 / bf16x2 forms "require the .noftz qualifier; it preserves subnormal inputs and results,
and does not flush them to zero"; each half is its own element.  Computed here from the bits with exact
rationals (`_value`, `_bits`), never with NumPy's or the executor's float conversions:

- contention: many threads of several warps add into a few words; every value is chosen so that each
  partial sum is exact in the format (small integers in one half, subnormal multiples in the other, whose
  flush would show), so the final word is fixed whatever order the GPU takes, and the old values an atom
  returns must chain: the multiset {old + value} plus the first word equals the multiset {old} plus the
  last one.
- one adder a word (tests/sass/test_sim_probe_s41_nanprobes2.py's f16x2 / bf16x2 cases, which the GPU run
  also takes): one IEEE rounding of the exact sum, ties to even, overflow to infinity, -0 + -0 = -0.
"""
from __future__ import annotations

import subprocess
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from bobc.nvtools import nvdisasm, ptxas
from bobc.sim.faults import Unmodeled

# format -> (exponent bits, fraction bits)
FORMATS = {"f16x2": (5, 10), "bf16x2": (8, 7)}


def _value(bits: int, fmt: str) -> Fraction:
    """A finite half's exact value."""
    e_bits, f_bits = FORMATS[fmt]
    bias = (1 << (e_bits - 1)) - 1
    sign = -1 if bits >> 15 else 1
    exponent, fraction = (bits >> f_bits) & ((1 << e_bits) - 1), bits & ((1 << f_bits) - 1)
    assert exponent != (1 << e_bits) - 1, f"{bits:#06x} is not finite"
    if exponent == 0:
        return sign * Fraction(fraction, 1 << f_bits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(fraction, 1 << f_bits)) * Fraction(2) ** (exponent - bias)


def _bits(x: Fraction, fmt: str, negative_zero: bool = False) -> int:
    """x rounded to nearest even to the format (subnormals kept, overflow -> infinity), as 16 bits."""
    e_bits, f_bits = FORMATS[fmt]
    bias = (1 << (e_bits - 1)) - 1
    sign, m = (0x8000 if x < 0 or (x == 0 and negative_zero) else 0), abs(x)
    e = 1 - bias                                    # the subnormals' quantum is the smallest normal's
    while m >= Fraction(2) ** (e + 1):
        e += 1
    quantum = Fraction(2) ** (e - f_bits)
    q, rest = divmod(m, quantum)
    if rest > quantum / 2 or (rest == quantum / 2 and q % 2 == 1):
        q += 1
    value = q * quantum
    if value >= Fraction(2) ** (bias + 1):
        return sign | ((1 << e_bits) - 1) << f_bits
    if value < Fraction(2) ** (1 - bias):            # subnormal (or zero)
        return sign | int(value / Fraction(2) ** (1 - bias - f_bits))
    exponent = e + bias if value < Fraction(2) ** (e + 1) else e + 1 + bias
    fraction = value / Fraction(2) ** (exponent - bias) - 1
    return sign | exponent << f_bits | int(fraction * (1 << f_bits))


def test_the_oracle_encodes_known_halves():
    """_bits / _value against bits NVIDIA's headers and IEEE 754 name (cuda_fp16.hpp / cuda_bf16.hpp
    constants: 1.0 = 0x3c00 / 0x3f80, max normal 0x7bff / 0x7f7f, min subnormal 0x0001)."""
    assert _bits(Fraction(1), "f16x2") == 0x3C00 and _bits(Fraction(1), "bf16x2") == 0x3F80
    assert _bits(Fraction(65504), "f16x2") == 0x7BFF and _bits(Fraction(65520), "f16x2") == 0x7C00
    assert _bits(Fraction(1, 1 << 24), "f16x2") == 0x0001 and _value(0x0001, "bf16x2") == Fraction(1, 2 ** 133)
    assert _bits(-Fraction(3), "bf16x2") == 0xC040 and _bits(Fraction(1) + Fraction(1, 2 ** 11), "f16x2") == 0x3C00
    assert _bits(Fraction(1) + Fraction(3, 2 ** 11), "f16x2") == 0x3C02
    assert all(_bits(_value(b, f), f) == b for f in FORMATS for b in (0x0001, 0x03FF, 0x0400, 0x3555, 0x7BFF, 0x8001))


THREADS, WORDS = 128, 8          # 4 warps, 16 threads on each word


def _kernel(name: str, arch: str, instruction: str, shared: bool) -> str:
    """Thread i adds in[i] into acc[i % WORDS] (global), or into a shared copy of acc that threads
    0..WORDS-1 load first and store back after the block's barrier; an atom stores its old word at olds[i]."""
    atom = instruction.startswith("atom")
    op = f"{instruction} %r6, [%rd20], %r4;" if atom else f"{instruction} [%rd20], %r4;"
    if shared:
        body = f"""
 mov.u32 %r7, sh; shl.b32 %r8, %r2, 2; add.u32 %r9, %r7, %r8; cvt.u64.u32 %rd20, %r9;
 setp.lt.u32 %p1, %r1, {WORDS};
 @%p1 ld.global.u32 %r10, [%rd12]; @%p1 st.shared.u32 [%r9], %r10;
 bar.sync 0;
 {op}
 bar.sync 0;
 @%p1 ld.shared.u32 %r10, [%r9]; @%p1 st.global.u32 [%rd12], %r10;"""
    else:
        body = f"\n mov.b64 %rd20, %rd12;\n {op}"
    store_old = " st.global.u32 [%rd14], %r6;" if atom else ""
    return f""".version 8.8
.target {arch}
.address_size 64
.shared .align 4 .b32 sh[{WORDS}];
.visible .entry {name}(.param .u64 acc, .param .u64 olds, .param .u64 in)
{{
 .reg .b32 %r<16>; .reg .b64 %rd<24>; .reg .pred %p<2>;
 ld.param.u64 %rd1, [acc]; cvta.to.global.u64 %rd2, %rd1;
 ld.param.u64 %rd3, [olds]; cvta.to.global.u64 %rd4, %rd3;
 ld.param.u64 %rd5, [in]; cvta.to.global.u64 %rd6, %rd5;
 mov.u32 %r1, %tid.x; rem.u32 %r2, %r1, {WORDS};
 mul.wide.u32 %rd7, %r1, 4; add.s64 %rd8, %rd6, %rd7; ld.global.u32 %r4, [%rd8];
 add.s64 %rd14, %rd4, %rd7;
 mul.wide.u32 %rd11, %r2, 4; add.s64 %rd12, %rd2, %rd11;{body}
{store_old}
 ret;
}}
"""


def _contending_inputs(fmt: str):
    """acc's first words and every thread's addend: in the low half an integer (-6..6, the first word
    -20..20: every partial sum an integer below 128, exact in binary16 and bfloat16), in the high half a
    subnormal (k times the smallest, k in -5..5: every partial sum k' * smallest with |k'| < 100, still
    subnormal and exact -- a flush to zero would lose it); specials none."""
    rng = np.random.default_rng(41 if fmt == "f16x2" else 42)
    tiny = Fraction(1, 2 ** 24) if fmt == "f16x2" else Fraction(1, 2 ** 133)

    def word(low: int, high: int) -> int:
        return _bits(Fraction(low), fmt) | _bits(high * tiny, fmt) << 16

    start = [word(int(a), int(b)) for a, b in zip(rng.integers(-20, 21, WORDS), rng.integers(-20, 21, WORDS))]
    adds = [word(int(a), int(b)) for a, b in zip(rng.integers(-6, 7, THREADS), rng.integers(-5, 6, THREADS))]
    return np.array(start, np.uint32), np.array(adds, np.uint32)


def _exact_sum(words: list[int], fmt: str) -> int:
    """The packed word of the exact per-half sums (each exact in the format, so any order gives it)."""
    out = 0
    for shift, unit in ((0, Fraction(1)), (16, _value(0x0001, fmt))):
        values = [_value(w >> shift & 0xFFFF, fmt) / unit for w in words]
        # integers of the unit whose absolute values sum below 2^(fraction bits + 1): every partial sum, in
        # any order, is such an integer -- exact (the high half's stays subnormal: below 2^fraction bits)
        assert all(v.denominator == 1 for v in values)
        assert sum(abs(v) for v in values) < 2 ** FORMATS[fmt][1] * (2 if shift == 0 else 1)
        total = sum(values, Fraction(0)) * unit
        out |= _bits(total, fmt, negative_zero=all(w >> shift & 0x8000 for w in words)) << shift
    return out


def _halves_sum(a: int, b: int, fmt: str) -> int:
    return sum((_bits(_value(a >> s & 0xFFFF, fmt) + _value(b >> s & 0xFFFF, fmt), fmt,
                      negative_zero=bool(a >> s & 0x8000 and b >> s & 0x8000)) << s) for s in (0, 16))


def _one_kernel(name: str, arch: str, instruction: str) -> str:
    """Thread i adds in[i] into acc[i]: one adder a word."""
    return _kernel(name, arch, instruction, False).replace(f"rem.u32 %r2, %r1, {WORDS};", "mov.u32 %r2, %r1;")


# the rounding cases the contended sums cannot hold: ties to even (down and up), more than half an ulp,
# overflow to infinity by a tie and not by less, subnormal + normal, a subnormal carry into the normals,
# -0 + -0, +0 + -0, x + -x, a negative overflow, an inexact sum
ROUNDING = {"f16x2": [(0x3C00, 0x1000), (0x3C00, 0x1200), (0x3C01, 0x1000), (0x7BFF, 0x4C00), (0x7BFF, 0x4BFF),
                      (0x0001, 0x0400), (0x8000, 0x8000), (0x0000, 0x8000), (0x3555, 0xB555), (0x03FF, 0x0001),
                      (0xFBFF, 0xCC00), (0x4248, 0x2E66)],
            "bf16x2": [(0x3F80, 0x3B80), (0x3F80, 0x3C40), (0x3F81, 0x3B80), (0x7F7F, 0x7B00), (0x7F7F, 0x7A80),
                       (0x0001, 0x0080), (0x8000, 0x8000), (0x0000, 0x8000), (0x3EAB, 0xBEAB), (0x007F, 0x0001),
                       (0xFF7F, 0xFB00), (0x4049, 0x3E4D)]}
# infinities and NaNs: format -> (inf, -inf, a quiet NaN with a payload, a negative signalling NaN, 1.0)
SPECIALS = {"f16x2": (0x7C00, 0xFC00, 0x7E01, 0xFC01, 0x3C00), "bf16x2": (0x7F80, 0xFF80, 0x7FC1, 0xFF81, 0x3F80)}
NAN = "nan"     # a half that must be some NaN: PTX fixes no bits ("unspecified NaN")


def _rounding_inputs(fmt: str):
    """Low half: the pair; high half: the pair swapped, so each half is checked in both places."""
    pairs = ROUNDING[fmt] * (THREADS // len(ROUNDING[fmt]) + 1)
    return (np.array([a | b << 16 for a, b in pairs][:THREADS], np.uint32),
            np.array([b | a << 16 for a, b in pairs][:THREADS], np.uint32))


def _special_rows(fmt: str):
    """(low a, low b, the low sum -- bits or NAN); the high halves are 1 + 1 = 2."""
    inf, minus_inf, qnan, snan, one = SPECIALS[fmt]
    return [(inf, one, inf), (minus_inf, one, minus_inf), (inf, inf, inf), (inf, minus_inf, NAN),
            (qnan, one, NAN), (one, snan, NAN), (qnan, snan, NAN), (minus_inf, qnan, NAN)] * (THREADS // 8)


def _special_inputs(fmt: str):
    one = SPECIALS[fmt][4]
    rows = _special_rows(fmt)
    return (np.array([a | one << 16 for a, _, _ in rows], np.uint32),
            np.array([b | one << 16 for _, b, _ in rows], np.uint32))


def _is_nan_half(h: int, fmt: str) -> bool:
    e_bits, f_bits = FORMATS[fmt]
    return (h >> f_bits) & ((1 << e_bits) - 1) == (1 << e_bits) - 1 and h & ((1 << f_bits) - 1) != 0


def _check_contended(fmt: str, atom: bool, start, adds, acc, olds) -> list[str]:
    bad = []
    for w in range(WORDS):
        mine = [int(adds[t]) for t in range(w, THREADS, WORDS)]
        want = _exact_sum([int(start[w])] + mine, fmt)
        if int(acc[w]) != want:
            bad.append(f"  word {w}: {int(acc[w]):08x}, PTX {want:08x}")
        if atom:
            got = [int(olds[t]) for t in range(w, THREADS, WORDS)]
            # the olds chain: each thread's old + its value is another thread's old, or the last word
            after = Counter(_halves_sum(o, a, fmt) for o, a in zip(got, mine))
            if after + Counter([int(start[w])]) != Counter(got) + Counter([int(acc[w])]):
                bad.append(f"  word {w}: the old values returned do not chain")
    return bad


def _check_rounding(fmt: str, atom: bool, start, adds, acc, olds) -> list[str]:
    bad = [f"  {int(a):08x} + {int(b):08x}: {int(g):08x}, PTX {_halves_sum(int(a), int(b), fmt):08x}"
           for a, b, g in zip(start, adds, acc) if int(g) != _halves_sum(int(a), int(b), fmt)]
    if atom and olds.tolist() != start.tolist():
        bad.append("  the old words returned are not the words before")
    return bad


def _check_specials(fmt: str, atom: bool, start, adds, acc, olds) -> list[str]:
    two = _bits(Fraction(2), fmt)
    bad = []
    for k, ((a, b, want), g) in enumerate(zip(_special_rows(fmt), acc.tolist())):
        low = g & 0xFFFF
        if g >> 16 != two or (low != want if want != NAN else not _is_nan_half(low, fmt)):
            bad.append(f"  {a:04x} + {b:04x} (word {k}): {g:08x}, PTX {'a NaN' if want == NAN else f'{want:04x}'}"
                       f" in the low half, {two:04x} in the high")
    return bad


# name -> (PTX instruction, format, shared memory, inputs(fmt) -> (acc's first words, addends), one adder
#          a word, check(fmt, atom, start, adds, acc, olds) -> the lines PTX's words break, archs):
# ptxas sm_86 refuses every bf16x2 atomic ("requires .target sm_90 or higher"); sm_90's shared bf16x2 loop
# adds with HADD2.BF16_V2 (HFMA2.MMA.BF16_V2 in the red form), which the simulator refused by name until probe
# s42 bf16arith modelled bfloat16 arithmetic
CASES = {
    "red_f16x2_contended": ("red.global.add.noftz.f16x2", "f16x2", False, _contending_inputs, False,
                            _check_contended, ("sm_86", "sm_90")),
    "atom_f16x2_contended": ("atom.global.add.noftz.f16x2", "f16x2", False, _contending_inputs, False,
                             _check_contended, ("sm_86", "sm_90")),
    "red_bf16x2_contended": ("red.global.add.noftz.bf16x2", "bf16x2", False, _contending_inputs, False,
                             _check_contended, ("sm_90",)),
    "atom_bf16x2_contended": ("atom.global.add.noftz.bf16x2", "bf16x2", False, _contending_inputs, False,
                              _check_contended, ("sm_90",)),
    "atom_shared_f16x2_contended": ("atom.shared.add.noftz.f16x2", "f16x2", True, _contending_inputs, False,
                                    _check_contended, ("sm_86", "sm_90")),
    "red_shared_f16x2_contended": ("red.shared.add.noftz.f16x2", "f16x2", True, _contending_inputs, False,
                                   _check_contended, ("sm_86", "sm_90")),
    "atom_shared_bf16x2_contended": ("atom.shared.add.noftz.bf16x2", "bf16x2", True, _contending_inputs, False,
                                     _check_contended, ("sm_90",)),
    "red_shared_bf16x2_contended": ("red.shared.add.noftz.bf16x2", "bf16x2", True, _contending_inputs, False,
                                    _check_contended, ("sm_90",)),
    "atom_f16x2_rounding": ("atom.global.add.noftz.f16x2", "f16x2", False, _rounding_inputs, True,
                            _check_rounding, ("sm_86", "sm_90")),
    "atom_bf16x2_rounding": ("atom.global.add.noftz.bf16x2", "bf16x2", False, _rounding_inputs, True,
                             _check_rounding, ("sm_90",)),
    "red_f16x2_specials": ("red.global.add.noftz.f16x2", "f16x2", False, _special_inputs, True,
                           _check_specials, ("sm_86", "sm_90")),
    "red_bf16x2_specials": ("red.global.add.noftz.bf16x2", "bf16x2", False, _special_inputs, True,
                            _check_specials, ("sm_90",)),
}


def ptx(name: str, arch: str) -> str:
    instruction, _, shared, _, one, _, _ = CASES[name]
    return _one_kernel(name, arch, instruction) if one else _kernel(name, arch, instruction, shared)


def inputs(name: str):
    return CASES[name][3](CASES[name][1])


def check(name: str, acc: np.ndarray, olds: np.ndarray) -> list[str]:
    """The lines in which the words a run left (acc, and olds for an atom) break the PTX ISA's."""
    instruction, fmt, _, _, _, checker, _ = CASES[name]
    start, adds = inputs(name)
    return checker(fmt, instruction.startswith("atom"), start, adds, acc, olds)


def open_words(name: str, acc: np.ndarray) -> list[str]:
    """The NaN halves' words (bits PTX leaves open) of the first eight rows (the rest repeat them), as `acc`
    holds them, beside the simulator's choice."""
    if CASES[name][5] is not _check_specials:
        return []
    return [f"  word {k} ({a:04x} + {b:04x}): {int(g):08x} (simulator {SIM_NAN | int(g) & 0xFFFF0000:08x})"
            for k, ((a, b, want), g) in enumerate(zip(_special_rows(CASES[name][1])[:8], acc)) if want == NAN]


SIM_NAN = 0x7FFF    # the simulator's NaN half: binary16 / bfloat16 arithmetic's canonical NaN (docs/simulator.md)


def _run(name: str, arch: str, tmp_path, text: str | None = None):
    from bobc.sim.kernel import run_kernel
    start, adds = inputs(name)
    source, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.cubin"
    source.write_text(text or ptx(name, arch))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(source)], check=True, capture_output=True)
    out = run_kernel(cubin.read_bytes(), arch, grid=1, block=THREADS, params=["acc", "olds", "in"],
                     buffers={"acc": start.copy(), "olds": np.zeros(THREADS, np.uint32), "in": adds},
                     kernel_name=name)
    return out["acc"], out["olds"]


RUNS = [(name, arch) for name in sorted(CASES) for arch in CASES[name][6]]


@pytest.mark.parametrize(("name", "arch"), RUNS)
def test_packed_half_atomics_give_the_ptx_sums(name, arch, tmp_path, needs_ptxas):
    """Contended: 128 threads on 8 words, exact sums and chained old values; rounding: one adder a word,
    one IEEE rounding of the exact sum (the atom returns the old word); specials: inf + finite, inf + inf,
    inf - inf and NaN operands in the low half, 1 + 1 in the high."""
    acc, olds = _run(name, arch, tmp_path)
    bad = check(name, acc, olds)
    assert not bad, f"{arch} {name}: simulator != PTX ISA\n" + "\n".join(bad)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_nan_half_is_the_canonical_0x7fff(arch, tmp_path, needs_ptxas):
    """The bits PTX leaves open ("unspecified NaN"): the simulator writes the canonical 0x7fff of binary16 /
    bfloat16 half arithmetic (docs/simulator.md, "NaN, infinity, -0 and subnormal results"), pinned here,
    in the NaN's half alone.  The GPU run records its own (tests/gpu/test_sim_probes_gpu.py)."""
    for name in ("red_f16x2_specials", "red_bf16x2_specials"):
        if arch not in CASES[name][6]:
            continue
        acc, _ = _run(name, arch, tmp_path)
        two = _bits(Fraction(2), CASES[name][1])
        nan_rows = [k for k, (_, _, want) in enumerate(_special_rows(CASES[name][1])) if want == NAN]
        assert len(nan_rows) == 5 * THREADS // 8
        moved = [f"  word {k}: {int(acc[k]):08x}" for k in nan_rows if int(acc[k]) != SIM_NAN | two << 16]
        assert not moved, f"{arch} {name}: the simulator's NaN half changed from {SIM_NAN:04x}\n" + "\n".join(moved)


def sm90_cases() -> dict:
    """Every kernel of this file for sm_90, for the GPU (tests/gpu/test_sim_probes_gpu.py; ptxas's cubins made by
    tests/gpu/prepare.sh -- bobc's assembler has ATOMG / ATOMS .ADD.F16x2 / .BF16x2, but not ptxas's
    REDG.E.ADD.F16x2 / .BF16x2.RN.STRONG.GPU of the red_* global kernels): name -> (PTX, acc's first
    words, addends).  Launch: one block of THREADS threads, parameters (acc, olds, in)."""
    return {name: (ptx(name, "sm_90"), *inputs(name)) for name in sorted(CASES)}


# sm_90's vector atomics (PTX atom / red .global .v2 / .v4 with .f16x2 / .bf16x2): ptxas writes one
# ATOMG / REDG .E.ADD.F16x4 / .F16x8 / .BF16x4 / .BF16x8 on 8 or 16 bytes
VECTORS = [("atom.global.v2.f16x2.add.noftz {%r6, %r7}, [%rd20], {%r4, %r4};", "F16x4"),
           ("red.global.v2.f16x2.add.noftz [%rd20], {%r4, %r4};", "F16x4"),
           ("red.global.v4.f16x2.add.noftz [%rd20], {%r4, %r4, %r4, %r4};", "F16x8"),
           ("red.global.v2.bf16x2.add.noftz [%rd20], {%r4, %r4};", "BF16x4"),
           ("atom.global.v4.bf16x2.add.noftz {%r6, %r7, %r8, %r9}, [%rd20], {%r4, %r4, %r4, %r4};", "BF16x8")]


@pytest.mark.parametrize(("instruction", "vector"), VECTORS)
def test_vector_packed_half_atomics_are_refused_by_name(instruction, vector, tmp_path, needs_ptxas):
    """Their type modifier (.F16x4 ...) was not read as one, so the simulator ran them as a 32-bit integer
    add of the first word, silently (four threads adding 0x3c003c00 (1.0, 1.0) twice left 0xf000f000 and 0
    for 0x44004400 twice); refused by name now, as .F32x2 (red.global.v2.f32.add) already was."""
    start, adds = _contending_inputs("f16x2")
    text = _kernel("vector", "sm_90", "red.global.add.noftz.f16x2", False).replace(
        "red.global.add.noftz.f16x2 [%rd20], %r4;", instruction).replace(f"rem.u32 %r2, %r1, {WORDS};",
                                                                          f"rem.u32 %r2, %r1, {WORDS // 4}; shl.b32 %r2, %r2, 2;")
    assert instruction in text
    with pytest.raises(Unmodeled, match=rf"\((ATOMG|REDG)\.E\.ADD\.{vector}\.RN\S* .*is not modeled"):
        _run("red_f16x2_contended", "sm_90", tmp_path, text.replace(".entry vector(", ".entry red_f16x2_contended("))


def _scalar_kernel(arch: str) -> str:
    """Thread i adds its half in[i] into the half acc[i % 4] (two words) with atom.global.add.noftz.f16 --
    ptxas's loop of LDG, PRMT / HADD2 and ATOMG.E.CAS on the word -- and stores its old half at olds[i]."""
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry scalar_f16(.param .u64 acc, .param .u64 olds, .param .u64 in)
{{
 .reg .b32 %r<8>; .reg .b64 %rd<12>; .reg .b16 %h<4>;
 ld.param.u64 %rd1, [acc]; cvta.to.global.u64 %rd2, %rd1; ld.param.u64 %rd3, [in]; cvta.to.global.u64 %rd4, %rd3;
 ld.param.u64 %rd8, [olds]; cvta.to.global.u64 %rd9, %rd8;
 mov.u32 %r1, %tid.x; mul.wide.u32 %rd5, %r1, 2; add.s64 %rd6, %rd4, %rd5; ld.global.u16 %h1, [%rd6];
 and.b32 %r2, %r1, 3; mul.wide.u32 %rd7, %r2, 2; add.s64 %rd7, %rd2, %rd7;
 atom.global.add.noftz.f16 %h2, [%rd7], %h1;
 add.s64 %rd10, %rd9, %rd5; st.global.u16 [%rd10], %h2;
 ret;
}}
"""


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_scalar_half_atomics_loop_on_a_64_bit_cas(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """nvdisasm prints ATOMG.E.CAS's address without .64 (`[R6]`, R6:R7 filled as a pair by ptxas), and the
    simulator refused it as "a 32-bit global address" -- every global CAS ptxas writes: atom.global.cas and
    the CAS loops of atom.global.add.noftz.f16.  Read as the 64-bit address it is, 96 threads (3 warps)
    adding small integers (every partial sum exact) into 4 halves give the exact sums, and the old halves
    returned chain (PTX ISA, atom: .add.noftz.f16 rounds to nearest even, subnormals kept)."""
    from bobc.sim.kernel import run_kernel
    threads = 96
    rng = np.random.default_rng(7)
    start = [_bits(Fraction(int(v)), "f16x2") for v in rng.integers(-20, 21, 4)]
    adds = [_bits(Fraction(int(v)), "f16x2") for v in rng.integers(-8, 9, threads)]
    source, cubin = tmp_path / "scalar_f16.ptx", tmp_path / "scalar_f16.cubin"
    source.write_text(_scalar_kernel(arch))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(source)], check=True, capture_output=True)
    listing = subprocess.run([nvdisasm(), str(cubin)],
                             check=True, capture_output=True, text=True).stdout
    assert "ATOMG.E.CAS" in listing and ".64]" not in listing.split("ATOMG.E.CAS")[1].split(";")[0]
    out = run_kernel(cubin.read_bytes(), arch, grid=1, block=threads, params=["acc", "olds", "in"],
                     buffers={"acc": np.array(start, np.uint16), "olds": np.zeros(threads, np.uint16),
                              "in": np.array(adds, np.uint16)}, kernel_name="scalar_f16")
    acc, olds = out["acc"].tolist(), out["olds"].tolist()
    for h in range(4):
        mine = adds[h::4]
        total = _value(start[h], "f16x2") + sum((_value(a, "f16x2") for a in mine), Fraction(0))
        assert acc[h] == _bits(total, "f16x2"), f"{arch} half {h}: {acc[h]:04x}"
        got = olds[h::4]
        after = Counter(_bits(_value(o, "f16x2") + _value(a, "f16x2"), "f16x2") for o, a in zip(got, mine))
        assert after + Counter([start[h]]) == Counter(got) + Counter([acc[h]]), f"{arch} half {h}: olds do not chain"
