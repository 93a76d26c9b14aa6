"""Running NVIDIA's nvdisasm over raw instruction streams and reading its answer.

nvdisasm is the independent judge of our encodings: it is called once per
stream (never once per instruction), with -hex so that each decoded line
comes back paired with the two 64-bit words it was decoded from.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import BobcError
from ..nvtools import nvdisasm

_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;?\s*/\* (0x[0-9a-f]{16}) \*/\s*$")
_HI = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/\s*$")


@dataclass(frozen=True)
class Decoded:
    offset: int
    text: str          # the instruction as nvdisasm prints it, without the trailing ';'
    lo: int
    hi: int


@dataclass(frozen=True)
class Disassembly:
    lines: list[Decoded]
    stderr: str

    @property
    def errors(self) -> list[str]:
        """Everything that says nvdisasm rejected a word: stderr lines and INVALID mnemonics."""
        problems = [line for line in self.stderr.splitlines() if line.strip()]
        problems += [f"{d.offset:#06x}: {d.text}" for d in self.lines if "INVALID" in d.text]
        return problems


def require_nvdisasm() -> str:
    tool = nvdisasm()
    if tool is None:
        raise BobcError("nvdisasm is not installed",
                        hint="pip install nvidia-cuda-nvdisasm (or set BOBC_NVDISASM)")
    return tool


def disassemble(code: bytes, nvdisasm_arch: str, raw: bool = False) -> Disassembly:
    """Decode a raw instruction stream with nvdisasm -hex (-raw keeps nvdisasm's plain form)."""
    tool = require_nvdisasm()
    from ..errors import temporary_folder, write_temporary

    with temporary_folder() as folder:      # a full disk: one message, exit 8, not a traceback
        path = Path(folder) / "code.bin"
        write_temporary(path, code)
        command = [tool, "-b", nvdisasm_arch, "-hex"] + (["-raw"] if raw else []) + [str(path)]
        try:
            done = subprocess.run(command, capture_output=True, text=True)
        except OSError as e:
            raise BobcError(f"cannot run nvdisasm at {tool}: {e.strerror}",
                            hint="pip install nvidia-cuda-nvdisasm (or set BOBC_NVDISASM)") from None
    # nvdisasm names the file it read (`Object file /tmp/tmpXXXX/code.bin is not readable` for an
    # empty stream): the temporary path means nothing to the caller
    stderr = done.stderr.replace(str(path), "the instruction stream")
    if not code and not stderr.strip():
        stderr = "the instruction stream is empty"
    return Disassembly(parse_hex_listing(done.stdout), stderr)


def parse_hex_listing(listing: str) -> list[Decoded]:
    """(offset, text, lo, hi) for each instruction of an `nvdisasm -hex` listing."""
    out: list[Decoded] = []
    pending: tuple[int, str, int] | None = None
    for line in listing.splitlines():
        m = _LINE.search(line)
        if m:
            text = m.group(2).strip()
            if text.endswith(";"):
                text = text[:-1].rstrip()
            text = re.sub(r"\s+", " ", text)
            text = text.replace(" ;", "").strip()
            pending = (int(m.group(1), 16), text, int(m.group(3), 16))
            continue
        m = _HI.match(line)
        if m and pending is not None:
            out.append(Decoded(pending[0], pending[1], pending[2], int(m.group(1), 16)))
            pending = None
    return out
