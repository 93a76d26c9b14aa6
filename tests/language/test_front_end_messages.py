"""The plan language's front end under unusual input (probe s28 lang findings 5, 6, 8, 10-13):
carets on the right token, keywords refused as definition names, a module file's size bound,
commented-out code not warned about, and the smaller messages."""
from __future__ import annotations

import os
import tracemalloc

import pytest

from bobc.errors import UsageError
from bobc.language import limits, load_program
from bobc.targets import SM86
from bobc.language.comments import swallowed_declarations
from bobc.language.modules import ModuleError
from bobc.language.parse import ParseError, decode_byte_string, parse_module
from bobc.language.printing import format_bytes
from bobc.language.resolve import ScopeError


def _plan(tmp_path, name: str, body: str):
    path = tmp_path / f"{name}.bob"
    path.write_text(f"module {name}\n{body}", encoding="utf-8")
    return path


def _where(error) -> tuple[int, int]:
    return error.span.line, error.span.column


# ---- finding 5: (constructor Q PD Nat) with an unknown family points at Q ---------------------

def test_an_unknown_family_in_a_constructor_form_points_at_the_family(tmp_path):
    line = "def x : (family P Nat) = (constructor Q PD Nat)"
    path = _plan(tmp_path, "U7", "family P (A : Type 0) : Type 0\nconstructor PD\nend-family\n"
                 + line + "\n")
    with pytest.raises(ScopeError, match="unknown family Q") as caught:
        load_program(path, target=SM86)
    assert _where(caught.value) == (5, line.index("Q") + 1)


def test_an_unknown_constructor_still_points_at_the_constructor(tmp_path):
    line = "def x : (family P Nat) = (constructor P PE Nat)"
    path = _plan(tmp_path, "U8", "family P (A : Type 0) : Type 0\nconstructor PD\nend-family\n"
                 + line + "\n")
    with pytest.raises(ScopeError, match="has no constructor PE") as caught:
        load_program(path, target=SM86)
    assert _where(caught.value) == (5, line.index("PE") + 1)


# ---- finding 6: the nesting limit's column counts a byte string's characters -----------------

@pytest.mark.parametrize("before", ['b"' + "z" * 40 + '"', r'b"a\"b\\"', 'b""'])
def test_the_nesting_limits_column_after_a_byte_string(before):
    deep = "(" * (limits.NESTING_DEPTH + 1)
    line = f"def x : Nat = (nat-add (bytes-length {before}) {deep}1"
    with pytest.raises(ParseError, match="nested 201 deep") as caught:
        parse_module(f"module Col\n{line}\n", "Col.bob")
    # the '(' of nat-add is open, so the 200th '(' of `deep` is the 201st open
    assert _where(caught.value) == (2, line.index(deep) + limits.NESTING_DEPTH)


# ---- finding 10: keywords as definition names --------------------------------------------------

@pytest.mark.parametrize("keyword", ["def", "family", "end-family", "constructor", "field", "in", "Type"])
def test_a_keyword_is_refused_as_a_definition_name(tmp_path, keyword):
    path = _plan(tmp_path, "K", f"def {keyword} : Nat = 1\n")
    with pytest.raises(ParseError) as caught:
        load_program(path, target=SM86)
    assert _where(caught.value) == (2, 5)
    assert caught.value.message.startswith(f"'{keyword}' is a keyword of the language")


@pytest.mark.parametrize("keyword", ["def", "family", "in"])
def test_a_keyword_used_as_a_name_is_named_so(tmp_path, keyword):
    path = _plan(tmp_path, "K", f"def y : Nat = (nat-add {keyword} 1)\n")
    with pytest.raises(ParseError) as caught:
        load_program(path, target=SM86)
    assert caught.value.message.startswith(f"'{keyword}' is a keyword, not a name")
    assert _where(caught.value) == (2, 24)


def test_a_missing_parenthesis_before_the_next_declaration_is_still_reported_so(tmp_path):
    path = _plan(tmp_path, "K", "def y : Nat = (nat-add 1 2\ndef z : Nat = 1\n")
    with pytest.raises(ParseError, match=r"this '\(' is not closed"):
        load_program(path, target=SM86)


