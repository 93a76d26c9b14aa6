"""Kernel contracts: what a kernel does with its parameter words, declared next to
its code and checked against it.

A kernel source (.sass) declares each 64-bit parameter word it uses (word i =
bytes 8i..8i+7 from the target's parameter base) in a structured comment:

    //@ param 0 pointer read-write 4*hi[7] the table the kernel updates
    //@ param 1 pointer read resident the table it reads
    //@ param 2 pointer write 8 the {token, validity} pair it writes
    //@ param 6 scalar log2 e, ln 2
    //@ param 4 unused

A pointer says whether the kernel reads or writes what it points at, and how
far from the address it may touch (its extent), in terms the plan supplies:

- `resident`: anywhere from the address to the end of the resident it
  points into (the plan's arena decides);
- an expression over the launch's own parameter words: numbers, `word[i]`
  (the 64-bit word i), `lo[i]` and `hi[i]` (its low and high 32 bits),
  joined by `*`, `/` (integer division, floor), `+` and `-`; `*` and `/` bind
  tighter and each level is evaluated left to right (`4*hi[7]`: the element
  count at word 7's high half, times 4 bytes; `2*lo[8]*lo[6]-2*lo[8]+2*lo[7]`:
  the halves of lo[6] rows of lo[7], lo[8] apart).  A negative result or a
  division by zero is refused for the launch, naming the expression;
- a number: a size the kernel's code itself fixes (one u32 it reads, an
  8-byte record it writes), never a model's size.

A pointer the kernel moves per batch (grid y or z) says so after its extent:

    //@ param 0 pointer read 4*lo[6]*hi[6] each lo[10] by 4*lo[7] x [R, C], per batch

`each COUNT by STRIDE` (expressions as above): the kernel touches the extent
at address + b * STRIDE for every batch b < COUNT, and each of those must lie
within one resident: batches may share one, or each lie in another (batch l of a
layer-batched launch in layer l's).

A pointer the kernel touches only under a flag says so last (after `each ... by ...`):

    //@ param 13 pointer read-write 4*hi[12]*lo[6]*hi[6] when hi[7]&16 W (split K only)
    //@ param 2 pointer write 4*lo[6] unless hi[7]&8 D

`when T&MASK`: only when that bit test of the launch's word term T is nonzero;
`unless T&MASK`: only when it is zero (Argument.active).  A launch whose pointer is
inactive is not held to it (the word may be anything); the word is still declared,
since the code reads it.

A kernel that copies tiles with the Tensor Memory Accelerator (sm_90) declares each
tensor map it reads, and the backend writes the map (bobc.nvidia.encode):

    //@ tensormap 9 of 1 binary32 dims (256, hi[7]/256) strides (1024) box (32, 8) swizzle 128b G

declares word 9, which bobc fills with the GPU address of the 128-byte map of the tensor
at pointer word 1's address (TensorMap: dims and strides are expressions as extents; box
and swizzle are fixed by the code's shared-memory layout).  The map's extent from the
pointer -- element + sum (dims[i] - 1) * strides[i] -- is held to the pointer's resident
like a pointer's, with the pointer's access.

A kernel driven by a table of entries in its parameters -- each block reading one entry, chosen
at run time, through a register-indexed constant read (`LDC R4, c[0x0][R2+param+0x10]`) --
declares the table, and each entry's words with their own `//@ param` lines:

    //@ table 1 rows 6 of 3 the regions: address, sizes, stride and first block

A register-indexed read must fall in the table's first row (words FIRST .. FIRST + WORDS - 1);
it then counts as a read of that word in every row.  (Each entry's pointer is held to its
extent like any other, on every launch, whichever blocks read it.)

A scalar is never an address; an unused word is one the kernel never reads.
The code's reads of its parameters -- the constant-bank operands of the
region's assembled code (`code_reads`: bank and offset read from each
instruction's encoded bits, as wide as the instruction: .64 eight bytes,
.128 sixteen, else four) -- must fall in declared pointer or scalar words:
`check_code_reads` refuses any other by name, a register-indexed read of the
parameters outside a declared table's first row, and a declared pointer the
code never reads.

A region's source is found by its identity and the build's target:
`<identity>.<target>.sass` (a per-target variant), else `<identity>.sass`, in the
first folder of the kernel search path (the plan's folders, then specs/) that has
either (bobc.kernel_search).  A variant is certified on its own: its contract and
its code, assembled for its target, are the ones checked for that target.  The same
rule holds for every kernel; no kernel is known by name here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..errors import shown_path, source_lines
from ..resources import doc
from ..sass.source import read_source, read_source_bytes
from ..kernel_search import find_source  # noqa: F401  (the certifier's and decode's search, per target)
from ..targets import TARGETS
from .findings import Finding

_CONTRACT = re.compile(r"^\s*//@\s*param\s+(\d+)\s+(pointer|scalar|unused)(?=\s|$)(.*)$")
_TERM = r"(?:0x[0-9a-fA-F]+|\d+|(?:lo|hi|word)\[\d+\])"
_EXPRESSION = rf"{_TERM}(?:[-*+/]{_TERM})*"
_CONDITION = r"(?:lo|hi|word)\[\d+\]&(?:0x[0-9a-fA-F]+|\d+)"
_POINTER = re.compile(rf"^\s*(read-write|read|write)\s+(resident|{_EXPRESSION})(?=\s|$)"
                      rf"(?:\s+each\s+({_EXPRESSION})\s+by\s+({_EXPRESSION})(?=\s|$))?"
                      rf"(?:\s+((?:when|unless)\s+{_CONDITION})(?=\s|$))?\s*(.*)$")
_SUM = re.compile(r"([-+])")
_PRODUCT = re.compile(r"([*/])")
_ARGUMENT_TERM = re.compile(r"^(lo|hi|word)\[(\d+)\]$")
# a parameter read in source text: c[0x0][param+X], c[0x0][RZ+param+X], or through an index register
# c[0x0][Rn+param+X] (group 1 the register: a table's read)
_READ = re.compile(r"c\[0x0\]\[(?:(RZ|R\d+)\s*\+\s*)?param(?:\s*\+\s*(0x[0-9a-fA-F]+|\d+))?\]")
_TENSORMAP = re.compile(r"^\s*//@\s*tensormap\b")
_BLOCK_FORM = re.compile(r"^\s*//@\s*block\s+(\d+)(?:\s+(\d+))?(?:\s+(\d+))?\s*(?://.*)?$")
_COPY_FORM = re.compile(rf"^\s*//@\s*copy\s+(\d+)\s+to\s+(\d+)\s+({_EXPRESSION})(?=\s|$)\s*(.*)$")
_TABLE_FORM = re.compile(r"^\s*//@\s*table\s+(\d+)\s+rows\s+(\d+)\s+of\s+(\d+)(?=\s|$)\s*(.*)$")
# Every line of a kernel source that starts with `//@` is a contract line, and its first word one of
# these (a misspelt keyword would otherwise drop the check the line declares); `//@` is nothing else's.
CONTRACT_KEYWORDS = ("param", "block", "table", "tensormap", "copy", "require")
_LINE = re.compile(r"^\s*//@\s*")
# a comment that opens like a contract line but is not written `//@` (`// @ block 64`, `#@ block 64`): a plain
# comment to the assembler, so the check it was written to declare would silently go away
_SPACED_LINE = re.compile(r"^\s*(?://\s+|#\s*)(@)")
# a launch's parameters lie in its bank 0 image from the target's parameter base, at most
# PARAMETER_BYTES on any target (the most room any Target's bank 0 image has past its parameter
# base: sm_90's 1024 - 0x210 = 496; counting the whole image, 1024, let words 62..127 pass here,
# words no launch can set; probe s40 docs9): no word past LAST_WORD can be set
PARAMETER_BYTES = max(target.parameter_block_bytes - target.parameter_base for target in TARGETS.values())
LAST_WORD = PARAMETER_BYTES // 8 - 1
# the bits of each term a condition may test (lo[i], hi[i]: 32; word[i]: 64)
_TERM_BITS = {"lo": 32, "hi": 32, "word": 64}
_KINDS = ("pointer", "scalar", "unused")
_ACCESSES = ("read", "write", "read-write")

# A tensor map's element, as contracts name it -> bobc.nvidia.tensor_map's data type name
# (CUDA's CU_TENSOR_MAP_DATA_TYPE_FLOAT16 and so on).
TENSOR_MAP_ELEMENTS = {"binary16": "float16", "binary32": "float32", "binary64": "float64",
                       "bfloat16": "bfloat16"}


@dataclass(frozen=True)
class Argument:
    index: int                 # parameter word i
    kind: str                  # "pointer", "scalar", "unused" or "tensormap" (a word bobc fills: TensorMap)
    extent: int = 0            # a fixed extent: bytes the code itself fixes (0 when `rule` says)
    access: str = ""           # "read", "write" or "read-write"
    what: str = ""
    rule: str = ""             # "resident", or an expression over the launch's words ("4*hi[7]")
    batches: str = ""          # `each COUNT by STRIDE`: expressions over the launch's words ("" = one)
    stride: str = ""
    condition: str = ""        # "when T&MASK" or "unless T&MASK": touched only under that bit test ("" = always)
    line: int = field(default=0, compare=False)   # its `//@` line in the source (0: not from a source line)

    def extent_for(self, words: dict[int, int], home_end: int, address: int) -> tuple[int | None, str]:
        """(bytes the pointer may touch, "") from the launch's parameter words (index -> value)
        and the end of the resident it points into; (None, why) when a word it names is missing."""
        if not self.rule:
            return self.extent, ""
        if self.rule == "resident":
            return home_end - address, ""
        return _evaluate(self.rule, words, "extent")

    def batch_offsets(self, words: dict[int, int], limit: int) -> tuple[list[int] | None, str]:
        """The byte offsets from the address of every batch the kernel touches ([0] without
        `each`); (None, why) when a word is missing or the count passes `limit`."""
        if not self.batches:
            return [0], ""
        count, why = _evaluate(self.batches, words, "batch count")
        if count is None:
            return None, why
        stride, why = _evaluate(self.stride, words, "batch stride")
        if stride is None:
            return None, why
        if count > limit:
            return None, (f"its batch count {self.batches} = {_shown(count)} passes the certifier's limit of "
                          f"{_shown(limit)}")
        return [b * stride for b in range(count)], ""

    def active(self, words: dict[int, int]) -> tuple[bool | None, str]:
        """(whether the kernel touches this pointer on a launch with these words, ""): always
        without a condition; (None, why) when the condition names a word the launch does not set."""
        return _holds(self.condition, words)

    @property
    def reads(self) -> bool:
        return "read" in self.access

    @property
    def writes(self) -> bool:
        return "write" in self.access


def _holds(condition: str, words: dict[int, int]) -> tuple[bool | None, str]:
    """Whether `when T&MASK` / `unless T&MASK` holds on the launch's words ("" always holds);
    (None, why) when it names a word the launch does not set."""
    if not condition:
        return True, ""
    sense, test = condition.split()
    term, mask = test.split("&")
    value, why = _term(term, words, "condition", condition)
    if value is None:
        return None, why
    return (value & int(mask, 0) != 0) == (sense == "when"), ""


@dataclass(frozen=True)
class TensorMap:
    """`//@ tensormap W of P ELEMENT dims (...) strides (...) box (...) swizzle SW [when|unless
    T&MASK] what`: word W holds the address of a tensor map bobc writes (bobc.nvidia.encode)
    over the tensor at pointer word P's address.  dims and strides (bytes, of dimensions 1..;
    dimension 0 is contiguous) are expressions over the launch's words, as extents; box and
    swizzle are what the kernel's shared-memory layout fixes."""

    word: int
    pointer: int
    element: str                   # a TENSOR_MAP_ELEMENTS key
    dims: tuple[str, ...]          # innermost first
    strides: tuple[str, ...]
    box: tuple[int, ...]
    swizzle: str                   # none, 32b, 64b, 128b
    condition: str = ""
    what: str = ""
    line: int = 0

    @property
    def data_type(self) -> str:
        return TENSOR_MAP_ELEMENTS[self.element]

    @property
    def element_bytes(self) -> int:
        from ..nvidia.tensor_map import DATA_TYPES
        return DATA_TYPES[self.data_type][1]

    def active(self, words: dict[int, int]) -> tuple[bool | None, str]:
        """Whether the kernel reads this map on a launch with these words (Argument.active)."""
        return _holds(self.condition, words)

    def shape(self, words: dict[int, int]) -> tuple[tuple[tuple[int, ...], tuple[int, ...]] | None, str]:
        """((dims, strides) evaluated on the launch's words, ""), or (None, why)."""
        out = []
        for what, expressions in (("dimension", self.dims), ("stride", self.strides)):
            values = []
            for expression in expressions:
                value, why = _evaluate(expression, words, f"tensor map {what}")
                if value is None:
                    return None, why
                values.append(value)
            out.append(tuple(values))
        return (out[0], out[1]), ""

    def extent(self, words: dict[int, int]) -> tuple[int | None, str]:
        """Bytes from the pointer's address the Tensor Memory Accelerator may touch through
        the map: an element past the farthest in-bounds element, element + sum (dims[i] - 1)
        * strides[i] with dimension 0's stride the element's size; (None, why)."""
        shape, why = self.shape(words)
        if shape is None:
            return None, why
        dims, strides = shape
        if any(d < 1 for d in dims):
            return None, f"its tensor map dimensions {', '.join(map(_shown, dims))} include an empty one"
        elem = self.element_bytes
        return elem + sum((d - 1) * s for d, s in zip(dims, (elem, *strides))), ""

    def tensor(self, words: dict[int, int], address: int):
        """(the bobc.nvidia.tensor_map.TiledTensor this map describes at `address`, ""), or (None, why)."""
        from ..nvidia.tensor_map import TiledTensor
        shape, why = self.shape(words)
        if shape is None:
            return None, why
        dims, strides = shape
        return TiledTensor(self.data_type, address, dims, strides, self.box, swizzle=self.swizzle), ""

    def named_words(self) -> set[int]:
        """The arguments the map is built from (its word, its pointer, every word its dims,
        strides and condition name): a host fill of any of them would leave the map stale."""
        text = " ".join((*self.dims, *self.strides, self.condition))
        return {self.word, self.pointer} | {int(i) for i in re.findall(r"(?:lo|hi|word)\[(\d+)\]", text)}

    @property
    def source_text(self) -> str:
        """The declaration, as the manifest and messages show it."""
        condition = f" {self.condition}" if self.condition else ""
        return (f"tensormap {self.word} of {self.pointer} {self.element} dims ({', '.join(self.dims)}) "
                f"strides ({', '.join(self.strides)}) box ({', '.join(map(str, self.box))}) "
                f"swizzle {self.swizzle}{condition}")


