"""docs/partitioned-regression.md, "Building and running", step by step as written (probe s36
newuser2 finding 6): the doc ran `./worker0 ... record0.bin` and `./predict ...` but never said how
to write the records or build the prediction host.  Its blocks between the markers are run in a
fresh folder beside the checkout's examples/ (bobc and python on PATH, as after `make setup` and
activating .venv): Pair.bob written, the three hosts built, the records written, then the pair
trained and the prediction made by bobc's reference interpreter.  The prediction is checked
against the NumPy reference trained on the same data (partitioned_regression.reference), not
against anything the doc or bobc computed."""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "partitioned-regression.md"
sys.path.insert(0, str(REPO / "examples" / "partitioned_regression"))
from partitioned_regression import reference as R  # noqa: E402


def block(text: str, marker: str) -> str:
    found = re.search(rf"<!-- {marker}: begin -->\n(.*?)<!-- {marker}: end -->", text, re.S)
    assert found, f"{DOC.name} has no '{marker}' block"
    lines = found.group(1).splitlines()
    assert all(line.startswith("    ") or not line for line in lines), lines
    return "\n".join(line[4:] for line in lines) + "\n"


def test_the_pair_step_by_step_runs_as_written(tmp_path):
    text = DOC.read_text(encoding="utf-8")
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "bobc").write_text(f"#!/bin/sh\nexec {sys.executable} -m bobc \"$@\"\n")
    (bin_folder / "python").symlink_to(sys.executable)
    (bin_folder / "bobc").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(REPO / "examples", target_is_directory=True)
    env = {**os.environ, "PATH": f"{bin_folder}:/usr/bin:/bin", "PYTHONPATH": str(REPO / "compiler")}
    script = "set -euo pipefail\n" + block(text, "pair step by step") + block(text, "pair reference run")
    done = subprocess.run(["bash", "-c", script], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for host in ("worker0", "worker1", "predict"):
        assert os.access(work / host, os.X_OK), host
    # the NumPy reference: the same data and coordinates, 64 steps, then the prediction at (1, 2)
    steps = int(re.search(r"coordinateH200Worker b\"[^\"]*\" 0 0 47611 0 1 (\d+)\)", text).group(1))
    data = R.generate()
    start = R.Coordinate(weight=0.0, accumulator=0.0, decay=0.5, rate=0.05)
    trained = R.train(data, [start, R.Coordinate(**vars(start))], steps)
    for k in (0, 1):
        assert (work / f"record{k}.bin").stat().st_size == 32 + 16 * 4096
    (prediction,) = struct.unpack("<d", (work / "prediction.bin").read_bytes())
    assert prediction == R.predict((trained[0].weight, trained[1].weight)), prediction
