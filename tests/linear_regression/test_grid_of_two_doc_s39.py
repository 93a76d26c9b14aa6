"""docs/writing-a-plan.md, section 5 (probe s39 newuser3, finding 2): raising LinReg's grid x from 1
to 2 certifies, and `bobc sim` writes the files the grid of 1 writes -- no tool sees that the two
blocks of linreg-sgd both read and write W (its code indexes by SR_TID.X alone), a race on a GPU.
The guide says so, since its readers learn there to change a launch grid; this holds it to what the
tools do (when the simulator learns to see such a race, this fails and the guide is to be updated)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "linear_regression"
GRID_OF_ONE = "(lrWord64 (naturalAdd lrProgramBase place)) 1 1 1 1 1 lrParameterBytes"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))

import make_record  # noqa: E402


def bobc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def test_a_grid_of_two_blocks_racing_on_w_passes_every_tool(tmp_path):
    copy = tmp_path / "linreg"
    shutil.copytree(EXAMPLE / "LinReg", copy / "LinReg")
    shutil.copy(EXAMPLE / "reference_kernels.py", copy)
    host = copy / "LinReg" / "Build" / "NativeHost.bob"
    text = host.read_text()
    assert text.count(GRID_OF_ONE) == 1          # lrKernel: every launch's grid
    host.write_text(text.replace(GRID_OF_ONE, GRID_OF_ONE.replace(" 1 1 1 1 1 ", " 2 1 1 1 1 ")))
    assert "SR_CTAID" not in (EXAMPLE / "LinReg" / "kernels" / "linreg-sgd.sass").read_text()
    (tmp_path / "record.bin").write_bytes(make_record.record_bytes(*make_record.make(3)))

    checked = bobc("check", host, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    files = lambda tag: ["--checkpoint-out", f"c{tag}", "--predictions", f"p{tag}", "--result", f"r{tag}"]  # noqa: E731
    simulated = bobc("sim", host, "train", "--input", "record.bin", *files("2"), cwd=tmp_path)
    assert simulated.returncode == 0, simulated.stderr
    assert "no control-code hazard, no unordered launches, no out-of-bounds access" in simulated.stdout
    one = bobc("sim", EXAMPLE / "LinReg" / "Build" / "NativeHost.bob", "train", "--input", "record.bin", *files("1"),
               cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    for name in "cpr":
        assert (tmp_path / f"{name}2").read_bytes() == (tmp_path / f"{name}1").read_bytes(), name
