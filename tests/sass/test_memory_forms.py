"""Memory-order, atomic, funnel-shift, vote and binary64-class forms ptxas writes that the assembler refused
(probe s38 sassforms5 finding 8; tools/ptx_corpus/memory_forms.ptx, both targets): shared-memory atomics and
reductions (ATOMS.MIN.S32 / .MAX / .INC / .CAS, ATOMS.MIN.S32 RZ / .XOR RZ: atom / red .shared), global
atomics with a scope (ATOMG.E.INC / .DEC / .ADD .STRONG.GPU, .EXCH.STRONG.SYS: atom.inc / dec, atom.acq_rel.gpu,
atom.relaxed.sys), loads and stores with an order or a cache hint (LDG.E.64.STRONG.GPU / .SYS, LDG.E.LU.64,
LDG.E.LTC256B.64, STG.E.STRONG.GPU / .SYS: ld.relaxed / acquire, ld.lu, ld.L2::256B, st.release / relaxed /
volatile), SHF.L.U32.HI and SHF.R.W.U32 (shf.l.clamp, shf.r.wrap), FLO.SH (bfind.shiftamt.s32), VOTE.ALL
(vote.sync.all), ISETP.*.U32.AND.EX with an immediate (testp.*.f64).  "no sm_86 encoding for ..." before.
With the pinned ptxas and nvdisasm:
- ptxas writes each form in memory_forms.ptx;
- each ptxas word assembles from nvdisasm's text to the same 128 bits, and nvdisasm reads it back;
- each corpus kernel's listing assembles to ptxas's .text;
- one-operation kernels of each form: ptxas's cubin and bobc's (the same .text), run in the simulator, store
  what the PTX ISA's definitions give (Python integers).
"""
from __future__ import annotations

import math
import re
import struct
import subprocess

import numpy as np
import pytest

from bobc.cli import main
from bobc.nvtools import nvdisasm, ptxas
from bobc.sass.learn import PTX_CORPUS, read_corpus
from tests.sass.test_math_forms import _images as corpus_images
from tests.sass.test_math_forms import _text
from tests.sass.test_sim_probe_s37_sassforms3 import A, B, C, D, THREADS
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

ARCHES = ("sm_86", "sm_90")
PTX = PTX_CORPUS / "memory_forms.ptx"
FORMS = [r"^ATOMS\.MIN\.S32 R\d+, ", r"^ATOMS\.MAX R\d+, ", r"^ATOMS\.INC R\d+, ", r"^ATOMS\.CAS R\d+, ",
         r"^ATOMS\.MIN\.S32 RZ, ", r"^ATOMS\.XOR RZ, ",
         r"^ATOMG\.E\.INC\.STRONG\.GPU ", r"^ATOMG\.E\.DEC\.STRONG\.GPU ", r"^ATOMG\.E\.ADD\.STRONG\.GPU ",
         r"^ATOMG\.E\.EXCH\.STRONG\.SYS ",
         r"^LDG\.E\.64\.STRONG\.GPU ", r"^LDG\.E\.64\.STRONG\.SYS ", r"^LDG\.E\.LU\.64 ", r"^LDG\.E\.LTC256B\.64 ",
         r"^STG\.E\.STRONG\.GPU ", r"^STG\.E\.STRONG\.SYS ",
         r"^SHF\.L\.U32\.HI R", r"^SHF\.R\.W\.U32 R\d+, R\d+(\.reuse)?, R", r"^SHF\.R\.W\.U32 R\d+, R\d+(\.reuse)?, 0x",
         r"^FLO\.SH R", r"^VOTE\.ALL P", r"^ISETP\.\w+\.U32\.AND\.EX P\d, PT, R\d+(\.reuse)?, 0x"]


def _rows(arch):
    return [r for r in read_corpus(arch) if r.reference.startswith("memory_forms.ptx:")
            and any(re.match(p, r.text) for p in FORMS)]


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_writes_these_forms(arch):
    texts = [r.text for r in _rows(arch)]
    for pattern in FORMS:
        assert any(re.match(pattern, t) for t in texts), f"{arch}: no {pattern} in ptxas's memory_forms.ptx"


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    assembles_and_decodes_back(_rows(arch), arch)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("kernel", ["shared_atomics", "global_atomics", "ordered_access", "funnel_shifts",
                                    "votes_and_tests"])
def test_kernel_assembles_to_ptxas_text(arch, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    ptxas_image, bobc_image = corpus_images(arch, kernel, tmp_path, PTX)
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)