def _shown(value: int) -> str:
    """A number a launch's words make, as a fault shows it (bobc.certify.limits.shown: past 40
    digits, its first digits and how many it has)."""
    from .limits import shown
    return shown(value, commas=False)


def _term(term: str, words: dict[int, int], what: str, expression: str) -> tuple[int | None, str]:
    """A number, or lo[i], hi[i], word[i] of the launch's words; (None, why) for a word it does not set."""
    named = _ARGUMENT_TERM.match(term)
    if not named:
        return int(term, 0), ""
    part, index = named.group(1), int(named.group(2))
    if index not in words:
        return None, f"its {what} {expression} names parameter word {index}, which the launch does not set"
    word = words[index]
    return (word & 0xFFFFFFFF if part == "lo" else word >> 32 if part == "hi" else word), ""


def _evaluate(expression: str, words: dict[int, int], what: str) -> tuple[int | None, str]:
    """An extent, count or stride expression (numbers, lo[i], hi[i], word[i]; * and / before
    + and -, each left to right; / floors) on the launch's parameter words; (None, why) when it
    names a word the launch does not set, divides by zero or comes out negative."""
    total, sign = 0, 1
    for piece in _SUM.split(expression):
        if piece in ("+", "-"):
            sign = 1 if piece == "+" else -1
            continue
        value, operator = 1, "*"
        for token in _PRODUCT.split(piece):
            if token in ("*", "/"):
                operator = token
                continue
            term, why = _term(token, words, what, expression)
            if term is None:
                return None, why
            if operator == "/" and term == 0:
                cause = f" ({token} is 0 on this launch)" if _ARGUMENT_TERM.match(token) else ""
                return None, f"its {what} {expression} divides by zero{cause}"
            value = value * term if operator == "*" else value // term
        total += sign * value
    if total < 0:
        return None, f"its {what} {expression} is negative on this launch ({_shown(total)})"
    return total, ""


