"""`bobc sim` with an nvdisasm that does not work (BOBC_NVDISASM naming a script that fails, one that
prints no listing, a missing file, a folder): a refusal of the tool, bobc's exit 1 naming it and
what to do -- never 7, the host's code for a GPU fault, which says the device code is wrong, and
never a traceback (README, "What a user is promised"; probe s36 exitcodes findings 1-3).  A working
nvdisasm's refusal of words it cannot decode is still the illegal-instruction fault, 7."""
from __future__ import annotations


import pytest

from bobc.cli import main
from bobc.nvtools import nvdisasm
from bobc.sim import sass_frontend
from bobc.sim.faults import SimulationFault

from .conftest import PLAN


def script(folder, name: str, body: str) -> str:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(sass_frontend, "_cache", {})


@pytest.mark.parametrize("body, said", [
    ("echo 'nvdisasm: cannot load libnvdisasm' >&2; exit 3", "fails on one NOP (exit status 3: nvdisasm: cannot load"),
    ("echo garbage", "lists 0 instructions for one NOP"),
])
def test_an_nvdisasm_that_does_not_work_is_a_refused_tool_not_a_gpu_fault(tmp_path, monkeypatch, fresh, body, said):
    tool = script(tmp_path, "nvdisasm", body)
    monkeypatch.setenv("BOBC_NVDISASM", tool)
    with pytest.raises(sass_frontend.ToolMissing) as refused:
        sass_frontend.decode(sass_frontend_nop() * 4, "SM90")
    assert refused.value.exit_code == 1 and not isinstance(refused.value, SimulationFault)
    assert f"nvdisasm at {tool} does not work: it {said}" in refused.value.message
    assert "BOBC_NVDISASM" in refused.value.hint


def sass_frontend_nop() -> bytes:
    from bobc.sass.oracle import nop_word
    return nop_word("SM90")


@pytest.mark.parametrize("where", ["missing", "folder", "not executable"])
def test_an_nvdisasm_that_cannot_be_started_is_refused_by_its_path(tmp_path, monkeypatch, fresh, where):
    tool = tmp_path / "nvdisasm"
    if where == "folder":
        tool.mkdir()
    elif where == "not executable":
        tool.write_text("#!/bin/sh\n")
    monkeypatch.setenv("BOBC_NVDISASM", str(tool))
    with pytest.raises(sass_frontend.ToolMissing) as refused:
        sass_frontend.decode(sass_frontend_nop(), "SM90")
    assert refused.value.exit_code == 1
    assert refused.value.message.startswith(f"cannot run nvdisasm at {tool}: ")


@pytest.mark.skipif(nvdisasm() is None, reason="nvdisasm not installed")
def test_words_a_working_nvdisasm_cannot_decode_are_still_a_gpu_fault(fresh):
    with pytest.raises(SimulationFault) as fault:
        sass_frontend.decode(b"\xff" * 32, "SM90")
    assert fault.value.exit_code == 7
    assert "refuses the code" in fault.value.message


def test_bobc_sim_with_a_failing_nvdisasm_exits_1_naming_it(tmp_path, case, capsys, monkeypatch, fresh):
    tool = script(tmp_path, "nvdisasm", "echo broken >&2; exit 3")
    monkeypatch.setenv("BOBC_NVDISASM", tool)
    (tmp_path / "record.bin").write_bytes(case[0])
    status = main(["sim", str(PLAN), "predict", "--input", str(tmp_path / "record.bin"),
                   "--checkpoint-out", str(tmp_path / "out.ckpt"), "--predictions", str(tmp_path / "out.pred"),
                   "--result", str(tmp_path / "out.result")])
    err = capsys.readouterr().err
    assert status == 1, err
    assert err.startswith(f"bobc sim: error: nvdisasm at {tool} does not work: it fails on one NOP "
                          f"(exit status 3: broken)"), err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("out.*"))
