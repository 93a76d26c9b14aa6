"""The simulator runs ptxas's SASS for ordinary PTX integer math to the PTX ISA's meaning (probe s37
sassforms3), the definitions computed here with Python integers / numpy:
- finding 1: sm_90's VIMNMX.S16x2 / .U16x2 / .RELU (min / max .s16, .u16, .s16x2, .u16x2, .relu) -- the
  simulator read VIMNMX.S16x2 as a 32-bit compare and stored the other operand's half (min.s16(-1, 22111)
  gave 22111), silently;
- finding 2: a 64-bit negation, absolute value and a borrow chain (neg.s64, abs.s64, sub.cc / subc), whose
  SASS is IADD3 with a carry-out of a subtraction and IADD3.X of a complement (`~R3`): refused before
  ("a carry out of a subtraction is not modeled"; `~` unreadable).
Each kernel is ptxas's (-O3) cubin of a small PTX kernel, run in the simulator with its control-code checker.
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from bobc.nvtools import ptxas

THREADS = 32
VALUES = [0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 5, 0x12345678, 0xDEADBEEF, 31, 32, 0xFFFF, 0x10000, 0x80,
          0x7F, 0xFF, 0x8000, 0x7FFF, 0xFFFFFFF0, 100, 1000000, 0x00FF00FF, 3, 7, 0x80008000, 0x7FFF8001,
          0xC693565F, 0xD56A2742, 0xFFFF0000, 0x0000FFFF, 0x8000FFFF, 2, 0xFFFE]
A = np.array(VALUES, dtype=np.uint32)
B = np.roll(A, 5)
C = np.roll(A, 11)
D = np.roll(A, 17)


def _kernel(name: str, target: str, body: str) -> str:
    """out[2i], out[2i+1] = %r10, %r11 of a = in[i], b = in[i+n], c = in[i+2n], d = in[i+3n]
    (%rd13 = b:a, %rd14 = d:c; a 64-bit result %rd20 is stored as %r10, %r11)."""
    return f""".version 8.8
