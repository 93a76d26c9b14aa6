"""The certifier's kept verdict of what a kernel's code reads is keyed by what it was computed
from -- the source's bytes and the code read -- not by the source's bytes alone (probe s36
simwords finding 6).

assembled_reads reads the parameter words from `built`, the build's own assembly.  A source edited
after the build assembled it and before certification read it (an editor saving during a build)
gave the old code's reads under the new bytes' key; every later build of the new bytes, cold in
every other respect, was then certified with the old code's reads: here a kernel reading the
parameter word 4 its contract does not declare passed.  The oracle is the same verdict with the
cache off (BOBC_CACHE_DIR=off), and the kernel's own text (`param+0x20` is word 4).
"""
from __future__ import annotations

from pathlib import Path

from bobc.certify.kernels import assembled_reads, check_code_reads, parse_contract
from bobc.kernel_cache import assemble_kernel
from bobc.targets import target_named

REPO = Path(__file__).resolve().parents[2]
PREDICT = REPO / "examples/linear_regression/LinReg/kernels/linreg-predict.sass"


def _verdict(source, target, built):
    reads, problems = assembled_reads(source, target, built)
    return [f.message for f in check_code_reads(parse_contract(source, "linreg-predict"), reads)], problems


def test_a_kernel_edited_during_a_build_is_certified_by_its_own_code_later(tmp_path, cache_dir, monkeypatch):
    target = target_named("sm_90")
    source = tmp_path / "linreg-predict.sass"
    written = PREDICT.read_text()
    assert "c[0x0][RZ+param+0x18]" in written
    source.write_text(written)
    before = assemble_kernel(source, target)            # the build assembles the kernel as it was ...
    # ... then it is edited to read parameter word 4 (bytes 0x20..0x27), which its contract does not declare
    source.write_text(written.replace("c[0x0][RZ+param+0x18]", "c[0x0][RZ+param+0x20]"))
    assembled_reads(source, target, before)             # ... and certified with that build's code
    after = assemble_kernel(source, target)             # a later build of the edited kernel
    findings, problems = _verdict(source, target, after)
    assert problems == ()
    assert any("reads parameter word 4 " in message and "does not declare it" in message
               for message in findings), findings
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    assert _verdict(source, target, after) == (findings, problems)
