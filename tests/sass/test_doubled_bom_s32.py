"""A SASS source's byte order mark is skipped in one place, where the file is read
(sass/source.source_text); parse_source skipped it again, so a doubled BOM was accepted
(probe s32 today3 finding 4).  Now the second is refused as any BOM not at the start."""
from __future__ import annotations

import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.sass.source import read_source
from bobc.sass.syntax import parse_source

BOM = b"\xef\xbb\xbf"


def test_a_doubled_byte_order_mark_is_refused_at_the_second(tmp_path, capsys):
    source = tmp_path / "k.sass"
    source.write_bytes(BOM + BOM + b".kernel k\n    EXIT\n")
    assert main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", "sm_90"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"bobc asm: {source}:1:1: error: a byte order mark (U+FEFF) here: it is accepted "
                          "only as the file's first character")
    assert not (tmp_path / "k.bin").exists()
    with pytest.raises(BobcError) as caught:
        parse_source(read_source(source), str(source))
    assert (caught.value.span.line, caught.value.span.column) == (1, 1)


def test_one_byte_order_mark_is_still_skipped(tmp_path, capsys):
    source = tmp_path / "k.sass"
    source.write_bytes(BOM + b".kernel k\n    EXIT\n")
    assert main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--arch", "sm_90"]) == 0
    assert "1 instructions" in capsys.readouterr().out
