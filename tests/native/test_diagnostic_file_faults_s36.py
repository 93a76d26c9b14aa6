"""Probe s36 faultinject finding 3: a diagnostic file (NATIVE_TRACE) that cannot be written whole
-- a full disk (/dev/full), the file size limit -- was silence and exit 0 from the C host (its
fclose unchecked, the trace truncated) and a traceback from the reference interpreter after the
outputs were published.  Both now say one line naming the file, keep the run's status (the file
is a diagnostic; the outputs are published as they were: runtime_c/diag_file.h rt_diag_close),
and say it alike."""
from __future__ import annotations

import os

import pytest

from native_helpers import PLANS, load_module, program_bytes, request_stream, run_sides, write_host

ARGS = ["--input", "s.bin", "--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]
STREAM = request_stream([(i * 37 + 11) % 256 for i in range(60)])
LINE = (b"native: NATIVE_TRACE /dev/full: write failed: No space left on device; the file is incomplete "
        b"(the run's outputs are not affected)\n")

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


@pytest.fixture(scope="module")
def request_code():
    return program_bytes(load_module(PLANS / "Native" / "Request.bob"), "requestProgram")


@pytest.fixture(scope="module")
def request_host(request_code, tmp_path_factory):
    return write_host(tmp_path_factory.mktemp("request-host"), "request-host", request_code)


def test_a_trace_on_a_full_disk_is_said_and_the_run_still_publishes(request_code, request_host, tmp_path):
    traced, plain = (run_sides(tmp_path, request_code, request_host, {"s.bin": STREAM}, ["train", *ARGS],
                               env=env, name=name)
                     for env, name in (({"NATIVE_TRACE": "/dev/full"}, "full"), (None, "plain")))
    for outcome in traced:
        assert (outcome.status, outcome.stderr) == (0, LINE)
    assert traced[0].files == traced[1].files == plain[0].files       # the outputs as without a trace

