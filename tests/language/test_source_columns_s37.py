"""Columns on line 1 of a file with a UTF-8 byte order mark count from after it, as
docs/language.md and compiler/bobc/sass/README.md say (probe s37 sourcetext finding 4): a byte
that is not UTF-8 there was placed one column late, and the excerpt showed the skipped mark, so
its caret stood one character left of the place the message names."""
from __future__ import annotations

import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86

BOM = b"\xef\xbb\xbf"


def _caret_under(excerpt: str, text: str) -> None:
    """The excerpt's line holds no byte order mark, and its caret stands under `text`."""
    shown, caret = excerpt.splitlines()[:2]
    assert "\ufeff" not in shown
    assert caret.index("^") == shown.index(text), excerpt


def test_a_byte_not_utf8_on_a_bom_files_first_line(tmp_path):
    (tmp_path / "T").mkdir()
    plan = tmp_path / "T" / "A.bob"
    plan.write_bytes(BOM + b"module T.A \xff\n")      # the 0xff is the 12th character after the mark
    with pytest.raises(BobcError) as caught:
        load_program(plan, target=SM86)
    span = caught.value.span
    assert (span.line, span.column) == (1, 12)
    _caret_under(span.source_excerpt(), "\ufffd")


def test_a_parse_error_on_a_bom_files_first_line_is_shown_without_the_mark(tmp_path):
    (tmp_path / "T").mkdir()
    plan = tmp_path / "T" / "A.bob"
    plan.write_bytes(BOM + b"module T.A zz\n")
    with pytest.raises(BobcError) as caught:
        load_program(plan, target=SM86)
    span = caught.value.span
    assert (span.line, span.column) == (1, 12)
    _caret_under(span.source_excerpt(), "zz")


def test_a_sass_source_alike(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.sass").write_bytes(BOM + b".kernel k \xff\n    EXIT\n")
    assert main(["asm", "k.sass", "-o", "k.bin", "--arch", "sm_86"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("bobc asm: k.sass:1:11: error: the file is not UTF-8 text"), err
    _caret_under("\n".join(err.splitlines()[1:3]), "\ufffd")