.target {target}
.address_size 64
.visible .entry {name}(.param .u64 out, .param .u64 in, .param .u32 n)
{{
 .reg .b32 %r<40>; .reg .b64 %rd<40>; .reg .pred %p<8>; .reg .b16 %h<16>;
 ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;
 ld.param.u64 %rd3, [in]; cvta.to.global.u64 %rd4, %rd3;
 ld.param.u32 %r30, [n];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd5, %r1, 4; add.s64 %rd6, %rd4, %rd5; mul.wide.u32 %rd9, %r30, 4;
 ld.global.u32 %r2, [%rd6]; add.s64 %rd10, %rd6, %rd9; ld.global.u32 %r3, [%rd10];
 add.s64 %rd11, %rd10, %rd9; ld.global.u32 %r4, [%rd11];
 add.s64 %rd15, %rd11, %rd9; ld.global.u32 %r7, [%rd15];
 mov.b64 %rd13, {{%r2, %r3}}; mov.b64 %rd14, {{%r4, %r7}};
 mov.u32 %r10, 0; mov.u32 %r11, 0;
 {body}
 mul.wide.u32 %rd16, %r1, 8; add.s64 %rd12, %rd2, %rd16; st.global.v2.u32 [%rd12], {{%r10, %r11}};
 ret;
}}
"""


def _run(name: str, arch: str, body: str, tmp_path) -> np.ndarray:
    from bobc.sim.kernel import run_kernel
    ptx, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.cubin"
    ptx.write_text(_kernel(name, arch, body))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    out = run_kernel(cubin.read_bytes(), arch, grid=1, block=THREADS, params=["out", "in", np.uint32(THREADS)],
                     buffers={"out": np.zeros(2 * THREADS, np.uint32), "in": np.concatenate([A, B, C, D])},
                     kernel_name=name)["out"]
    return out


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _halves(f, signed: bool):
    """Each 16-bit half of a and b on its own (PTX's .s16x2 / .u16x2)."""
    def each(a, b):
        out = 0
        for shift in (0, 16):
            x, y = a >> shift & 0xFFFF, b >> shift & 0xFFFF
            if signed:
                x, y = _signed(x, 16), _signed(y, 16)
            out |= (f(x, y) & 0xFFFF) << shift
        return out
    return each


PACKED = {  # PTX min / max on sm_90: ptxas writes VIMNMX.S16x2 / .U16x2 / .RELU
    "min_s16x2": ("min.s16x2 %r10, %r2, %r3;", _halves(min, True)),
    "max_u16x2": ("max.u16x2 %r10, %r2, %r3;", _halves(max, False)),
    "max_relu_s16x2": ("max.relu.s16x2 %r10, %r2, %r3;", _halves(lambda x, y: max(x, y, 0), True)),
    "min_relu_s32": ("min.relu.s32 %r10, %r2, %r3;", lambda a, b: max(min(_signed(a, 32), _signed(b, 32)), 0)),
    "min_s16": ("cvt.u16.u32 %h1, %r2; cvt.u16.u32 %h3, %r3; min.s16 %h2, %h1, %h3; cvt.u32.u16 %r10, %h2;",
                lambda a, b: min(_signed(a, 16), _signed(b, 16)) & 0xFFFF),
    "max_u16": ("cvt.u16.u32 %h1, %r2; cvt.u16.u32 %h3, %r3; max.u16 %h2, %h1, %h3; cvt.u32.u16 %r10, %h2;",
                lambda a, b: max(a & 0xFFFF, b & 0xFFFF)),
}


@pytest.mark.parametrize("name", sorted(PACKED))
def test_sm90_packed_and_relu_min_max(name, tmp_path, needs_ptxas):
    got, want = _packed_result(name, _run(name, "sm_90", PACKED[name][0], tmp_path))
    assert got.tobytes() == want.tobytes(), f"{name}:\n{got}\n!=\n{want}"


def _packed_result(name: str, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What a PACKED kernel stored (its first word a thread) and the PTX definition's value."""
    definition = PACKED[name][1]
    return out[0::2], np.array([definition(int(a), int(b)) & 0xFFFFFFFF for a, b in zip(A, B)], dtype=np.uint32)


M64 = (1 << 64) - 1
WIDE = {  # x = b:a, y = d:c (64-bit), c alone
    "neg_s64": ("neg.s64 %rd20, %rd13; mov.b64 {%r10, %r11}, %rd20;", lambda x, y, c: -x),
    "abs_s64": ("abs.s64 %rd20, %rd13; mov.b64 {%r10, %r11}, %rd20;", lambda x, y, c: abs(_signed(x, 64))),
    "sub_s64": ("sub.s64 %rd20, %rd13, %rd14; mov.b64 {%r10, %r11}, %rd20;", lambda x, y, c: x - y),
    # sub.cc then subc: c - (a < b), the borrow of a - b (PTX: subc subtracts the carry-out's borrow)
    "subc": ("sub.cc.u32 %r5, %r2, %r3; subc.u32 %r10, %r4, 0;",
             lambda x, y, c: (c - ((x & 0xFFFFFFFF) < (x >> 32))) & 0xFFFFFFFF),
}


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("name", sorted(WIDE))
def test_subtraction_with_a_borrow(name, arch, tmp_path, needs_ptxas):
    got, want = _wide_result(name, _run(name, arch, WIDE[name][0], tmp_path))
    assert got.tobytes() == want.tobytes(), f"{arch} {name}:\n{got}\n!=\n{want}"


def _wide_result(name: str, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What a WIDE kernel stored (a 64-bit word a thread) and the PTX definition's value."""
    definition = WIDE[name][1]
    return out.view(np.uint64), np.array([definition(int(a) | int(b) << 32, int(c) | int(d) << 32, int(c)) & M64
                                          for a, b, c, d in zip(A, B, C, D)], dtype=np.uint64)


# PTX prmt's mode table (the ISA's, d.b0 first): the byte of {b, a} each result byte takes, by c[1:0]
# (finding 3: the simulator refused every mode but the default, "only the default byte-select mode")
PRMT_TABLE = {"f4e": ((0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)),
              "b4e": ((0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)),
              "rc8": ((0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)),
              "ecl": ((0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)),
              "ecr": ((0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)),
              "rc16": ((0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3))}


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("mode", sorted(PRMT_TABLE))
def test_prmt_modes(mode, arch, tmp_path, needs_ptxas):
    got, want = _prmt_result(mode, _run(f"prmt_{mode}", arch, _prmt_body(mode), tmp_path))
    assert got.tolist() == want.tolist(), f"{arch} prmt.{mode}"


def _prmt_body(mode: str) -> str:
    return f"prmt.b32.{mode} %r10, %r2, %r3, %r4;"


def _prmt_result(mode: str, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What a prmt kernel stored (its first word a thread) and PTX's mode table's value."""
    want = [int.from_bytes(bytes((b << 32 | a).to_bytes(8, "little")[k] for k in PRMT_TABLE[mode][c & 3]), "little")
            for a, b, c in zip(A.tolist(), B.tolist(), C.tolist())]
    return out[0::2], np.array(want, dtype=np.uint32)


def sm90_cases() -> dict:
    """Every kernel of this file for sm_90, for the GPU (tests/gpu/test_sim_probes_gpu.py; the cubins made
    by tests/gpu/prepare.sh): name -> (its PTX, result(out) -> (stored, the PTX ISA's definition)).  The
    simulator's reading of these forms rests on the ISA's words; the GPU must store the same."""
    cases = {name: (_kernel(name, "sm_90", body), lambda out, name=name: _packed_result(name, out))
             for name, (body, _) in PACKED.items()}
    cases.update({name: (_kernel(name, "sm_90", body), lambda out, name=name: _wide_result(name, out))
                  for name, (body, _) in WIDE.items()})
    cases.update({f"prmt_{mode}": (_kernel(f"prmt_{mode}", "sm_90", _prmt_body(mode)),
                                   lambda out, mode=mode: _prmt_result(mode, out)) for mode in PRMT_TABLE})
    return cases
