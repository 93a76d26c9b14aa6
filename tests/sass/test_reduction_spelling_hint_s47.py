"""A global reduction is RED on sm_86 and REDG on sm_90 (nvdisasm's names of the same forms); the
refusal of one target's spelling on the other says the other's, whole (probe s47 newuser12).

A new user's matrix factorization scattered its gradient rows with `RED.E.ADD.F32.FTZ.RN.STRONG.GPU`,
which sm_86 assembles; `bobc asm --arch sm_90` refused it as "the sm_90 tables have no form of RED
... not learned for sm_90" and sent the user to add a PTX kernel to the corpus and relearn, though the
sm_90 tables hold that very form as REDG.  The oracle for each target's spelling is ptxas's own
listing of `red.global.add.f32` for that target (nvdisasm's print)."""
from __future__ import annotations

import re

import pytest

from bobc.cli import main

PTX = """.version 7.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p, .param .f32 v)
{{
    .reg .b64 %rd<3>;
    .reg .f32 %f<2>;
    ld.param.u64 %rd1, [p];
    ld.param.f32 %f1, [v];
    cvta.to.global.u64 %rd2, %rd1;
    red.global.add.f32 [%rd2], %f1;
    ret;
}}
"""


def _asm(tmp_path, capsys, line: str, arch: str) -> tuple[int, str]:
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n    ULDC.64 UR4, c[0x0][memory_descriptor]\n" + line + "\n    EXIT\n")
    code = main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", arch])
    return code, capsys.readouterr().err


def _ptxas_mnemonic(ptxas_listing, arch: str) -> str:
    listing = ptxas_listing(PTX.format(arch=arch), arch)
    found = re.findall(r"\b(REDG?\.E\.ADD\.F32[A-Z0-9_.]*)\s", listing)
    assert len(set(found)) == 1, listing
    return found[0]


@pytest.mark.parametrize("arch, other", [("sm_90", "sm_86"), ("sm_86", "sm_90")])
def test_the_other_targets_spelling_is_told_this_ones_s47(tmp_path, capsys, ptxas_listing, arch, other):
    mine, theirs = _ptxas_mnemonic(ptxas_listing, arch), _ptxas_mnemonic(ptxas_listing, other)
    assert mine.split(".")[0] != theirs.split(".")[0]           # RED on sm_86, REDG on sm_90
    code, err = _asm(tmp_path, capsys, f"    {theirs} [R2.64], R5", arch)
    assert code == 1
    assert f"hint: on {arch} write {mine};" in err, err
    assert "not learned" not in err and "python -m bobc.sass.learn" not in err, err
    # written as the hint says, it assembles
    code, err = _asm(tmp_path, capsys, f"    {mine} [R2.64], R5", arch)
    assert code == 0, err
