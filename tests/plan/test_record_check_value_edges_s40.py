"""Edges of an input record check's value (probe s40 mutants4), by hand from what the host's table
holds (runtime_c/host_runtime.h rt_record_check: 64-bit fields): a `below` check over 0 words checks
nothing, so its bound of 0 refuses no record and is kept; a bound of exactly 2^64 is the first the
64-bit field cannot hold (it would keep 0).  The s39 tests used count 1 and 2^64 + 5 only."""
from __future__ import annotations

from tests.plan.test_record_check_value_s39 import check_with


def test_a_below_check_of_no_words_bounded_by_zero_is_kept(tmp_path, monkeypatch, capsys):
    code, err, _ = check_with(tmp_path, monkeypatch, capsys, 'NvidiaPlanHostCheckBelow b"version" 8 8 8 0 0')
    assert code == 0, err


def test_a_below_bound_of_two_to_the_64_is_refused(tmp_path, monkeypatch, capsys):
    bound = 1 << 64
    code, err, start = check_with(tmp_path, monkeypatch, capsys, f'NvidiaPlanHostCheckBelow b"version" 8 8 8 1 {bound}')
    assert code == 1
    assert err.startswith(start + f"bounds 8-byte words by {bound}, which the host's 64-bit bound cannot hold "
                                  "(it would keep 0)"), err
