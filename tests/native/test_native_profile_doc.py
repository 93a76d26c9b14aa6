"""docs/native-host.md states how NATIVE_PROFILE's percentiles are taken and how many samples a
series keeps, as runtime_c/native_device.c does (probe s32 partnet finding 9: the cap and the
rule were not documented, so a 200,000-step run's percentiles silently described its first
131,072 steps)."""
from __future__ import annotations

import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def test_the_documented_sample_cap_and_percentile_rule_are_the_hosts():
    source = (REPOSITORY / "runtime_c/native_device.c").read_text()
    cap = 1 << int(re.search(r"#define PROFILE_SAMPLES \(1 << (\d+)\)", source).group(1))
    assert "#define AT(q) series->us[(uint32_t)((n - 1) * (q))]" in source     # floor((k - 1) q)
    doc = " ".join((REPOSITORY / "docs/native-host.md").read_text().split())
    assert f"the first {cap:,} (2^{cap.bit_length() - 1}) of each series" in doc
    assert "the sample at index floor((k - 1) q) of the k kept" in doc
