"""docs/limits.md lists the bounds session 39 gave the native physical program, its request and
the input record checks, with the values their own definitions give (probe s39 docs8 findings 1
and 2).

The row for a native program's naturals (2^64 - 1: each is 8 bytes little-endian) was added by
bec4d5ba and lost in the merge b5b9acd0, while docs/platform.md and the refusal's hint still send
the reader to docs/limits.md, "The native physical program", for it; the token stream's magic,
version and vocabulary bounds and the record checks' bounds were stated only in
docs/native-host.md and docs/writing-a-plan.md, though limits.md is "the one list of them".

Each figure is recomputed from its definition: a program natural's 8 bytes; the token stream
header's fields (docs/formats.md, "Token stream": the magic's bytes before the version word, the
version's and vocabulary's widths), which must also be the request reader's bounds; the record
check's words (1, 2, 4 or 8 bytes) and the C host's 64-bit bound."""
from __future__ import annotations

import re
from pathlib import Path

from bobc.native import request

REPO = Path(__file__).resolve().parents[1]
LIMITS = (REPO / "docs" / "limits.md").read_text(encoding="utf-8")


def section_rows(heading: str) -> list[list[str]]:
    """The table rows (cells, stripped) of the limits.md section whose heading starts `heading`."""
    start = LIMITS.index(f"\n## {heading}")
    end = LIMITS.find("\n## ", start + 1)
    rows = []
    for line in LIMITS[start:end if end >= 0 else None].splitlines():
        if line.startswith("| ") and not line.startswith("| limit |"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def row(heading: str, starts: str) -> list[str]:
    found = [r for r in section_rows(heading) if r[0].startswith(starts)]
    assert len(found) == 1, f"docs/limits.md, {heading!r}: no one row starting {starts!r}"
    return found[0]


def power_text(value: int) -> str:
    """2^k - 1 as the docs write it."""
    assert (value + 1) & value == 0
    return f"2^{(value + 1).bit_length() - 1} - 1"


def test_platform_md_sends_a_program_natural_to_a_row_that_holds_it():
    platform = " ".join((REPO / "docs" / "platform.md").read_text(encoding="utf-8").split())
    assert 'of 2^64 or more is refused by `bobc build` and `bobc run --reference`' in platform
    assert '(docs/limits.md, "The native physical program")' in platform
    limit = row("The native physical program", "every natural a program's bytes carry")
    natural_bytes = 8                       # docs/platform.md: a natural is 8 bytes little-endian
    assert limit[1] == power_text(256 ** natural_bytes - 1)
    assert "`natural_too_wide`" in limit[2]
    from bobc.native import writer
    assert callable(writer.natural_too_wide)


def token_stream_fields() -> dict[str, tuple[int, int]]:
    """docs/formats.md's token stream header: field -> (offset, size)."""
    formats = (REPO / "docs" / "formats.md").read_text(encoding="utf-8")
    part = formats[formats.index("## Token stream"):]
    part = part[:part.index("\n\n", part.index("| offset |"))]
    fields = {}
    for line in part.splitlines()[3:]:
        offset, size, content = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if not size.isdigit():          # the tokens: 4n bytes
            continue
        fields[content.split()[0].rstrip(",")] = (int(offset), int(size))
    return fields


def test_the_token_stream_row_is_the_stream_headers_fields():
    fields = token_stream_fields()
    magic_room = fields["version"][0] - fields["magic"][0]          # the magic's bytes before the version
    version_most = 256 ** fields["version"][1] - 1
    vocabulary_most = 256 ** fields["vocabulary"][1] - 1
    assert (request.MAX_MAGIC, request.MAX_HEADER_WORD) == (magic_room, version_most) == (magic_room, vocabulary_most)
    limit = row("The native physical program", "a request's token stream")
    assert limit[1] == f"{magic_room} bytes; {power_text(version_most)} each"
    assert "`request.MAX_MAGIC`" in limit[0] and "`request.MAX_HEADER_WORD`" in limit[0]


def test_the_record_check_row_is_the_hosts_words_and_bound():
    header = (REPO / "runtime_c" / "host_runtime.h").read_text(encoding="utf-8")
    struct = header[:header.index("} rt_record_check;")]
    struct = struct[struct.rindex("typedef struct"):]
    assert re.search(r"uint64_t value;\s*/\* WORD: the value; BELOW: the bound \*/", struct)
    limit = row("What the certifier accepts", "an input record check's value")
    assert limit[1] == (f"a word's value below 2^(8 x its width), the width 1, 2, 4 or 8 bytes; "
                        f"a bound 1 .. {power_text(2 ** 64 - 1)} (0 where the check reads no word)")
    writing = " ".join((REPO / "docs" / "writing-a-plan.md").read_text(encoding="utf-8").split())
    assert "A word is 1, 2, 4 or 8 bytes" in writing