# ---- one operation a kernel, against the PTX ISA's definitions
M32 = 0xFFFFFFFF


def _s(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


def _f64(a: int, b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", b << 32 | a))[0]


def _shf(a: int, b: int, n: int, left: bool, wrap: bool) -> int:
    """PTX shf: the 64-bit b:a shifted by n (wrap: n mod 32; clamp: min(n, 32)), the high (left) or low word."""
    n = n & 31 if wrap else min(n, 32)
    v = b << 32 | a
    return (v << n) >> 32 & M32 if left else v >> n & M32


def _bfind_shiftamt_s32(a: int) -> int:
    """PTX bfind.shiftamt.s32: 31 minus the position of the most significant bit that differs from the sign
    (0xffffffff when none)."""
    v = ~a & M32 if a >> 31 else a
    return 0xFFFFFFFF if v == 0 else 31 - (v.bit_length() - 1)


def _testp(kind: str):
    def check(a, b, c, d):
        x = _f64(a, b)
        return int({"finite": math.isfinite(x), "infinite": math.isinf(x), "number": not math.isnan(x),
                    "notanumber": math.isnan(x)}[kind]), 0
    return check


# word 0 / 1 of out[2i] hold a / c before the body (global: this thread's pair at %rd12; shared: %r31)
ONE = {
    "atom_s_min_s32": ("atom.shared.min.s32 %r10, [%r31], %r3; ld.shared.u32 %r11, [%r31];",
                       lambda a, b, c, d: (a, min(_s(a), _s(b)) & M32)),
    "atom_s_max_u32": ("atom.shared.max.u32 %r10, [%r31], %r3; ld.shared.u32 %r11, [%r31];",
                       lambda a, b, c, d: (a, max(a, b))),
    "atom_s_inc": ("atom.shared.inc.u32 %r10, [%r31], %r3; ld.shared.u32 %r11, [%r31];",
                   lambda a, b, c, d: (a, 0 if a >= b else a + 1)),
    "atom_s_cas": ("atom.shared.cas.b32 %r10, [%r31], %r3, %r4; ld.shared.u32 %r11, [%r31];",
                   lambda a, b, c, d: (a, c if a == b else a)),
    "red_s_min_s32": ("red.shared.min.s32 [%r31], %r3; ld.shared.u32 %r10, [%r31];",
                      lambda a, b, c, d: (min(_s(a), _s(b)) & M32, 0)),
    "red_s_xor": ("red.shared.xor.b32 [%r31], %r3; ld.shared.u32 %r10, [%r31];", lambda a, b, c, d: (a ^ b, 0)),
    "atom_g_inc": ("atom.global.inc.u32 %r10, [%rd12], %r3; ld.global.u32 %r11, [%rd12];",
                   lambda a, b, c, d: (a, 0 if a >= b else a + 1)),
    "atom_g_dec": ("atom.global.dec.u32 %r10, [%rd12], %r3; ld.global.u32 %r11, [%rd12];",
                   lambda a, b, c, d: (a, b if a == 0 or a > b else a - 1)),
    "atom_acq_rel_gpu": ("atom.acq_rel.gpu.global.add.u32 %r10, [%rd12], %r3; ld.global.u32 %r11, [%rd12];",
                         lambda a, b, c, d: (a, (a + b) & M32)),
    "atom_relaxed_sys": ("atom.relaxed.sys.global.exch.b32 %r10, [%rd12], %r3; ld.global.u32 %r11, [%rd12];",
                         lambda a, b, c, d: (a, b)),
    "ld_relaxed_gpu": ("ld.relaxed.gpu.global.u32 %r10, [%rd12]; ld.relaxed.gpu.global.u32 %r11, [%rd12+4];",
                       lambda a, b, c, d: (a, c)),
    "ld_acquire_sys_u64": ("ld.acquire.sys.global.u64 %rd20, [%rd12]; mov.b64 {%r10, %r11}, %rd20;",
                           lambda a, b, c, d: (a, c)),
    "ld_lu": ("ld.global.lu.u32 %r10, [%rd12]; ld.global.cs.u32 %r11, [%rd12+4];", lambda a, b, c, d: (a, c)),
    "ld_L2_256": ("ld.global.L2::256B.u32 %r10, [%rd12]; ld.global.L1::no_allocate.u32 %r11, [%rd12+4];",
                  lambda a, b, c, d: (a, c)),
    "st_release_gpu": ("st.release.gpu.global.u32 [%rd12], %r3; ld.global.u32 %r10, [%rd12];",
                       lambda a, b, c, d: (b, 0)),
    "st_volatile": ("st.volatile.global.u32 [%rd12], %r3; ld.volatile.global.u32 %r10, [%rd12];",
                    lambda a, b, c, d: (b, 0)),
    "shf_l_clamp": ("shf.l.clamp.b32 %r10, %r2, %r3, %r4;", lambda a, b, c, d: (_shf(a, b, c, True, False), 0)),
    "shf_r_wrap": ("shf.r.wrap.b32 %r10, %r2, %r3, %r4;", lambda a, b, c, d: (_shf(a, b, c, False, True), 0)),
    "shf_r_wrap_13": ("shf.r.wrap.b32 %r10, %r2, %r3, 13;", lambda a, b, c, d: (_shf(a, b, 13, False, True), 0)),
    "bfind_shiftamt_s32": ("bfind.shiftamt.s32 %r10, %r2;", lambda a, b, c, d: (_bfind_shiftamt_s32(a), 0)),
    # vote.sync.all (PTX: true when the predicate is true in every active thread): of a != 0 (one a is 0)
    # and of tid < 32 (every thread of the one warp)
    "vote_all": ("setp.ne.u32 %p1, %r2, 0; vote.sync.all.pred %p2, %p1, -1; selp.u32 %r10, 1, 0, %p2; "
                 "setp.lt.u32 %p3, %r1, 32; vote.sync.all.pred %p4, %p3, -1; selp.u32 %r11, 1, 0, %p4;",
                 lambda a, b, c, d: (int(all(int(x) != 0 for x in A)), 1)),
    **{f"testp_{k}_f64": (f"testp.{k}.f64 %p1, %rd13; selp.u32 %r10, 1, 0, %p1;", _testp(k))
       for k in ("finite", "infinite", "number", "notanumber")},
    "testp_subnormal_f64": ("testp.subnormal.f64 %p1, %rd13; selp.u32 %r10, 1, 0, %p1;",
                            lambda a, b, c, d: (int((b >> 20) & 0x7FF == 0 and (b << 32 | a) & ((1 << 52) - 1) != 0), 0)),
}


def _one(name: str, target: str, body: str) -> str:
    return f""".version 8.8
.target {target}
.address_size 64
.visible .entry {name}(.param .u64 out, .param .u64 in, .param .u32 n)
{{
 .reg .b32 %r<40>; .reg .b64 %rd<40>; .reg .pred %p<8>;
 .shared .align 8 .b32 sh[64];
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
 mul.wide.u32 %rd16, %r1, 8; add.s64 %rd12, %rd2, %rd16; st.global.v2.u32 [%rd12], {{%r2, %r4}};
 mov.u32 %r31, sh; shl.b32 %r32, %r1, 3; add.u32 %r31, %r31, %r32; st.shared.v2.u32 [%r31], {{%r2, %r4}};
 {body}
 bar.sync 0;
 st.global.v2.u32 [%rd12], {{%r10, %r11}};
 ret;
}}
"""


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(ONE))
def test_one_operation_runs_to_the_ptx_definition(name, arch, tmp_path, needs_ptxas, needs_nvdisasm):
    from bobc.sim.kernel import run_kernel
    body, definition = ONE[name]
    ptx, cubin, listing, ours = (tmp_path / f"{name}.{x}" for x in ("ptx", "cubin", "sass", "bobc.cubin"))
    ptx.write_text(_one(name, arch, body))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    listing.write_text(subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True,
                                      text=True).stdout)
    assert main(["asm", str(listing), "--arch", arch, "--kernel", name, "--cubin", "-o", str(ours)]) == 0
    assert _text(ours.read_bytes(), name) == _text(cubin.read_bytes(), name)
    want = [tuple(v & M32 for v in definition(int(a), int(b), int(c), int(d))) for a, b, c, d in zip(A, B, C, D)]
    for image in (cubin.read_bytes(), ours.read_bytes()):
        out = run_kernel(image, arch, grid=1, block=THREADS, params=["out", "in", np.uint32(THREADS)],
                         buffers={"out": np.zeros(2 * THREADS, np.uint32), "in": np.concatenate([A, B, C, D])},
                         kernel_name=name)["out"]
        got = [(int(out[2 * i]), int(out[2 * i + 1])) for i in range(THREADS)]
        assert got == want, f"{arch} {name}"
