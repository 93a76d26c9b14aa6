"""PTX test kernels compiled by NVIDIA's ptxas (the nvidia-cuda-nvcc test extra), for checking the
simulator's instruction semantics against NumPy: ptxas, not our assembler, chooses the SASS, so a
simulator that misreads an opcode gives a wrong number."""
from __future__ import annotations

import hashlib
import subprocess
import tempfile
from pathlib import Path

from bobc.nvtools import ptxas

HERE = Path(__file__).resolve().parent / "ptx"
_cache: dict[str, bytes] = {}


def compile_ptx(text: str, target: str) -> bytes:
    """ptxas -O3 of `text` for `target` (sm_86 / sm_90): the cubin's bytes."""
    text = text.replace(".target sm_86", f".target {target}")
    key = hashlib.sha256(text.encode()).hexdigest()
    if key not in _cache:
        tool = ptxas()
        assert tool, "ptxas (nvidia-cuda-nvcc, the test extra) is needed"
        with tempfile.TemporaryDirectory() as folder:
            source, cubin = Path(folder) / "k.ptx", Path(folder) / "k.cubin"
            source.write_text(text)
            subprocess.run([tool, "-arch", target, "-O3", str(source), "-o", str(cubin)], check=True,
                           capture_output=True)
            _cache[key] = cubin.read_bytes()
    return _cache[key]


def kernel(name: str, target: str) -> bytes:
    return compile_ptx((HERE / f"{name}.ptx").read_text(), target)


def gemm_ptx(m: int = 64, n: int = 64, k: int = 64) -> str:
    """C[m x n] (binary32) = A[m x k] (binary16, row-major) @ B[k x n] (binary16, row-major), one
    block of m/16 warps: A through cp.async into shared memory, B through ld/st.shared, fragments
    by ldmatrix (.x4 for A, .x2.trans for B), mma.sync.m16n8k16 with binary32 accumulation."""
    warps, tiles = m // 16, n // 8
    threads = 32 * warps
    lines = [".version 8.0", ".target sm_86", ".address_size 64",
             ".visible .entry k(.param .u64 c, .param .u64 a, .param .u64 b)", "{",
             "  .reg .b32 %r<64>; .reg .b64 %rd<16>; .reg .pred %p<2>; .reg .f32 %acc<" + str(4 * tiles) + ">;",
             f"  .shared .align 16 .b8 sa[{2 * m * k}]; .shared .align 16 .b8 sb[{2 * k * n}];",
             "  mov.u32 %r1, %tid.x; shr.u32 %r2, %r1, 5; and.b32 %r3, %r1, 31;",
             "  ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.u64 %rd3, [c];",
             "  shl.b32 %r4, %r1, 4;"]
    for rnd in range(2 * m * k // (16 * threads)):
        lines += [f"  add.u32 %r5, %r4, {rnd * 16 * threads}; mov.u32 %r6, sa; add.u32 %r6, %r6, %r5;",
                  "  cvt.u64.u32 %rd4, %r5; add.s64 %rd5, %rd1, %rd4;",
                  "  cp.async.cg.shared.global [%r6], [%rd5], 16;"]
    lines += ["  cp.async.commit_group;"]
    for rnd in range(2 * k * n // (16 * threads)):
        lines += [f"  add.u32 %r5, %r4, {rnd * 16 * threads}; mov.u32 %r6, sb; add.u32 %r6, %r6, %r5;",
                  "  cvt.u64.u32 %rd4, %r5; add.s64 %rd5, %rd2, %rd4;",
                  "  ld.global.v4.b32 {%r7, %r8, %r9, %r10}, [%rd5]; st.shared.v4.b32 [%r6], {%r7, %r8, %r9, %r10};"]
    lines += ["  cp.async.wait_all;", "  bar.sync 0;"]
    lines += [f"  mov.f32 %acc{i}, 0f00000000;" for i in range(4 * tiles)]
    lines += ["  and.b32 %r11, %r3, 15; shr.u32 %r12, %r3, 4;",              # A row in warp, column half
              "  shl.b32 %r13, %r2, 4; add.u32 %r13, %r13, %r11;"]           # A row
    for kk in range(k // 16):
        lines += [f"  mad.lo.u32 %r14, %r13, {k}, {kk * 16}; shl.b32 %r15, %r12, 3; add.u32 %r14, %r14, %r15;",
                  "  shl.b32 %r14, %r14, 1; mov.u32 %r16, sa; add.u32 %r16, %r16, %r14;",
                  "  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r20, %r21, %r22, %r23}, [%r16];"]
        for t in range(tiles):
            lines += [f"  add.u32 %r17, %r11, {kk * 16}; mad.lo.u32 %r17, %r17, {n}, {t * 8}; shl.b32 %r17, %r17, 1;",
                      "  mov.u32 %r18, sb; add.u32 %r18, %r18, %r17;",
                      "  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r24, %r25}, [%r18];",
                      "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                      f"{{%acc{4*t}, %acc{4*t+1}, %acc{4*t+2}, %acc{4*t+3}}}, {{%r20, %r21, %r22, %r23}}, "
                      f"{{%r24, %r25}}, {{%acc{4*t}, %acc{4*t+1}, %acc{4*t+2}, %acc{4*t+3}}};"]
    lines += ["  shr.u32 %r30, %r3, 2; and.b32 %r31, %r3, 3; shl.b32 %r31, %r31, 1;",
              "  shl.b32 %r32, %r2, 4; add.u32 %r30, %r30, %r32;"]            # row, column in tile
    for t in range(tiles):
        for half in range(2):
            lines += [f"  add.u32 %r33, %r30, {8 * half}; mad.lo.u32 %r33, %r33, {n}, %r31; add.u32 %r33, %r33, {8 * t};",
                      "  mul.wide.u32 %rd6, %r33, 4; add.s64 %rd7, %rd3, %rd6;",
                      f"  st.global.v2.f32 [%rd7], {{%acc{4*t+2*half}, %acc{4*t+2*half+1}}};"]
    lines += ["  ret;", "}"]
    return "\n".join(lines) + "\n"