@dataclass(frozen=True)
class ParameterRead:
    line: int
    offset: int                # bytes from the parameter base
    width: int
    text: str
    indexed: bool = False      # through an index register: of a table's first row (ParameterTable)
    # a bank 0 read below the parameters: its bank 0 offset (`offset` is then negative), else None;
    # one of none of the driver's words (driver_constants, `driver` empty) is refused
    below: int | None = None
    column: int = 0            # where the constant operand is written (0: not known)
    driver: str = ""           # for a read below the parameters: the driver's words it reads ("": none)
    # a parameter read of the assembled code whose source writes its offset as a number (c[0x0][0x210],
    # not c[0x0][param+N]): its bank 0 offset, else None (another target's offset may be the cause)
    absolute: int | None = None

    def source_at(self, contract: "KernelContract") -> str:
        return f"{self.text} at {contract.source.name}:{self.line}"

    @property
    def words(self) -> range:
        return range(self.offset // 8, (self.offset + self.width - 1) // 8 + 1)


@dataclass(frozen=True)
class ParameterTable:
    """`//@ table FIRST rows ROWS of WORDS`: ROWS entries of WORDS words from word FIRST, which the
    code reads through an index register."""
    first: int
    rows: int
    words: int
    what: str = ""


@dataclass(frozen=True)
class ParameterCopy:
    """`//@ copy FROM to TO BYTES what`: every launch copies BYTES bytes (an expression over its
    scalar words, as an extent) from the address in pointer word FROM to the address in pointer
    word TO, byte i of the source to byte i of the destination, and writes nothing else there.
    The simulator holds each launch to it (bobc.sim.contracts.begin_copies / end_copies)."""
    source: int
    destination: int
    size: str               # an expression over the launch's words, or a number
    what: str = ""
    line: int = field(default=0, compare=False)

    def bytes_for(self, words: dict[int, int]) -> tuple[int | None, str]:
        """(bytes copied, "") on a launch with these words; (None, why) when a word it names is
        missing, or the size is negative or divides by 0."""
        return _evaluate(self.size, words, "copy size")


_REQUIRE_RULES = ("multiple of N", "from A to B", "one of A,B,...")
_REQUIRE_FORM_TEXT = ("a requirement is declared as '//@ require EXPRESSION multiple of N|from A to B|one of A,B,... why' "
                      "(EXPRESSION over scalar words as an extent is, no spaces; N, A, B numbers: //@ require hi[6] "
                      "multiple of 128 the row's chunks)")


@dataclass(frozen=True)
class Requirement:
    """`//@ require EXPRESSION RULE why`: the shapes the code serves, as a condition on the launch's own
    words that every launch must meet (the certifier refuses one that does not, at build time): the
    expression a multiple of N, between A and B (both included), or one of a list of numbers."""
    expression: str
    rule: str                  # "multiple", "range" or "one-of"
    numbers: tuple[int, ...]   # (N,), (A, B) or the list
    what: str = ""
    line: int = field(default=0, compare=False)

    @property
    def rule_text(self) -> str:
        if self.rule == "multiple":
            return f"a multiple of {self.numbers[0]}"
        if self.rule == "range":
            return f"from {self.numbers[0]} to {self.numbers[1]}"
        return "one of " + ", ".join(map(str, self.numbers))

    @property
    def source_text(self) -> str:
        written = (f"multiple of {self.numbers[0]}" if self.rule == "multiple" else
                   f"from {self.numbers[0]} to {self.numbers[1]}" if self.rule == "range" else
                   "one of " + ",".join(map(str, self.numbers)))
        return f"//@ require {self.expression} {written}"

    def named_words(self) -> set[int]:
        return {int(w) for w in re.findall(r"\b(?:lo|hi|word)\[(\d+)\]", self.expression)}

    def named_bytes(self) -> set[int]:
        """The parameter bytes its terms read (lo[i]: 8i..8i+3, hi[i]: 8i+4..8i+7, word[i]: all eight)."""
        out: set[int] = set()
        for part, index in re.findall(r"\b(lo|hi|word)\[(\d+)\]", self.expression):
            first = 8 * int(index) + (4 if part == "hi" else 0)
            out.update(range(first, first + (8 if part == "word" else 4)))
        return out

    def check(self, words: dict[int, int]) -> tuple[bool | None, int | None, str]:
        """(whether the launch's words meet it, the expression's value, why not known): None when
        the expression names a word the launch does not set (or divides by zero there)."""
        value, why = _evaluate(self.expression, words, "requirement")
        if value is None:
            return None, None, why
        if self.rule == "multiple":
            return value % self.numbers[0] == 0, value, ""
        if self.rule == "range":
            return self.numbers[0] <= value <= self.numbers[1], value, ""
        return value in self.numbers, value, ""


_REQUIRE = re.compile(r"^\s*//@\s*require\s+(\S+)\s+(?:(multiple\s+of)\s+(\S+)|(from)\s+(\S+)\s+to\s+(\S+)|"
                      r"(one\s+of)\s+(\S+))(?=\s|$)\s*(.*)$")
_NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+")


def _parse_requirement(path, number: int, line: str, at: int) -> Requirement:
    """One `//@ require` line; ContractError at file:line:column naming what is wrong there."""
    form = _REQUIRE.match(line)
    if form is None:
        words = _words(line, at)
        if not words:
            raise ContractError(f"{path}:{number}:{len(line.rstrip()) + 1}: {_REQUIRE_FORM_TEXT}")
        problem = _expression_problem(words[0][0])
        if problem is not None:
            raise ContractError(f"{path}:{number}:{words[0][1] + problem[0]}: the requirement's expression "
                                f"{words[0][0]}: {problem[1]}")
        column = words[1][1] if len(words) > 1 else len(line.rstrip()) + 1
        shown = repr(words[1][0]) if len(words) > 1 else "the end of the line"
        raise ContractError(f"{path}:{number}:{column}: expected the rule after the requirement's expression "
                            f"({', '.join(_REQUIRE_RULES)}), found {shown}; {_REQUIRE_FORM_TEXT}")
    expression = form.group(1)
    problem = _expression_problem(expression)
    if problem is not None:
        raise ContractError(f"{path}:{number}:{form.start(1) + problem[0] + 1}: the requirement's expression "
                            f"{expression}: {problem[1]}")
    groups = (3,) if form.group(2) else (5, 6) if form.group(4) else (8,)
    texts = form.group(8).split(",") if form.group(7) else [form.group(g) for g in groups]
    column = form.start(groups[0]) + 1
    if "" in texts:
        raise ContractError(f"{path}:{number}:{form.start(9) + 1}: the requirement's list "
                            f"'{form.group(8)} {form.group(9).split()[0] if form.group(9).split() else ''}' is "
                            f"written with a space or goes on: a list is numbers joined by commas with no spaces "
                            f"(one of 128,256,512); {_REQUIRE_FORM_TEXT}")
    columns = [form.start(g) + 1 for g in groups] if not form.group(7) else [column] * len(texts)
    for text, at_column in zip(texts, columns):
        if not _NUMBER.fullmatch(text):
            raise ContractError(f"{path}:{number}:{at_column}: {text!r} is not a number; {_REQUIRE_FORM_TEXT}")
    numbers = tuple(_count(t) for t in texts)
    if form.group(2):
        rule = "multiple"
        if numbers[0] == 0:
            raise ContractError(f"{path}:{number}:{column}: a multiple of 0 is only 0: the requirement would refuse "
                                f"every launch but one of 0; {_REQUIRE_FORM_TEXT}")
    elif form.group(4):
        rule = "range"
        if numbers[0] > numbers[1]:
            raise ContractError(f"{path}:{number}:{column}: from {texts[0]} to {texts[1]} holds no number (its "
                                f"least is more than its most): the requirement would refuse every launch")
    else:
        rule = "one-of"
    what = form.group(9).strip()
    if re.match(r"(multiple|from|one|to|of)\b|[-+*/,]", what):
        raise ContractError(f"{path}:{number}:{form.start(9) + 1}: the requirement's rule is written with a space or "
                            f"goes on ('{what.split()[0]}'); {_REQUIRE_FORM_TEXT}")
    return Requirement(expression, rule, numbers, what, line=number)


@dataclass(frozen=True)
class KernelContract:
    kernel: str
    source: Path
    arguments: tuple[Argument, ...]
    reads: tuple[ParameterRead, ...]
    tensor_maps: tuple[TensorMap, ...] = ()     # each also declares its word: an Argument of kind "tensormap"
    tables: tuple[ParameterTable, ...] = ()
    # `//@ block X [Y [Z]]`: the block the code is written for (its thread indexing), or None
    block: tuple[int, int, int] | None = None
    # `reads` are the assembled code's (code_reads: absolute offsets too), not the source text's
    # c[0x0][param+N] operands (parse_contract)
    assembled: bool = False
    copies: tuple[ParameterCopy, ...] = ()      # `//@ copy FROM to TO BYTES`: what each launch copies where
    # `//@ require EXPRESSION RULE`: what every launch's words must meet (the shapes the code serves)
    requirements: tuple[Requirement, ...] = ()

    def argument(self, index: int) -> Argument | None:
        return next((a for a in self.arguments if a.index == index), None)


class ContractError(ValueError):
    """A contract comment that does not parse; names the file and line."""

    def placed(self) -> tuple[str, "Span | None"]:
        """Its message less the `file:line:column: ` it begins with, and that place (None when it
        names none): the certifier's fault and `bobc asm --cubin`'s refusal are located there, with
        the line and a caret, as every other message of a source place is (README)."""
        from ..errors import Span

        message = str(self)
        found = _PLACED.fullmatch(message)
        if found is None:
            return message, None
        return found["rest"], Span(found["path"], int(found["line"]), int(found["column"]))


_PLACED = re.compile(r"(?P<path>[^\n]+?):(?P<line>\d+):(?P<column>\d+): (?P<rest>.*)", re.DOTALL)


_TENSORMAP_FORM = ("'//@ tensormap W of P ELEMENT dims (D0, D1[, D2]) strides (S1[, S2]) box (B0, B1[, B2]) "
                   "swizzle SW [when|unless TERM&MASK] what'")
_SWIZZLES = ("none", "32b", "64b", "128b")       # bobc.nvidia.tensor_map.SWIZZLES' names


def _parse_tensor_map(path, number: int, line: str) -> TensorMap:
    """One `//@ tensormap` line; ContractError at file:line:column naming what is wrong there."""
    at = _TENSORMAP.match(line).end()

    def fail(column: int, what: str) -> ContractError:
        return ContractError(f"{path}:{number}:{column + 1}: {what}; a tensor map is declared as "
                             f"{_TENSORMAP_FORM} (ELEMENT: {', '.join(TENSOR_MAP_ELEMENTS)}; D, S: expressions "
                             f"as extents, no spaces; B: numbers; SW: {', '.join(_SWIZZLES)})")

    def take(pattern: str, what: str):
        nonlocal at
        found = re.compile(pattern).match(line, at)
        if not found:
            gap = re.compile(r"\s*").match(line, at).end()
            shown = line[gap:].split()[0] if line[gap:].split() else "the end of the line"
            raise fail(gap, f"expected {what}, found {shown!r}")
        at = found.end()
        return found

    def listed(keyword: str, item: str, what: str) -> list[tuple[str, int]]:
        opened = take(rf"\s+{keyword}\s*\(([^)]*)\)", f"'{keyword} (...)' ({what})")
        start, items = opened.start(1), []
        for piece in opened.group(1).split(","):
            text = piece.strip()
            column = start + len(piece) - len(piece.lstrip())
            start += len(piece) + 1
            if not text and opened.group(1).strip() == "" and keyword == "strides":
                continue                       # rank 1: no strides
            problem = _expression_problem(text) if item == _EXPRESSION and text and not re.search(r"\s", text) \
                else None
            if problem is not None:
                raise fail(column + problem[0], f"{keyword} item {text}: {problem[1]}")
            if not re.fullmatch(item, text):
                raise fail(column, f"{keyword} item {text!r} is not {what}")
            items.append((text, column))
        return items

    numbers = []
    for pattern, what in ((r"\s+(\d+)(?=\s)", "the word bobc fills with the map's address (a number)"),
                          (r"\s+of\s+(\d+)(?=\s)", "'of P' (P: the pointer word the map covers)")):
        found = take(pattern, what)
        if _count(found.group(1)) > LAST_WORD:
            raise fail(found.start(1), f"word {_digits_shown(found.group(1))} is past every launch's parameters "
                                       f"(at most {PARAMETER_BYTES} bytes: words 0 to {LAST_WORD})")
        numbers.append(int(found.group(1)))
    word, pointer = numbers
    element = take(r"\s+(\S+)", "an element type")
    if element.group(1) not in TENSOR_MAP_ELEMENTS:
        raise fail(element.start(1), f"unknown tensor map element {element.group(1)!r} (one of "
                                     f"{', '.join(TENSOR_MAP_ELEMENTS)})")
    dims = listed("dims", _EXPRESSION, "an expression such as 256 or hi[7]/256")
    strides = listed("strides", _EXPRESSION, "an expression (bytes)")
    box = listed("box", r"0x[0-9a-fA-F]+|\d+", "a number (the code's shared-memory tile fixes it)")
    swizzle = take(r"\s+swizzle\s+(\S+)", "'swizzle SW'")
    if swizzle.group(1) not in _SWIZZLES:
        raise fail(swizzle.start(1), f"unknown swizzle {swizzle.group(1)!r} (one of {', '.join(_SWIZZLES)})")
    condition = ""
    if re.compile(r"\s+(when|unless)\s").match(line, at):
        found = take(rf"\s+((?:when|unless)\s+{_CONDITION})(?=\s|$)",
                     "a condition 'when TERM&MASK' or 'unless TERM&MASK' (no spaces)")
        condition = " ".join(found.group(1).split())
        problem = _condition_problem(condition, "the tensor map would be inactive on every launch (no map written, "
                                                "its word 0)")
        if problem is not None:
            test = condition.split()[1]
            raise ContractError(f"{path}:{number}:{found.end(1) - len(test) + problem[0] - (len(condition) - len(test)) + 1}: "
                                f"tensor map word {word}'s {problem[1].removeprefix('its ')}")
    if not 1 <= len(dims) <= 5:
        raise fail(_TENSORMAP.match(line).end(), f"a tensor map has 1 to 5 dimensions, not {len(dims)}")
    for name, values, count in (("strides", strides, len(dims) - 1), ("box", box, len(dims))):
        if len(values) != count:
            column = values[-1][1] if values else at
            raise fail(column, f"{len(dims)} dims take {count} {name}, not {len(values)} (strides are given "
                               f"for dimensions 1.. only: dimension 0 is contiguous)")
    _check_box(fail, element.group(1), box, swizzle)
    return TensorMap(word, pointer, element.group(1), tuple(t for t, _ in dims), tuple(t for t, _ in strides),
                     tuple(int(t, 0) for t, _ in box), swizzle.group(1), condition, line[at:].strip(), number)


def _check_box(fail, element: str, box: list[tuple[str, int]], swizzle) -> None:
    """The CUDA driver's rules (cuTensorMapEncodeTiled, bobc.nvidia.tensor_map.check) that the
    line alone decides -- the box, its element and the swizzle are numbers, the same on every
    launch -- refused at the line and column even where no launch makes the map (a condition
    false on every launch, a kernel no plan launches)."""
    from ..nvidia.tensor_map import DATA_TYPES, MAX_BOX, MAX_BOX_BYTES, SWIZZLE_BYTES
    size = DATA_TYPES[TENSOR_MAP_ELEMENTS[element]][1]
    for text, column in box:
        if not 1 <= int(text, 0) <= MAX_BOX:
            raise fail(column, f"box item {text} is outside 1 to {MAX_BOX}: a box has 1 to {MAX_BOX} elements along "
                               f"each dimension (the CUDA driver's cuTensorMapEncodeTiled)")
    (text, column), row = box[0], int(box[0][0], 0) * size
    if row % 16:
        raise fail(column, f"box item {text}: a box row ({text} {element} elements) is {row} bytes, not a multiple "
                           f"of 16 (the CUDA driver's cuTensorMapEncodeTiled)")
    span = SWIZZLE_BYTES[swizzle.group(1)]
    if span is not None and row > span:
        raise fail(column, f"box item {text}: a box row ({text} {element} elements) is {row} bytes, longer than "
                           f"the {span}-byte swizzle's span (at most {span // size} elements; the CUDA driver's "
                           f"cuTensorMapEncodeTiled)")
    total = size
    for text, _ in box:
        total *= int(text, 0)
    if total > MAX_BOX_BYTES:
        raise fail(box[0][1], f"the box is {total} bytes, more than the {MAX_BOX_BYTES} bytes of shared memory a "
                              f"block can have (the CUDA driver's cuTensorMapEncodeTiled refuses it)")


def _width(instruction: str) -> int:
    mnemonic = instruction.split()[0] if instruction.split() else ""
    if mnemonic.startswith("@"):
        mnemonic = instruction.split()[1]
    return 16 if ".128" in mnemonic else 8 if ".64" in mnemonic else 4


def _nearest(word: str, choices) -> str:
    """' (did you mean X?)' for the choice nearest `word`, or '' when none is near."""
    import difflib
    close = difflib.get_close_matches(word.lower(), choices, n=1, cutoff=0.5)
    return f" (did you mean {close[0]}?)" if close else ""


def _words(line: str, at: int) -> list[tuple[str, int]]:
    """The whitespace-separated words of `line` from index `at`, each with its column (from 1)."""
    return [(found.group(), found.start() + 1) for found in re.compile(r"\S+").finditer(line, at)]


def _first_wrong(line: str, at: int, forms) -> int:
    """The column of the first word from index `at` that does not fullmatch its form in `forms`
    (regular expressions, in order), or of the end of the line when a word is missing."""
    for (word, column), form in zip(_words(line, at), forms):
        if not re.fullmatch(form, word):
            return column
    return len(line.rstrip()) + 1


def _terms(expression: str) -> list[tuple[int, str, str]]:
    """The terms of an expression as (index in it, the operator before it or '', the term), split at
    + - * / outside brackets (so lo[-1] stays one term)."""
    out, start, operator, depth = [], 0, "", 0
    for at, char in enumerate(expression):
        depth += (char == "[") - (char == "]")
        if char in "+-*/" and depth == 0:
            out.append((start, operator, expression[start:at]))
            start, operator = at + 1, char
    out.append((start, operator, expression[start:]))
    return out


_TERM_SHAPE = re.compile(r"([A-Za-z_]\w*)\[([^\]]*)\]")


def _expression_problem(expression: str) -> tuple[int, str] | None:
    """(index in `expression`, what is wrong there) for an extent, count or stride expression that
    no launch could evaluate as meant, else None: a term that is not a number, lo[i], hi[i] or
    word[i] (saying why: a negative or missing index, an unknown name, a parenthesis, two operators
    in a row), a word past every launch's parameters (LAST_WORD), a division by the number 0."""
    terms = "a term is a number, lo[i], hi[i] or word[i]"
    for at, operator, term in _terms(expression):
        bracket = next((i for i, c in enumerate(term) if c in "()"), None)
        if bracket is not None:
            return at + bracket, (f"an expression has no parentheses ({terms}, joined by * and /, which bind "
                                  f"tighter, then + and -, each level left to right: 2*lo[8]*lo[6]-2*lo[8]+2*lo[7])")
        if not term:
            if not operator:
                return at, f"an expression starts with a term ({terms}), not '{expression[:1]}'"
            if at == len(expression):
                return at - 1, f"nothing follows the last '{operator}' ({terms})"
            return at - 1, f"two operators in a row ('{operator}{expression[at]}'): {terms}"
        if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", term):
            if operator == "/" and int(term, 0) == 0:
                return at, f"it divides by the number {term}: every launch would divide by zero"
            continue
        shaped = _TERM_SHAPE.fullmatch(term)
        if not shaped:
            return at, f"unknown term {term!r}: {terms} (no spaces)"
        name, index = shaped.groups()
        if name not in _TERM_BITS:
            return at, f"unknown term {term!r}{_nearest(name, _TERM_BITS)}: {terms}"
        column = at + len(name) + 1
        if re.fullmatch(r"-\d+", index):
            return column, (f"{term} names word {index}: words are numbered from 0 (word i is bytes 8i..8i+7 "
                            f"of the parameters)")
        if not re.fullmatch(r"\d+", index):
            return column, f"the word index {index!r} of {term} is not a number: {terms}, i a word's number"
        if int(index) > LAST_WORD:
            return column, (f"{name}[{_shown(int(index))}] names word {_shown(int(index))}, past every launch's "
                            f"parameters (at most {PARAMETER_BYTES} bytes: words 0 to {LAST_WORD})")
    return None


def _condition_problem(condition: str, what: str) -> tuple[int, str] | None:
    """(index in `condition`, what is wrong there) for `when TERM&MASK` / `unless TERM&MASK`
    whose mask can never select a bit of its term -- 0, or bits past the term's 32 (lo, hi) or 64
    (word) -- or whose term names no word a launch has; else None.  `what`: what would then be
    inactive on every launch ("the pointer would be inactive on every launch, its extent never
    checked").  Such a condition never holds (when) or always does (unless): a typo that would
    silently turn a check off."""
    sense, _, test = condition.partition(" ")
    start = len(condition) - len(test.lstrip())
    test = test.strip()
    term, _, mask = test.partition("&")
    problem = _expression_problem(term)
    if problem is not None:
        return start + problem[0], problem[1]
    bits = _TERM_BITS[_ARGUMENT_TERM.match(term).group(1)]
    value, full = int(mask, 0), (1 << bits) - 1
    at = start + len(term) + 1
    holds = what if sense == "when" else "the condition would hold on every launch"
    fix = "a mask names the flag's bits within its term (when hi[7]&16; word[i] for a bit past 31)"
    if value == 0:
        return at, f"its condition '{condition}' tests no bit (the mask is 0): {holds}; {fix}"
    if value & ~full:
        past = f"bits {term} cannot hold ({term} is {bits} bits: {value & ~full:#x} lies past them)"
        if value & full == 0:
            return at, f"its condition '{condition}' tests only {past}: {holds}; {fix}"
        return at, f"its condition '{condition}' tests {past}, which are never set; {fix}"
    return None


def _keyword(path, number: int, line: str) -> tuple[str, int] | None:
    """(keyword, index just past it) of a `//@` line; None for any other line.  A `//@` line
    whose first word is not a contract keyword is refused at file:line:column, naming the word
    and the nearest keyword: a misspelt line would otherwise drop the check it declares."""
    opened = _LINE.match(line)
    known = ", ".join(f"//@ {k}" for k in CONTRACT_KEYWORDS)
    if not opened:
        spaced = _SPACED_LINE.match(line)
        meant = re.compile(r"\s*([A-Za-z_][\w-]*)").match(line, spaced.end()) if spaced else None
        if meant and (meant.group(1) in CONTRACT_KEYWORDS or _nearest(meant.group(1), CONTRACT_KEYWORDS)):
            # `// @ block 64`: a plain comment to the assembler, so the check it declares would go away;
            # a comment whose @ starts another word (`// @todo`) is left a comment
            written = line[spaced.start():meant.end()].strip()
            keyword = meant.group(1) if meant.group(1) in CONTRACT_KEYWORDS else \
                _nearest(meant.group(1), CONTRACT_KEYWORDS).removeprefix(" (did you mean ").removesuffix("?)")
            raise ContractError(f"{path}:{number}:{spaced.start(1) + 1}: '{written}' is a plain comment, not a "
                                f"contract line: a contract line is written //@ with no space ({known}); write "
                                f"'//@ {keyword}{line[meant.end():].rstrip()}', or leave out the @ for a plain comment "
                                f"({doc('kernel-contracts.md')})")
        comment = re.compile(r"//|#").search(line)      # where the assembler's comment starts (sass.syntax)
        if comment is not None and line[:comment.start()].strip():
            after = re.compile(r"\s*@\s*([A-Za-z_][\w-]*)").match(line, comment.end())
            if after and (after.group(1) in CONTRACT_KEYWORDS or _nearest(after.group(1), CONTRACT_KEYWORDS)):
                # `EXIT //@ block 64`: a comment after code, so the check it declares would go away;
                # `EXIT // @todo` (another word) is left a comment
                keyword = after.group(1) if after.group(1) in CONTRACT_KEYWORDS else \
                    _nearest(after.group(1), CONTRACT_KEYWORDS).removeprefix(" (did you mean ").removesuffix("?)")
                written = line[comment.start():after.end()].strip()
                raise ContractError(f"{path}:{number}:{comment.start() + 1}: '{written}' follows code on its line "
                                    f"('{line[:comment.start()].strip()}'), so it is a plain comment, not a contract "
                                    f"line: a contract line stands alone on its line ({known}); move "
                                    f"'//@ {keyword}{line[after.end():].rstrip()}' to a line of its own, or leave "
                                    f"out the @ for a plain comment ({doc('kernel-contracts.md')})")
        return None
    word = re.compile(r"[A-Za-z_][\w-]*").match(line, opened.end())
    if word and word.group() in CONTRACT_KEYWORDS:
        return word.group(), word.end()
    where = f"{path}:{number}:{opened.end() + 1}"
    if word is None:
        shown = repr(line[opened.end():].split()[0]) if line[opened.end():].split() else "nothing"
        raise ContractError(f"{where}: a contract line starts with what it declares (one of {known}), found "
                            f"{shown} after '//@'; a plain comment is written // without @ "
                            f"({doc('kernel-contracts.md')})")
    raise ContractError(f"{where}: unknown contract line '//@ {word.group()}'"
                        f"{_nearest(word.group(), CONTRACT_KEYWORDS)}: a contract line is one of {known}; a plain "
                        f"comment is written // without @ ({doc('kernel-contracts.md')})")


_POINTER_FORM = ("'//@ param N pointer read|write|read-write EXTENT [each COUNT by STRIDE] [when|unless "
                 "TERM&MASK] what' (EXTENT: resident, an expression such as 4*hi[7] or "
                 "2*lo[8]*lo[6]-2*lo[8]+2*lo[7] (+ - * /, no spaces), or a size the code fixes; COUNT, STRIDE: "
                 "expressions; TERM: lo[i], hi[i] or word[i], MASK a number: when hi[7]&16)")


def _parameter(path, number: int, line: str, at: int) -> tuple[re.Match, int]:
    """A `//@ param` line's match of _CONTRACT and the index its rest starts at; ContractError at
    file:line:column for a line without a word number and a known kind."""
    declared = _CONTRACT.match(line)
    if declared:
        rest = declared.group(3)
        return declared, declared.start(3) + len(rest) - len(rest.lstrip())
    words = _words(line, at)
    end = len(line.rstrip()) + 1
    if not words or not re.fullmatch(r"\d+", words[0][0]):
        column, shown = (words[0][1], repr(words[0][0])) if words else (end, "the end of the line")
        raise ContractError(f"{path}:{number}:{column}: expected the parameter word's number after '//@ param', "
                            f"found {shown}: a word is declared as '//@ param N pointer|scalar|unused what' "
                            f"(N: 0, 1, ...: bytes 8N..8N+7 of the parameters)")
    index = words[0][0]
    if len(words) < 2:
        raise ContractError(f"{path}:{number}:{end}: expected the kind of parameter word {index} (pointer, "
                            f"scalar or unused), found the end of the line: '//@ param {index} scalar what'")
    kind, column = words[1]
    raise ContractError(f"{path}:{number}:{column}: unknown kind {kind!r} of parameter word {index}"
                        f"{_nearest(kind, _KINDS)}: a parameter word is a pointer, a scalar or unused "
                        f"('//@ param {index} scalar what')")


def _count(digits: str) -> int:
    """A number a contract line writes (decimal or 0x), read without converting thousands of digits:
    past 18 digits it is only known to be huge (10**18), which every bound here refuses."""
    return int(digits, 0) if len(digits) <= 18 else 10 ** 18


def _digits_shown(digits: str) -> str:
    """A number as written, as a message shows it (past 40 digits: its first 12 and how many it has)."""
    return digits if len(digits) <= 40 else f"{digits[:12]}... ({len(digits)} digits)"


def _word_ranges(words: list[int]) -> str:
    """3, 4, 5, 9 -> '3 to 5 and 9'."""
    runs = []
    for word in words:
        if runs and runs[-1][1] == word - 1:
            runs[-1][1] = word
        else:
            runs.append([word, word])
    shown = [str(a) if a == b else f"{a} to {b}" for a, b in runs]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _block_limits():
    return next(iter(TARGETS.values())).limits      # every target's block bounds agree (targets.CC80_PLUS_LIMITS)


_BLOCK_BOUNDS = (f"at most {_block_limits().threads_per_block} threads: x and y up to {_block_limits().block_xy}, "
                 f"z up to {_block_limits().block_z}")


def _block_fits(block: tuple[int, int, int]) -> bool:
    limits = _block_limits()
    x, y, z = block
    return (x <= limits.block_xy and y <= limits.block_xy and z <= limits.block_z
            and x * y * z <= limits.threads_per_block)


def _check_pointer_parts(path, number: int, line: str, rest_at: int, index: int, pointer: re.Match) -> None:
    """Refuse, at the column of what is wrong, a pointer's extent, batch count or stride that no launch
    evaluates as meant (_expression_problem: a division by the number 0, a word past the parameters),
    and a condition whose mask selects no bit its term holds (_condition_problem)."""
    for group, what in ((2, "extent"), (3, "batch count"), (4, "batch stride")):
        text = pointer.group(group)
        problem = _expression_problem(text) if text and text != "resident" else None
        if problem is not None:
            raise ContractError(f"{path}:{number}:{rest_at + pointer.start(group) + problem[0] + 1}: pointer word "
                                f"{index}'s {what} {text}: {problem[1]}")
    condition = " ".join((pointer.group(5) or "").split())
    if condition:
        problem = _condition_problem(condition, "the pointer would be inactive on every launch, its extent "
                                                "never checked")
        if problem is not None:
            # (the condition is written `when TERM&MASK`, perhaps with several spaces: its test is the last word)
            test_at = pointer.end(5) - len(condition.split()[1])
            offset = problem[0] - (len(condition) - len(condition.split()[1]))
            raise ContractError(f"{path}:{number}:{rest_at + test_at + offset + 1}: pointer word {index}'s "
                                f"{problem[1].removeprefix('its ')}")


def parse_contract(path: Path, kernel: str | None = None) -> KernelContract:
    """The contract comments and the parameter reads of one kernel source.  Every line that
    starts with `//@` is a contract line (CONTRACT_KEYWORDS); one that does not parse is refused
    at file:line:column (ContractError).  The file is read every time; a text already parsed
    under the same path and kernel gives the same (frozen) contract without parsing it again
    (a build's certifier and its launch ordering both read each kernel's: probe s35
    buildspeed finding 5)."""
    return _contract_of(path, kernel, read_source(path))


@lru_cache(maxsize=256)
def _contract_of(path: Path, kernel: str | None, text: str) -> KernelContract:
    """parse_contract of `text`, the source read at `path`; a refusal is raised again, never kept."""
    arguments, reads, maps, tables, block = [], [], [], [], None
    copies, copied = [], []     # ParameterCopy; (copy, line, columns of FROM, TO and BYTES)
    requirements = []   # Requirement
    sized = []          # (pointer word, line, column, its extent, count and stride expressions)
    placed = []         # (table, line, column of its ROWS): each word its rows reach must be declared
    for number, line in enumerate(source_lines(text), start=1):
        keyword, at = _keyword(path, number, line) or (None, 0)
        if keyword == "block":
            form = _BLOCK_FORM.match(line)
            dims = tuple(_count(d) for d in form.groups() if d is not None) if form else ()
            form_text = "a kernel's block is declared as '//@ block X [Y [Z]]' (the threads its code is written " \
                        "for: //@ block 256)"
            if block is not None:
                raise ContractError(f"{path}:{number}:{_LINE.match(line).end() + 1}: a kernel's block is declared "
                                    f"once, and this is a second //@ block line")
            if not dims or min(dims) < 1:
                wrong = next(((i, w, c) for i, (w, c) in enumerate(_words(line, at))
                              if i >= 3 or not re.fullmatch(r"\d+", w) or _count(w) < 1), None)
                if wrong is None:
                    column, why = len(line.rstrip()) + 1, "the block's threads are missing"
                else:
                    i, w, column = wrong
                    why = (f"a block has at most three dimensions, and {w!r} would be a fourth" if i >= 3 else
                           f"{w!r} is not a number of threads" if not re.fullmatch(r"\d+", w) else
                           f"a block has at least 1 thread in each dimension, not {w}")
                raise ContractError(f"{path}:{number}:{column}: {why}; {form_text}")
            block = (dims + (1, 1))[:3]
            if not _block_fits(block):
                raise ContractError(f"{path}:{number}:{form.start(1) + 1}: a block of {' x '.join(map(_shown, block))} "
                                    f"threads is more than a block holds ({_BLOCK_BOUNDS}); {form_text}")
            continue
        if keyword == "table":
            table = _TABLE_FORM.match(line)
            form_text = ("a table is declared as '//@ table FIRST rows ROWS of WORDS what' (the words of ROWS "
                         "entries of WORDS words from word FIRST: //@ table 1 rows 6 of 3)")
            if not table:
                column = _first_wrong(line, at, (r"\d+", "rows", r"\d+", "of", r"\d+"))
                raise ContractError(f"{path}:{number}:{column}: {form_text}")
            first, rows, width = (_count(table.group(i)) for i in (1, 2, 3))
            if rows < 1 or width < 1:
                group, what = (2, "row") if rows < 1 else (3, "word")
                raise ContractError(f"{path}:{number}:{table.start(group) + 1}: a table has at least 1 {what}"
                                    f"{' a row' if what == 'word' else ''}, not 0; {form_text}")
            if first + rows * width - 1 > LAST_WORD:
                raise ContractError(f"{path}:{number}:{table.start(1) + 1}: table {table.group(1)} rows "
                                    f"{table.group(2)} of {table.group(3)} reaches word "
                                    f"{_shown(first + rows * width - 1)}, past every launch's parameters (at most "
                                    f"{PARAMETER_BYTES} bytes: words 0 to {LAST_WORD}); {form_text}")
            tables.append(ParameterTable(first, rows, width, table.group(4).strip()))
            placed.append((tables[-1], number, table.start(2) + 1))
            continue
        if keyword == "copy":
            copy = _COPY_FORM.match(line)
            if not copy or re.match(r"[-+*/]", copy.group(4)):
                column = _first_wrong(line, at, (r"\d+", "to", r"\d+", _EXPRESSION))
                why = ""
                if copy:
                    column = copy.start(4) + 1
                    why = f"the copy's size is written with a space ('{copy.group(3)} {copy.group(4).split()[0]}'); "
                else:
                    words = _words(line, at)
                    if len(words) > 3 and column == words[3][1] and _expression_problem(words[3][0]) is not None:
                        offset, problem = _expression_problem(words[3][0])
                        column, why = column + offset, f"the copy's size {words[3][0]}: {problem}; "
                raise ContractError(f"{path}:{number}:{column}: {why}{_COPY_FORM_TEXT}")
            for group in (1, 2):
                if _count(copy.group(group)) > LAST_WORD:
                    raise ContractError(f"{path}:{number}:{copy.start(group) + 1}: parameter word "
                                        f"{_digits_shown(copy.group(group))} is past every launch's parameters (at "
                                        f"most {PARAMETER_BYTES} bytes: words 0 to {LAST_WORD}); {_COPY_FORM_TEXT}")
            problem = _expression_problem(copy.group(3))
            if problem is not None:
                raise ContractError(f"{path}:{number}:{copy.start(3) + problem[0] + 1}: the copy's size "
                                    f"{copy.group(3)}: {problem[1]}")
            copies.append(ParameterCopy(int(copy.group(1)), int(copy.group(2)), copy.group(3),
                                        copy.group(4).strip(), line=number))
            copied.append((copies[-1], number, copy.start(1) + 1, copy.start(2) + 1, copy.start(3) + 1))
            continue
        if keyword == "require":
            requirements.append(_parse_requirement(path, number, line, at))
            sized.append((None, number, _REQUIRE.match(line).start(1) + 1, [requirements[-1].expression]))
            continue
        if keyword == "tensormap":
            declared = _parse_tensor_map(path, number, line)
            if any(a.index == declared.word for a in arguments):
                raise ContractError(f"{path}:{number}:{_words(line, at)[0][1]}: parameter word {declared.word} is "
                                    f"declared twice (the tensor map's word is bobc's to fill)")
            maps.append(declared)
            arguments.append(Argument(declared.word, "tensormap", what=f"tensor map of word {declared.pointer}: "
                                                                       f"{declared.what}"))
            continue
        if keyword == "param":
            declared, rest_at = _parameter(path, number, line, at)
            if _count(declared.group(1)) > LAST_WORD:
                raise ContractError(f"{path}:{number}:{declared.start(1) + 1}: parameter word "
                                    f"{_digits_shown(declared.group(1))} is past every launch's parameters (at most "
                                    f"{PARAMETER_BYTES} bytes: words 0 to {LAST_WORD}); word N is bytes 8N..8N+7 of the "
                                    f"parameters")
            index, kind, rest = int(declared.group(1)), declared.group(2), declared.group(3).strip()
            if any(a.index == index for a in arguments):
                raise ContractError(f"{path}:{number}:{declared.start(1) + 1}: parameter word {index} is "
                                    f"declared twice")
            if kind == "pointer":
                pointer = _POINTER.match(rest)
                if pointer and re.match(r"[-+*/]", pointer.group(6)):
                    # `4*lo[3] +4` or `4 * lo[3]`: the extent would stop at the space, the rest
                    # becoming its description
                    raise ContractError(f"{path}:{number}:{rest_at + pointer.start(6) + 1}: pointer word {index}'s "
                                        f"extent is written with a space ('{pointer.group(2)} "
                                        f"{pointer.group(6).split()[0]}'): an extent is one expression with no "
                                        f"spaces (4*lo[3]+4)")
                if not pointer:
                    words = _words(line, rest_at)
                    if not words:
                        column, wrong = len(line.rstrip()) + 1, ""
                    elif words[0][0] not in _ACCESSES:
                        column, wrong = words[0][1], (f"unknown access {words[0][0]!r} of pointer word {index}"
                                                      f"{_nearest(words[0][0], _ACCESSES)}; ")
                    elif len(words) > 1 and re.fullmatch(r"[A-Za-z_-]+", words[1][0]):
                        column, wrong = words[1][1], (f"unknown extent {words[1][0]!r} of pointer word {index}"
                                                      f"{_nearest(words[1][0], ('resident',))}; ")
                    elif len(words) > 1 and _expression_problem(words[1][0]) is not None:
                        # an extent that does not parse: say what is wrong in it (lo[-1], a parenthesis)
                        offset, why = _expression_problem(words[1][0])
                        column, wrong = words[1][1] + offset, f"pointer word {index}'s extent {words[1][0]}: {why}; "
                    else:
                        column, wrong = (words[1][1] if len(words) > 1 else len(line.rstrip()) + 1), ""
                    raise ContractError(f"{path}:{number}:{column}: {wrong}a pointer is declared as {_POINTER_FORM}")
                _check_pointer_parts(path, number, line, rest_at, index, pointer)
                if re.match(r"(when|unless|each)\s", pointer.group(6)) or re.search(r"\b(lo|hi|word)\[\d+\]&",
                                                                                       pointer.group(6)):
                    # (else a misspelt condition or batch would be the description, the pointer unconditional)
                    raise ContractError(f"{path}:{number}:{rest_at + pointer.start(6) + 1}: pointer word {index}'s "
                                        f"'each COUNT by STRIDE' and condition come in that order after its extent, "
                                        f"the condition written 'when TERM&MASK' or 'unless TERM&MASK' with no "
                                        f"spaces (when hi[7]&16)")
                extent = pointer.group(2)
                sized.append((index, number, rest_at + pointer.start(2) + 1,
                              [pointer.group(i) or "" for i in (2, 3, 4)]))
                fixed = re.fullmatch(r"0x[0-9a-fA-F]+|\d+", extent)
                arguments.append(Argument(index, kind, int(extent, 0) if fixed else 0, pointer.group(1),
                                          pointer.group(6), "" if fixed else extent,
                                          pointer.group(3) or "", pointer.group(4) or "",
                                          " ".join((pointer.group(5) or "").split()), line=number))
            else:
                arguments.append(Argument(index, kind, what=rest, line=number))
            continue
        code = line.split("//", 1)[0]
        for found in _READ.finditer(code):
            offset = int(found.group(2), 0) if found.group(2) else 0
            reads.append(ParameterRead(number, offset, _width(code.strip()), code.strip(),
                                       indexed=found.group(1) not in (None, "RZ"), column=found.start() + 1))
    kinds = {a.index: a.kind for a in arguments}
    for table, number, column in placed:
        # (docs/kernel-contracts.md, "Tables of entries": each entry's words have their own //@ param lines;
        # a row reaching an undeclared word is a table written wider or longer than the entries declared)
        undeclared = [w for w in range(table.first, table.first + table.rows * table.words) if w not in kinds]
        if undeclared:
            raise ContractError(f"{path}:{number}:{column}: table {table.first} rows {table.rows} of {table.words} "
                                f"reaches word{'s' if len(undeclared) > 1 else ''} {_word_ranges(undeclared)}, which no "
                                f"//@ param line declares: declare each entry's words ('//@ param N "
                                f"pointer|scalar|unused what'), or give the table the rows and words its entries "
                                f"have")
    for index, number, column, expressions in sized:
        for expression in expressions:
            for term in re.finditer(r"\b(lo|hi|word)\[(\d+)\]", expression):
                word = int(term.group(2))
                if kinds.get(word) in ("pointer", "tensormap") and index is None:
                    raise ContractError(f"{path}:{number}:{column}: the requirement's expression '{expressions[0]}' "
                                        f"reads {term.group(0)}, but word {word} is declared a {kinds[word]}: an "
                                        f"address is no shape; require a scalar word (a count the plan patches)")
                if kinds.get(word) is None and index is None:
                    raise ContractError(f"{path}:{number}:{column}: the requirement's expression '{expressions[0]}' "
                                        f"reads {term.group(0)}, but no //@ param line declares word {word}: declare "
                                        f"it a scalar ('//@ param {word} scalar what')")
                if kinds.get(word) in ("pointer", "tensormap"):
                    raise ContractError(f"{path}:{number}:{column}: pointer word {index}'s extent "
                                        f"'{expressions[0]}'{' (its batches)' if expression != expressions[0] else ''}"
                                        f" reads {term.group(0)}, but word {word} is declared a {kinds[word]}: "
                                        f"an address is no size; compute the extent from a scalar word (a count "
                                        f"the plan patches) or give the size the code fixes")
    _check_copies(path, arguments, copied)
    for declared in maps:
        base = next((a for a in arguments if a.index == declared.pointer), None)
        if base is None or base.kind != "pointer":
            state = f"declares it {base.kind}" if base is not None else "does not declare it"
            raise ContractError(f"{shown_path(path)}:{declared.line}: tensor map word {declared.word} covers word "
                                f"{declared.pointer}, which the contract {state}: declare it a pointer "
                                f"('//@ param {declared.pointer} pointer read ...')")
    return KernelContract(kernel or Path(path).stem, Path(path), tuple(sorted(arguments, key=lambda a: a.index)),
                          tuple(reads), tuple(maps), tuple(tables), block, copies=tuple(copies),
                          requirements=tuple(requirements))


_COPY_FORM_TEXT = ("a copy is declared as '//@ copy FROM to TO BYTES what' (every launch copies BYTES bytes from the "
                   "address in pointer word FROM to the one in pointer word TO, byte for byte; BYTES an expression "
                   "over scalar words such as 4*lo[2], no spaces: //@ copy 0 to 1 4*lo[2])")


def _check_copies(path, arguments, copied) -> None:
    """Refuse, at the column of the word that is wrong, a `//@ copy` whose FROM is not a pointer the
    kernel reads or whose TO is not one it only writes (a copy replaces what was there: a `read-write`
    destination would say the kernel reads it first), either batched or conditional (a copy is one
    range, on every launch), FROM and TO the same word, a size that reads an address word, or two
    copies into one word."""
    by_index = {a.index: a for a in arguments}
    into: dict[int, int] = {}
    for copy, number, from_at, to_at, size_at in copied:
        if copy.source == copy.destination:
            raise ContractError(f"{path}:{number}:{to_at}: the copy's source and destination are both word "
                                f"{copy.source}: a copy moves bytes between two pointer words")
        for word, column, role, access in ((copy.source, from_at, "source", ("read", "read-write")),
                                           (copy.destination, to_at, "destination", ("write",))):
            argument = by_index.get(word)
            shown = "read or read-write" if role == "source" else "write (not read-write: a copy replaces what was there)"
            if argument is None or argument.kind != "pointer":
                state = f"declares {argument.kind}" if argument is not None else "does not declare"
                raise ContractError(f"{path}:{number}:{column}: the copy's {role} is word {word}, which the contract "
                                    f"{state}: declare it '//@ param {word} pointer {shown.split()[0]} ...'")
            if argument.access not in access:
                raise ContractError(f"{path}:{number}:{column}: the copy's {role} is word {word}, declared "
                                    f"'pointer {argument.access}' at line {argument.line}: a copy's {role} is "
                                    f"declared {shown}")
            if argument.batches or argument.condition:
                part = f"each {argument.batches} by {argument.stride}" if argument.batches else argument.condition
                raise ContractError(f"{path}:{number}:{column}: the copy's {role} is word {word}, declared with "
                                    f"'{part}' at line {argument.line}: a copy is one range on every launch, so its "
                                    f"words are neither batched nor conditional")
        for term in re.finditer(r"\b(lo|hi|word)\[(\d+)\]", copy.size):
            word = int(term.group(2))
            if word in by_index and by_index[word].kind in ("pointer", "tensormap"):
                raise ContractError(f"{path}:{number}:{size_at + term.start()}: the copy's size {copy.size} reads "
                                    f"{term.group(0)}, but word {word} is declared a {by_index[word].kind}: an "
                                    f"address is no size; compute it from a scalar word")
        if copy.destination in into:
            raise ContractError(f"{path}:{number}:{to_at}: word {copy.destination} is a copy's destination at line "
                                f"{into[copy.destination]} already: declare one copy into each word")
        into[copy.destination] = number


def driver_constants(target) -> list[tuple[int, int, str]]:
    """The bytes of constant bank 0 below `target`'s parameters that a kernel may read, as
    (first byte, end, what): exactly the bytes bobc's launches write there for every launch
    (bobc.nvidia.encode.bank_zero) and the one word the driver itself writes, each declared
    once, where this reads it: block, grid, the shared and local memory windows and the stack
    pointer at 0x00..0x2f (bobc.nvidia.decode.DRIVER_WORDS; nvidia-driver-facts.md section 5:
    ptxas reads ntid.x at c[0x0][0x0], the stack pointer at c[0x0][0x28]), a cluster's u32s
    where the target launches clusters (encode.RECIPES' ClusterLaunch, each u32 alone: sm_90's
    0x140, 0x144..0x14f, 0x15c..0x167 and 0x188, not the rest of their 8-byte words, which no
    launch writes), and the global memory descriptor (Target.memory_descriptor: ptxas's
    `ULDC.64 UR4, c[0x0][0x118]` on sm_86, c[0x0][0x208] on sm_90).  Anything else there is
    the driver's own or nothing: a read of it, or one reaching past these bytes, is refused
    (check_code_reads).  docs/kernel-contracts.md lists them per target
    (tests/certify/test_reads_below_the_parameters.py holds the two together)."""
    merged = []          # adjacent words joined: LDC.128 of block and grid reads two
    for start, end, what in _driver_words(target):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), f"{merged[-1][2]}, {what}")
        else:
            merged.append((start, end, what))
    return merged


