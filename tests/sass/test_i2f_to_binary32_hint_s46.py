"""A 32-bit integer converted to binary32 is written I2F.U32 / I2F.S32 by a new user (probe s46
newuser11: `I2F.U32 R13, R11` for a count), which the tables lack: ptxas writes cvt.rn.f32.u32 and
.s32 as I2FP.F32.U32 / .S32 on sm_86 and sm_90.  Before, the refusal listed I2F's .RM / .RP forms
nearest first (a different rounding) and never the form ptxas writes; now it names it.

The oracle is ptxas itself: the PTX below is compiled for each target and nvdisasm's listing gives
the mnemonic of each conversion, which the refusal must name and which must then assemble."""
from __future__ import annotations

import re
import subprocess

import pytest

from bobc.cli import main
from bobc.nvtools import nvdisasm, ptxas

PTX = """.version 8.0
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p, .param .u32 n, .param .u32 m)
{{
  .reg .u32 %r<4>; .reg .f32 %f<3>; .reg .u64 %rd<3>;
  ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [n]; ld.param.u32 %r2, [m];
  cvt.{rounding}.f32.u32 %f1, %r1;
  cvt.{rounding}.f32.s32 %f2, %r2;
  cvta.to.global.u64 %rd2, %rd1;
  st.global.f32 [%rd2], %f1;
  st.global.f32 [%rd2+4], %f2;
  ret;
}}
"""


def _ptxas_conversions(tmp_path, arch, rounding):
    (tmp_path / "k.ptx").write_text(PTX.format(arch=arch, rounding=rounding))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                   check=True)
    listing = subprocess.run([nvdisasm(), "-c", str(tmp_path / "k.cubin")], check=True, capture_output=True,
                             text=True).stdout
    return re.findall(r"\b(I2FP?\.[A-Z0-9.]+)\s", listing)


@pytest.mark.parametrize("rounding, written", [("rn", ("I2F.U32", "I2F.S32")), ("rz", ("I2F.U32.RZ", "I2F.S32.RZ"))])
@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_an_i2f_to_binary32_is_told_the_form_ptxas_writes_s46(tmp_path, capsys, arch, rounding, written):
    unsigned, signed = _ptxas_conversions(tmp_path, arch, rounding)
    for mnemonic, theirs in zip(written, (unsigned, signed)):
        source = tmp_path / "k.sass"
        source.write_text(f".kernel k\n    {mnemonic} R13, R11\n    EXIT\n")
        assert main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", arch]) == 1
        err = capsys.readouterr().err
        assert f"no {arch} encoding for '{mnemonic} R,R'" in err, err
        assert f"as {theirs} R,R: write {theirs};" in err, err
        source.write_text(f".kernel k\n    {theirs} R13, R11\n    EXIT\n")
        assert main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", arch]) == 0
        capsys.readouterr()
