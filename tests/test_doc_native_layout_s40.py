"""docs/native-host.md, "Building one": the byte counts of a native host's trailer and embedded
artifact footer add up to the sizes the host and bobc split a file by (probe s40 docs9).

The doc draws the file's end as fields with their widths; the reader in compiler/bobc/native/
artifact.py (the twin of runtime_c/native_host.c's find_self, held to it by
tests/host/test_c_python_mirrors.py) declares TRAILER_BYTES, EMBED_HEADER_BYTES and
EMBED_FOOTER_BYTES.  The widths are read from the doc and summed here, the magics' 8 bytes
counted from their text."""
from __future__ import annotations

import re
from pathlib import Path

from bobc.native import artifact

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "native-host.md").read_text(encoding="utf-8")


def _layout() -> str:
    start = DOC.index("The file, from its start:")
    return DOC[start:DOC.index("The host reads its own file", start)]


def test_the_trailer_is_the_widths_the_doc_gives():
    said = re.search(r"target name \((\d+), zero padded\) \| CRC-32 of the program \((\d+)\) \|\s+"
                     r"program length \((\d+)\) \| \"(\w+)\"", _layout())
    assert said, _layout()
    name, crc, length, magic = int(said.group(1)), int(said.group(2)), int(said.group(3)), said.group(4)
    assert magic.encode() == artifact.TRAILER_MAGIC
    assert name + crc + length + len(magic) == artifact.TRAILER_BYTES
    # the writer's own trailer of an empty program is exactly that long
    assert len(artifact.trailer(b"", "sm_90")) == artifact.TRAILER_BYTES


def test_the_embedded_footer_is_the_widths_the_doc_gives():
    layout = _layout()
    header = re.search(r"\(kind (\d+), identity (\d+), length (\d+), bytes\)", layout)
    footer = re.search(r"\"(\w+)\", the components' offset \((\d+)\)", layout)
    assert header and footer, layout
    kind, identity, length = (int(header.group(i)) for i in (1, 2, 3))
    assert kind + identity + length == artifact.EMBED_HEADER_BYTES
    assert footer.group(1).encode() == artifact.EMBED_MAGIC
    assert artifact.EMBED_HEADER_BYTES + len(footer.group(1)) + int(footer.group(2)) == artifact.EMBED_FOOTER_BYTES