def _driver_words(target) -> list[tuple[int, int, str]]:
    """driver_constants' bytes word by word, in order, not joined."""
    from ..nvidia.decode import DRIVER_WORDS
    from ..nvidia.encode import RECIPES

    out = [(offset, offset + 8, what) for offset, what in DRIVER_WORDS.items()]
    recipe = RECIPES.get(target.qmd_layout)
    how = recipe.cluster if recipe is not None else None
    if how is not None:
        out += [(how.bank_explicit, how.bank_explicit + 4, "explicit cluster (u32)"),
                (how.bank_shape, how.bank_shape + 12, "cluster x, y, z (u32 each)"),
                (how.bank_clusters, how.bank_clusters + 12, "clusters x, y, z (u32 each)"),
                (how.bank_blocks, how.bank_blocks + 4, "blocks a cluster (u32)")]
    out.append((target.memory_descriptor, target.memory_descriptor + 8, "global memory descriptor"))
    return sorted(out)


def _target_of(parameter_base: int):
    from ..targets import TARGETS
    return next((t for t in TARGETS.values() if t.parameter_base == parameter_base), None)


def code_reads(source: Path, code: bytes, parameter_base: int, target=None,
               text: str | None = None) -> tuple[list[ParameterRead], list[str]]:
    """The parameter reads of a region's assembled code: for each instruction of its source
    (the assembler's own parser, one 16-byte word each, in order) that has a constant-bank
    operand, the bank and byte offset read from the code's encoded bits; those of bank 0 at
    or past `parameter_base` are parameter reads.  A bank 0 read below it that is none of the
    target's driver words (driver_constants; `target` else the target of that base) is kept
    too, with `below` its offset: check_code_reads refuses it.  The second list: why the code
    cannot be read so (it is not its source's, a register-indexed parameter read).  `text`: the
    source's text as already read (else `source` is read)."""
    from ..sass.syntax import Const, parse_source
    from ..sass.tables.layouts import CONST_BANK, CONST_OFFSET

    target = target if target is not None else _target_of(parameter_base)
    driver = driver_constants(target) if target is not None else None
    text = read_source(source) if text is None else text
    instructions = [line.instruction for line in parse_source(text, str(source)) if line.instruction is not None]
    if len(code) != 16 * len(instructions):
        return [], [f"its code has {len(code) // 16} instructions, its source {source.name} {len(instructions)}"]
    reads, problems = [], []
    for i, inst in enumerate(instructions):
        consts = [op for op in inst.operands if isinstance(op, Const)]
        if not consts:
            continue
        word = int.from_bytes(code[16 * i:16 * i + 16], "little")
        bank = (word >> CONST_BANK[0]) & ((1 << CONST_BANK[1]) - 1)
        offset = (word >> CONST_OFFSET[0]) & ((1 << CONST_OFFSET[1]) - 1)
        line = inst.span.line if inst.span else 0
        shown = inst.source.strip() or inst.mnemonic
        if bank != consts[0].bank:
            problems.append(f"its instruction {i} ({shown} at {source.name}:{line}) encodes bank {bank}, "
                            f"its source bank {consts[0].bank}")
            continue
        if bank != 0:
            continue
        index = consts[0].index
        indexed = index is not None and getattr(index, "index", 255) != 255
        spans = getattr(inst, "operand_spans", ()) or ()
        at = inst.operands.index(consts[0])
        operand_span = spans[at] if at < len(spans) else None
        column = operand_span.column if operand_span is not None else (inst.span.column if inst.span else 0)
        width = _width(inst.mnemonic)
        if offset < parameter_base:
            if driver is None or indexed:
                continue
            what = next((what for start, end, what in driver if start <= offset and offset + width <= end), "")
            reads.append(ParameterRead(line, offset - parameter_base, width, shown, False, offset, column, what))
            continue
        reads.append(ParameterRead(line, offset - parameter_base, width, shown, indexed, column=column,
                                   absolute=offset if consts[0].symbol is None else None))
    return reads, problems


