"""docs/writing-a-plan.md, section 5 (probe s39 newuser3, finding 2; s39 blockrace): raising LinReg's
grid x from 1 to 2 certifies, but its kernels index by SR_TID.X alone, so the two blocks store the
same bytes (linreg-loss-grad's G, linreg-sgd's W): a race on a GPU.  `bobc sim` refuses it at the
first such store, naming both blocks, the instruction and the resident (bobc.sim.races); the guide
quotes that message, and this holds it to what the tools do."""
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


def test_a_grid_of_two_blocks_racing_is_refused_by_sim(tmp_path):
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
    assert simulated.returncode == 7, simulated.stderr
    said = simulated.stderr
    assert "linreg-loss-grad.sass:" in said and "launch 0 (linreg-loss-grad): blocks race on 4 bytes at" in said, said
    assert "(in gradient, 0 bytes in): block (0, 0, 0) stores to them at 0x02e0" in said, said
    assert "block (1, 0, 0) stores to them at 0x02e0" in said and "hint:" in said, said
    guide = (REPO / "docs" / "writing-a-plan.md").read_text()
    assert "(in gradient, 0 bytes in): block (0, 0, 0) stores to them at 0x02e0 ...`, exit 7" in guide
    assert not (tmp_path / "c2").exists()
    one = bobc("sim", EXAMPLE / "LinReg" / "Build" / "NativeHost.bob", "train", "--input", "record.bin", *files("1"),
               cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert "no race between a launch's blocks" in one.stdout
