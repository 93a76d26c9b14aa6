"""bench/gpu/cuda_launch_decode.py reads back what the probe found in libcuda's memory on the
H200 (bench/results/cuda-launch-probe-h200.json) with bobc's own pushbuffer and QMD tables; the
claims bench/results/cuda-launch-probe-h200.md makes of it hold for the committed data."""
from __future__ import annotations

import json
import re
import subprocess
import sys

from tests.conftest import REPO

PROBE = REPO / "bench" / "results" / "cuda-launch-probe-h200.json"


def decoded() -> str:
    done = subprocess.run([sys.executable, "bench/gpu/cuda_launch_decode.py", str(PROBE)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def qmd_sections(text: str) -> dict[int, dict[str, int]]:
    out = {}
    for block in text.split("\n== QMD at ")[1:]:
        head, *lines = block.strip().splitlines()
        out[int(head, 16)] = {name: int(value, 16) for name, value in
                              (line.strip().split(" = ") for line in lines if " = " in line)}
    return out


def test_the_graph_is_a_chain_of_dependent_qmds_each_scheduling_the_next():
    qmds = qmd_sections(decoded())
    # the six graph nodes (grids 101..106) lie 0x200 apart, each naming the next
    nodes = sorted((fields["GRID_WIDTH"], address) for address, fields in qmds.items()
                   if 101 <= fields.get("GRID_WIDTH", 0) <= 106)
    assert [width for width, _ in nodes] == list(range(101, 107))
    for (_, address), (_, following) in zip(nodes, nodes[1:]):
        fields = qmds[address]
        assert fields["DEPENDENT_QMD_ENABLE(0)"] == 1 and fields["DEPENDENT_QMD_ACTION(0)"] == 1   # SCHEDULE
        assert fields["DEPENDENT_QMD0_POINTER"] << 8 == following
        assert fields["REQUIRE_SCHEDULING_PCAS"] == 1 and fields["SELF_COPY_ON_COMPLETION"] == 1
        assert fields["CWD_MEMBAR_TYPE"] == 3


def test_every_send_of_the_probe_asks_for_invalidate_prefetch_copy_schedule():
    text = decoded()
    sends = re.findall(r"SEND_PCAS_A x1: ([0-9a-f]{8})\n.*SEND_SIGNALING_PCAS2_B x1: ([0-9a-f]{8})", text)
    assert len(sends) >= 12
    assert {int(action, 16) for _, action in sends} == {10}
    assert json.loads(PROBE.read_text())["device"] == "NVIDIA H200"
