"""A message that cites one of bobc's documents names a file its user has (probe s30 packaging
finding 5): `docs/NAME.md` when bobc runs from its checkout (the words the other tests and the
golden texts hold), the copy installed with the package (bobc/_share/docs/NAME.md) otherwise.
Every citation goes through bobc.resources.doc, except where the text is part of what a build
writes or what is compared across machines, which must not depend on where bobc is installed.
tests/test_packaging.py checks the installed side on a real wheel."""
from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest

from bobc import resources

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "compiler" / "bobc"
# `docs/NAME.md` written out, not bobc's sibling ../shared/docs/ (notes outside the repository)
FIXED = re.compile(r"(?<![\w./])docs/([a-z0-9_-]+\.md)")
THROUGH_HELPER = re.compile(r"""\bdoc\(['"]([a-z0-9_-]+\.md)['"]""")

# The strings that keep `docs/NAME.md` as it is, and why: (file, document) -> reason.
KEPT = {
    ("host/native.py", "native-host.md"): "bobc dump's host.kind line: dumps of one host are compared "
                                          "across machines (bobc diff, golden texts)",
    ("host/steps_c.py", "host-steps.md"): "the generated runtime_c/plan_steps.h",
    ("reference/native_request.py", "formats.md"): "twin of runtime_c/native_request.c's refusal, "
                                                  "which every built host says",
    ("reference/plan_commands.py", "host-steps.md"): "twin of runtime_c/plan_commands.c's fault",
    ("reference/safe_io.py", "runtime.md"): "twins of runtime_c/host_io.c's journal messages",
}


def _docstrings(tree) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def fixed_citations() -> list[tuple[str, int, str]]:
    """(file, line, document) of every string in bobc's code (not a docstring or a comment) that
    writes `docs/NAME.md` out instead of asking resources.doc."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                found += [(path.relative_to(PACKAGE).as_posix(), node.lineno, m.group(1))
                          for m in FIXED.finditer(node.value)]
    return found


def test_no_message_cites_a_document_by_a_path_only_a_checkout_has():
    left = [f"{file}:{line}: docs/{name}" for file, line, name in fixed_citations() if (file, name) not in KEPT]
    assert not left, "cite these through bobc.resources.doc:\n" + "\n".join(left)


def test_the_kept_citations_are_still_there():
    """KEPT lists only strings that exist (a stale entry would let a new one through unseen)."""
    there = {(file, name) for file, _, name in fixed_citations()}
    assert set(KEPT) <= there, set(KEPT) - there


def test_the_reference_twins_say_what_the_c_hosts_say():
    """The kept reference runner strings are the C hosts' own words, which no bobc install changes."""
    runtime = "".join(path.read_text(encoding="utf-8") for path in sorted((REPO / "runtime_c").glob("*.c")))
    for words in ("see docs/runtime.md (Files) to finish or remove it", "temporaries it lists (docs/runtime.md, Files)",
                  "ring and has no peers: docs/host-steps.md)", 'docs/formats.md, \\"Token stream\\"'):
        assert words in runtime, words


def test_every_document_a_message_cites_is_in_docs():
    cited = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        cited |= set(THROUGH_HELPER.findall(text)) | set(FIXED.findall(text))
    assert cited and "limits.md" in cited
    assert sorted(name for name in cited if not (REPO / "docs" / name).is_file()) == []


def test_a_checkout_cites_docs_as_before():
    assert resources.is_checkout()
    assert resources.doc("limits.md") == "docs/limits.md"
    assert resources.doc("simulator.md", in_help=True) == "docs/simulator.md"


def test_an_installed_bobc_cites_its_own_copy(monkeypatch):
    monkeypatch.setattr(resources, "is_checkout", lambda *a, **k: False)
    assert resources.doc("limits.md") == str(resources.PACKAGE / "_share" / "docs" / "limits.md")


def test_an_installed_path_with_a_percent_sign_is_a_help_text_argparse_can_print(monkeypatch):
    monkeypatch.setattr(resources, "INSTALLED", Path("/opt/100%/site/bobc/_share"))
    monkeypatch.setattr(resources, "is_checkout", lambda *a, **k: False)
    parser = argparse.ArgumentParser(prog="x")
    parser.add_argument("--n", help=f"at most N ({resources.doc('limits.md', in_help=True)})")
    assert "/opt/100%/site/bobc/_share/docs/limits.md" in parser.format_help()
    assert resources.doc("limits.md") == "/opt/100%/site/bobc/_share/docs/limits.md"


@pytest.mark.parametrize("installed", [False, True])
def test_a_limit_message_cites_the_document_the_user_has(monkeypatch, installed):
    """The probe's case: a literal past the limit, parsed from a checkout and from an install."""
    from bobc.errors import BobcError
    from bobc.language.parse import parse_module

    if installed:
        monkeypatch.setattr(resources, "is_checkout", lambda *a, **k: False)
    with pytest.raises(BobcError) as error:
        parse_module("module Big\n\ndef big : Nat = " + "9" * 200_000 + "\n", "Big.bob")
    cited = str(resources.PACKAGE / "_share" / "docs" / "limits.md") if installed else "docs/limits.md"
    assert f"more than the limit of 78,000 ({cited})" in str(error.value)


def test_the_language_doc_names_the_standard_library_of_an_installed_bobc():
    """docs/language.md said the search path ends in "the repository's specs/", which an installed
    bobc does not have: it names the installed copy as resources.shared_folder finds it."""
    text = (REPO / "docs" / "language.md").read_text(encoding="utf-8")
    search_path = text[text.index("### Search path"):text.index("### Visibility")]
    assert "the repository's `specs/`" not in search_path
    installed = (resources.INSTALLED / "specs").relative_to(resources.PACKAGE.parent).as_posix()
    assert f"`{installed}/`" in search_path and "`specs/` when bobc runs from its checkout" in search_path
