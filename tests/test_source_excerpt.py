"""An error's source excerpt is a bounded window of its line (probe s28 docs, finding 6): one
over-limit literal printed 156 KB of error (the 78,001 digits and as many carets), a 201-deep
nesting put its caret 1,215 columns to the right.  Now at most errors.EXCERPT_WIDTH characters of
the line are shown around the column, the caret under the same character, `...` where the line
is cut and the cut said after the carets; `bobc asm` refuses a source past its documented limit
(docs/limits.md) by name, exit 2, unread."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bobc.errors import EXCERPT_WIDTH, BobcError, Span, excerpt


def bobc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def caret_column(rendered: str) -> tuple[str, int]:
    """The shown line (less its two-space indent) and the 0-based index of the first caret in it."""
    shown, carets = rendered.split("\n")[:2]
    return shown[2:], carets.index("^") - 2


def test_a_short_line_is_shown_whole_with_the_caret_under_its_column():
    assert excerpt("def a : Nat = foo", 15, 3) == "  def a : Nat = foo\n                ^^^"


@pytest.mark.parametrize("column", [1, 2, 50, 51, 52, 5_000, 77_950, 77_999, 78_000])
def test_a_long_line_is_a_window_around_the_column(column):
    import random

    text = "".join(random.Random(0).choices("abcdefghijklmnopqrstuvwxyz", k=78_000))    # each window once
    rendered = excerpt(text, column, 1, 2)
    shown, at = caret_column(rendered)
    assert shown[at] == text[column - 1]                   # the caret under the right character
    body = shown.removeprefix("...").removesuffix("...")
    assert len(body) == EXCERPT_WIDTH and body in text
    assert shown.startswith("...") == (column > EXCERPT_WIDTH // 2 + 1)
    assert shown.endswith("...") == (column <= 78_000 - EXCERPT_WIDTH // 2)
    first = text.index(body) + 1
    assert rendered.endswith(f"  (line 2 cut to columns {first}-{first + EXCERPT_WIDTH - 1} of 78,000)")
    assert len(rendered) < 3 * EXCERPT_WIDTH


def test_a_long_span_has_carets_to_the_window_only_and_tabs_keep_the_caret_in_place():
    rendered = excerpt("x" * 10 + "9" * 5_000, 11, 5_000, 1)
    assert rendered.split("\n")[1].count("^") == EXCERPT_WIDTH - 10
    rendered = excerpt("\tdef\ta = \x00foo", 10, 1)
    assert rendered == "  \tdef\ta = ?foo\n  \t   \t    ^"          # a NUL is '?', one for one


def test_a_column_past_the_end_of_the_line_keeps_its_place():
    assert excerpt("abc", 4) == "  abc\n     ^"


def test_a_fifo_named_by_a_span_is_never_opened(tmp_path):
    fifo = tmp_path / "fifo.bob"
    os.mkfifo(fifo)
    assert Span(str(fifo), 1, 1).source_excerpt() == ""          # a blocking open would hang here
    assert BobcError("x", Span(str(fifo), 1, 1)).render() == f"{fifo}:1:1: error: x"


def test_bobc_check_of_an_over_limit_literal_is_a_few_lines(tmp_path):
    (tmp_path / "L").mkdir()
    module = tmp_path / "L/N3.bob"
    module.write_text("module L.N3\ndef a : Nat = " + "9" * 78_001 + "\n")
    done = bobc("check", module)
    assert done.returncode == 1, done.stderr
    assert f"{module}:2:15: error: a natural number literal of 78,001 digits" in done.stderr
    assert len(done.stderr) < 1_000, len(done.stderr)                 # was 156,227 bytes
    shown, at = caret_column(done.stderr.split("\n", 1)[1])
    assert shown.startswith("def a : Nat = 999") and shown.endswith("...") and at == 14
    assert "(line 2 cut to columns 1-100 of 78,015)" in done.stderr


def test_bobc_check_of_a_deep_nesting_shows_the_caret_at_the_201st_parenthesis(tmp_path):
    (tmp_path / "L").mkdir()
    module = tmp_path / "L/N4.bob"
    module.write_text("module L.N4\ndef a : Nat = " + "(" * 1_000 + "zero" + ")" * 1_000 + "\n")
    done = bobc("check", module)
    assert done.returncode == 1, done.stderr
    assert f"{module}:2:215: error: parentheses nested 201 deep" in done.stderr
    shown, at = caret_column(done.stderr.split("\n", 1)[1])
    assert shown.startswith("...(((") and shown.endswith("(((...") and at == 3 + EXCERPT_WIDTH // 2
    assert "(line 2 cut to columns 165-264 of 2,018)" in done.stderr and len(done.stderr) < 1_000


def test_bobc_asm_refuses_a_source_past_its_limit_unread(tmp_path):
    from bobc.commands.asm import SOURCE_LIMIT_BYTES

    big = tmp_path / "big.sass"
    with open(big, "wb") as handle:            # sparse: no disk is used
        handle.truncate(SOURCE_LIMIT_BYTES + 1)
    done = bobc("asm", big, "-o", tmp_path / "x.bin")
    assert done.returncode == 1, done.stderr  # a file refused: 1 for every subcommand but diff (probe s30 cli finding 7)
    assert done.stderr == (f"bobc asm: error: {big}: {SOURCE_LIMIT_BYTES + 1:,} bytes, more than this file can be "
                           f"({SOURCE_LIMIT_BYTES:,} bytes at most are read) (docs/limits.md: 4 MiB for a SASS source)\n")
    assert not (tmp_path / "x.bin").exists()
    fifo = tmp_path / "fifo.sass"
    os.mkfifo(fifo)
    done = bobc("asm", fifo, "-o", tmp_path / "x.bin")
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr


def test_bobc_asm_of_a_source_at_its_limit_is_read(tmp_path):
    from bobc.commands.asm import SOURCE_LIMIT_BYTES

    source = tmp_path / "at.sass"
    line = "// " + "c" * 1020 + "\n"
    text = ".kernel k\n    EXIT ;\n"
    text += line * ((SOURCE_LIMIT_BYTES - len(text)) // len(line))
    source.write_text(text + "/" * (SOURCE_LIMIT_BYTES - len(text)))
    assert source.stat().st_size == SOURCE_LIMIT_BYTES
    done = bobc("asm", source, "-o", tmp_path / "x.bin")
    assert "more than this file can be" not in done.stderr, done.stderr


@pytest.mark.parametrize("separator", ["\f", "\u2028", "\u0085", "\x1c"])
def test_the_excerpt_is_the_line_the_message_names_whatever_else_ends_lines_for_python(tmp_path, separator):
    """Modules are numbered by LF, CR LF and CR only; str.splitlines also ends a line at a form
    feed, U+2028, U+0085 or a file separator, so the excerpt showed another line than the one
    named (probe s28 lang, finding 4).  errors.source_lines is every reader's numbering now."""
    module = tmp_path / "Ff.bob"
    module.write_text(f"module Ff\n-- one{separator}\ndef a : Nat = 1\r\n-- two{separator}x\rdef b : Nat = (nat-add a qq)\n",
                      encoding="utf-8")
    done = bobc("check", module)
    assert done.returncode == 1
    assert f"{module}:5:26: error: unknown name qq" in done.stderr
    shown, at = caret_column(done.stderr.split("\n", 1)[1])
    assert shown == "def b : Nat = (nat-add a qq)" and shown[at:at + 2] == "qq", done.stderr


def test_the_caret_stays_under_its_column_after_wide_characters():
    """A CJK character takes two terminal cells and a combining mark none: the caret line pads
    by cells, not characters, so it stays under the name the message points at (probe s30 cli,
    finding 8: the carets drifted left after wide characters)."""
    import unicodedata

    from bobc.errors import excerpt

    def cells(text):
        return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
                   for c in text)

    for line, name in (("def 名前 : Nat = (nat-add 1 qq)", "qq"), ("def e\u0301 : Nat = (nat-add 1 qq)", "qq"),
                       ("def x : Nat = 値値", "値値")):
        column = line.index(name) + 1
        shown, carets = excerpt(line, column, len(name)).split("\n")
        at = carets.index("^")
        assert at - 2 == cells(line[:column - 1]), (line, carets)
        assert carets.count("^") == cells(name)
