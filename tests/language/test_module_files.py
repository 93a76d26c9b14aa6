"""What is at a module's path, and its bytes: a folder, a broken or looping link or a FIFO
is named for what it is (not 'no such file ... did you mean' the very name); a file that is
not UTF-8 is refused at the line and column of its first bad byte, with what to do and, when
imported, the import that led there; a UTF-8 byte order mark is accepted (probe-lang
findings 5 and 6)."""
from __future__ import annotations

import os

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86
from bobc.language.parse import ParseError


def importer(tmp_path, imported="G.Sub"):
    (tmp_path / "G").mkdir(exist_ok=True)
    plan = tmp_path / "G" / "Main.bob"
    plan.write_text(f"module G.Main\nimport {imported}\ndef a = 1\n", encoding="utf-8")
    return plan


def refusal(plan) -> BobcError:
    with pytest.raises(BobcError) as caught:
        load_program(plan, target=SM86)
    return caught.value


def test_a_folder_at_a_modules_path(tmp_path):
    plan = importer(tmp_path)
    (tmp_path / "G" / "Sub.bob").mkdir()
    error = refusal(plan)
    assert f"module G.Sub: {tmp_path / 'G' / 'Sub.bob'} is a folder, not a module file" \
        in error.message
    assert "Main.bob:2:8" in error.render() and "did you mean" not in error.render()


def test_a_broken_link_at_a_modules_path(tmp_path):
    plan = importer(tmp_path)
    (tmp_path / "G" / "Sub.bob").symlink_to("nothere.bob")
    assert "is a broken symbolic link (to nothere.bob, which does not exist)" \
        in refusal(plan).message


def test_a_link_loop_at_a_modules_path(tmp_path):
    plan = importer(tmp_path)
    (tmp_path / "G" / "Sub.bob").symlink_to("Sub.bob")
    assert "is a symbolic link that loops" in refusal(plan).message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_at_a_modules_path(tmp_path):
    plan = importer(tmp_path)
    os.mkfifo(tmp_path / "G" / "Sub.bob")
    assert "is a FIFO (named pipe), not a module file" in refusal(plan).message


def test_a_link_to_a_module_file_is_a_module(tmp_path):
    plan = importer(tmp_path)
    (tmp_path / "Elsewhere.bob").write_text("module G.Sub\ndef b = 2\n", encoding="utf-8")
    (tmp_path / "G" / "Sub.bob").symlink_to(tmp_path / "Elsewhere.bob")
    assert load_program(plan, target=SM86).value("a").value == 1


def test_a_plan_that_is_a_folder(tmp_path):
    (tmp_path / "Dir.bob").mkdir()
    error = refusal(tmp_path / "Dir.bob")
    assert "is a folder, not a module file" in error.message and "no such" not in error.message


def test_a_file_that_is_not_utf8_is_refused_at_its_first_bad_byte(tmp_path):
    (tmp_path / "F").mkdir()
    path = tmp_path / "F" / "Latin.bob"
    path.write_bytes(b"module F.Latin\r\n-- caf\xc3\xa9 ok\r\ndef a = b\"caf\xe9\"\r\n")
    with pytest.raises(ParseError) as caught:
        load_program(path, target=SM86)
    rendered = caught.value.render()
    assert "Latin.bob:3:14: error: the file is not UTF-8 text: byte 0xe9" in rendered
    assert "save it as UTF-8" in rendered and "codec" not in rendered


def test_an_imported_file_that_is_not_utf8_names_the_import(tmp_path):
    plan = importer(tmp_path, "F.Latin")
    (tmp_path / "F").mkdir()
    (tmp_path / "F" / "Latin.bob").write_bytes(b"\xff\xfemodule F.Latin\n")
    rendered = refusal(plan).render()
    # a UTF-16 byte order mark first: named as UTF-16 (probe s32 today3 finding 3)
    assert "Latin.bob:1:1: error: the file is not UTF-8 text: it is UTF-16 text (little-endian" in rendered
    assert f"imported through G.Main -> F.Latin ({plan}:2:8)" in rendered


def test_a_byte_order_mark_is_accepted_and_columns_count_after_it(tmp_path):
    path = tmp_path / "Bom.bob"
    path.write_bytes(b"\xef\xbb\xbfmodule Bom\ndef a : Nat = 1\n")
    assert load_program(path, target=SM86).value("a").value == 1
    path.write_bytes(b"\xef\xbb\xbfmodule Bom oops\n")
    with pytest.raises(ParseError) as caught:
        load_program(path, target=SM86)
    assert "Bom.bob:1:12" in caught.value.render()


def test_a_byte_order_mark_elsewhere_gets_a_hint(tmp_path):
    path = tmp_path / "Bom.bob"
    path.write_bytes(b"module Bom\n\xef\xbb\xbfdef a : Nat = 1\n")
    with pytest.raises(ParseError) as caught:
        load_program(path, target=SM86)
    assert "Bom.bob:2:1" in caught.value.render()
    assert "byte order mark (U+FEFF) is accepted only as a file's first character" \
        in caught.value.render()
