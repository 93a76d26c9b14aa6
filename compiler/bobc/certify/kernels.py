"""Kernel contracts: what a kernel does with its parameter words, declared next to
its code and checked against it.

A kernel source (.sass) declares each 64-bit parameter word it uses (word i =
bytes 8i..8i+7 from the target's parameter base) in a structured comment:

    //@ param 0 pointer read-write 4096 the table the kernel updates
    //@ param 6 scalar log2 e, ln 2
    //@ param 4 unused

A pointer names the bytes the kernel touches from the address it is passed
(its extent) and whether it reads or writes them; a scalar is never an
address; an unused word is one the kernel never reads.  The code's own reads
of its parameters (operands `c[0x0][param+0xNN]`, as wide as the instruction:
.64 eight bytes, .128 sixteen, else four) must fall in declared pointer or
scalar words: `check_code_reads` refuses any other by name, and a declared
pointer the code never reads.

A region's source is found by its identity: `<identity>.sass` in the kernel
search path (specs/ and the plan's folders).  The same rule holds for every
kernel; no kernel is known by name here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .findings import Finding

_CONTRACT = re.compile(r"^\s*//@\s*param\s+(\d+)\s+(pointer|scalar|unused)\b(.*)$")
_POINTER = re.compile(r"^\s*(read-write|read|write)\s+(\d+)\s*(.*)$")
_READ = re.compile(r"c\[0x0\]\[(?:RZ\s*\+\s*)?param(?:\s*\+\s*(0x[0-9a-fA-F]+|\d+))?\]")


@dataclass(frozen=True)
class Argument:
    index: int                 # parameter word i
    kind: str                  # "pointer", "scalar" or "unused"
    extent: int = 0            # bytes touched from the pointer
    access: str = ""           # "read", "write" or "read-write"
    what: str = ""

    @property
    def reads(self) -> bool:
        return "read" in self.access

    @property
    def writes(self) -> bool:
        return "write" in self.access


@dataclass(frozen=True)
class ParameterRead:
    line: int
    offset: int                # bytes from the parameter base
    width: int
    text: str

    @property
    def words(self) -> range:
        return range(self.offset // 8, (self.offset + self.width - 1) // 8 + 1)


@dataclass(frozen=True)
class KernelContract:
    kernel: str
    source: Path
    arguments: tuple[Argument, ...]
    reads: tuple[ParameterRead, ...]

    def argument(self, index: int) -> Argument | None:
        return next((a for a in self.arguments if a.index == index), None)


class ContractError(ValueError):
    """A contract comment that does not parse; names the file and line."""


def _width(instruction: str) -> int:
    mnemonic = instruction.split()[0] if instruction.split() else ""
    if mnemonic.startswith("@"):
        mnemonic = instruction.split()[1]
    return 16 if ".128" in mnemonic else 8 if ".64" in mnemonic else 4


def parse_contract(path: Path, kernel: str | None = None) -> KernelContract:
    """The contract comments and the parameter reads of one kernel source."""
    arguments, reads = [], []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        declared = _CONTRACT.match(line)
        if declared:
            index, kind, rest = int(declared.group(1)), declared.group(2), declared.group(3).strip()
            if any(a.index == index for a in arguments):
                raise ContractError(f"{path}:{number}: parameter word {index} is declared twice")
            if kind == "pointer":
                pointer = _POINTER.match(rest)
                if not pointer:
                    raise ContractError(f"{path}:{number}: a pointer is declared as "
                                        f"'//@ param N pointer read|write|read-write EXTENT what'")
                arguments.append(Argument(index, kind, int(pointer.group(2)), pointer.group(1), pointer.group(3)))
            else:
                arguments.append(Argument(index, kind, what=rest))
            continue
        code = line.split("//", 1)[0]
        for found in _READ.finditer(code):
            offset = int(found.group(1), 0) if found.group(1) else 0
            reads.append(ParameterRead(number, offset, _width(code.strip()), code.strip()))
    return KernelContract(kernel or Path(path).stem, Path(path), tuple(sorted(arguments, key=lambda a: a.index)),
                          tuple(reads))


def find_source(identity: str, folders) -> Path | None:
    """`<identity>.sass` in the first folder (searched recursively) that has it."""
    for folder in folders:
        hits = sorted(Path(folder).rglob(f"{identity}.sass"))
        if hits:
            return hits[0]
    return None


def check_code_reads(contract: KernelContract) -> list[Finding]:
    """The words the code reads are words the contract declares (pointer or scalar), and
    every declared pointer is read."""
    out = []
    read_words = set()
    for read in contract.reads:
        for word in read.words:
            read_words.add(word)
            argument = contract.argument(word)
            if argument is None or argument.kind == "unused":
                state = "declares it unused" if argument is not None else "does not declare it"
                out.append(Finding("contract", f"kernel {contract.kernel} reads parameter word {word} "
                                               f"({read.text} at {contract.source.name}:{read.line}), but its "
                                               f"contract {state}"))
    for argument in contract.arguments:
        if argument.kind == "pointer" and argument.index not in read_words:
            out.append(Finding("contract", f"kernel {contract.kernel} declares pointer word {argument.index} "
                                           f"({argument.what}) but its code never reads it"))
    return out
