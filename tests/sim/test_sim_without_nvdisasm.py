"""`bobc sim` on a machine without nvdisasm (a plain `pip install` of bobc: nvdisasm comes from
the optional nvidia-cuda-nvdisasm wheel): one message saying what is missing and how to install
it, and bobc's exit code for a refusal, 1 -- not 7, the host's code for a GPU fault (probe s30
packaging finding 7)."""
from __future__ import annotations

import pytest

from bobc.cli import main
from bobc.sim import sass_frontend
from bobc.sim.faults import SimulationFault

from .conftest import PLAN


@pytest.fixture
def no_nvdisasm(monkeypatch):
    monkeypatch.setattr(sass_frontend, "nvdisasm", lambda: None)
    monkeypatch.setattr(sass_frontend, "_cache", {})       # text read earlier in this process


def test_the_simulator_refuses_without_nvdisasm_as_a_missing_tool(no_nvdisasm):
    with pytest.raises(sass_frontend.ToolMissing) as refused:
        sass_frontend.decode(bytes(16), "SM90")
    assert refused.value.exit_code == 1 and not isinstance(refused.value, SimulationFault)
    assert "pip install nvidia-cuda-nvdisasm" in refused.value.hint


def test_bobc_sim_without_nvdisasm_exits_1_with_one_message(tmp_path, case, capsys, no_nvdisasm):
    (tmp_path / "record.bin").write_bytes(case[0])
    status = main(["sim", str(PLAN), "predict", "--target", "sm_86", "--input", str(tmp_path / "record.bin"),
                   "--checkpoint-out", str(tmp_path / "out.ckpt"), "--predictions", str(tmp_path / "out.pred"),
                   "--result", str(tmp_path / "out.result")])
    err = capsys.readouterr().err
    assert status == 1, err
    assert err == ("bobc sim: error: nvdisasm is not installed; the simulator decodes instructions only through it\n"
                   "hint: pip install nvidia-cuda-nvdisasm (or set BOBC_NVDISASM)\n")
    assert not list(tmp_path.glob("out.*"))
