"""A source file's bytes as text: the one decoder of plan modules (language/parse.py) and SASS
kernel sources (sass/source.py), so both accept and refuse the same bytes, said the same way.

A source is UTF-8 text; a UTF-8 byte order mark at its start is accepted (the callers skip it:
columns on line 1 count from after it).  Refused, in this order:
- UTF-16 text (a UTF-16 byte order mark, or a NUL in every other byte), named as such, with
  the `iconv` line that converts it -- whatever UTF-8 makes of its bytes;
- binary data (a NUL in the first JUDGED_BYTES, or more than CONTROL_SHARE of control bytes
  there; past them a NUL among bytes that are not UTF-8), named by its first such byte, with no
  excerpt of it -- but text with a stray NUL (at most STRAY_NULS of them in the first
  JUDGED_BYTES, the file UTF-8 and its other control bytes within CONTROL_SHARE) is text, whose
  NUL refuse_nul places;
- any other bytes that are not UTF-8, at the line and column of the first one (columns count
  characters, as every message's column does, docs/language.md), with its excerpt and caret;
- a NUL in text (refuse_nul, on the text as the reader numbers its lines), at its line and
  column with "delete it": a stray NUL an editor or a tool wrote into a module was "binary data
  (byte 0x00 at offset N)" at 1:1 with the hint to name the plan module (probe s43 fuzz F4).

No lark here: `bobc asm` reads its source through this without loading the plan language.
"""
from __future__ import annotations

from .errors import BobcError, Span

# the first bytes of a file judged for text (language/modules.py reads its own constant from here)
JUDGED_BYTES = 4096
# a file's first bytes judged for text: a NUL, or more than this share of control characters
# (other than tab, newlines, form feed, vertical tab), is binary data, not text that lost its encoding
CONTROL_SHARE = 0.05
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\v")
# a text file with this many NULs or fewer in its first JUDGED_BYTES (and otherwise text) is text with
# stray NULs, refused at the first one's line and column; a binary file (a record's little-endian
# counts, an executable's headers) has many more
STRAY_NULS = 4
# UTF-16 without a byte order mark: at least this share of one half's bytes (every other byte) NUL
_UTF16_NUL_SHARE = 0.75
_UTF8_BOM = b"\xef\xbb\xbf"


class FileSpan(Span):
    """A span that names a file, not text in it: no source excerpt (a binary file's "line" is noise)."""

    def source_excerpt(self) -> str:
        return ""


def utf16(data: bytes) -> tuple[str, str] | None:
    """How `data` is UTF-16 text and iconv's name for it (("little-endian, with a byte order
    mark", "utf-16"), ...), or None: a UTF-16 byte order mark first, or text with a NUL in every
    other byte (ASCII-range UTF-16)."""
    if data[:2] == b"\xff\xfe":
        return "little-endian, with a byte order mark", "utf-16"
    if data[:2] == b"\xfe\xff":
        return "big-endian, with a byte order mark", "utf-16"
    head = data[:JUDGED_BYTES]
    head = head[:len(head) - len(head) % 2]
    if len(head) < 4:
        return None
    halves = head[0::2], head[1::2]
    shares = [half.count(0) / len(half) for half in halves]
    if shares[1] >= _UTF16_NUL_SHARE and shares[0] <= 1 - _UTF16_NUL_SHARE:
        return "little-endian, no byte order mark", "utf-16le"
    if shares[0] >= _UTF16_NUL_SHARE and shares[1] <= 1 - _UTF16_NUL_SHARE:
        return "big-endian, no byte order mark", "utf-16be"
    return None


def binary(data: bytes, nul_within: int = 1 << 16) -> int | None:
    """The offset of the first byte that makes `data` binary (not text in any 8-bit encoding or
    UTF-8): a NUL in its first `nul_within` bytes, or too many control bytes in its first
    JUDGED_BYTES; None for text.  UTF-16 is told apart first (utf16)."""
    head = data[:JUDGED_BYTES]
    controls = [i for i, byte in enumerate(head) if (byte < 0x20 and byte not in _TEXT_CONTROLS) or byte == 0x7f]
    nul = data.find(b"\0", 0, nul_within)
    if nul >= 0:
        return nul
    if head and len(controls) > CONTROL_SHARE * len(head):
        return controls[0]
    return None


