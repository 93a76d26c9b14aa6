"""Probe s37 leftovers, finding 1, with real processes: the C request host (NATIVE_DEVICE=memory)
and its reference twin (`bobc run Request.bob native ... --reference`).

The request's final publication writes its three temporaries (.ck.tmp-, .p.tmp-, .r.tmp-) in the
outputs' folder X (its first period's checkpoint X/ck is published already),
then pauses before the folder lock (BOBC_IO_TEST_LOCK_PAUSE_MS, a test-only hook); meanwhile X is
renamed to Y.  The publication then fails (X/ is gone: nothing else was published, exit 8).  Before, the
temporaries were removed by their old paths (X/.p.tmp-...), which no longer name them: all three
stayed in Y.  Now they are removed relative to the folder they were written in, wherever it went.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from native_helpers import request_command, request_environment, request_host, request_stream, wait_for

TIMEOUT_S = 120


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    return request_host(tmp_path_factory)


@pytest.mark.parametrize("side", ["c", "reference"])
def test_a_moved_output_folder_keeps_no_temporaries(host, tmp_path, side):
    (tmp_path / "X").mkdir()
    (tmp_path / "s.bin").write_bytes(request_stream([(i * 37 + 11) % 256 for i in range(60)]))
    x, y = tmp_path / "X", tmp_path / "Y"
    run = subprocess.Popen(request_command(side, host, "train", "--input", "s.bin", "--checkpoint-out", "X/ck",
                                           "--predictions", "X/p", "--result", "X/r"),
                           cwd=tmp_path, env=request_environment(BOBC_IO_TEST_LOCK_PAUSE_MS="3000"),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(lambda: sum(".tmp-" in n for n in os.listdir(x)) == 3, run, "the run's three temporaries")
    assert run.poll() is None, "the run ended before the folder was moved: the case did not arise"
    os.rename(x, y)
    status = run.wait(timeout=TIMEOUT_S)
    stderr = run.stderr.read()
    run.stderr.close()
    assert status == 8, stderr
    # nothing of the final publication was published, but the first period's checkpoint was, and
    # the line says which (probe s47 faultinject finding 6: it said "nothing was published" alone)
    assert stderr.endswith(b"; publication 1 of 2 (step 3) stays at X/ck; nothing else was published\n"), stderr
    # the first period's checkpoint, published before the move (as asked), and nothing else: no
    # temporary, no journal
    assert sorted(os.listdir(y)) == ["ck"], stderr
    assert not x.exists()
