"""A record check's run whose words overlap -- a stride below the word width, 0 included, over two
words or more -- was certified (probe s40 newuser4 finding 7).  A run is `count` words of the
record, one every `stride` bytes (specs/Platform/Linux/Nvidia/PlanHostRequest.bob: "word i of the
run"); words that share bytes are no record layout: an `index` run so placed refuses every record
at run time (worked by hand: word 0 must be 0, so every byte of it is 0, and word 1 starts inside
it, so its low byte is 0 where it must be 1), a `below` run over stride 0 checks word 0 `count`
times and never the words the plan names.  Refused at the check, naming it, its words and the
stride to give (docs/writing-a-plan.md, "The input record").  Stride = width (Bob's runs), and
count 1 or 0 whatever the stride, are kept."""
from __future__ import annotations

import pytest

from tests.plan.test_record_check_value_s39 import check_with


@pytest.mark.parametrize("written, words", [
    ('NvidiaPlanHostCheckBelow b"version" 8 4 0 2 100', "2 4-byte words one every 0 bytes, so they overlap "
                                                         "(each is the same word)"),
    ('NvidiaPlanHostCheckBelow b"version" 8 4 2 3 100', "3 4-byte words one every 2 bytes, so they overlap"),
    ('NvidiaPlanHostCheckIndex b"version" 8 2 1 2', "2 2-byte words one every 1 byte, so they overlap"),
    ('NvidiaPlanHostCheckSame b"version" 8 4 0 2 0 4 4', "2 4-byte words one every 0 bytes, so they overlap "
                                                          "(each is the same word)"),
])
def test_a_run_of_overlapping_words_is_refused_at_the_check(tmp_path, monkeypatch, capsys, written, words):
    code, err, start = check_with(tmp_path, monkeypatch, capsys, written)
    width = written.split()[3]
    assert code == 1
    assert err.startswith(start + f"reads {words}: give a stride of at least {width}, the width, or a count of 1 "
                                  "for one word"), err


@pytest.mark.parametrize("written", [
    'NvidiaPlanHostCheckBelow b"version" 8 4 4 2 100',      # stride = width: adjacent words
    'NvidiaPlanHostCheckBelow b"version" 8 4 0 1 100',      # one word: no stride is used
    'NvidiaPlanHostCheckIndex b"version" 8 1 0 0',          # no word
])
def test_runs_whose_words_do_not_overlap_are_kept(tmp_path, monkeypatch, capsys, written):
    code, err, _ = check_with(tmp_path, monkeypatch, capsys, written)
    assert code == 0, err