def stray_nuls(data: bytes) -> bool:
    """`data` is UTF-8 text but for a few NULs (STRAY_NULS or fewer in its first JUDGED_BYTES, its
    other control bytes there within CONTROL_SHARE): text in which a tool left a NUL, not binary
    data."""
    head = data[:JUDGED_BYTES]
    if not 0 < head.count(0) <= STRAY_NULS or binary(data.replace(b"\0", b"")) is not None:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def place(data: bytes, start: int) -> tuple[int, int]:
    """The 1-based line and column of byte `start` of `data`, as every reader numbers them: lines
    ended by LF, CR LF or CR, columns counted in characters (the bytes before it on its line
    decoded, one U+FFFD for each piece that is not UTF-8, as the excerpt shows that line), and
    on line 1 from after a UTF-8 byte order mark, which the readers skip."""
    line_start = max(data.rfind(b"\n", 0, start), data.rfind(b"\r", 0, start)) + 1
    line = data.count(b"\n", 0, line_start) + data.count(b"\r", 0, line_start) \
        - data.count(b"\r\n", 0, line_start) + 1
    if line_start == 0 and data.startswith(_UTF8_BOM) and start >= len(_UTF8_BOM):
        line_start = len(_UTF8_BOM)
    column = len(data[line_start:start].decode("utf-8", errors="replace")) + 1
    return line, column


def decode(data: bytes, path, *, error=BobcError, what: str, files: str, suffix: str,
           binary_hint: str, utf8_hint: str) -> str:
    """`data`, the bytes of the source at `path`, as text (a byte order mark kept: the caller
    skips it), or `error` saying why not (the module docstring's order).  `what`: what the file
    should be ("a module source (a .bob text)"); `files`: what such files are called ("module
    files"); `suffix`: their file name's ending, for the converted file in the iconv line."""
    found = utf16(data)
    if found is not None:
        raise error(f"the file is not UTF-8 text: it is UTF-16 text ({found[0]})", FileSpan(str(path), 1, 1),
                    hint=f"{files} are UTF-8; convert it (e.g. `iconv -f {found[1]} -t utf-8 "
                         f"FILE > NEW{suffix}`) and name the converted file") from None
    # binary data first, even where its bytes decode as UTF-8 (zeros, a record of bytes below
    # 0x80): a NUL near the start, or many control bytes there
    at = binary(data, nul_within=JUDGED_BYTES)
    failure = None
    if at is not None and stray_nuls(data):
        return data.decode("utf-8")         # the caller's refuse_nul places the NUL
    if at is None:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exception:
            failure = exception
        at = binary(data)
    if at is not None:
        raise error(f"the file is not {what}: it holds binary data "
                    f"(byte 0x{data[at]:02x} at offset {at:,})", FileSpan(str(path), 1, 1), hint=binary_hint)
    line, column = place(data, failure.start)
    raise error(f"the file is not UTF-8 text: byte 0x{data[failure.start]:02x} ({failure.reason})",
                Span(str(path), line, column), hint=utf8_hint)


def refuse_nul(text: str, path, *, error=BobcError, hint: str) -> None:
    """Refuse a NUL character in `text` (a source as its reader sees it: line ends made LF, a
    byte order mark skipped) at its line and column.  In the first JUDGED_BYTES a NUL makes the
    file binary data (decode); past them the same character was taken, in a comment or a byte
    string, so that whether a text was accepted hung on where in the file it stood (probe s38
    texts2 finding 2).  A text file holds no NUL (Python and Go refuse one anywhere)."""
    at = text.find("\0")
    if at < 0:
        return
    line_start = text.rfind("\n", 0, at) + 1
    line = text.count("\n", 0, at) + 1
    column = at - line_start + 1
    raise error("a NUL character (U+0000) in the text: a source holds none", Span(str(path), line, column),
                hint=hint)
