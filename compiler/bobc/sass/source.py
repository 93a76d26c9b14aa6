"""Reading a SASS kernel source: the one bounded reader of every path that opens a .sass file.

`bobc asm`, the assembler (assemble_kernel), the kernel cache, the kernel search (a variant's
`.kernel` name), the simulator (`bobc sim`, bobc.sim.kernel.run_kernel) and the golden images
all read a source through `read_source`: a regular file of at most SOURCE_LIMIT_BYTES, opened
without blocking (a FIFO or a device is refused by name, unread), read once, whole
(reference/safe_io.py's checks of every file bobc and the host read), so a 1 GiB file is refused
by its size before a byte of it is read, with the one message docs/limits.md names.
"""
from __future__ import annotations

from ..errors import BobcError, UsageError
from ..resources import doc

# The largest SASS source bobc reads (docs/limits.md): 30 times the largest kernel source
# under specs/ (138 KB, 2,518 instructions); a source of this size, 190,000 instructions,
# assembles in about 17 s and 650 MB.
SOURCE_LIMIT_BYTES = 4 << 20


def _refusal(named: str, part: str, detail: str) -> BobcError:
    """A source that is there but refused (too big, unreadable, not a regular file) is a file
    bobc refuses, exit 1 (README's exit codes); one that cannot be opened because nothing is
    there is a wrong path, exit 2, as for every command's input."""
    if part == "size":
        detail += f" ({doc('limits.md')}: 4 MiB for a SASS source)"
    if part == "open" and "No such file" in detail:
        return UsageError(f"{named}: {detail}")
    return BobcError(f"{named}: {detail}")


def check_source(path) -> None:
    """Refuse (exit 1, unread, never blocking) a source that is not a regular file of at most
    SOURCE_LIMIT_BYTES."""
    from ..reference import safe_io

    safe_io.check_input(path, _refusal, SOURCE_LIMIT_BYTES)


def read_source_bytes(path) -> bytes:
    """The bytes of the SASS source `path`, read once and bounded (check_source's refusals)."""
    from ..reference import safe_io

    return safe_io.read_input(path, _refusal, SOURCE_LIMIT_BYTES).data


def source_text(data: bytes, path) -> str:
    """A source's bytes as text: UTF-8 (a byte order mark at its start skipped), newlines as
    Path.read_text reads them (universal).  Bytes that are not UTF-8 are refused as a module's
    are (bobc.source_bytes): UTF-16 text and binary data (a cubin, a record) named as such, any
    other at its file:line:column with the caret under it."""
    from .. import source_bytes

    text = source_bytes.decode(
        data, path, what="a SASS source", files="SASS sources", suffix=".sass",
        binary_hint="`bobc asm` and a plan's kernels read SASS text, or an nvdisasm listing as printed "
                    "(`nvdisasm -hex FILE.cubin > FILE.sass`)",
        utf8_hint="SASS sources are UTF-8; save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)")
    from .syntax import without_byte_order_mark

    # a UTF-8 byte order mark at its start is skipped, as a module's is: every reader of a source
    # (the assembler, the `//@` contract lines, the kernel search) sees line 1 from after it
    text = without_byte_order_mark(text).replace("\r\n", "\n").replace("\r", "\n")
    source_bytes.refuse_nul(text, path, hint="delete it (an editor or a tool wrote it)")
    return text


def read_source(path) -> str:
    """The text of the SASS source `path`: read_source_bytes, then source_text."""
    return source_text(read_source_bytes(path), path)
