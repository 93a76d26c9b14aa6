"""Reading SASS text in nvdisasm's own syntax into instruction records.

The grammar is what nvdisasm prints (so its output assembles back), plus what
a hand-written source needs: labels (`name:`), comments (`//`, `#`), branch
targets by label, symbolic kernel parameters and explicit control codes.

    [B0-----:R-:W1:-:S04] @!P0 IMAD.WIDE R2, R4.reuse, R9, c[0x0][param+0x8] ;

Symbolic constants: `c[0x0][param+N]` (or `c[0x0][param]`) names byte N of
the kernel parameter block; the assembler adds the target's parameter base
(0x160 on sm_86, 0x210 on sm_90).  `c[0x0][memory_descriptor]` names the
64-bit global-memory descriptor slot (0x118 / 0x208) that LDG/STG use.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from functools import lru_cache

from ..errors import BobcError, Span, source_lines
from .tables.layouts import CONTROL_FIELDS, SCOREBOARDS


class SyntaxProblem(ValueError):
    """A malformed piece of an instruction; the caller turns it into a BobcError with a Span
    (`span`, where the problem is one operand's, else the line's)."""

    def __init__(self, message: str, column: int = 0, span: Span | None = None,
                 within: tuple[int, int] | None = None):
        super().__init__(message)
        self.column = column
        self.span = span
        self.within = within    # (offset, length) inside the operand's text: the caret's place there


# a register bank's letter in an encoding-table key (Reg.kind)
_BANK_KIND = {"R": "R", "UR": "U", "P": "P", "UP": "Q"}


@dataclass(frozen=True)
class Reg:
    """A register operand: R (vector), UR (uniform), P/UP (predicate); RZ=255, URZ=63, PT=7."""

    bank: str            # "R", "UR", "P", "UP"
    index: int
    neg: bool = False    # '-' (R) or '!' (P)
    abs: bool = False    # |R|
    invert: bool = False  # '~R'
    reuse: bool = False
    swizzle: str = ""    # half-precision lane selection: H0_H0, H1_H1 (nvdisasm's suffix)
    sign: bool = False   # `R2.SIGN`: the register's bit 31, a source of PLOP3's register form (ptxas's
                         # add.sat.s32: PLOP3.LUT P0, PT, R2.SIGN, R5.SIGN, R4.SIGN, 0x2, 0x0)

    def kind(self) -> str:
        return _BANK_KIND[self.bank]


@dataclass(frozen=True)
class Imm:
    """An immediate: `bits` is the 32-bit (or wider) pattern; `is_float` when written as a float."""

    value: int           # the integer value as written (floats: the binary32 bits)
    is_float: bool = False
    text: str = ""
    pair: tuple[str, str] | None = None   # two binary16 values as written (packed-half opcodes)
    problem: str = ""    # why the value is no binary32 (out of range), refused where one is needed

    def kind(self) -> str:
        return "I"


@dataclass(frozen=True)
class Const:
    """c[bank][offset] or c[bank][Rx+offset]; `index` is None for the plain form."""

    bank: int
    offset: int
    index: Reg | None = None
    neg: bool = False
    abs: bool = False
    symbol: str | None = None  # c[0x0][param+8]: offset relative to a per-target symbol
    invert: bool = False       # '~c[..]' (the complement a carry-in addition takes)
    swizzle: str = ""          # packed-half lane selection: `c[0x0] [0x16c].H0_H0` (ptxas's .f16 parameter read)

    def kind(self) -> str:
        return "X" if self.index is not None else "C"


@dataclass(frozen=True)
class Mem:
    """[Ra(.64|.X4..) + URb + offset], optionally desc[URd][...]."""

    base: Reg | None
    suffix: str = ""        # ".64", ".X4", ".X8", ".X16", ""
    uoffset: Reg | None = None
    offset: int = 0
    desc: Reg | None = None

    def kind(self) -> str:
        parts = ["M"]   # desc[URn] is an operand, not part of the form: nvdisasm hides it on sm_86
        if self.base is not None:
            parts.append(self.base.kind() + self.suffix)
        if self.uoffset is not None:
            parts.append("+U")
        return "[" + "".join(parts) + "]"


@dataclass(frozen=True)
class Special:
    """A special register: SR_TID.X, SR_LANEID, SR_CLOCKLO, ... or PR (the predicate file)."""

    name: str

    def kind(self) -> str:
        return "S"


@dataclass(frozen=True)
class Label:
    """A branch target by name (resolved by the assembler) or by address (nvdisasm's form)."""

    name: str | None
    address: int | None = None

    def kind(self) -> str:
        return "T"


@dataclass(frozen=True)
class Barrier:
    """A convergence barrier register B0..B15 (BSSY/BSYNC)."""

    index: int

    def kind(self) -> str:
        return "B"


@dataclass(frozen=True)
class MatrixDescriptor:
    """HGMMA's shared-memory matrix descriptors, `gdesc[UR4].negA.tnspB`: the uniform registers
    holding them (A's 64-bit descriptor then B's, or B's alone when A is in registers) and the
    flags nvdisasm prints after it (negate or transpose an operand)."""

    reg: Reg
    flags: tuple[str, ...] = ()

    def kind(self) -> str:
        return "G"


@dataclass(frozen=True)
class Unread:
    """An operand this assembler cannot read (`-R3.SIGN`, `P7`, `UPR`, `r1`): kept, not taken for a
    label, so the assembler refuses it after the opcode check, saying what it looks like
    (`looks`) and which forms the opcode has (Encoder.unread_problem)."""

    text: str
    looks: str = ""

    def kind(self) -> str:
        return "?"


Operand = Reg | Imm | Const | Mem | Special | Label | Barrier | MatrixDescriptor | Unread


@dataclass(frozen=True)
class Control:
    """The scheduling fields of bits 105..125 (barriers 7 = none)."""

    stall: int = 1
    yield_bit: int = 1          # bit 109 as stored (1 in most ptxas code; 0 shows as 'Y')
    write_barrier: int = 7
    read_barrier: int = 7
    wait_mask: int = 0
    reuse: int = 0              # bits 122..124, normally taken from .reuse on operands

    def _values(self) -> dict[str, int]:
        return {"stall": self.stall, "yield": self.yield_bit, "write barrier": self.write_barrier,
                "read barrier": self.read_barrier, "wait mask": self.wait_mask, "reuse": self.reuse}

    def bits(self) -> int:
        """The 17+ bits of bits 105..: each field where tables.layouts.CONTROL_FIELDS puts it (a
        value wider than its field is refused, never let into its neighbour)."""
        out = 0
        for name, value in self._values().items():
            lsb, width = CONTROL_FIELDS[name]
            if not 0 <= value < 1 << width:
                raise ValueError(f"control code {name} {value} does not fit in {width} bits (0..{(1 << width) - 1})")
            out |= value << lsb
        return out

    @classmethod
    def from_word(cls, hi: int) -> "Control":
        c = hi >> 41
        v = {name: c >> lsb & (1 << width) - 1 for name, (lsb, width) in CONTROL_FIELDS.items()}
        return cls(stall=v["stall"], yield_bit=v["yield"], write_barrier=v["write barrier"],
                   read_barrier=v["read barrier"], wait_mask=v["wait mask"], reuse=v["reuse"])

    def _replace_reuse(self) -> "Control":
        """The same scheduling fields without the reuse bits (those come from `.reuse`)."""
        return Control(self.stall, self.yield_bit, self.write_barrier, self.read_barrier, self.wait_mask)

    def text(self) -> str:
        """CuAssembler's text form: [B0-2---:R-:W1:Y:S04] ('Y' when bit 109 is 0)."""
        waits = "".join(str(i) if self.wait_mask >> i & 1 else "-" for i in range(6))
        rb = "-" if self.read_barrier == 7 else str(self.read_barrier)
        wb = "-" if self.write_barrier == 7 else str(self.write_barrier)
        y = "-" if self.yield_bit else "Y"
        return f"[B{waits}:R{rb}:W{wb}:{y}:S{self.stall:02d}]"


_CONTROL = re.compile(r"^\[B([0-9-]{6}):R([0-9-]):W([0-9-]):([Y-]):S(\d\d)\]$")
# The stalls an instruction may have with bit 109 set ('-'); schedule._with_stall keeps to them too.
YIELD_BIT_STALLS = range(1, 12)



QUOTED_MOST = 60     # the most characters of a source fragment a message quotes


def _quoted(text: str) -> str:
    """A source fragment as a message quotes it: whole up to QUOTED_MOST characters, else cut
    with '...', so one error about a megabyte-long line stays one short line (probe s28); a
    control, format or separator character in it (Unicode Cc, Cf, Zl, Zp: a NUL, an ESC, a tab,
    a zero-width space, a bidirectional override) written as Python's ascii() writes it (`\\x1b`,
    `\\u200b`), never sent to the terminal as itself (probe s37 sourcetext finding 3)."""
    cut = text if len(text) <= QUOTED_MOST else f"{text[:QUOTED_MOST]}..."
    if cut.isprintable():
        return cut
    import unicodedata

    return "".join(ascii(c)[1:-1] if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in cut)

def parse_control(text: str) -> Control:
    m = _CONTROL.match(text)
    if not m:
        raise SyntaxProblem(f"malformed control code '{_quoted(text)}' (expected e.g. [B------:R-:W-:-:S04])")
    waits, rb, wb, y, stall = m.groups()
    mask = 0
    for i, ch in enumerate(waits):
        if ch != "-":
            if ch != str(i):
                raise SyntaxProblem(f"wait mask position {i} must be '{i}' or '-' in '{_quoted(text)}'")
            mask |= 1 << i
    for letter, name, written in (("R", "read barrier", rb), ("W", "write barrier", wb)):
        if written != "-" and int(written) >= SCOREBOARDS:   # the field's 7 is "none" ('-'); 6 is no scoreboard
            raise SyntaxProblem(f"{name} {letter}{written} is no scoreboard (0..{SCOREBOARDS - 1}, or {letter}- for "
                                f"none) in '{_quoted(text)}'")
    stall_value = int(stall)
    stall_width = CONTROL_FIELDS["stall"][1]
    if stall_value >= 1 << stall_width:
        raise SyntaxProblem(f"stall S{stall} does not fit in {stall_width} bits (S00..S{(1 << stall_width) - 1}) "
                            f"in '{_quoted(text)}'")
    if y == "-" and stall_value not in YIELD_BIT_STALLS:
        # the stall and bit 109 are one field to the hardware: nvdisasm decodes no instruction of
        # any opcode whose bit 109 is set with a stall of 0 or 12..15 (every opcode class tried, both
        # targets: tests/sass/test_field_ranges.py), and ptxas writes those stalls with 'Y' only
        raise SyntaxProblem(f"stall S{stall} takes the yield flag 'Y' (bit 109 clear): with '-' only S01..S11 "
                            f"encode an instruction, in '{_quoted(text)}'")
    return Control(stall=stall_value, yield_bit=0 if y == "Y" else 1,
                   write_barrier=7 if wb == "-" else int(wb), read_barrier=7 if rb == "-" else int(rb),
                   wait_mask=mask)


# mnemonic -> (opcode, modifiers): an assembly asks an instruction's opcode and modifiers dozens of
# times (every operand placed, every table consulted: 900,000 splits of the mnemonic for the plans'
# 67 kernels of both targets), and a source has a few hundred mnemonics.  Bounded: a text of more
# distinct mnemonics than this starts the memo again.
_MNEMONIC_PARTS: dict[str, tuple[str, tuple[str, ...]]] = {}
_MNEMONIC_PARTS_KEPT = 4096


def mnemonic_parts(mnemonic: str) -> tuple[str, tuple[str, ...]]:
    """(opcode, modifiers) of `mnemonic`: "IMAD.WIDE.U32" -> ("IMAD", ("WIDE", "U32")), as its
    split at '.' gives them."""
    parts = _MNEMONIC_PARTS.get(mnemonic)
    if parts is None:
        pieces = mnemonic.split(".")
        parts = (pieces[0], tuple(pieces[1:]))
        if len(_MNEMONIC_PARTS) >= _MNEMONIC_PARTS_KEPT:
            _MNEMONIC_PARTS.clear()
        _MNEMONIC_PARTS[mnemonic] = parts
    return parts


@dataclass
class Instruction:
    """One parsed instruction line."""

    mnemonic: str                 # e.g. "IMAD.WIDE.U32"
    operands: list[Operand]
    guard: Reg | None = None      # @P0 / @!P0 / @UP0 (None: always, i.e. PT)
    control: Control | None = None  # explicit control code, when written
    span: Span | None = None
    source: str = ""
    mnemonic_span: Span | None = None   # where the mnemonic is written (a caret for an unknown opcode)
    listed: tuple | None = None         # (lo, hi) printed after it by nvdisasm -hex
    operand_spans: tuple = ()           # where each operand is written (one Span an operand; () unknown)

    @property
    def opcode(self) -> str:
        parts = _MNEMONIC_PARTS.get(self.mnemonic)
        return (parts or mnemonic_parts(self.mnemonic))[0]

    @property
    def modifiers(self) -> list[str]:
        parts = _MNEMONIC_PARTS.get(self.mnemonic)
        return list((parts or mnemonic_parts(self.mnemonic))[1])

    def signature(self) -> str:
        return ",".join(op.kind() for op in self.operands)

    def key(self) -> str:
        """The encoding-table key: mnemonic with modifiers and the operand kinds."""
        return f"{self.mnemonic} {self.signature()}"


_REG = re.compile(r"^(R\d+|RZ|UR\d+|URZ|P[0-6T]|UP[0-6T])$")
# gsb0: the warpgroup MMA's scoreboard (HGMMA, WARPGROUP.DEPBAR)
_SPECIAL = re.compile(r"^(SR_[A-Za-z0-9_.]+|PR|SRZ|SB\d|gsb\d)$")
_GDESC = re.compile(r"^gdesc\[(UR\d+|URZ)\]((?:\.[A-Za-z]+)*)$")
# H1: a 16-bit source's high half (I2F.S16 R15, R10.H1; encoder._put_half_select), after the pairs it ends
SWIZZLES = ("H0_H0", "H1_H1", "H0_H1", "H1_H0", "F32", "H1")


def parse_register(text: str) -> Reg | None:
    m = _REG.match(text)
    if not m:
        return None
    t = m.group(1)
    if t.startswith("UR"):
        index = 63 if t == "URZ" else int(t[2:])
        if t != "URZ" and index >= 63:
            # nvdisasm prints UR63 as URZ (reads zero, writes nothing): a source naming UR63 means URZ
            raise SyntaxProblem(f"uniform register {t} does not exist (UR0..UR62, URZ)"
                                + ("; UR63 is URZ's encoding: write URZ" if index == 63 else ""))
        return Reg("UR", index)
    if t.startswith("UP"):
        return Reg("UP", 7 if t == "UPT" else int(t[2:]))
    if t.startswith("P"):
        return Reg("P", 7 if t == "PT" else int(t[1:]))
    index = 255 if t == "RZ" else int(t[1:])
    if t != "RZ" and index >= 255:
        # nvdisasm prints R255 as RZ (reads zero, writes nothing): R255 is no 256th register
        raise SyntaxProblem(f"register {t} does not exist (R0..R254, RZ)"
                            + ("; R255 is RZ's encoding: write RZ" if index == 255 else ""))
    return Reg("R", index)


_REGISTER_SHAPE = re.compile(r"^(R\d+|RZ|UR\d+|URZ|U?P\d+|U?PT)(\..*)?$")


def describe_unread(text: str) -> str:
    """What an operand the parser cannot read looks like, for the refusal."""
    t = text.strip()
    if len(t) > QUOTED_MOST:
        return f"no operand is {len(t):,} characters long"
    m = re.fullmatch(r"(U?P)(\d+)", t)
    if m:
        bank = m.group(1)
        return f"{t} is not a predicate ({bank}0..{bank}6, {bank}T)"
    m = _REGISTER_SHAPE.match(t)
    if m and m.group(2):
        suffix = m.group(2)
        if suffix.lower() == ".reuse":
            return f"register {m.group(1)} with {suffix}: write .reuse in lower case"
        if suffix.endswith(".SIGN"):
            return (f"register {m.group(1)} with the suffix {suffix}: a register's sign bit (.SIGN) is read only "
                    f"as a source of PLOP3.LUT, written R2.SIGN or R2.reuse.SIGN, with no '-', '|..|' or '~'")
        return (f"register {m.group(1)} with the suffix {suffix}, which this assembler does not read "
                f"(it reads .reuse and the lane selections {', '.join('.' + s for s in SWIZZLES)})")
    upper = t.upper()
    if upper != t and _REG.match(upper.split(".")[0]):
        return f"registers are written in upper case: {upper}"
    if re.fullmatch(r"U?P?R", t) or t == "UPR":
        return f"the {'uniform ' if t.startswith('U') else ''}predicate file {t}, which this assembler reads only as P2R/R2P's PR"
    if t.startswith("c[") or t.startswith("-c[") or t.startswith("|c["):
        return "a constant, written c[bank][offset] with no space between the brackets"
    if t.startswith("{"):
        return ("a set of scoreboards in braces (DEPBAR's wait on several), which this assembler does not "
                "read: wait on one with DEPBAR.LE SBn, count, or with a control code's wait mask")
    return "no register, uniform register, predicate, special register (SR_...), immediate, constant c[..][..], address [..] or branch target"


def _parse_int(text: str) -> int:
    text = text.strip()
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-").strip()
    if re.fullmatch(r"0x[0-9a-fA-F]+", body):
        return sign * int(body, 16)
    if re.fullmatch(r"\d+", body):
        return sign * int(body)
    raise SyntaxProblem(f"expected an integer, found '{_quoted(text)}'")


def float_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


# The largest finite value of each binary format, as a refusal names it
LARGEST_FINITE = {"binary16": "65504", "bfloat16": "3.3895313892515355e38", "binary32": "3.4028235e38", "binary64": "1.7976931348623157e308"}


def shown_literal(text: str) -> str:
    """A literal as a message quotes it: a very long one (a 400-digit integer) is abbreviated."""
    text = text.strip()
    return text if len(text) <= 24 else f"{text[:12]}...{text[-4:]} ({len(text)} characters)"


def beyond_range(text: str, fmt: str) -> str:
    """The refusal of a decimal literal too large for `fmt` (an INF word is the way to write infinity)."""
    return (f"{shown_literal(text)} is beyond {fmt}'s range (largest finite {LARGEST_FINITE[fmt]}; "
            f"write +INF or -INF to mean an infinity)")


def binary32_of_decimal(text: str) -> int:
    """The binary32 bits of a decimal literal (an integer written for a float opcode, `FADD R1, R2, 3`);
    ValueError (the message) when it is beyond binary32's range, never a Python OverflowError."""
    try:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise OverflowError
        return float_bits(value)
    except OverflowError:
        raise ValueError(beyond_range(text, "binary32")) from None


# nvdisasm prints every NaN as +QNAN / +SNAN whatever its payload: the quiet words read as the
# canonical quiet NaN (in a listing the payload comes from the printed word: assembler), a
# signalling one has no canonical payload and is refused outside a listing (encoder.immediate)
_FLOAT_WORDS = {"+INF": 0x7F800000, "INF": 0x7F800000, "-INF": 0xFF800000,
                "+QNAN": 0x7FC00000, "QNAN": 0x7FC00000, "-QNAN": 0xFFC00000,
                "+NAN": 0x7FC00000, "NAN": 0x7FC00000, "-NAN": 0xFFC00000,
                "+SNAN": 0x7FBFFFFF, "SNAN": 0x7FBFFFFF, "-SNAN": 0xFFBFFFFF}


def literal_is_zero(text: str) -> bool:
    """Whether a decimal literal is zero as written (1e-50 is not, though it rounds to 0)."""
    return not re.search(r"[1-9]", re.split(r"[eE]", text)[0])


class _Unreadable(SyntaxProblem):
    """Not an immediate either: parse_operand keeps it as Unread."""


def parse_immediate(text: str) -> Imm:
    t = text.strip()
    if t.upper() in _FLOAT_WORDS:
        return Imm(_FLOAT_WORDS[t.upper()], True, t)
    if re.fullmatch(r"[+-]?(0x[0-9a-fA-F]+)", t):
        return Imm(_parse_int(t), False, t)
    if re.fullmatch(r"[+-]?\d+", t):
        return Imm(int(t), False, t)   # decimal: an integer, or a float for float opcodes
    try:
        value = float(t)
    except ValueError:
        raise _Unreadable(f"cannot read operand '{_quoted(text)}'") from None
    if value != value:
        raise SyntaxProblem(f"cannot read operand '{_quoted(text)}' (a NaN is written +QNAN, or as its bits 0x7fc00000)")
    try:
        # float("1e400") is inf without an error: a literal beyond binary64 is beyond binary32 too
        bits = binary32_of_decimal(t)
    except ValueError as problem:   # beyond binary32 (a binary64 opcode reads the text itself)
        return Imm(0x7F800000 if value > 0 else 0xFF800000, True, t, problem=str(problem))
    if bits & 0x7FFFFFFF == 0 and not literal_is_zero(t):
        return Imm(bits, True, t, problem=f"{shown_literal(t)} is below binary32's smallest value (1e-45): it would be "
                                          f"{'-' if bits >> 31 else ''}0")
    return Imm(bits, True, t)


_CONST = re.compile(r"^c\[(0x[0-9a-fA-F]+|\d+)\]\[(.*)\]$")
_IDENT = re.compile(r"^[A-Za-z_.$][A-Za-z0-9_.$]*$")


def _parse_const(text: str) -> Const:
    m = _CONST.match(text)
    bank = _parse_int(m.group(1))
    inside = m.group(2).replace(" ", "")
    index = None
    offset = 0
    symbol = None
    for term in re.findall(r"[+-]?[^+-]+", inside):
        body = term.lstrip("+")
        if _IDENT.match(body) and parse_register(body) is None:
            symbol = body
            continue
        reg = parse_register(body)
        if reg is not None:
            index = reg
        else:
            offset += _parse_int(body)
    return Const(bank, offset, index, symbol=symbol)


# a register with suffixes inside an address's brackets, read or not (`R2.reuse.64`, `R2.X3`)
_ADDRESS_REGISTER = re.compile(r"^(R\d+|RZ|UR\d+|URZ)((?:\.[A-Za-z0-9_]+)+)$")
_ADDRESS_SUFFIXES = (".64", ".X4", ".X8", ".X16", ".U32")


def _within(text: str, piece: str) -> tuple[int, int] | None:
    """(offset, length) of `piece` in the operand `text` (the caret under it), else None."""
    at = text.find(piece)
    return (at, len(piece)) if at >= 0 else None


def _address_suffix_problem(text: str, register: str, suffixes: str) -> str:
    """Why a register inside an address is refused: a `.reuse` there (probe s46 leftovers8 finding 5:
    `[R2.reuse.64]` was "expected an integer, found 'R2.reuse.64'"), or a suffix no address takes."""
    parts = ["." + p for p in suffixes.split(".")[1:]]
    if any(p.lower() == ".reuse" for p in parts):
        kept = register + "".join(p for p in parts if p.lower() != ".reuse")
        return (f"'.reuse' inside an address ('{_quoted(text)}'): the operand reuse cache holds an instruction's "
                f"register sources, never an address's registers (nvdisasm prints .reuse only on a source "
                f"operand); write {kept} there")
    return (f"register {register} with the suffix {suffixes} inside an address ('{_quoted(text)}'): an address's "
            f"register takes at most one of {', '.join(_ADDRESS_SUFFIXES)} (a 64-bit base, a scaled index, a "
            f"32-bit offset register)")


def _parse_memory(text: str) -> Mem:
    written = text
    desc = None
    m = re.match(r"^desc\[(UR\d+|URZ)\]\s*(\[.*\])$", text)
    if m:
        desc = parse_register(m.group(1))
        text = m.group(2)
    inside = text[1:-1].replace(" ", "")
    base = None
    suffix = ""
    uoffset = None
    offset = 0
    for term in re.findall(r"[+-]?[^+-]+", inside):
        body = term.lstrip("+")
        rm = re.match(r"^(R\d+|RZ|UR\d+|URZ)(\.64|\.X4|\.X8|\.X16|\.U32)?$", body)
        if not rm:
            shaped = _ADDRESS_REGISTER.match(body)
            if shaped:
                raise SyntaxProblem(_address_suffix_problem(written, shaped.group(1), shaped.group(2)),
                                    within=_within(written, body))
            offset += _parse_int(body)
        elif base is None and not rm.group(1).startswith("U"):
            base = parse_register(rm.group(1))
            suffix = rm.group(2) or ""
        else:
            uoffset = parse_register(rm.group(1))
    return Mem(base, suffix, uoffset, offset, desc)


def parse_operand(text: str, branch_target: bool = False) -> Operand:
    """One operand; `branch_target`: it is where a branch's code address goes (a name is a label)."""
    # nvdisasm prints a packed-half opcode's constant as `c[0x0] [0x170]` (a space between the brackets)
    t = re.sub(r"c\[([^\]]*)\]\s+\[", r"c[\1][", text.strip())
    if not t:
        raise SyntaxProblem("empty operand")
    _check_brackets(text.strip())
    neg = invert = absolute = reuse = False
    swizzle = ""
    # a vector register's sign bit, as nvdisasm prints it: `R2.SIGN`, `R5.reuse.SIGN` (a source of
    # PLOP3's register form; the encoder refuses it elsewhere).  With '-', '|..|' or '~' it is no
    # operand nvdisasm prints: left to the reader below, which calls it unreadable.
    m = re.fullmatch(r"(R\d+|RZ)(\.reuse)?\.SIGN", t)
    if m:
        reg = parse_register(m.group(1))
        return Reg(reg.bank, reg.index, reuse=bool(m.group(2)), sign=True)
    for name in SWIZZLES:
        if t.endswith("." + name):
            swizzle = name
            t = t[: -len(name) - 1]
            break
    if t.endswith(".reuse"):
        reuse = True
        t = t[: -len(".reuse")]
    if t.startswith("!"):
        reg = parse_register(t[1:])
        if reg is None or reg.bank not in ("P", "UP"):
            raise SyntaxProblem(f"'!' applies to predicates only: '{_quoted(text)}'")
        if reuse or swizzle:
            raise SyntaxProblem(f"a predicate takes no modifier but '!': '{_quoted(text)}'")
        return Reg(reg.bank, reg.index, neg=True)
    if t.startswith("-") and not re.match(r"^-(0x[0-9a-fA-F]+|[\d.]|INF|QNAN|NAN)", t):
        neg = True
        t = t[1:]
    if t.startswith("~"):
        invert = True
        t = t[1:]
    if t.startswith("|") and t.endswith("|"):
        absolute = True
        t = t[1:-1]
        if t.endswith(".reuse"):
            reuse = True
            t = t[: -len(".reuse")]
    reg = parse_register(t)
    if reg is not None:
        if reg.bank in ("P", "UP") and (neg or absolute or invert or reuse or swizzle):
            raise SyntaxProblem(f"a predicate takes no modifier but '!': '{_quoted(text)}'")
        return Reg(reg.bank, reg.index, neg=neg, abs=absolute, invert=invert, reuse=reuse, swizzle=swizzle)
    if _CONST.match(t):
        if reuse:
            raise SyntaxProblem(f"modifier on an operand that takes none: '{_quoted(text)}'")
        c = _parse_const(t)
        # a lane selection is read here and encoded or refused by the opcode (encoder._put_swizzle):
        # ptxas converts a .f16 kernel parameter with HADD2.F32 R0, -RZ, c[0x0] [0x16c].H0_H0
        return Const(c.bank, c.offset, c.index, neg=neg, abs=absolute, symbol=c.symbol, invert=invert,
                     swizzle=swizzle)
    if neg or absolute or invert or reuse or swizzle:
        if not _readable(t):     # -R3.SIGN: the operand itself is the problem, not its '-'
            return Unread(text.strip(), describe_unread(t))
        raise SyntaxProblem(f"modifier on an operand that takes none: '{_quoted(text)}'")
    if t.startswith("[") or t.startswith("desc["):
        return _parse_memory(t)
    m = _GDESC.match(t)
    if m:
        return MatrixDescriptor(parse_register(m.group(1)), tuple(f for f in m.group(2).split(".") if f))
    if _SPECIAL.match(t):
        return Special(t)
    if re.fullmatch(r"B\d+", t):
        return Barrier(int(t[1:]))
    if re.fullmatch(r"`?\(?[A-Za-z_.$][A-Za-z0-9_.$]*\)?", t) and t.upper() not in _FLOAT_WORDS:
        # a name is a label only where a code address goes (the last operand of a branch) and only
        # when it is not shaped like a register (R3.SIGN, P7: operands this assembler cannot read)
        if branch_target and not _REGISTER_SHAPE.match(t.strip("`()")):
            return Label(t.strip("`()"))
        return Unread(text.strip(), describe_unread(text))
    try:
        return parse_immediate(t)
    except _Unreadable:
        return Unread(text.strip(), describe_unread(text))


def _check_brackets(text: str) -> None:
    """Refuse an operand whose brackets do not pair (`[R2.64`, `R2.64]`), the caret under the
    bracket at fault, before a reader takes its pieces apart and names one the source does not
    have (probe s32 sasssyntax finding 7: `[R2.64` was "expected an integer, found 'R2.6'")."""
    opened = []
    for at, ch in enumerate(text):
        if ch == "[":
            opened.append(at)
        elif ch == "]":
            if not opened:
                raise SyntaxProblem(f"']' with no '[' before it in '{_quoted(text)}'", within=(at, 1))
            opened.pop()
    if opened:
        raise SyntaxProblem(f"missing ']': the '[' of '{_quoted(text[opened[0]:])}' is never closed",
                            within=(opened[0], len(text) - opened[0]))


def _readable(t: str) -> bool:
    """Whether `t` (modifiers taken off) is an operand of a kind the parser reads."""
    if t.startswith(("[", "desc[")) or _GDESC.match(t) or _SPECIAL.match(t) or re.fullmatch(r"B\d+", t):
        return True
    try:
        parse_immediate(t)
    except SyntaxProblem:
        return False
    return True


def split_operands(text: str) -> list[str]:
    """Split at commas outside brackets."""
    return [part for _, part in split_operands_at(text)]


def split_operands_at(text: str) -> list[tuple[int, str]]:
    """(where in `text` it starts, the operand stripped) of each operand: split at commas outside brackets."""
    parts, depth, start = [], 0, 0
    for at, ch in enumerate(text):
        if ch in "[{":     # {5,4,3,2,1,0}: nvdisasm's scoreboard set (DEPBAR) is one operand
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append((start, text[start:at]))
            start = at + 1
    if text[start:].strip():
        parts.append((start, text[start:]))
    return [(start + len(part) - len(part.lstrip()), part.strip()) for start, part in parts]


@dataclass
class SourceLine:
    """A label definition or an instruction, with where it came from."""

    label: str | None = None
    instruction: Instruction | None = None
    directive: tuple[str, str] | None = None
    span: Span | None = None


BRANCHES = {"BRA", "BSSY", "CALL", "JMP", "RET"}
_GUARD = re.compile(r"^@(!?)(U?P[0-6T])\s+")
# nvdisasm's annotations after an operand or an instruction: (*"SpillRefill"*), (*"BRANCH_TARGETS .L_x_1"*)
_ANNOTATION = re.compile(r'\(\*.*?\*\)')
# Packed half-precision opcodes: nvdisasm prints a 32-bit immediate as two binary16 values,
# the high half first (`HADD2 R2, R2, 1, 0` holds 0x3c000000)
HALF_PAIR_OPCODES = {"HADD2", "HMUL2", "HFMA2", "HMNMX2", "HSETP2", "HSET2"}


def _is_branch(mnemonic: str) -> bool:
    """Opcodes whose last operand is a code address (WARPSYNC alone takes a mask instead)."""
    return mnemonic.split(".")[0] in BRANCHES or mnemonic.startswith("WARPSYNC.COLLECTIVE")


HALF_BITS = 16    # a packed-half immediate: two binary16 halves of the 32-bit field


class _HalfRange(SyntaxProblem):
    """A binary16 half's bits past its 16: refused at the operand (a field's range, encoder.check_field's)."""


def half_bits(text: str, opcode: str = "") -> int:
    """A binary16 immediate as nvdisasm prints it (decimal, INF/NAN words or 0x bits: unsigned, a
    pattern past 16 bits refused, never cut)."""
    t = text.strip()
    if re.fullmatch(r"[+-]?0x[0-9a-fA-F]+", t):
        value = _parse_int(t)
        if not 0 <= value < 1 << HALF_BITS:
            raise _HalfRange(f"{opcode + chr(39) + 's ' if opcode else ''}binary16 half {_quoted(t)} does not fit "
                                f"in {HALF_BITS} bits (0..{(1 << HALF_BITS) - 1:#x})")
        return value
    words = {"+INF": 0x7C00, "INF": 0x7C00, "-INF": 0xFC00, "+QNAN": 0x7E00, "QNAN": 0x7E00,
             "-QNAN": 0xFE00, "+NAN": 0x7E00, "-NAN": 0xFE00}
    if t.upper() in words:
        return words[t.upper()]
    try:
        value = float(t)
    except ValueError:
        raise SyntaxProblem(f"'{_quoted(text)}' is not a binary16 value") from None
    try:
        if value in (float("inf"), float("-inf")):   # float("1e400"): no error, but no INF word either
            raise OverflowError
        bits = struct.unpack("<H", struct.pack("<e", value))[0]
    except OverflowError:
        raise SyntaxProblem(beyond_range(t, "binary16")) from None
    if struct.unpack("<e", struct.pack("<H", bits))[0] != value:
        raise SyntaxProblem(f"{text} is not exactly representable in binary16")
    return bits


# ... and a .BF16_V2 one's as two bfloat16 values (ptxas's add.rn.bf16x2 on sm_90: HFMA2.MMA.BF16_V2 R9, R4, 1, 1,
# R7 holds 0x3f803f80; nvdisasm prints 0x7f80 as +INF, 0xff80 as -INF, every NaN as +QNAN / -QNAN):
# read as binary16 they were encoded as 0x3c003c00, which nvdisasm reads back as 0.0078125, 0.0078125
BFLOAT_PAIR_MODIFIER = "BF16_V2"
_BFLOAT_WORDS = {"+INF": 0x7F80, "INF": 0x7F80, "-INF": 0xFF80, "+QNAN": 0x7FC0, "QNAN": 0x7FC0,
                 "-QNAN": 0xFFC0, "+NAN": 0x7FC0, "-NAN": 0xFFC0}


def bfloat_bits(text: str, opcode: str = "") -> int:
    """A bfloat16 immediate as nvdisasm prints it (decimal, INF/NAN words or 0x bits), exactly: a bfloat16
    is the high half of the binary32 of the same value."""
    t = text.strip()
    if re.fullmatch(r"[+-]?0x[0-9a-fA-F]+", t) or t.upper() in _BFLOAT_WORDS:
        return _BFLOAT_WORDS[t.upper()] if t.upper() in _BFLOAT_WORDS else half_bits(t, opcode)
    try:
        value = float(t)
    except ValueError:
        raise SyntaxProblem(f"'{_quoted(text)}' is not a bfloat16 value") from None
    try:
        if value in (float("inf"), float("-inf")):
            raise OverflowError
        word = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:
        raise SyntaxProblem(beyond_range(t, "bfloat16")) from None
    if word & 0xFFFF or struct.unpack("<f", struct.pack("<I", word))[0] != value:
        raise SyntaxProblem(f"{text} is not exactly representable in bfloat16")
    return word >> 16


def _merge_half_pairs(mnemonic: str, parts: list[str], operands: list, spans: list | None = None):
    """Two adjacent binary16 immediates of a packed-half opcode are one 32-bit operand.  With
    `spans` (each operand's, or None), (operands, their spans): a pair's spans the two."""
    spans = spans if spans is not None else [None] * len(operands)
    if mnemonic.split(".")[0] not in HALF_PAIR_OPCODES:
        return operands, spans
    out, out_spans, i = [], [], 0
    while i < len(operands):
        if (i + 1 < len(operands) and isinstance(operands[i], Imm) and isinstance(operands[i + 1], Imm)):
            halves = []
            for k in (i, i + 1):
                try:
                    read = bfloat_bits if BFLOAT_PAIR_MODIFIER in mnemonic.split(".")[1:] else half_bits
                    halves.append(read(parts[k], mnemonic.split(".")[0]))
                except SyntaxProblem as problem:    # a half past 16 bits or beyond binary16: at the half
                    problem.span = problem.span or spans[k]
                    raise
            value = halves[0] << 16 | halves[1]
            out.append(Imm(value, False, f"{value:#x}", pair=(parts[i].strip(), parts[i + 1].strip())))
            first, last = spans[i], spans[i + 1]
            out_spans.append(Span(first.path, first.line, first.column, last.end_line, last.end_column)
                             if first is not None and last is not None else None)
            i += 2
        else:
            out.append(operands[i])
            out_spans.append(spans[i])
            i += 1
    return out, out_spans


def _operand_span(span: Span | None, problem: SyntaxProblem) -> Span | None:
    """Where `problem` is in the operand written at `span`: the place inside it the problem
    names (SyntaxProblem.within), else the whole operand."""
    if span is None or problem.within is None:
        return span
    at, length = problem.within
    return Span(span.path, span.line, span.column + at, span.line, span.column + at + max(1, length))


def parse_instruction(text: str, span: Span | None = None) -> Instruction:
    """Parse one instruction (with optional control code and guard).  A malformed piece is
    refused where it is written (its Span) when `span` says where `text` is."""
    body = _ANNOTATION.sub("", text).strip().rstrip(";").strip()
    whole = body
    lead = len(text) - len(text.lstrip())
    located_text = span is not None and whole == text.strip().rstrip(";").strip()

    def at_text(piece: str, length: int | None = None) -> Span | None:
        """The Span of `piece`, a suffix-aligned part of `body` as it is now (its first
        `length` characters), when where `text` is written is known."""
        if not located_text:
            return None
        offset = lead + len(whole) - len(piece)
        column = span.column + offset - lead
        return Span(span.path, span.line, column, span.line, column + max(1, len(piece) if length is None else length))

    control = None
    if body.startswith("["):
        if "]" not in body:
            raise SyntaxProblem(f"control code '{body.split()[0]}' has no closing ']' "
                                "(expected e.g. [B------:R-:W-:-:S04])", span=at_text(body, len(body.split()[0])))
        end = body.index("]") + 1
        try:
            control = parse_control(body[:end])
        except SyntaxProblem as problem:
            problem.span = problem.span or at_text(body, end)
            raise
        body = body[end:].strip()
    guard = None
    m = _GUARD.match(body)
    if m:
        reg = parse_register(m.group(2))
        guard = Reg(reg.bank, reg.index, neg=bool(m.group(1)))
        body = body[m.end():]
        if body.startswith("@"):
            written = body.split()[0]
            raise SyntaxProblem(f"a second guard '{_quoted(written)}': an instruction takes one guard predicate "
                                f"(@{m.group(1)}{m.group(2)} is its guard)", span=at_text(body, len(written)))
    elif body.startswith("@"):
        written = body[1:].split()[0] if body[1:].split() else ""
        raise SyntaxProblem(f"guard '@{written}': {written.lstrip('!') or 'nothing'} is not a predicate "
                            f"(P0..P6, PT, or UP0..UP6, UPT; '!' negates)", span=at_text(body, 1 + len(written)))
    m = re.match(r"^([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*(.*)$", body)   # HGMMA.64x128x16
    if not m:
        raise SyntaxProblem(f"expected an instruction, found '{_quoted(body)}'")
    mnemonic, rest = m.group(1), m.group(2).strip()
    mnemonic_span = None
    if span is not None:
        at = span.column + text.index(mnemonic, lead) - lead
        mnemonic_span = Span(span.path, span.line, at, span.line, at + len(mnemonic))
    if rest.endswith(","):
        raise SyntaxProblem(f"trailing comma after the last operand of {mnemonic}")
    # RET.REL.NODEC R8 0x0: nvdisasm separates this pair with a space only
    located = [(at + inner, p) for at, part in split_operands_at(rest) for inner, p in _space_split_at(mnemonic, part)]
    parts = [p for _, p in located]
    spans = [None] * len(parts)
    if located_text and whole.endswith(rest):
        # where each operand is written: `rest` ends the instruction, which starts `text` past its indent
        rest_at = lead + len(whole) - len(rest)
        spans = [Span(span.path, span.line, span.column + rest_at + at - lead, span.line,
                      span.column + rest_at + at - lead + len(p)) for at, p in located]
    branch = _is_branch(mnemonic)
    operands = []
    for i, p in enumerate(parts):
        try:
            operands.append(parse_operand(p, branch and i == len(parts) - 1))
        except SyntaxProblem as problem:     # R300, '!' on a register, a missing ']': at the operand
            problem.span = problem.span or _operand_span(spans[i], problem)
            raise
    operands, spans = _merge_half_pairs(mnemonic, parts, operands, spans)
    if branch and operands and isinstance(operands[-1], Imm):
        if operands[-1].is_float:
            raise SyntaxProblem(f"{mnemonic}'s target {_quoted(operands[-1].text)} is no code address: write a "
                                f"label or an instruction's address (a multiple of 0x10)", span=spans[-1])
        operands[-1] = Label(None, operands[-1].value)   # nvdisasm prints targets as addresses
    return Instruction(mnemonic, operands, guard, control, span, text, mnemonic_span,
                       operand_spans=tuple(spans) if all(spans) else ())


def _space_split(mnemonic: str, part: str) -> list[str]:
    return [p for _, p in _space_split_at(mnemonic, part)]


def _space_split_at(mnemonic: str, part: str) -> list[tuple[int, str]]:
    if mnemonic.startswith("RET") and " " in part.strip():
        return [(m.start(), m.group(0)) for m in re.finditer(r"\S+", part)]
    return [(0, part)]


BYTE_ORDER_MARK = "\ufeff"


def without_byte_order_mark(text: str) -> str:
    """A source's text without the UTF-8 byte order mark an editor may save at its start: accepted
    and skipped, as modules accept it (docs/language.md), so columns on line 1 count from the
    character after it (probe s32 sasssyntax finding 6).  Skipped in one place only, where a
    source file is read (source.source_text): parse_source refuses a BOM left in its text, so a
    doubled one is refused (probe s32 today3 finding 4)."""
    return text[1:] if text.startswith(BYTE_ORDER_MARK) else text


_HEX_WORD = re.compile(r"/\*\s*(0x[0-9a-fA-F]{16})\s*\*/")
_LABEL = re.compile(r"^([A-Za-z_.$][A-Za-z0-9_.$]*):(?!\S*\])\s*")


def parse_source(text: str, source_name: str = "<input>") -> list[SourceLine]:
    """Parse a whole source: directives, labels and instructions.

    nvdisasm's listings parse as they are printed: `/*0040*/` addresses and the
    `/* 0x... */` words of `-hex` are comments, except that the two words after an
    instruction are kept (`Instruction.listed`): they carry the control code, which
    nvdisasm does not print as text.  Labels may start with '.' (`.L_x_12:`).

    The lines of one text under one name are parsed once per process and shared (a build's
    assembly and the certifier's parameter reads both read each kernel source: probe s35
    buildspeed finding 2); nothing modifies a parsed line, its instruction or its operands
    (the assembler makes changed copies), and the list returned is the caller's own.
    """
    return list(_parsed_source(text, source_name))


# whitespace Python's str.split takes but a SASS line's code does not (probe s38 texts2 finding 3): every
# Unicode space and separator but the space, the tab and the form feed a module takes (docs/language.md);
# line ends are gone (source_lines).  In a comment anything goes.
_ODD_SPACE = re.compile(r"[^\S \t\f]")


def _space_name(char: str) -> str:
    import unicodedata

    name = unicodedata.name(char, "")
    code = f"U+{ord(char):04X}"
    return f"{name.lower()} ({code})" if name else f"control character {code}"


# a line's comments, left to right: a /* ... */ closed on the line, or // or # to its end, or a /* left open
_COMMENT = re.compile(r"/\*.*?\*/|//|#|/\*")


def _code_part(raw: str, source_name: str, number: int) -> str:
    """The code of a source line: comments blanked (a /* ... */ by as many spaces, so columns stay)
    and cut at // or #, whichever comes first as the line is read (`/* a // b */` is one comment).
    A /* is closed on its line: one left open is refused where it begins (probe s38 texts2 finding 6:
    a block comment over several lines was read as code, "expected an instruction, found '/* a'")."""
    out, at = [], 0
    for found in _COMMENT.finditer(raw):
        out.append(raw[at:found.start()])
        at = found.end()
        comment = found.group(0)
        if comment in ("//", "#"):
            return "".join(out)
        if comment == "/*":
            column = found.start() + 1
            raise BobcError("this /* comment is not closed on its line: a SASS block comment ends on the line it "
                            "begins", Span(source_name, number, column, number, column + 2),
                            hint="close it with */ on this line, or begin each line of a longer comment with //")
        out.append(" " * len(comment))
    out.append(raw[at:])
    return "".join(out)


def line_code(raw: str, source_name: str, number: int) -> str:
    """What the parser reads of a source line: _code_part's code, (* annotations *) blanked too
    (columns kept).  The one reading of a line's comments: bobc.kernel_search reads `.kernel`
    through it (probe s39 coverage2 finding 1: its own rule cut `/* see https://... */` at the //)."""
    return _ANNOTATION.sub(lambda m: " " * len(m.group(0)), _code_part(raw, source_name, number))


@lru_cache(maxsize=64)
def _parsed_source(text: str, source_name: str) -> tuple[SourceLine, ...]:
    """parse_source's lines, kept per (text, name); a refusal is raised again, never kept."""
    lines: list[SourceLine] = []
    last: Instruction | None = None
    # a byte order mark at the file's start was skipped once, where the file is read
    # (source.source_text); one here is a second one, refused below as any BOM not at the start
    for number, raw in enumerate(source_lines(text), start=1):
        words = [int(w, 16) for w in _HEX_WORD.findall(raw)]
        code = line_code(raw, source_name, number)
        stripped = code.rstrip()
        if not stripped.strip():
            if len(words) == 1 and last is not None and last.listed is not None and len(last.listed) == 1:
                last.listed = (last.listed[0], words[0])   # the second word of the one above
            continue
        column = len(stripped) - len(stripped.lstrip()) + 1
        content = stripped.strip()
        span = Span(source_name, number, column, number, len(stripped) + 1)
        if BYTE_ORDER_MARK in stripped:
            at = stripped.index(BYTE_ORDER_MARK) + 1
            raise BobcError("a byte order mark (U+FEFF) here: it is accepted only as the file's first character",
                            Span(source_name, number, at, number, at + 1),
                            hint="delete it (an editor can save the file as UTF-8 without a BOM)")
        odd = _ODD_SPACE.search(code)          # rstrip took trailing ones away
        if odd is not None:
            from ..resources import doc

            at = odd.start() + 1
            raise BobcError(f"a {_space_name(odd.group(0))} in a line's code: SASS separates a line's parts "
                            f"with spaces and tabs (as a module does, {doc('language.md')})",
                            Span(source_name, number, at, number, at + 1),
                            hint="replace it with a space (an editor or a copy from a web page put it there)")
        last = None
        try:
            while True:
                m = _LABEL.match(content)
                if not m:
                    break
                if _REGISTER_SHAPE.match(m.group(1)) or _SPECIAL.match(m.group(1)) \
                        or re.fullmatch(r"B\d+", m.group(1)):
                    raise SyntaxProblem(f"label '{m.group(1)}' is spelled like a register: a branch to it "
                                        f"would read the register")
                lines.append(SourceLine(label=m.group(1), span=span))
                content = content[m.end():]
            if not content:
                continue
            if content.startswith("."):
                name, _, value = content.replace("\t", " ").partition(" ")
                lines.append(SourceLine(directive=(name, value.strip()), span=span))
                continue
            position = stripped.index(content)
            for piece in content.split(";"):
                if piece.strip():
                    at = position + len(piece) - len(piece.lstrip()) + 1
                    inst = parse_instruction(piece, Span(source_name, number, at, number,
                                                         at + len(piece.strip())))
                    inst.span = span
                    lines.append(SourceLine(instruction=inst, span=span))
                    last = inst
                position += len(piece) + 1
            if last is not None and len(words) == 1:
                last.listed = (words[0],)
        except SyntaxProblem as problem:
            raise BobcError(str(problem), problem.span or span) from None
    for line in lines:
        if line.instruction is not None and line.instruction.listed is not None and len(line.instruction.listed) != 2:
            line.instruction.listed = None
    return tuple(lines)
