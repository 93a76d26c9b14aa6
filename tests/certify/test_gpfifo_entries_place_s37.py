"""Probe s37 ringfuzz finding 4: a GPFIFO of fewer entries than submissions was refused at the
host's definition ("the values named here do not say where they were written") with nothing to
do; the count is the whole-program plan's field, and the refusal now says where the plan is
written and what to do."""
from __future__ import annotations

from tests.certify.test_ring_positions_s37 import check


def test_a_gpfifo_smaller_than_the_submissions_is_refused_where_the_plan_is_written(tmp_path):
    done = check(tmp_path, ("lrSubmissionSchedule lrSubmissionCount lrSubmissionCount))",
                            "lrSubmissionSchedule lrSubmissionCount 10))"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "the plan's GPFIFO has 10 entries for 43 submissions" in done.stderr, done.stderr
    assert "do not say where they were written" not in done.stderr, done.stderr
    assert "hint: give the GPFIFO at least one entry per submission" in done.stderr, done.stderr
