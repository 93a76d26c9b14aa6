"""64-bit atomics in the simulator (probe s47 simgaps2, finding 1): ptxas's ATOMG / RED .64, .S64, .F64, ATOMG.E.CAS.64,
ATOMS.CAS.64 / .EXCH.64 and the ATOMS.CAST.SPIN.64 loops of atom.shared.add.u64 / .min.s64 ... were refused by name
("is not modeled") before session 47, so no kernel with a 64-bit counter, a 64-bit CAS loop or a binary64 atomic
sum could be checked here.  They run as the PTX ISA defines atom / red .b64 / .u64 / .s64 / .f64: the operands and the
old value are register pairs (the low word in the even register).

The kernels are ptxas -O3's code of the PTX below (so ptxas, not bobc, chooses the SASS), run in the simulator with its
control-code checker on.  The oracle is NumPy's uint64 / int64 arithmetic on the same values, independent of the
order the threads' atomics land in (the GPU's is unspecified): many threads of two warps (and two blocks for global
memory) update ONE 64-bit word each --
- atom.add.u64: the word ends at start + the values' sum modulo 2^64, and the old values, sorted, form the chain
  start, start + v_a, start + v_a + v_b, ... (each thread's old value plus its own value is another thread's old value,
  or the final word);
- a CAS loop (atom.cas.b64 until the compare matches) adding each thread's value: the same sum and chain;
- atom.min.s64 / atom.max.u64 / atom.max.s64 / atom.min.u64: the extreme of start and every value in that order;
- atom.exch.b64: the old values and the final word are start and the values, each once;
- atom.and / .or / .xor .b64: the fold of every value into start;
- red (add.u64, min.s64, max.u64, and.b64, xor.b64: RED / REDG .64 and the shared loops): the same final words.
The values carry into and out of bit 32 and cover both signs, so a 32-bit or a signed / unsigned mix-up shows."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import compile_ptx  # noqa: E402

from bobc.sim.kernel import run_kernel  # noqa: E402

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
M64 = (1 << 64) - 1
OPS = ["add.u64", "cas", "min.s64", "max.u64", "max.s64", "min.u64", "exch.b64", "and.b64", "or.b64", "xor.b64",
       "red:add.u64", "red:min.s64", "red:max.u64", "red:and.b64", "red:xor.b64"]   # red: no old value
THREADS, BLOCKS = 64, 2


def _ptx(space: str) -> str:
    """Thread t of block b: v = vals[b * THREADS + t]; for each op j an atomic on word j (global: ctr[j]; shared: the
    block's sm[j], copied to ctr[b * len(OPS) + j] at the end); old values to olds[(b * THREADS + t) * len(OPS) + j]."""
    n = len(OPS)
    lines = [".version 8.0", ".target sm_86", ".address_size 64",
             ".visible .entry k(.param .u64 pctr, .param .u64 pvals, .param .u64 polds, .param .u64 pstart)", "{",
             "  .reg .b32 %r<16>; .reg .b64 %rd<32>, %v, %old, %new, %got; .reg .pred %p<4>;",
             f"  .shared .align 8 .b64 sm[{n}];" if space == "shared" else "",
             "  ld.param.u64 %rd1, [pctr]; ld.param.u64 %rd2, [pvals]; ld.param.u64 %rd3, [polds]; "
             "ld.param.u64 %rd4, [pstart];",
             "  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3; "
             "cvta.to.global.u64 %rd4, %rd4;",
             f"  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mad.lo.u32 %r3, %r2, {THREADS}, %r1;",
             "  mul.wide.u32 %rd5, %r3, 8; add.s64 %rd5, %rd2, %rd5; ld.global.u64 %v, [%rd5];",
             f"  mul.wide.u32 %rd6, %r3, {8 * n}; add.s64 %rd6, %rd3, %rd6;"]
    if space == "shared":
        lines += ["  mov.u32 %r4, sm; setp.lt.u32 %p1, %r1, " + str(n) + ";",
                  "  shl.b32 %r5, %r1, 3; add.u32 %r6, %r4, %r5; mul.wide.u32 %rd7, %r1, 8; add.s64 %rd7, %rd4, %rd7;",
                  "  @%p1 ld.global.u64 %rd8, [%rd7]; @%p1 st.shared.u64 [%r6], %rd8;", "  bar.sync 0;"]
    for j, op in enumerate(OPS):
        if space == "shared":
            lines.append(f"  add.u32 %r7, %r4, {8 * j};")
            addr, sp = "%r7", "shared"
        else:
            addr, sp = f"%rd1+{8 * j}", "global"
        if op == "cas":
            lines += ["  mov.u64 %old, 0;", f"L{j}:", "  add.u64 %new, %old, %v;",
                      f"  atom.{sp}.cas.b64 %got, [{addr}], %old, %new;", "  setp.ne.u64 %p2, %got, %old;",
                      "  mov.u64 %old, %got;", f"  @%p2 bra L{j};", f"  st.global.u64 [%rd6+{8 * j}], %old;"]
        elif op.startswith("red:"):
            lines += [f"  red.{sp}.{op[4:]} [{addr}], %v;"]
        else:
            lines += [f"  atom.{sp}.{op} %got, [{addr}], %v;", f"  st.global.u64 [%rd6+{8 * j}], %got;"]
    if space == "shared":
        lines += ["  bar.sync 0;", f"  mad.lo.u32 %r8, %r2, {n}, %r1; mul.wide.u32 %rd9, %r8, 8; add.s64 %rd9, %rd1, %rd9;",
                  "  @%p1 ld.shared.u64 %rd10, [%r6]; @%p1 st.global.u64 [%rd9], %rd10;"]
    lines += ["  ret;", "}", ""]
    return "\n".join(lines)


def _values(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 1 << 63, THREADS * BLOCKS, dtype=np.uint64) * np.uint64(2) + rng.integers(
        0, 2, THREADS * BLOCKS, dtype=np.uint64)
    v[::7] = (v[::7] & np.uint64(0xFFFFFFFF)) | np.uint64(0xFFFFFFFF)  # carries out of the low word
    v[3] = np.uint64(1 << 63)                                          # INT64_MIN
    v[5] = np.uint64(M64)                                              # -1 / UINT64_MAX
    v[6] = np.uint64(2)          # no value 0 and no subset summing to 0 modulo 2^64 (with v[5]): distinct olds
    return v


START = np.array([0xFFFFFFFF80000000, 0x00000000FFFFFFFF, 0x0000000100000000, 0x8000000000000001,
                  0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFE, 0x0123456789ABCDEF, 0xF0F0F0F0F0F0F0F0,
                  0x0000FFFF0000FFFF, 0xDEADBEEFCAFEF00D, 0xFFFFFFFF00000001, 0x0000000080000000,
                  0x7FFFFFFF00000000, 0xFFFF0000FFFF0000, 0x1111111111111111], np.uint64)


def _expected_final(op: str, start: np.uint64, vals: np.ndarray) -> int:
    """The word after every thread's atomic, from NumPy's uint64 / int64 (order-free for these ops)."""
    s, v = np.uint64(start), vals.astype(np.uint64)
    op = op.removeprefix("red:")
    if op in ("add.u64", "cas"):
        return (int(s) + sum(map(int, v))) & M64                      # modulo 2^64, as uint64 wraps
    if op in ("min.s64", "max.s64"):
        both = np.append(v, s).view(np.int64)
        return int(np.array([both.min() if op == "min.s64" else both.max()], np.int64).view(np.uint64)[0])
    if op in ("min.u64", "max.u64"):
        both = np.append(v, s)
        return int(both.min() if op == "min.u64" else both.max())
    fold = {"and.b64": np.bitwise_and, "or.b64": np.bitwise_or, "xor.b64": np.bitwise_xor}[op]
    return int(fold.reduce(np.append(v, s)))


def _check(op: str, start: int, vals: np.ndarray, olds: np.ndarray, final: int) -> list[str]:
    bad = []
    if op.startswith("red:"):
        want = _expected_final(op, start, vals)
        return [f"{op}: final {final:#x}, want {want:#x}"] if final != want else []
    if op != "exch.b64":
        want = _expected_final(op, start, vals)
        if final != want:
            bad.append(f"{op}: final {final:#x}, want {want:#x}")
    if op in ("add.u64", "cas"):
        # the chain: olds sorted by the order they landed in -- each old + its value is the next old (or the final)
        order = {int(o): int(v) for o, v in zip(olds, vals)}
        if len(order) != len(olds):
            bad.append(f"{op}: two threads saw the same old value")
        at, seen = start, 0
        while at in order and seen < len(olds):
            at, seen = (at + order[at]) & M64, seen + 1
        if seen != len(olds) or at != final:
            bad.append(f"{op}: the old values are no chain from {start:#x} ({seen} of {len(olds)} linked)")
    elif op == "exch.b64":
        got = sorted([*map(int, olds), final])
        if got != sorted([start, *map(int, vals)]):
            bad.append(f"{op}: the old values and the final word are not start and the values, each once")
    elif op in ("min.s64", "max.s64", "min.u64", "max.u64", "and.b64", "or.b64", "xor.b64"):
        if int(start) not in set(map(int, olds)) and op not in ("and.b64", "or.b64", "xor.b64"):
            bad.append(f"{op}: no thread saw the start {start:#x}")
    return bad


@TARGETS
def test_global_atomics64_from_many_threads_s47(target):
    vals = _values(47)
    cubin = compile_ptx(_ptx("global"), target)
    out = run_kernel(cubin, target, grid=BLOCKS, block=THREADS, params=["ctr", "vals", "olds", "start"],
                     buffers={"ctr": START.copy(), "vals": vals, "olds": np.zeros(THREADS * BLOCKS * len(OPS), np.uint64),
                              "start": START.copy()})
    ctr, olds = np.asarray(out["ctr"]).view(np.uint64), np.asarray(out["olds"]).view(np.uint64).reshape(-1, len(OPS))
    bad = [b for j, op in enumerate(OPS) for b in _check(op, int(START[j]), vals, olds[:, j], int(ctr[j]))]
    assert not bad, f"{target}:\n" + "\n".join(bad)


@TARGETS
def test_shared_atomics64_from_many_threads_s47(target):
    vals = _values(4747)
    cubin = compile_ptx(_ptx("shared"), target)
    out = run_kernel(cubin, target, grid=BLOCKS, block=THREADS, params=["ctr", "vals", "olds", "start"],
                     buffers={"ctr": np.zeros(BLOCKS * len(OPS), np.uint64), "vals": vals,
                              "olds": np.zeros(THREADS * BLOCKS * len(OPS), np.uint64), "start": START.copy()})
    ctr = np.asarray(out["ctr"]).view(np.uint64).reshape(BLOCKS, len(OPS))
    olds = np.asarray(out["olds"]).view(np.uint64).reshape(BLOCKS, THREADS, len(OPS))
    bad = [f"block {b}: {msg}" for b in range(BLOCKS) for j, op in enumerate(OPS)
           for msg in _check(op, int(START[j]), vals[b * THREADS:(b + 1) * THREADS], olds[b, :, j], int(ctr[b, j]))]
    assert not bad, f"{target}:\n" + "\n".join(bad)


def test_the_oracle_by_hand_s47():
    """_expected_final and _check against values worked out by hand: 2^64 - 1 + 2 wraps to 1; min.s64 of -1 and 1 is
    -1 (0xff..ff), min.u64 of them 1; a chain 5 -> 7 -> 10 from start 5 with values 2 and 3 in either order."""
    assert _expected_final("add.u64", np.uint64(M64), np.array([2], np.uint64)) == 1
    assert _expected_final("min.s64", np.uint64(1), np.array([M64], np.uint64)) == M64
    assert _expected_final("min.u64", np.uint64(1), np.array([M64], np.uint64)) == 1
    assert _expected_final("xor.b64", np.uint64(0b1100), np.array([0b1010, 0b0001], np.uint64)) == 0b0111
    assert _check("add.u64", 5, np.array([3, 2], np.uint64), np.array([7, 5], np.uint64), 10) == []
    assert _check("add.u64", 5, np.array([3, 2], np.uint64), np.array([5, 5], np.uint64), 10) != []