def assembled_reads(source: Path, target, built=None,
                    assembled_out: list | None = None) -> tuple[tuple[ParameterRead, ...], tuple[str, ...]]:
    """code_reads of `source` assembled for `target`, kept in the user cache by what the verdict
    is computed from: the assembler's identity, this file, the source's path, the target, the
    source's bytes (read once: its text is parsed from them) and the code read (a warm build
    then neither parses the source nor reads the code again: issue 21's build time).  `built`:
    the build's own assembly of `source` for `target` (a plan's kernel, bobc.kernel_cache's
    default), read rather than assembling the source again.  The code is in the key (probe s36
    simwords finding 6): keyed by the source's bytes alone, a kernel edited between the build's
    assembly and its certification kept the old code's reads under the new bytes, and every
    later build of the new bytes was certified with them.  `assembled_out`: a list that gets the
    assembly this made, if it made one (check_written_before_read reads the same)."""
    import hashlib

    from .. import cache
    from ..kernel_cache import _assembler_identity, assemble_kernel
    from ..sass.source import source_text

    data = read_source_bytes(source)
    # the kernel as written: the launch prologue a plan's build puts before it reads nothing
    code = as_written(built, target) if built is not None else None
    if code is None:
        assembled = assemble_kernel(source, target, launched=False)
        if assembled_out is not None:
            assembled_out.append(assembled)
        code = assembled.code
    code = bytes(code)
    key = cache.digest(_assembler_identity(), Path(__file__).read_bytes(), "parameter reads", str(source),
                       target.name, data, hashlib.sha256(code).hexdigest())
    kept = cache.load("parameter-reads", key, tuple)
    if kept is not None:
        return kept
    found, problems = code_reads(source, code, target.parameter_base, target, text=source_text(data, source))
    result = (tuple(found), tuple(problems))
    cache.store("parameter-reads", key, result)
    return result


