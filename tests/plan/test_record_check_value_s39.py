"""An input record check's value is held to its word width (s39 leftovers4 finding 1): a `word`
check of a 1-byte word compared to 256 was certified, and every input record was then refused at
run time (no 1-byte word is 256); a `below` bound of 0 likewise (no word is below 0), and a bound
of 2^64 or more was written into the host's 64-bit table as its low bits (a different bound than
the reference applied).  Each is refused at the check's place, naming the check, its width and
its value."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/linear_regression/LinReg"
CHECK = 'NvidiaPlanHostCheckWord b"version" 8 8 linRegInputVersion'


def check_with(tmp_path, monkeypatch, capsys, written: str):
    shutil.copytree(EXAMPLE, tmp_path / "LinReg")
    host = tmp_path / "LinReg/Build/NativeHost.bob"
    text = host.read_text()
    assert text.count(CHECK) == 1
    host.write_text(text.replace(CHECK, written))
    line = text[:text.index(CHECK)].count("\n") + 1
    column = len(text[:text.index(CHECK)].rsplit("\n", 1)[-1]) - len("(constructor NvidiaPlanHostRecordCheck ") + 1
    monkeypatch.chdir(tmp_path)
    code = main(["check", "LinReg/Build/NativeHost.bob"])
    return code, capsys.readouterr().err, f"bobc check: LinReg/Build/NativeHost.bob:{line}:{column}: error: " \
                                          f"linRegNativeHost: input check version "


@pytest.mark.parametrize("width, value", [(1, 256), (2, 65536), (4, 1 << 32), (8, 1 << 64)])
def test_a_word_check_whose_value_no_word_of_its_width_holds_is_refused(tmp_path, monkeypatch, capsys, width, value):
    code, err, start = check_with(tmp_path, monkeypatch, capsys, f'NvidiaPlanHostCheckWord b"version" 8 {width} {value}')
    assert code == 1
    assert err.startswith(start + f"compares a {width}-byte word to {value}, which no {width}-byte word holds "
                                  f"(at most {value - 1})"), err


def test_a_word_check_of_the_largest_value_its_width_holds_is_kept(tmp_path, monkeypatch, capsys):
    code, err, _ = check_with(tmp_path, monkeypatch, capsys, 'NvidiaPlanHostCheckWord b"version" 8 1 255')
    assert code == 0, err


def test_a_below_check_bounded_by_zero_is_refused(tmp_path, monkeypatch, capsys):
    code, err, start = check_with(tmp_path, monkeypatch, capsys, 'NvidiaPlanHostCheckBelow b"version" 8 8 8 1 0')
    assert code == 1
    assert err.startswith(start + "requires 8-byte words below 0, which no word is"), err


def test_a_below_bound_past_64_bits_is_refused(tmp_path, monkeypatch, capsys):
    bound = (1 << 64) + 5
    code, err, start = check_with(tmp_path, monkeypatch, capsys,
                                  f'NvidiaPlanHostCheckBelow b"version" 8 8 8 1 {bound}')
    assert code == 1
    assert err.startswith(start + f"bounds 8-byte words by {bound}, which the host's 64-bit bound cannot hold "
                                  "(it would keep 5)"), err


def test_a_below_check_of_the_widest_bound_is_kept(tmp_path, monkeypatch, capsys):
    code, err, _ = check_with(tmp_path, monkeypatch, capsys, 'NvidiaPlanHostCheckBelow b"version" 8 1 1 1 256')
    assert code == 0, err