def test_form_heads_stay_usable_as_names(tmp_path):
    path = _plan(tmp_path, "R", "def record : Nat = 1\ndef y : Nat = (nat-add record 1)\n")
    assert load_program(path, target=SM86).value("y").value == 2


# ---- finding 11: a line commented out on purpose --------------------------------------------

@pytest.mark.parametrize("text, warned", [
    ("-- def old : Nat = 2", False),
    ("   -- import A.B", False),
    ("-- family F : Type 0", False),
    ("-- def a : Nat = 1 def b : Nat = 2", True),        # lost line breaks
    ("-- A header comment def b : Nat = 2", True),      # prose, then a declaration
    ("def n : Nat = 1 -- def lost : Nat = 2", True),     # seed 003's case
])
def test_commented_out_lines_are_not_swallowed_code(text, warned):
    assert bool(swallowed_declarations(f"module M\n{text}\n")) == warned


# ---- finding 12: the structure-loop hint ------------------------------------------------------

def test_the_structure_loop_hint_fits_a_loop_that_carries_a_record(tmp_path):
    path = _plan(tmp_path, "Fib", """family Pair : Type 0
constructor PairC
field unrestricted a : Nat
field unrestricted b : Nat
end-family
def mot : (pi unrestricted n : Nat . Type 0) = (lambda unrestricted n : Nat . (family Pair))
def fib : (family Pair) = (nat-eliminate mot (record Pair (a = 0) (b = 1))
  (lambda unrestricted k : Nat . (lambda unrestricted p : (family Pair) . p)) 100000)
""")
    with pytest.raises(limits.LimitExceeded) as caught:
        load_program(path, target=SM86).value("fib")
    hint = caught.value.hint
    assert "nested loops of at most 65,536 iterations each" in hint and "a Pair of counters" in hint
    assert "builds more than the certifier accepts" not in hint


# ---- finding 13 --------------------------------------------------------------------------------

def test_duplicate_family_parameters_are_refused(tmp_path):
    path = _plan(tmp_path, "D5", "family F (A : Type 0) (A : Nat) : Type 0\nconstructor C\nend-family\n")
    with pytest.raises(ScopeError, match="parameter A is declared twice in family F") as caught:
        load_program(path, target=SM86)
    assert _where(caught.value) == (2, 24) and "D5.bob:2:11" in caught.value.hint


def test_duplicate_branch_binders_are_refused(tmp_path):
    line = ("def f : (pi unrestricted p : (family P) . Nat) = (lambda unrestricted p : (family P) . "
            "(eliminate P (lambda unrestricted q : (family P) . Nat) p (branch PC a a . a)))")
    path = _plan(tmp_path, "D6", "family P : Type 0\nconstructor PC\nfield unrestricted a : Nat\n"
                 "field unrestricted b : Nat\nend-family\n" + line + "\n")
    with pytest.raises(ScopeError, match="branch PC binds a twice") as caught:
        load_program(path, target=SM86)
    assert _where(caught.value) == (7, line.index("a a .") + 3)


@pytest.mark.parametrize("form, shape", [
    ("(nat-eliminate m 0 3)", "nat-eliminate is written (nat-eliminate motive base step target)"),
    ("(refl Nat)", "refl is written (refl type value)"),
    ("(the Nat)", "the is written (the type expression)"),
    ("(app f)", "app is written (app function argument ...)"),
    ("(lambda x : Nat . x)", "lambda is written (lambda multiplicity name : type . body)"),
])
def test_a_form_with_too_few_parts_shows_its_shape(form, shape):
    with pytest.raises(ParseError) as caught:
        parse_module(f"module F\ndef x = {form}\n", "F.bob")
    assert shape in (caught.value.hint or ""), caught.value.render()


def test_a_non_ascii_name_says_names_are_ascii():
    with pytest.raises(ParseError) as caught:
        parse_module("module C\ndef café : Nat = 1\n", "C.bob")
    assert _where(caught.value) == (2, 8) and "names are ASCII" in caught.value.hint


@pytest.mark.parametrize("data, text", [
    (b"\x7f", 'x"7f" (1 byte)'),
    (b"\x00\x01", 'x"0001" (2 bytes)'),
    (b"", 'b""'),
])
def test_byte_counts_are_singular_for_one(data, text):
    assert format_bytes(data) == text