def check_written_before_read(identity: str, source: Path, target, built=None) -> list[Finding]:
    """The kernel's registers are written before they are read (bobc.sass.defined; docs/kernel-
    contracts.md rule 4): each instruction that reads a register no path from the entry writes
    first is refused at its file:line:column.  `built`: an assembly of `source` for `target` (the
    build's own, or assembled_reads'; else bobc.kernel_cache's, as written).  The
    verdict is kept in the user cache by the assembler's identity, the source's path, bytes and
    the code (a warm build neither loads the kernel nor runs the analysis again)."""
    import hashlib

    from .. import cache
    from ..errors import shown_plan_text
    from ..kernel_cache import _assembler_identity, assemble_kernel
    from ..sass.defined import refusals

    data = read_source_bytes(source)
    code = hashlib.sha256(bytes(built.code)).hexdigest() if built is not None else "cache"
    key = cache.digest(_assembler_identity(), Path(__file__).read_bytes(), "written before read", str(source),
                       target.name, data, code)
    kept = cache.load("written-before-read", key, tuple)
    if kept is None:
        assembled = built if built is not None else assemble_kernel(source, target, launched=False)
        kept = tuple((r.message, r.span, r.hint) for r in refusals(assembled, target))
        if read_source_bytes(source) == data:
            cache.store("written-before-read", key, kept)
    return [Finding("contract", f"kernel {shown_plan_text(identity)}: {message}", span, hint)
            for message, span, hint in kept]


