"""bench/gpu/build_floor_host.py -- the empty-kernel floor host that bench/gpu/run_device.sh builds and
bench/results/bob-h200.md times -- still builds: every one of Bob's regions holds the empty kernel
(EXIT, then a self-branch), and the host's program image holds that code once per region."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.parametrize("target", ["sm_90", "sm_86"])
def test_the_floor_host_builds_with_every_region_the_empty_kernel(target, tmp_path):
    from bobc.host import sections
    from bobc.sass import assemble
    from bobc.targets import target_named

    host = tmp_path / "bob-floor-host"
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off"}
    done = subprocess.run([sys.executable, "bench/gpu/build_floor_host.py", "--target", target, "-o", str(host)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "4 regions, each the empty kernel" in done.stdout, done.stdout
    empty = bytes(assemble("    EXIT\ndone:\n    BRA done\n", target_named(target), "<empty kernel>").code)
    program = sections.read(host)["program"]
    assert program.count(empty) == 4
