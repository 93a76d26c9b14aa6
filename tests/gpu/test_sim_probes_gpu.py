"""The integer forms the simulator learned to read in session 37 (tests/sass/test_sim_probe_s37_sassforms3.py)
run on the GPU: sm_90's VIMNMX.S16x2 / .U16x2 / .RELU (PTX min / max on 16-bit halves and .relu), 64-bit
negation, absolute value and borrow chains (IADD3 with a carry out of a subtraction, IADD3.X of a
complement) and prmt's byte-select modes.  The simulator's reading of each rests on the PTX ISA's words
(the definitions in that file, computed with Python integers); here ptxas's cubin and bobc's (`bobc asm
--cubin` of nvdisasm's listing of it) must store the same values on the hardware, so the simulator, the
ISA and the GPU agree on these kernels.

The cubins are made where ptxas and nvdisasm are, by tests/gpu/prepare.sh (.device/sim-probes);
tests/gpu/run.sh points SIM_PROBES at them.

Session 40's float kernels (tests/sass/test_sim_probe_s40_nanbits.py) run here too, on NaN (quiet and
signalling, either sign, with payloads), infinity, -0 and subnormal operands: the GPU must store the bits
docs/simulator.md, "NaN, infinity, -0 and subnormal results" documents -- its OPEN cases (binary64 NaNs,
cvt.f64.f32 and cvt.f32.bf16 of a NaN, and the canonical NaNs of binary32 / binary16 arithmetic, which no
NVIDIA document states for an instruction) are settled by this run: a failure prints the GPU's words
beside the simulator's."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")

from tests.sass import test_sim_probe_s37_sassforms3 as s37, test_sim_probe_s40_nanbits as s40  # noqa: E402

THREADS = s37.THREADS
# name -> (PTX, result(out), the kernel's inputs)
CASES = {name: (ptx, check, np.concatenate([module.A, module.B, module.C, module.D]))
         for module in (s37, s40) for name, (ptx, check) in module.sm90_cases().items()}
# ptxas's cubin of each kernel and bobc's from its nvdisasm listing (VIMNMX's 16-bit and .RELU forms too, since
# tools/ptx_corpus/sm90_int_forms.ptx taught the assembler them: probe s37 sassforms4)
RUNS = [(name, which) for name in CASES for which in ("ptxas", "bobc")]


@pytest.fixture(scope="module")
def folder(target) -> Path:
    if target.name != "sm_90":
        pytest.skip(f"the probe cubins are made for sm_90, not {target.name}")
    named = os.environ.get("SIM_PROBES")
    if not named or not Path(named, "prmt_f4e.ptxas.cubin").is_file():
        pytest.fail("no probe cubins: run tests/gpu/prepare.sh where ptxas is, carry .device, and run "
                    "tests/gpu/run.sh (it sets SIM_PROBES)")
    return Path(named)


@pytest.mark.parametrize(("name", "which"), sorted(RUNS))
def test_probe_kernels_store_the_ptx_definitions_on_the_gpu(folder, name, which):
    module = cp.RawModule(path=str(folder / f"{name}.{which}.cubin"))
    out = cp.zeros(2 * THREADS, cp.uint32)
    inputs = cp.asarray(CASES[name][2])
    module.get_function(name)((1,), (THREADS,), (out, inputs, np.uint32(THREADS)))
    cp.cuda.Device().synchronize()
    got, want = CASES[name][1](cp.asnumpy(out))
    open_case = " (an OPEN case of tests/sass/test_sim_probe_s40_nanbits.py: the simulator's choice is wrong)" \
        if name in s40.OPEN else ""
    width = 16 if got.dtype == np.uint64 else 8
    words = "\n".join(f"  GPU {int(g):0{width}x}  documented {int(w):0{width}x}" for g, w in zip(got, want) if g != w)
    assert got.tobytes() == want.tobytes(), f"GPU ({which}) {name}{open_case}:\n{words}"


# Session 41's (tests/sass/test_sim_probe_s41_nanprobes2.py): RED / ATOM .ADD.F32 on global and shared memory,
# F2F.F64.F16, DFMA and HMMA's F32 accumulators with NaN / inf / -0 / subnormal operands.  Only what the PTX
# ISA fixes is asserted; the words it leaves open (every NaN's bits ...) are written, beside the simulator's,
# to NAN_BITS_LOG (run.sh: LOGDIR/nan_bits.log), else printed.  bobc's cubin only where its assembler has
# every SASS form (sm90_cases' flag: every case since ATOMG.ADD.F32 and F2F.F64.F16 were learned).
from tests.sass import test_sim_probe_s41_nanprobes2 as s41  # noqa: E402

S41 = s41.sm90_cases()
S41_RUNS = [(name, which) for name, case in S41.items() for which in (("ptxas", "bobc") if case[3] else ("ptxas",))]


@pytest.mark.parametrize(("name", "which"), sorted(S41_RUNS))
def test_s41_specials_store_what_ptx_fixes_and_record_the_rest(folder, name, which):
    _, inputs, words, _ = S41[name]
    module = cp.RawModule(path=str(folder / f"{name}.{which}.cubin"))
    out = cp.zeros(words * THREADS, cp.uint32)
    module.get_function(name)((1,), (THREADS,), (out, cp.asarray(inputs), np.uint32(THREADS)))
    cp.cuda.Device().synchronize()
    got = cp.asnumpy(out)
    record = f"== {name} ({which}): words PTX leaves open, as the GPU stored them\n" + \
        "\n".join(s41.open_words(name, got)) + "\n"
    named = os.environ.get("NAN_BITS_LOG")
    if named:
        with open(named, "a") as log:
            log.write(record)
    else:
        print(record)
    bad = s41.check(name, got)
    assert not bad, f"GPU ({which}) {name} != PTX ISA:\n" + "\n".join(bad)


# Probe s41 f16x2atoms's (tests/sass/test_sim_atomics_f16x2_s41.py): atom / red .add.noftz.f16x2 / .bf16x2 on
# global and shared memory, 128 threads on 8 words, one adder a word's roundings, infinities and NaN halves;
# ptxas's cubins only (bobc's assembler has the ATOMG / ATOMS .ADD.F16x2 / .BF16x2 forms, not REDG's).  What the
# PTX ISA fixes is asserted; a NaN half's bits are written, beside the simulator's 0x7fff, to NAN_BITS_LOG, else
# printed.
from tests.sass import test_sim_atomics_f16x2_s41 as halves  # noqa: E402

HALVES = halves.sm90_cases()


@pytest.mark.parametrize("name", sorted(HALVES))
def test_s41_packed_half_atomics_store_the_ptx_sums(folder, name):
    _, start, adds = HALVES[name]
    module = cp.RawModule(path=str(folder / f"{name}.ptxas.cubin"))
    acc, olds = cp.asarray(start), cp.zeros(halves.THREADS, cp.uint32)
    module.get_function(name)((1,), (halves.THREADS,), (acc, olds, cp.asarray(adds)))
    cp.cuda.Device().synchronize()
    acc, olds = cp.asnumpy(acc), cp.asnumpy(olds)
    opened = halves.open_words(name, acc)
    if opened:
        record = f"== {name} (ptxas): NaN halves PTX leaves open, as the GPU stored them\n" + "\n".join(opened) + "\n"
        named = os.environ.get("NAN_BITS_LOG")
        if named:
            with open(named, "a") as log:
                log.write(record)
        else:
            print(record)
    bad = halves.check(name, acc, olds)
    assert not bad, f"GPU (ptxas) {name} != PTX ISA:\n" + "\n".join(bad)


# Probe s42 bf16arith's (tests/sass/test_bf16_forms_s42.py): fma.rn(.relu), add / sub / mul, min / max(.NaN), neg,
# abs and min/max.xorsign.abs on .bf16 / .bf16x2, ptxas's cubins and bobc's.  Asserted: the exact-rational
# oracle the simulator is checked against (round once to nearest even, subnormals kept, canonical NaN 0x7fff,
# .relu's -0 made +0 as the H100 does (session 43), neg(-0) = +0 as ptxas's -0 * 0 + a gives); the GPU's words and the oracle's are written to
# NAN_BITS_LOG (else printed) either way.  .xorsign.abs has no oracle (refused by the simulator): recorded only.
from tests.sass import test_bf16_forms_s42 as bf16  # noqa: E402

BF16_RUNS = [(k, which) for ptx in (bf16.BOTH, bf16.SM90) for k in bf16.kernels(ptx) for which in ("ptxas", "bobc")]


@pytest.mark.parametrize(("name", "which"), sorted(BF16_RUNS))
def test_s42_bf16_arithmetic_stores_the_oracle_bits(folder, name, which):
    buffers, want = bf16.case(name.replace("xorsign_abs_", "") if "xorsign" in name else name)
    module = cp.RawModule(path=str(folder / f"{name}.{which}.cubin"))
    out = cp.zeros(len(want), cp.uint32 if want.dtype == np.uint32 else cp.uint16)
    module.get_function(name)((1,), (len(want),), (out, cp.asarray(buffers["a"]), cp.asarray(buffers["b"]),
                                                    cp.asarray(buffers["c"])))
    cp.cuda.Device().synchronize()
    got = cp.asnumpy(out)
    lines = [f"  a={int(a):#x} b={int(b):#x} c={int(c):#x}: GPU {int(g):#x} oracle {int(w):#x}"
             for a, b, c, g, w in zip(buffers["a"], buffers["b"], buffers["c"], got, want) if g != w]
    record = f"== {name} ({which}): bfloat16 words where the GPU and the oracle differ\n" + "\n".join(lines) + "\n"
    named = os.environ.get("NAN_BITS_LOG")
    if named:
        with open(named, "a") as log:
            log.write(record)
    else:
        print(record)
    if "xorsign" not in name:
        assert not lines, f"GPU ({which}) {name} != the PTX ISA oracle:\n" + "\n".join(lines[:20])


# Probe s42 ptxcover's (tests/sass/test_division_paths_s42.py): fma.rn / .rz / .rm / .rp .f32 near binary32 ties,
# div.rn.f32 over every exponent (FCHK's fast and slow paths), sqrt.rn / rcp.rn .f32, div.rz.f32 and 64-bit div /
# rem, each against the IEEE 754 / Python-integer result that file holds the simulator to; bobc's cubin too where its
# assembler has every form (sm90_cases' flag: every case since session 45).
from tests.sass import test_division_paths_s42 as divisions  # noqa: E402
from tests.sass.test_ffma_rounding_s42 import BLOCK  # noqa: E402  (the block those kernels are run with)

S42 = divisions.sm90_cases()
S42_RUNS = [(name, which) for name, case in S42.items() for which in (("ptxas", "bobc") if case[4] else ("ptxas",))]


@pytest.mark.parametrize(("name", "which"), sorted(S42_RUNS))
def test_s42_divisions_store_the_ieee_results(folder, name, which):
    _, words, want, is_float, _ = S42[name]
    n = words.shape[1]
    module = cp.RawModule(path=str(folder / f"{name}.{which}.cubin"))
    out = cp.zeros(2 * n, cp.uint32)
    module.get_function(name)((n // BLOCK,), (BLOCK,),
                              (out, cp.asarray(words.reshape(-1)), np.uint32(n)))
    cp.cuda.Device().synchronize()
    bad = divisions.same_words(cp.asnumpy(out).reshape(n, 2), want, is_float)
    assert not bad, f"GPU ({which}) {name}: {len(bad)} threads differ from IEEE 754 / PTX:\n" + "\n".join(bad[:8])


# Probe s43 f64div's (tests/sass/test_f64_division_s43.py): div / rcp / sqrt .rn / .rz / .rm / .rp .f64 over every
# binary64 exponent against the exact-rational IEEE 754 results that file holds the simulator to, and the raw
# MUFU.RCP64H / MUFU.RSQ64H (rcp.approx.ftz.f64, rsqrt.approx.ftz.f64) and rsqrt.approx.f64, whose hardware bits
# NVIDIA does not publish: asserted only what the PTX ISA fixes (approximation_faults(bound=False) and
# rsqrt_approx_faults(bound=False): the special values), and the GPU's words written beside the simulator's model
# (simulator_words) to NAN_BITS_LOG (else printed), with those outside the simulator's bounds (2^-20 for the MUFU
# words, 2^-50 for rsqrt.approx.f64), so the model can be checked against the hardware.  ptxas's cubins only.
from tests.sass import test_f64_division_s43 as f64div  # noqa: E402

S43 = f64div.sm90_cases()


@pytest.mark.parametrize("name", sorted(S43))
def test_s43_f64_divisions_store_the_ieee_results(folder, name):
    _, words, want = S43[name]
    n = words.shape[1]
    module = cp.RawModule(path=str(folder / f"{name}.ptxas.cubin"))
    out = cp.zeros(2 * n, cp.uint32)
    module.get_function(name)((n // f64div.BLOCK,), (f64div.BLOCK,), (out, cp.asarray(words.reshape(-1)), np.uint32(n)))
    cp.cuda.Device().synchronize()
    got = cp.asnumpy(out).reshape(n, 2).copy().view(np.uint64)[:, 0]
    if want is not None:
        bad = f64div.same_doubles(got, want, f"GPU {name}", words)
        assert not bad, f"{len(bad)} of {n} threads differ from IEEE 754:\n" + "\n".join(bad[:8])
        return
    if name == "f64_rsqrt_approx":
        beyond = f64div.rsqrt_approx_faults(words, got)
        record = f"== {name} (ptxas): {len(beyond)} GPU results beyond the simulator's 2^-50\n" + "\n".join(beyond) + "\n"
        named = os.environ.get("NAN_BITS_LOG")
        if named:
            with open(named, "a") as log:
                log.write(record)
        else:
            print(record)
        bad = f64div.rsqrt_approx_faults(words, got, bound=False)
        assert not bad, f"GPU {name} != the PTX ISA's rsqrt.approx.f64 specials:\n" + "\n".join(bad[:8])
        return
    short = name[len("f64_"):]
    model = f64div.simulator_words(short, words)
    beyond = f64div.approximation_faults(short, words, got)
    lines = [f"  x high word {int(h):08x}: GPU {int(g):016x} simulator {int(m):016x}"
             for h, g, m in zip(words[1], got, model) if g != m]
    record = (f"== {name} (ptxas): MUFU words where the GPU and the simulator's model differ ({len(lines)} of {n}); "
              f"{len(beyond)} GPU words beyond the model's 2^-20 bound\n" + "\n".join(lines + beyond) + "\n")
    named = os.environ.get("NAN_BITS_LOG")
    if named:
        with open(named, "a") as log:
            log.write(record)
    else:
        print(record)
    bad = f64div.approximation_faults(short, words, got, bound=False)
    assert not bad, f"GPU {name} != the PTX ISA's rcp.approx.ftz.f64 description:\n" + "\n".join(bad[:8])


# Probe s44 simops's (tests/sass/test_sim_roundings_s44.py, test_sim_xorsign_s44.py, test_sim_mufu16_s44.py): forms the
# simulator refused until then.  Asserted: add / sub .rz / .rm / .rp .f32 and the narrow conversions (binary16 /
# bfloat16 .rz / .rm / .rp / .relu / .satfinite, E4M3 / E5M2 both ways) against exact rationals rounded onto each
# format's values (a NaN any NaN: its bits are written to NAN_BITS_LOG beside the simulator's 0x7fff / 0x7f), min / max
# .xorsign.abs .f32 / .f16 / .f16x2 against the rule the H100 showed for .bf16x2 in session 43 (a failure: the
# simulator's rule is wrong for that format), and the 16-bit MUFU's PTX ISA specials; the MUFU words beyond one ulp of
# the true value (the simulator's stand-in is the rounded true value) are recorded, not asserted.  bobc's cubin where
# prepare.sh could assemble it (skipped, naming that, where not; since helper asmsim44 every s44 kernel's listing
# assembles to ptxas's .text: tests/sass/test_sim_forms_asm_s44.py).
from tests.sass import test_sim_mufu16_s44 as s44_mufu, test_sim_roundings_s44 as s44_round  # noqa: E402
from tests.sass import test_sim_xorsign_s44 as s44_xor  # noqa: E402

S44_ROUND, S44_XOR, S44_MUFU = s44_round.sm90_cases(), s44_xor.sm90_cases(), s44_mufu.sm90_cases()
S44_RUNS = [(name, which) for name in sorted({**S44_ROUND, **S44_XOR, **S44_MUFU}) for which in ("ptxas", "bobc")]


def _record(text: str) -> None:
    named = os.environ.get("NAN_BITS_LOG")
    if named:
        with open(named, "a") as log:
            log.write(text)
    else:
        print(text)


@pytest.mark.parametrize(("name", "which"), S44_RUNS)
def test_s44_forms_store_the_oracle_words(folder, name, which):
    path = folder / f"{name}.{which}.cubin"
    if which == "bobc" and not path.is_file() and (folder / f"{name}.ptxas.cubin").is_file():
        pytest.skip(f"bobc's assembler lacks a form of ptxas's {name} (tests/gpu/prepare.sh made ptxas's cubin alone)")
    words = {**S44_ROUND, **S44_XOR, **S44_MUFU}[name][1]
    n = words.shape[1]
    module = cp.RawModule(path=str(path))
    out = cp.zeros(2 * n, cp.uint32)
    module.get_function(name)((n // s44_round.BLOCK,), (s44_round.BLOCK,),
                              (out, cp.asarray(words.reshape(-1)), np.uint32(n)))
    cp.cuda.Device().synchronize()
    got = cp.asnumpy(out).reshape(n, 2)[:, 0]
    if name in S44_ROUND:
        _, _, want, fmt, width = S44_ROUND[name]
        bad, nans = s44_round.field_faults(got, want, fmt, width, words)
        if nans:
            _record(f"== {name} ({which}): NaN fields as the GPU stored them (the simulator: 0x7fff / 0x7f / "
                    f"0x7fffffff)\n" + "\n".join(nans) + "\n")
        assert not bad, f"GPU ({which}) {name}: {len(bad)} fields differ from the exact rounding:\n" + "\n".join(bad[:12])
    elif name in S44_XOR:
        want = S44_XOR[name][2]
        bad = [f"  a={int(a):#x} b={int(b):#x}: GPU {int(g):#x} rule {int(w):#x}"
               for a, b, g, w in zip(words[0], words[1], got, want) if g != w]
        _record(f"== {name} ({which}): words where the GPU and the xorsign rule differ\n" + "\n".join(bad) + "\n")
        assert not bad, f"GPU ({which}) {name}: the simulator's xorsign rule is wrong here:\n" + "\n".join(bad[:12])
    else:
        fixed, beyond = s44_mufu.check(name[len("s44_"):], words[0], got)
        _record(f"== {name} ({which}): {len(beyond)} GPU results beyond one ulp of the true value\n" +
                "\n".join(beyond) + "\n")
        assert not fixed, f"GPU ({which}) {name} != the PTX ISA's specials:\n" + "\n".join(fixed[:12])


# Probe s45 (helper gpuprobes45): two simulator rules session 45 rests on the PTX ISA alone.  (1) binary32 MUFU with
# subnormal operands (commit df4255bc, tests/sass/test_sim_mufu_subnormal_s45.py): lg2 / rcp / rsqrt / sqrt / ex2
# .approx(.ftz).f32 -- the .ftz forms (the lone MUFU) flush a subnormal operand (rcp / ex2 a subnormal result) to a
# zero of its sign, the others keep subnormals through ptxas's scaling.  (2) binary16 .SAT of a -0 result
# (tests/sass/test_sim_half_sat_s45.py): add / sub / mul / fma .sat .f16(x2), where the simulator's clamp keeps -0
# (the H200 made add.rm.sat.f32's -0 +0).  The GPU's first words are held to the simulator's (NAME.sim.npy: prepare.sh
# ran ptxas's cubin in the simulator): MUFU's exact lanes (flushed operands / results, specials) and every .SAT word
# equal, MUFU's approximations within EIGHT_ULPS (rcp.ftz results just below 2^-126 recorded only); each differing
# word is written to NAN_BITS_LOG (else printed).  A .SAT failure means the simulator's -0 is wrong for that form.
# bobc's cubin where prepare.sh could assemble it (not HMUL2.SAT, s45_mul_sat_f16x2: skipped, naming that).
from tests.sass import test_sim_half_sat_s45 as s45_sat, test_sim_mufu_subnormal_s45 as s45_mufu  # noqa: E402

S45_MUFU, S45_SAT = s45_mufu.sm90_cases(), s45_sat.sm90_cases()
S45_RUNS = [(name, which) for name in sorted({**S45_MUFU, **S45_SAT}) for which in ("ptxas", "bobc")]


@pytest.mark.parametrize(("name", "which"), S45_RUNS)
def test_s45_forms_store_the_simulators_words(folder, name, which):
    path, simulated = folder / f"{name}.{which}.cubin", folder / f"{name}.sim.npy"
    if not simulated.is_file():
        pytest.fail(f"no {simulated.name}: rerun tests/gpu/prepare.sh (session 45's, which writes the simulator's words)")
    if which == "bobc" and not path.is_file() and (folder / f"{name}.ptxas.cubin").is_file():
        pytest.skip(f"bobc's assembler lacks a form of ptxas's {name} (tests/gpu/prepare.sh made ptxas's cubin alone)")
    words = {**S45_MUFU, **S45_SAT}[name][1]
    n = words.shape[1]
    module = cp.RawModule(path=str(path))
    out = cp.zeros(2 * n, cp.uint32)
    module.get_function(name)((n // s44_round.BLOCK,), (s44_round.BLOCK,),
                              (out, cp.asarray(words.reshape(-1)), np.uint32(n)))
    cp.cuda.Device().synchronize()
    got, sim = cp.asnumpy(out).reshape(n, 2)[:, 0], np.load(simulated)
    short = name[len("s45_"):]
    if name in S45_MUFU:
        bad, differ = s45_mufu.gpu_faults(short, words, got, sim)
        _record(f"== {name} ({which}): {len(differ)} words where the GPU and the simulator differ\n" +
                "\n".join(differ) + "\n")
        assert not bad, f"GPU ({which}) {name}: {len(bad)} words break the simulator's MUFU rule:\n" + "\n".join(bad[:12])
    else:
        bad = s45_sat.gpu_faults(short, words, got, sim)
        _record(f"== {name} ({which}): {len(bad)} .SAT words where the GPU and the simulator differ\n" +
                "\n".join(bad) + "\n")
        assert not bad, f"GPU ({which}) {name}: the simulator's binary16 .SAT is wrong here:\n" + "\n".join(bad[:12])


# Probe s45 simint's (tests/sim/test_integer_semantics_s45.py): cvt.pack.sat to 16, 8, 4 and 2 bits, I2IP with its merge
# source (RZ, Rc, Rc.24, Rc.28 as nvdisasm prints them), and cvt.rni / rzi / rmi / rpi from .f16 / .bf16 to 8- to 64-bit
# integers (F2I.F16 / .BF16, a junk high half beside the operand), and 64-bit division by a constant whose low word
# is 0 (`I2F.U64.RP R10, 0x1`: the simulator reads the immediate as the high word); the simulator reads each by the PTX ISA's
# definition, which the expected words are (Python integers).  ptxas's cubin alone.
from tests.sim import test_integer_semantics_s45 as s45_int  # noqa: E402

S45_INT = s45_int.sm90_cases()


@pytest.mark.parametrize("name", sorted(S45_INT))
def test_s45_integer_forms_store_the_ptx_words(folder, name):
    _, (a, b, c), want = S45_INT[name]
    n, outputs = len(a), len(want[0])
    module = cp.RawModule(path=str(folder / f"{name}.ptxas.cubin"))
    out = cp.zeros(n * outputs, cp.uint32)
    module.get_function("k")((1,), (n,), (out, *(cp.asarray(np.asarray(x, np.uint32)) for x in (a, b, c))))
    cp.cuda.Device().synchronize()
    got = cp.asnumpy(out).reshape(n, outputs)
    bad = [f"  a={a[i]:#x} b={b[i]:#x} c={c[i]:#x} field {k}: GPU {int(got[i, k]):#010x} PTX {want[i][k]:#010x}"
           for i in range(n) for k in range(outputs) if int(got[i, k]) != want[i][k]]
    assert not bad, f"GPU {name}: the simulator's reading is wrong here:\n" + "\n".join(bad[:16])


# Probe s46 gpuprobes46's (tests/sim/test_sim_user_forms_s46.py): session 45's forms the simulator runs and no GPU had
# checked -- cvt between every integer width and binary16 / bfloat16 / binary32 / binary64 in each rounding (F2I / I2F /
# F2F at every width, I2F.BF16, F2F.BF16.F64.RM, I2F.F16.S64), cvt / cvt.sat between integer widths (and PTX's rule for
# a register wider than the type), binary64 add / mul / fma .rz / .rm / .rp, FRND.F64 and .ftz / .sat conversions,
# bfind / clz / popc / brev / bfe / bfi .b64 (FLO of a complemented source), mul.hi .u64 / .s64, testp, copysign,
# bar.red / vote (.uni: VOTE.EQ) / match, %lanemask_*, .v2 / .v4 loads and stores with each cache hint, 64-bit and
# scoped atomics (which the simulator refuses: the GPU against the PTX oracle alone), and sm_90's uniform-datapath
# forms of kernel parameters (UIMAD.WIDE, FLO.U32 ~UR).  Asserted: the PTX ISA oracle that file holds the simulator
# to (a NaN result any NaN of the format); every word where the GPU and the simulator's (NAME.sim.npy, prepare.sh) differ -- a NaN's bits -- is written to
# NAN_BITS_LOG.  bobc's cubin too, but for s46.BOBC_LACKS (forms its assembler lacks: ptxas's cubin alone).
from tests.sim import test_sim_user_forms_s46 as s46  # noqa: E402

S46 = s46.sm90_cases()
S46_RUNS = [(name, which) for name in sorted([*S46, "s46_uniform"])
            for which in (("ptxas", "bobc") if name not in s46.BOBC_LACKS else ("ptxas",))]


@pytest.mark.parametrize(("name", "which"), S46_RUNS)
def test_s46_user_forms_store_the_ptx_words(folder, name, which):
    if not (folder / f"{name}.ptxas.cubin").is_file():
        pytest.fail(f"no {name}.ptxas.cubin: rerun tests/gpu/prepare.sh (session 46's, which builds the s46 probes)")
    if which == "bobc" and not (folder / f"{name}.bobc.cubin").is_file():
        pytest.skip(f"bobc's assembler lacks a form of ptxas's {name} (tests/gpu/prepare.sh made ptxas's cubin alone)")
    bad, differ = s46.device_run(cp, folder, name, which)
    _record(f"== {name} ({which}): {len(differ)} words where the GPU and the simulator differ\n" +
            "\n".join(differ) + "\n")
    assert not bad, f"GPU ({which}) {name}: {len(bad)} words differ from the PTX ISA:\n" + "\n".join(bad[:16])
