"""bobc.sass.oracle asks whether nvdisasm works (one NOP of the target listed as one instruction,
refuse_broken_tool) once per nvdisasm file and target in a process, not after every listing that
went wrong: a stream decoded in halves asked at each refused half, a third of the nvdisasm runs
of tests/sass/test_derived_forms.py (probe s38 testspeed finding 4).  Another file
(BOBC_NVDISASM changed) is asked again, and a broken one is still refused by its path."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.nvtools import nvdisasm
from bobc.sass import oracle
from bobc.sass.oracle import disassemble, nop_word

pytestmark = pytest.mark.skipif(nvdisasm() is None, reason="nvdisasm not installed")


def test_the_nop_is_asked_once_per_tool_and_target(tmp_path, monkeypatch):
    monkeypatch.setattr(oracle, "_WORKING", set(), raising=False)    # none asked yet
    ran: list[tuple[bytes, str]] = []
    real = oracle._run
    monkeypatch.setattr(oracle, "_run", lambda code, arch, *rest: ran.append((code, arch)) or real(code, arch, *rest))
    nop = nop_word("SM90")
    for code in (nop + b"\xff" * 16, nop * 3 + b"\xff" * 16, b"\xff" * 16 + nop):
        done = disassemble(code, "SM90")
        assert done.errors and [line.text for line in done.lines] == ["NOP"] * (len(code) // 16 - 1)
    assert ran.count((nop, "SM90")) == 1                                    # the check, once for the three
    disassemble(nop_word("SM86") + b"\xff" * 16, "SM86")
    assert ran.count((nop_word("SM86"), "SM86")) == 1                      # another target: asked for it

    broken = tmp_path / "nvdisasm"                                 # another file: asked, and refused
    broken.write_text("#!/bin/sh\necho 'nvdisasm: cannot load libnvdisasm' >&2\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setenv("BOBC_NVDISASM", str(broken))
    with pytest.raises(BobcError, match=f"nvdisasm at {broken} does not work: it fails on one NOP"):
        disassemble(nop + b"\xff" * 16, "SM90")
    with pytest.raises(BobcError, match="does not work"):         # a refusal is never kept
        disassemble(nop + b"\xff" * 16, "SM90")