def as_written(assembled, target) -> bytes | None:
    """The code of a plan's kernel as its source writes it: `assembled` (bobc.sass.Assembled,
    assembled as a plan's kernel is) without the target's launch prologue before it (on sm_90
    one ACQBULK; a listing is assembled without one), known by the place the assembler gives
    the prologue's instructions: the words of the source assembled as written (code_reads reads
    their constant-bank fields; tests/certify/test_build_assembly_reads.py checks every kernel of
    specs/ and examples/).  None when the code does not open as expected: assemble it again."""
    prologue = len(getattr(target, "launch_prologue", ()))
    instructions = assembled.instructions
    if len(assembled.code) != 16 * len(instructions):
        return None
    where = f"<{target.name} launch prologue>"
    lead = 0
    while lead < len(instructions) and getattr(instructions[lead].span, "path", None) == where:
        lead += 1
    if lead not in (0, prologue):
        return None
    return bytes(assembled.code[16 * lead:])


def check_code_reads(contract: KernelContract, reads: tuple[ParameterRead, ...] | None = None) -> list[Finding]:
    """The words the code reads are words the contract declares (pointer or scalar), and
    every declared pointer is read.  `reads`: the region's assembled code's (code_reads);
    without them, the source text's."""
    out = []
    read_words = set()
    below = [read for read in (contract.reads if reads is None else reads) if read.below is not None]
    for read in below:
        if read.driver:
            continue
        other = _other_driver_word(read, contract)
        out.append(Finding("contract", f"kernel {contract.kernel} reads c[0x0][{read.below:#x}] ({read.text} at "
                                       f"{contract.source.name}:{read.line}), below {_base_words(read)}, where "
                                       f"the driver keeps no word a kernel reads"
                                       f"{other[0] if other else _elsewhere(read)}",
                           _source_line(contract, read.line, read.column),
                           other[1] if other else _base_hint(read)))
    for read in contract.reads if reads is None else reads:
        if read.below is not None:
            continue
        words, how = list(read.words), ""
        if read.indexed:
            table = next((t for t in contract.tables if all(t.first <= w < t.first + t.words for w in read.words)),
                         None)
            if table is None:
                out.append(Finding("contract", f"kernel {contract.kernel} reads its parameters at a register-indexed "
                                               f"offset ({read.text} at {contract.source.name}:{read.line}), which "
                                               f"no table's first row holds: declare the table it reads "
                                               f"('//@ table FIRST rows ROWS of WORDS what')",
                               _source_line(contract, read.line, read.column)))
                continue
            words, how = [w + row * table.words for w in read.words for row in range(table.rows)], " through its table"
        for word in words:
            read_words.add(word)
            argument = contract.argument(word)
            if argument is None or argument.kind == "unused":
                state = "declares it unused" if argument is not None else "does not declare it"
                # c[0x0][0x210] on sm_86: where sm_90's parameters start, not a word of sm_86's
                other = _other_target_offset(read, contract) if read.absolute is not None else None
                out.append(Finding("contract", f"kernel {contract.kernel} reads parameter word {word}{how} "
                                               f"({read.text} at {contract.source.name}:{read.line}), but its "
                                               f"contract {state}{other[0] if other else ''}",
                                   _source_line(contract, read.line, read.column), other[1] if other else None))
    mapped = {m.pointer for m in contract.tensor_maps}     # the Tensor Memory Accelerator reads those
    for argument in contract.arguments:
        if argument.index in read_words or argument.kind not in ("pointer", "tensormap") \
                or argument.index in mapped:
            continue
        stray = next((read for read in below if argument.index in _other_words(read)), None)
        driver = f", {_read_target(stray).name}'s {stray.driver}" if stray is not None and stray.driver else ""
        cause = (f"; it reads c[0x0][{stray.below:#x}]{driver} ({stray.source_at(contract)}), where "
                 f"{_other_words(stray)[argument.index]} keep word {argument.index}"
                 if stray is not None else "")
        out.append(Finding("contract", f"kernel {contract.kernel} declares {argument.kind} word {argument.index} "
                                       f"({argument.what}) but its code never reads it{cause}",
                           _source_line(contract, argument.line), _base_hint(stray) if stray is not None else None))
    return out


