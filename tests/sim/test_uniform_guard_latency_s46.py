"""A uniform predicate guards an instruction 11 cycles after the uniform compare that writes it, on sm_90 as
on sm_86 (probe s46 leftovers8, finding 6: "the checker uses 11 where ptxas leaves 12").

The checker's 11 is NVIDIA's Ampere table (Mesa NAK's UPredLatencySM80, Udp writer -> UGuard reader).  The
12 came from tests/sass/data's only samples at the minimum, user_forms.ptx param_compares's `@UP1 UIADD3`
12 cycles after its UISETP: a run of uniform instructions each S02 (the uniform datapath's cadence),
where 11 cannot occur.  ptxas 13 itself guards at 11 on sm_90: a parameter compare selecting a uniform
address (below) is `UISETP ... S01`, `ULDC.64 ... S02`, `ULDC.64 ... S08`, `@!UP0 ULDC` -- the oracle is
ptxas's own listing, read here.  The checker accepts that sequence and refuses it a cycle shorter; bobc's
scheduler guards no sooner than 13 (schedule.PREDICATE_LATENCY), above both."""
from __future__ import annotations

import re
import subprocess

import pytest

from bobc.nvtools import nvdisasm, ptxas
from bobc.sass import assemble
from bobc.sass import schedule
from bobc.sim.faults import Hazard
from bobc.sim.hazards import Checker
from bobc.sim.sass_frontend import decode

PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry pick(.param .u64 out, .param .u32 a, .param .u32 b, .param .u64 x, .param .u64 y, .param .u32 v)
{
    .reg .b32 %r<16>; .reg .pred %p<4>; .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r4, [a]; ld.param.u32 %r5, [b];
    ld.param.u64 %rd10, [x]; ld.param.u64 %rd11, [y]; ld.param.u32 %r12, [v];
    setp.lt.u32 %p1, %r4, %r5;
    selp.u64 %rd12, %rd10, %rd11, %p1;
    shl.b64 %rd13, %rd12, 2;
    add.u64 %rd14, %rd1, %rd13;
    cvta.to.global.u64 %rd2, %rd14;
    mov.u32 %r13, %tid.x;
    mul.wide.u32 %rd7, %r13, 4; add.s64 %rd8, %rd2, %rd7;
    st.global.u32 [%rd8], %r12;
    ret;
}
"""


def _guard_distances(listing: str) -> list[int]:
    """Cycles (the stalls issued between) from each uniform instruction writing UPn to the next one
    guarded by it, in straight-line code of `nvdisasm -hex`'s listing."""
    rows = re.findall(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;\s*/\* 0x[0-9a-f]{16} \*/\s*\n\s*/\* (0x[0-9a-f]{16}) \*/", listing)
    out = []
    for i, (text, _) in enumerate(rows):
        written = re.match(r"U\w+(?:\.\w+)* (UP\d)\b", text)
        if not written or text.startswith("VOTEU"):
            continue
        cycles = 0
        for later, control in rows[i:]:
            if later is not text and re.match(rf"@!?{written.group(1)} ", later):
                out.append(cycles)
                break
            cycles += max(1, int(control, 16) >> 41 & 0xF)
    return out


def test_ptxas_guards_a_uniform_predicate_11_cycles_after_its_compare_on_sm90_s46(tmp_path):
    if ptxas() is None or nvdisasm() is None:
        pytest.skip("ptxas / nvdisasm not installed")
    (tmp_path / "k.ptx").write_text(PTX)
    subprocess.run([ptxas(), "-arch=sm_90", "-O3", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.ptx")],
                   check=True, capture_output=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(tmp_path / "k.cubin")], check=True, capture_output=True,
                             text=True).stdout
    assert "UISETP" in listing and re.search(r"@!?UP0 ULDC", listing), listing
    assert min(_guard_distances(listing)) == 11


def _run(target: str, last_stall: int) -> None:
    text = f"""[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x228]
[B------:R-:W-:-:S01] UISETP.GE.U32.AND UP0, UPT, UR4, UR5, UPT
[B------:R-:W-:-:S02] ULDC.64 UR6, c[0x0][0x220]
[B------:R-:W-:-:S{last_stall:02d}] ULDC.64 UR4, c[0x0][0x210]
[B------:R-:W-:-:S01] @!UP0 ULDC UR6, c[0x0][0x228]
[B------:R-:W-:-:S05] EXIT
"""
    arch = target.replace("sm_", "SM")
    checker = Checker("kernel", arch)
    for ins in decode(assemble(text, target).code, arch):
        checker.issue(ins)


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_the_checker_takes_ptxas_guard_at_11_and_refuses_10_s46(target):
    _run(target, 8)                                   # ptxas's: 1 + 2 + 8 = 11 cycles
    with pytest.raises(Hazard) as caught:
        _run(target, 7)                               # 10
    assert "UP0" in caught.value.reason, caught.value.reason
    assert schedule.PREDICATE_LATENCY >= 11           # bobc's own code guards later still
