"""Probe s37 leftovers, finding 7: a bench's summary follows from the samples it records.

bench/build_bench.py, cold_build_bench.py and speed_ab.py recorded their samples rounded but
computed the medians, minima and maxima from the unrounded ones, so a recorded median could differ
from the median of the recorded samples (0.249 against the samples' 0.248: the failure
bench/refusal_bench.py had, fixed in 01fa117 by summarizing the samples as recorded); and
bench/partitioned_regression/bench.py recorded no samples at all, only their median and spread.
Here each summary is checked against the statistics of its own recorded samples, for many pairs
and triples of timings drawn at random (a fixed seed)."""
from __future__ import annotations

import importlib.util
import random
import statistics
import sys

from tests.conftest import REPO


def _module(path: str):
    spec = importlib.util.spec_from_file_location(path.replace("/", "_").removesuffix(".py"), REPO / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _draws(count=2000):
    chance = random.Random(37)
    for _ in range(count):
        yield [chance.uniform(0.0, 2.0) for _ in range(chance.choice((2, 3, 4)))]


def _follows(recorded: list[float], median: float, digits: int, low=None, high=None) -> bool:
    return (round(statistics.median(recorded), digits) == median
            and (low is None or low == min(recorded)) and (high is None or high == max(recorded)))


def test_build_bench_summary_follows_its_samples():
    bench = _module("bench/build_bench.py")
    for wall in _draws():
        got = bench.summary(wall, [w / 2 for w in wall])
        assert _follows(got["samples_s"], got["median_s"], 4, got["min_s"], got["max_s"]), (wall, got)
        assert _follows(got["cpu_samples_s"], got["cpu_median_s"], 4), (wall, got)


def test_speed_ab_summary_follows_its_samples():
    bench = _module("bench/speed_ab.py")
    for wall in _draws():
        got = bench.summary([(w, w / 3) for w in wall])
        assert _follows(got["wall_s"], got["wall_median_s"], 3), (wall, got)
        assert _follows(got["cpu_s"], got["cpu_median_s"], 3, got["cpu_min_s"]), (wall, got)


def test_cold_build_bench_summary_follows_its_samples():
    bench = _module("bench/cold_build_bench.py")
    for wall in _draws():
        got = bench.summary([(w, w / 3) for w in wall])
        assert _follows(got["wall_s"], got["wall_median_s"], 3), (wall, got)
        assert _follows(got["cpu_s"], got["cpu_median_s"], 3), (wall, got)


def test_partitioned_regression_bench_keeps_its_samples(monkeypatch):
    # bench.py imports the seed's package and the GPU tests' builder at its top: on the path as it puts them
    monkeypatch.setattr(sys, "path", list(sys.path))
    bench = _module("bench/partitioned_regression/bench.py")
    for values in _draws(200):
        got = bench.spread(values)
        assert got["samples"] == values
        assert (got["median"], got["min"], got["max"]) == (statistics.median(values), min(values), max(values))