def _at(read: ParameterRead) -> int:
    """A read's bank 0 offset: below the base, or written as a number (ParameterRead.absolute)."""
    return read.below if read.below is not None else read.absolute


def _read_target(read: ParameterRead):
    """The target whose parameter base a below-the-base (or absolute) read was measured from."""
    return _target_of(_at(read) - read.offset)


def _base_words(read: ParameterRead) -> str:
    target = _read_target(read)
    return f"{target.name}'s parameters" if target is not None else f"the parameters ({_at(read) - read.offset:#x})"


def _base_hint(read: ParameterRead) -> str:
    target = _read_target(read)
    base = _at(read) - read.offset
    on = f" on {target.name}" if target is not None else ""
    return f"parameters{on} start at c[0x0][{base:#x}]; write c[0x0][param+N] (N: 8 x the word, the assembler " \
           f"adds the target's base)"


def _other_words(read: ParameterRead) -> dict[int, str]:
    """word -> where another target keeps it ("sm_86's parameters (from c[0x0][BASE])"), for a read
    below the base that is that target's parameter word (sm_86's offsets read on sm_90)."""
    from ..targets import TARGETS
    base = read.below - read.offset
    out = {}
    for target in TARGETS.values():
        if target.parameter_base != base and 0 <= read.below - target.parameter_base < target.parameter_block_bytes:
            out.setdefault((read.below - target.parameter_base) // 8,
                           f"{target.name}'s parameters (from c[0x0][{target.parameter_base:#x}])")
    return out


def _other_driver_word(read: ParameterRead, contract: KernelContract) -> tuple[str, str] | None:
    """For a read below the base that is another target's driver word (sm_86's memory descriptor
    c[0x0][0x118] read on sm_90): (" (there sm_86's driver keeps WHAT ...)", the fix: the word's
    name for the assembler, where it has one, else a per-target variant).  None when it is none."""
    from ..sass.tables.arch import ENCODINGS
    from ..targets import TARGETS

    here = _read_target(read)
    if here is None:
        return None
    at = _at(read)
    for target in TARGETS.values():
        if target is here:
            continue
        word = next(((start, what) for start, end, what in _driver_words(target) if start <= at < end), None)
        if word is None:
            continue
        start, what = word
        symbols = getattr(ENCODINGS.get(target.name), "symbols", {})
        name = next((n for n, value in symbols.items() if value == start and n != "param"), None)
        ours = getattr(ENCODINGS.get(here.name), "symbols", {}).get(name) if name is not None else None
        there = f" (there {target.name} keeps the {what}"
        if name is not None and ours is not None:
            return (f"{there}; {here.name}'s is at c[0x0][{ours:#x}])",
                    f"write c[0x0][{name}{'+' + hex(at - start) if at != start else ''}], "
                    f"which the assembler puts where each target keeps it")
        return (f"{there}, a word {here.name}'s launches do not fill)",
                f"read it only in a per-target variant for {target.name} "
                f"({contract.kernel}.{target.name}.sass); else {_base_hint(read)}")
    return None


def _other_target_offset(read: ParameterRead, contract: KernelContract) -> tuple[str, str] | None:
    """For a refused parameter read written at an absolute offset that is another target's driver
    word (sm_90's memory descriptor c[0x0][0x208] read on sm_86) or, where that target's
    parameters start later, is its base or a word of its parameters the contract declares
    (c[0x0][0x210 + 8N] on sm_86, N declared): (", and c[0x0][X] is another target's word (there
    TARGET keeps ...)", the fix); None when it is neither."""
    from ..targets import TARGETS

    here = _read_target(read)
    if here is None:
        return None
    at = read.absolute
    cause = f", and c[0x0][{at:#x}] is another target's word"
    driver = _other_driver_word(read, contract)
    if driver is not None:
        return f"{cause}{driver[0]}", driver[1]
    for target in TARGETS.values():
        # (every offset past sm_90's base lies in sm_86's parameters too: only a later base counts,
        # read at that very base or at a word of it the contract declares)
        word = (at - target.parameter_base) // 8
        if target.parameter_base > here.parameter_base and 0 <= at - target.parameter_base < \
                target.parameter_block_bytes and (at == target.parameter_base or contract.argument(word) is not None):
            return (f"{cause} (there {target.name} keeps its parameter word {word}: its parameters start at "
                    f"c[0x0][{target.parameter_base:#x}])", _base_hint(read))
    return None


def _elsewhere(read: ParameterRead) -> str:
    words = _other_words(read)
    if not words:
        return ""
    word, where = next(iter(words.items()))
    return f" (there {where} keep word {word})"


def _source_line(contract: KernelContract, line: int, column: int = 0):
    """Line `line` of the contract's kernel source (at `column`, else 1), as a place (None: no line known)."""
    from ..errors import Span

    return Span(str(contract.source), line, column or 1) if line and contract.source is not None else None


def check_variant_contract(variant: KernelContract, base: KernelContract) -> list[Finding]:
    """A per-target variant honours its base's `//@ param` meanings: the plan's launches fill
    the same words for every target, so each word the base declares is declared alike by the
    variant (kind, and a pointer's access).  The variant may add words the encoder fills (a
    tensor map's, over a word the base leaves unused or does not declare) and unused words.
    Each mismatch is a finding at the variant's line, naming the base's file and line."""
    out = []
    for index in sorted({a.index for a in base.arguments} | {a.index for a in variant.arguments}):
        ours, theirs = variant.argument(index), base.argument(index)
        mine, its = _meaning(ours), _meaning(theirs)
        if mine == its or (ours is not None and ours.kind in ("tensormap", "unused")
                           and (theirs is None or theirs.kind == "unused")):
            continue
        if theirs is not None and theirs.kind == "tensormap" and (ours is None or ours.kind == "unused"):
            continue
        here = shown_path(variant.source) + (f":{ours.line}" if ours is not None and ours.line else "")
        there = shown_path(base.source) + (f":{theirs.line}" if theirs is not None and theirs.line else "")
        out.append(Finding("contract", f"kernel {variant.kernel}'s variant {here} declares parameter word {index} "
                                       f"{mine}, but its base {there} declares it {its}: a variant honours its "
                                       f"base's //@ param meanings (the plan's launches fill the same words for "
                                       f"every target); declare it as the base does, or change both",
                           _source_line(variant, ours.line if ours is not None else 0)
                           or _source_line(base, theirs.line if theirs is not None else 0)))
    return out


def _meaning(argument: Argument | None) -> str:
    if argument is None:
        return "nothing (no //@ param line)"
    if argument.kind == "pointer":
        return f"a {argument.access} pointer"
    return {"scalar": "a scalar", "unused": "unused", "tensormap": "a tensor map's word"}.get(argument.kind,
                                                                                           argument.kind)
