"""bench/coppelius_host/bench.py reads a host's BOBC_HOST_ISSUES log (runtime_c/plan_host.c: one
line per Reissue: submission, host nanoseconds doorbell to semaphore, GPU release timestamp)
into the update's time through the pushbuffer."""
import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("coppelius_host_bench", REPO / "bench/coppelius_host/bench.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_the_update_is_the_submission_issued_most_and_its_times_are_medians(tmp_path):
    # a period of three updates (submission 12) then two gathers (20, 21), then two more updates
    log = tmp_path / "issues.log"
    log.write_text("12 500000 1000000\n12 700000 2000000\n12 600000 3500000\n20 90000 3600000\n"
                   "21 80000 3700000\n12 650000 4800000\n12 550000 5800000\n")
    got = bench.update_times(log)
    assert got["submission"] == 12 and got["updates"] == 5
    assert got["doorbell_to_semaphore_ms"] == pytest.approx(0.6)          # median of 0.5 .. 0.7
    # consecutive updates only (not across the gathers): 1.0, 1.5 and 1.0 ms apart
    assert got["step_period_ms"] == pytest.approx(1.0)


def test_a_log_of_one_update_has_no_period(tmp_path):
    log = tmp_path / "issues.log"
    log.write_text("7 400000 100\n")
    got = bench.update_times(log)
    assert got["updates"] == 1 and got["step_period_ms"] is None
