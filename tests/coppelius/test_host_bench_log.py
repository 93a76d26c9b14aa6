"""bench/coppelius_host/bench.py reads a host's NATIVE_SUBMIT_TIMES log (runtime_c/native_host.c,
docs/native-host.md: one line per Submit, `N 0xENTRY NS`) into the update's time through the
seed's own pushbuffer."""
import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("coppelius_host_bench", REPO / "bench/coppelius_host/bench.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_the_update_is_the_entry_issued_most_and_its_time_is_the_median(tmp_path):
    # loads (two entries once each), then five updates (entry 0x1000c0) with two gathers between
    log = tmp_path / "times.log"
    log.write_text("0 0x100000 90000\n1 0x100040 80000\n2 0x1000c0 500000\n3 0x1000c0 700000\n"
                   "4 0x1000c0 600000\n5 0x100100 70000\n6 0x100140 60000\n7 0x1000c0 650000\n8 0x1000c0 550000\n")
    got = bench.update_times(log)
    assert got["entry"] == "0x1000c0" and got["updates"] == 5
    assert got["doorbell_to_semaphore_ms"] == pytest.approx(0.6)          # median of 0.5 .. 0.7
    assert got["p10_ms"] == pytest.approx(0.5) and got["p90_ms"] == pytest.approx(0.7)


def test_a_host_variant_names_its_settings():
    assert bench.variant("pages-4k:NATIVE_GPU_VIDEO_PAGES=4k") == ("pages-4k", {"NATIVE_GPU_VIDEO_PAGES": "4k"})
    assert bench.variant("both:NATIVE_PROFILE=1,NATIVE_GPU_VIDEO_PAGES=auto") == (
        "both", {"NATIVE_PROFILE": "1", "NATIVE_GPU_VIDEO_PAGES": "auto"})


@pytest.mark.parametrize("text", ["pages-4k", ":A=1", "x:A", "x:=1", "x:A=1,B"])
def test_a_malformed_host_variant_is_refused(text):
    with pytest.raises(bench.argparse.ArgumentTypeError, match="NAME:VAR=VALUE"):
        bench.variant(text)


def test_outputs_are_compared_by_their_bytes(tmp_path):
    (tmp_path / "a").write_bytes(b"one")
    (tmp_path / "b").write_bytes(b"two")
    first = bench.digests(tmp_path, ("a", "b"))
    assert first == bench.digests(tmp_path, ("a", "b"))
    (tmp_path / "b").write_bytes(b"twp")
    assert bench.digests(tmp_path, ("a", "b")) != first


def _update_bench():
    spec = importlib.util.spec_from_file_location("coppelius_update_bench", REPO / "bench/coppelius/update_bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_update_bench_times_seed_004s_host_from_its_submit_log(tmp_path):
    """update_bench.py's host row: one `train` from a fresh checkpoint, the median of the update
    entry's doorbell-to-semaphore times.  A stand-in host writes the log a real one writes."""
    import json
    hosts = tmp_path / "hosts"
    hosts.mkdir()
    (hosts / "hosts.json").write_text(json.dumps({"coppelius-host": {"updates_per_invocation": 200}}))
    (hosts / "text.stream").write_bytes(b"")
    fake = hosts / "coppelius-host"
    fake.write_text("#!/bin/sh\n"
                    "[ \"$1\" = train ] || exit 9\n"
                    "printf '0 0x10 5000\\n1 0xc0 400000\\n2 0xc0 300000\\n3 0xc0 500000\\n' > \"$NATIVE_SUBMIT_TIMES\"\n")
    fake.chmod(0o755)
    row = _update_bench().time_host("small", hosts)
    assert row["median_ms"] == pytest.approx(0.4) and row["steps"] == 3


def test_the_update_bench_names_a_missing_large_host(tmp_path):
    import json
    (tmp_path / "hosts.json").write_text(json.dumps({"coppelius-host": {"updates_per_invocation": 200}}))
    with pytest.raises(FileNotFoundError, match="no coppelius-host-large .*--large"):
        _update_bench().time_host("large", tmp_path)
