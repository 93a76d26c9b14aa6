"""`bobc run --reference` of a plan host refuses an interval checkpoint it cannot publish in the
host's words (runtime_c/host_runtime.c rt_checkpoint_write: `output PATH (--checkpoint-out): ...;
nothing was written`, exit 8), as it refuses the last publication (commands/run.py host_words):
it said bobc's `PATH: cannot write output (--checkpoint-out): ...` with a hint (probe s36
exitcodes finding 7).  Synthetic/AllSteps.bob publishes twice: the first is an interval's."""
from __future__ import annotations

import argparse

import numpy as np
import pytest

import synthetic_support


@pytest.fixture(scope="module")
def plan():
    return synthetic_support.load("AllSteps", "synAllStepsHost")[1]


def test_an_interval_checkpoint_refused_at_its_path_is_said_as_the_host_says_it(tmp_path, plan, monkeypatch):
    from bob_model.formats import InputRecord, encode_input_record

    from bobc.commands import run
    from bobc.reference import safe_io

    (tmp_path / "record.bin").write_bytes(
        encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [97, 98, 99])))
    checkpoint = tmp_path / "ck.bin"
    publish_file = safe_io.publish_file

    def a_folder_appears(path, data, option="output", mode=None):     # put there during the run
        checkpoint.mkdir()
        return publish_file(path, data, option, mode)

    monkeypatch.setattr(safe_io, "publish_file", a_folder_appears)
    kernels = {region.identity: (lambda memory, context: None) for region in plan.program.regions}
    args = argparse.Namespace(operation="train", input=str(tmp_path / "record.bin"), checkpoint=None,
                              checkpoint_out=str(checkpoint), predictions=str(tmp_path / "p.bin"),
                              result=str(tmp_path / "r.bin"))
    with pytest.raises(run.HostRefusal) as refused:
        run.run_plan_host(plan, kernels, args)
    assert refused.value.exit_code == 8
    assert refused.value.message == (f"output {safe_io.shown(str(checkpoint))} (--checkpoint-out): is a folder; only a "
                                     "regular file (or nothing) is replaced; nothing was written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck.bin", "record.bin"]
