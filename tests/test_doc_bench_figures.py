"""Figures the docs quote from a committed benchmark result are that file's figures: each is the
result's median, rounded to the digits the doc shows (docs/language.md's "Cost" once quoted an
earlier eval.json: 0.14 s cold where the file says 0.25)."""
from __future__ import annotations

import json
import re

import pytest

from tests.conftest import REPO

RESULTS = REPO / "bench" / "results"


def eval_median(name):
    return json.loads((RESULTS / "eval.json").read_text())["results"][name]["median_s"]


def sim_median(stem):
    return json.loads((RESULTS / f"{stem}.json").read_text())["results"]["coppelius-sm_90"][
        "simulation_only_train"]["median"]


# (doc, the text around the figure with (NUMBER) where it stands, the file's value, its scale to the doc's unit)
CITED = [
    ("docs/language.md", r"\(parse \+ resolve\) (NUMBER) s cold", lambda: eval_median("load cold (parse + resolve)"), 1),
    ("docs/language.md", r"(NUMBER) s with parse trees cached",
     lambda: eval_median("load warm (resolve; parse trees cached)"), 1),
    ("docs/language.md", r"`bobLaunchCount` (NUMBER) ms", lambda: eval_median("evaluate bobLaunchCount"), 1e3),
    ("docs/language.md", r"certificate\) (NUMBER) ms", lambda: eval_median("evaluate bobDeviceHazard"), 1e3),
    ("docs/language.md", r"everything (NUMBER) ms", lambda: eval_median("type check (all modules)"), 1e3),
    ("docs/language.md", r"images (NUMBER) s \(sm_86\)",
     lambda: eval_median("whole Bob plan to images, sm_86 (NativeHost.bob)"), 1),
    ("docs/language.md", r"(NUMBER) s \(sm_90\)", lambda: eval_median("whole Bob plan to images, sm_90 (NativeHost.bob)"), 1),
    ("docs/language.md", r"`nat-eliminate` (NUMBER) s", lambda: eval_median("synthetic count"), 1),
    ("docs/language.md", r"65536-cell list (NUMBER) s", lambda: eval_median("synthetic sum"), 1),
    ("docs/kernel-contracts.md", r"every pair checked in (NUMBER) ms",
     lambda: json.loads((RESULTS / "footprint-conflicts.json").read_text())["seconds"]["median"], 1e3),
    ("docs/limits.md", r"it is now refused in (NUMBER) s",
     lambda: json.loads((RESULTS / "refusal.json").read_text())["wall_s"]["median"], 1),
    ("README.md", r"per invocation: (NUMBER) s, bench/refusal_bench.py",
     lambda: json.loads((RESULTS / "refusal.json").read_text())["wall_s"]["median"], 1),
    ("docs/simulator.md", r"\((NUMBER) s against", lambda: sim_median("sim-2026-12-04-2101"), 1),
    ("docs/simulator.md", r"s against (NUMBER) s, bench/results", lambda: sim_median("sim-2026-12-04-2057-before"), 1),
]


@pytest.mark.parametrize("doc, around, value, scale", CITED, ids=[f"{c[0]}:{c[1][:30]}" for c in CITED])
def test_a_quoted_benchmark_figure_is_the_result_files(doc, around, value, scale):
    text = re.sub(r"\s+", " ", (REPO / doc).read_text(encoding="utf-8"))
    found = re.search(around.replace("NUMBER", r"[0-9]+(?:\.[0-9]+)?"), text)
    assert found, f"{doc} no longer says {around!r}"
    shown = found.group(1)
    digits = len(shown.split(".")[1]) if "." in shown else 0
    assert float(shown) == round(value() * scale, digits), \
        f"{doc} quotes {shown}; the result file's median is {value() * scale:.4g}"


def test_the_gcc_payload_summary_is_its_tables_ratios():
    """bench/results/gcc-payload-s39.md's summary is its own table's ratios, before over today, each
    rounded to a whole number (probe s39 docs8 finding 4: it said "about a tenth of the memory ...
    at every size measured", where 1 MiB took 36 MiB against 183, a fifth)."""
    path = RESULTS / "gcc-payload-s39.md"
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\| (\d+) \| (string literals|decimal ints) \([a-z]+\) \| [0-9.]+ \| ([0-9.]+) \| (\d+) \|$",
                     line)
        if m:
            rows[(int(m.group(1)), m.group(2))] = (float(m.group(3)), int(m.group(4)))
    sizes = sorted({size for size, _ in rows})
    assert len(rows) == 2 * len(sizes) >= 4
    time = [rows[s, "decimal ints"][0] / rows[s, "string literals"][0] for s in sizes]
    memory = [rows[s, "decimal ints"][1] / rows[s, "string literals"][1] for s in sizes]
    text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
    said = re.search(r"costs gcc (\d+) to (\d+) times less memory and (\d+) to (\d+) times less time "
                     r"\(the (\d+) to (\d+) MiB measured", text)
    assert said, f"{path.name}: the summary sentence is not where this test reads it"
    assert [int(x) for x in said.groups()] == [round(min(memory)), round(max(memory)), round(min(time)),
                                               round(max(time)), sizes[0], sizes[-1]]
    assert "the ratios growing with the payload" in text
    assert time == sorted(time) and memory == sorted(memory)