@pytest.mark.parametrize("command", ["check", "eval"])
@pytest.mark.parametrize("target, what", [
    ("nonexist.bob", "a broken symbolic link (to nonexist.bob, which does not exist)"),
    ("Loop.bob", "a symbolic link that loops (to Loop.bob)"),
])
def test_a_plan_that_is_a_broken_link_is_named_so(tmp_path, capsys, command, target, what):
    from bobc.cli import main

    plan = tmp_path / "Loop.bob" if target == "Loop.bob" else tmp_path / "Broken.bob"
    os.symlink(target, plan)
    assert main([command, str(plan), *(["x"] if command == "eval" else [])]) == UsageError.exit_code
    err = capsys.readouterr().err
    assert f"error: the plan {plan} is {what}, not a module file" in err, err


# ---- finding 8: a module file's size ------------------------------------------------------------

def test_a_module_file_past_the_size_limit_is_refused_by_name_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MODULE_FILE_BYTES", 1000)
    path = _plan(tmp_path, "Big", 'def n = (bytes-length b"' + "z" * 1000 + '")\n')
    imports = _plan(tmp_path, "Imp", "import Big\n")
    for plan in (path, imports):
        with pytest.raises(ModuleError) as caught:
            load_program(plan, target=SM86)
        message = caught.value.message
        assert message.startswith(f"the module file {path} has {path.stat().st_size:,} bytes: more than "
                                  f"the limit of 1,000 bytes"), message
    assert "imported through Imp -> Big (" in caught.value.hint


def test_a_module_at_the_size_limit_loads(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MODULE_FILE_BYTES", 1000)
    head = 'def n = (bytes-length b"'
    size = 1000 - len("module Fits\n") - len(head) - len('")\n')
    path = _plan(tmp_path, "Fits", head + "z" * size + '")\n')
    assert path.stat().st_size == 1000
    assert load_program(path, target=SM86).value("n").value == size


def test_the_documented_limit_is_the_one_kept():
    text = (limits.__file__.rsplit("compiler", 1)[0] + "docs/limits.md")
    row = next(line for line in open(text, encoding="utf-8") if line.startswith("| bytes of one module file"))
    assert f"{limits.MODULE_FILE_BYTES:,}" in row


@pytest.mark.parametrize("body", ["z" * 300_000, "\\x00" * 100_000, "é" * 100_000])
def test_a_long_byte_string_costs_little_memory_per_byte(body):
    """A 2 MB literal once peaked at ~285 MB in the lexer's regular expression (a repeat of an
    alternation keeps state per character) and took ~1 us a byte to decode; the repeat is
    possessive now and the text between escapes is encoded a run at a time."""
    text = f'module L\ndef n = (bytes-length b"{body}")\n'
    parse_module("module Warm\ndef n = 1\n", "Warm.bob")        # the parser's tables built
    tracemalloc.start()
    try:
        module = parse_module(text, "L.bob")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    literal = module.declarations[0].body.arguments[0].value
    assert len(literal) == {"z": 300_000, "\\": 100_000, "é": 200_000}[body[0]]
    assert peak < 20 * len(text.encode("utf-8")), peak


@pytest.mark.parametrize("literal, value", [
    ('b"a\\x41\\n\\t\\r\\\\\\"\\0z"', b"aA\n\t\r\\\"\x00z"),
    ('b"caf\u00e9"', "caf\u00e9".encode()),
    ('b""', b""),
])
def test_decoding_byte_strings(literal, value):
    from bobc.errors import Span

    assert decode_byte_string(literal, Span("p", 1, 1)) == value


@pytest.mark.parametrize("literal, column, words", [
    ('b"ab\\q"', 5, "unknown escape '\\q'"),
    ('b"ab\\x4"', 5, "two hexadecimal digits"),
])
def test_bad_escapes_are_refused_at_their_column(literal, column, words):
    from bobc.errors import Span

    with pytest.raises(ParseError, match=words.replace("\\", "\\\\")) as caught:
        decode_byte_string(literal, Span("p", 3, 1))
    assert _where(caught.value) == (3, column)
