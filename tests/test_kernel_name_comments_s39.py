"""A source's `.kernel` line is read with the assembler's comments (probe s39 coverage2 finding 1).
bobc.kernel_search.kernel_name cut a line at its first // or # before it blanked /* ... */, so a
block comment holding one (`.kernel gemm /* after https://example.org */`) left "/* after https:"
as three more words: `bobc check` refused the plan (".kernel takes one name, found 4 words")
while `bobc asm` assembled kernel gemm, and `/* a // b */ .kernel x` was no .kernel line at all
(a variant then "names" its file's stem).  The assembler's own directives are the oracle here."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.kernel_search import SourceError, check_variant, find_source, kernel_name
from bobc.sass.assembler import source_directives
from bobc.sass.source import read_source
from bobc.sass.syntax import parse_source
from bobc.targets import SM90

BODY = "    S2R R0, SR_TID.X\n    EXIT\n"

LINES = [
    ".kernel gemm   /* after https://example.org/gemm */",
    "/* see // below */ .kernel gemm",
    ".kernel gemm /* # not a comment's start */",
    ".kernel gemm (* an annotation *)",
    ".kernel gemm // a remark",
    "start: .kernel gemm",                              # a directive after a label, as the parser reads it
    "a: b: .kernel gemm /* two labels */",
]


def assembler_name(path: Path) -> str | None:
    return source_directives(parse_source(read_source(path), str(path))).name


@pytest.mark.parametrize("line", LINES)
def test_the_kernel_name_is_the_one_the_assembler_reads(tmp_path, line):
    path = tmp_path / "x.sass"
    path.write_text(f"{line}\n{BODY}")
    assert assembler_name(path) == "gemm"
    assert kernel_name(path, "x") == "gemm"


def test_a_variant_whose_kernel_line_holds_a_url_in_a_block_comment_is_its_bases_kernel(tmp_path):
    base = tmp_path / "k" / "gemm.sass"
    base.parent.mkdir()
    base.write_text(f".kernel gemm\n{BODY}")
    variant = tmp_path / "k" / "gemm.sm_90.sass"
    variant.write_text(f".kernel gemm /* sm_90 form: https://docs.nvidia.com/cuda/ */\n{BODY}")
    check_variant(variant, base)                         # no refusal: the same kernel
    assert find_source("gemm", [tmp_path / "k"], SM90) == variant


def test_a_block_comment_left_open_on_the_kernel_line_is_the_assemblers_refusal(tmp_path):
    path = tmp_path / "x.sass"
    path.write_text(f".kernel gemm /* open\n{BODY}")
    with pytest.raises(SourceError, match=r"this /\* comment is not closed on its line") as refused:
        kernel_name(path, "x")
    assert (refused.value.span.line, refused.value.span.column) == (1, 14)
