"""Turning one parsed instruction into its 128-bit word (control bits apart).

word = the form's learned fixed bits | each operand placed by its opcode's
layout (tables/layouts.py) | guard predicate | control code.  `place_operands`
is also what learning uses to take operands back out of ptxas's words.
"""
from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from .syntax import (Const, Imm, Instruction, Label, MatrixDescriptor, Mem, Reg, Unread, beyond_range, binary32_of_decimal,
                     _quoted, literal_is_zero, mnemonic_parts, shown_literal)
from .tables.arch import ENCODINGS, ArchEncoding
from .tables import layouts as L

CONTROL_MASK = ((1 << 17) - 1) << 105   # stall, yield, barriers, wait mask (reuse: operands)
SPECIAL_REGISTERS = {
    "SR_LANEID": 0x00, "SR_CLOCKLO": 0x50, "SR_CLOCKHI": 0x51,
    "SR_TID.X": 0x21, "SR_TID.Y": 0x22, "SR_TID.Z": 0x23,
    "SR_CTAID.X": 0x25, "SR_CTAID.Y": 0x26, "SR_CTAID.Z": 0x27,
    "SR_LEMASK": 0x3A, "SR_LTMASK": 0x39, "SR_GEMASK": 0x3C, "SR_GTMASK": 0x3B, "SR_EQMASK": 0x38,
    # read from ptxas's words in tests/sass/data (S2R/CS2R bits 72..79)
    "SR_CgaCtaId": 0x88, "SR_LMEMHIOFF": 0x37, "SR_SWINHI": 0x2F, "SRZ": 0xFF,
    # ptxas's words for %warpid, %smid and %globaltimer (probe s28 asm, mem_ops.ptx, both targets:
    # S2R R3, SR_VIRTID = 0x...0300...037919; S2R R4, SR_VIRTUALSMID: 0x43; CS2R R8, SR_GLOBALTIMERLO: 0x52)
    "SR_VIRTID": 0x03, "SR_VIRTUALSMID": 0x43, "SR_GLOBALTIMERLO": 0x52,
    # ptxas's words for %globaltimer_hi (CS2R.32 R18, SR_GLOBALTIMERHI: 0x53), %dynamic_smem_size / %total_smem_size
    # (S2R R23, SR_SMEMSZ / S2UR UR6, SR_SMEMSZ: 0x32) and sm_90's %nwarpid (S2R R18, SR_VIRTCFG: 0x02), both
    # targets where ptxas writes them (tools/ptx_corpus/user_forms_s45.ptx, timers_and_sleep)
    "SR_GLOBALTIMERHI": 0x53, "SR_SMEMSZ": 0x32, "SR_VIRTCFG": 0x02,
}


ZERO_REGISTER = {"R": 255, "UR": 63, "P": 7, "UP": 7}


class EncodeProblem(ValueError):
    """Why an instruction cannot be encoded; the assembler adds the source span (the operand's,
    `operand` = its index among the instruction's operands, where the problem is one operand's value)
    and `hint`, what to do, where one is known."""

    operand: int | None = None
    hint: str | None = None


class FieldRange(EncodeProblem):
    """An operand's value outside its field's range: refused where the operand is written."""


def field_range(width: int, signed: bool = False, both: bool = False) -> tuple[int, int]:
    """The values a field of `width` bits takes: 0..2**w-1; `signed`: -2**(w-1)..2**(w-1)-1;
    `both` (signed and unsigned spellings of the same bits, tables.layouts): -2**(w-1)..2**w-1."""
    if signed:
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return (-(1 << (width - 1)) if both else 0), (1 << width) - 1


def _hex(value: int) -> str:
    return "0" if value == 0 else f"{value:#x}"


def check_field(value: int, width: int, what: str, written, signed: bool = False, both: bool = False,
                register: str = "") -> int:
    """`value` as the field stores it (two's complement for a negative one), or the refusal naming
    the operand (`what` and the text `written`), the field's range and the value: never wrapped.
    `register`: the field numbers registers of that letter (B0..B15), its range so spelled."""
    lo, hi = field_range(width, signed, both)
    if not lo <= value <= hi:
        shown = written if written not in (None, "") else _hex(value)
        span = f"{register}{lo}..{register}{hi}" if register else f"{_hex(lo)}..{_hex(hi)}"
        raise FieldRange(f"{what} {_quoted(str(shown))} does not fit in {width}{' signed' if signed else ''} bits "
                         f"({span})")
    return value % (1 << width)


@dataclass
class Placed:
    """Operand bits of one instruction and the mask of the fields they occupy."""

    value: int = 0
    mask: int = 0
    reads: list[tuple[str, int, int]] = field(default_factory=list)   # (bank, first, count)
    writes: list[tuple[str, int, int]] = field(default_factory=list)
    constant_bytes: int = 0     # how many bytes a constant-bank operand reads from its offset
    # registers the encoding names (reads, for the scheduler) whose values the instruction ignores:
    # the A half of HGMMA's matrix descriptor pair when A is in registers (bobc.sass.defined)
    ignored: list[tuple[str, int, int]] = field(default_factory=list)
    descriptor: int | None = None   # the uniform register pair of a global access's memory descriptor

    def put(self, lsb: int, width: int, value: int, what: str) -> None:
        if value < 0 or value >= 1 << width:
            raise EncodeProblem(f"{what} {value:#x} does not fit in {width} bits")
        field_mask = ((1 << width) - 1) << lsb
        self.value = (self.value & ~field_mask) | (value << lsb)
        self.mask |= field_mask

    def flag(self, bit: int, on: bool) -> None:
        self.mask |= 1 << bit
        if on:
            self.value |= 1 << bit


@dataclass(frozen=True)
class Form:
    """One learned form: fixed bits and the ptxas instruction that established them."""

    key: str
    fixed: int
    reference: str
    example: str


@cache
def forms_for(arch: str) -> dict[str, Form]:
    encoding = ENCODINGS[arch]
    path = Path(__file__).parent / "tables" / encoding.fixed_bits
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    return {key: Form(key, int(entry["lo"], 16) | int(entry["hi"], 16) << 64,
                      entry.get("reference") or f"derived from {entry['derived_from']} via {entry['via']}",
                      entry["example"])
            for key, entry in data["forms"].items()}


@cache
def _slot_tokens(layout: str) -> tuple[tuple[str, bool], ...]:
    """A layout's slots, each (name, optional); one reading per layout (the tables' strings)."""
    tokens = []
    for token in layout.split():
        optional = token.startswith("[")
        tokens.append((token.strip("[]"), optional))
    return tuple(tokens)


def _by_opcode(table: dict) -> dict[str, tuple]:
    """A table keyed by (opcode, variant modifier) as opcode -> ((variant, value), ...), in the
    table's order: what an instruction's opcode selects, without a scan of every row."""
    out: dict[str, list] = {}
    for (opcode, variant), value in table.items():
        out.setdefault(opcode, []).append((variant, value))
    return {opcode: tuple(rows) for opcode, rows in out.items()}


_MODIFIER_VARIANTS = _by_opcode(L.OPERAND_MODIFIER_VARIANTS)
_SWIZZLE_ABSENT = _by_opcode(L.SWIZZLE_FIELD_ABSENT)


def _kind_letter(operand) -> str:
    k = operand.kind()
    return "M" if k.startswith("[") else k[0]


def layouts_of(inst: Instruction, arch: str | None = None) -> list[str] | None:
    """The layouts an instruction's operands are matched against: its variant's (L.LAYOUT_VARIANTS), its
    target's (L.LAYOUT_TARGETS), else its opcode's."""
    for (opcode, variant), layouts in L.LAYOUT_VARIANTS.items():
        if opcode == inst.opcode and variant in inst.modifiers:
            return layouts
    if arch is not None and (inst.opcode, arch) in L.LAYOUT_TARGETS:
        return L.LAYOUT_TARGETS[(inst.opcode, arch)]
    layouts = L.LAYOUTS.get(inst.opcode)
    return layouts + L.LAYOUT_EXTRAS.get(inst.opcode, []) if layouts is not None else None


def match_layout(inst: Instruction, arch: str | None = None) -> list[tuple[str, object]]:
    """Pair each operand with its slot, trying the instruction's layouts (layouts_of) in order."""
    layouts = layouts_of(inst, arch)
    if layouts is None:
        raise EncodeProblem(f"opcode {inst.opcode} is not supported by this assembler")
    kinds = [_kind_letter(op) for op in inst.operands]
    for layout in layouts:
        pairing = _match(_slot_tokens(layout), 0, inst.operands, kinds, 0)
        if pairing is not None:
            return pairing
    shapes = " | ".join(layouts)
    raise EncodeProblem(f"operands of {inst.mnemonic} do not fit its layout ({shapes})")


def _match(tokens, ti, operands, kinds, oi):
    if ti == len(tokens):
        return [] if oi == len(operands) else None
    name, optional = tokens[ti]
    slot_kinds = L.SLOTS[name]["kinds"]
    if oi < len(operands) and kinds[oi] in slot_kinds:
        rest = _match(tokens, ti + 1, operands, kinds, oi + 1)
        if rest is not None:
            return [(name, operands[oi])] + rest
    if optional:
        return _match(tokens, ti + 1, operands, kinds, oi)
    return None


def _access_width(modifiers: list[str]) -> int:
    for m, n in (("128", 4), ("64", 2)):
        if m in modifiers:
            return n
    return 1


def _atomic_width(modifiers: list[str]) -> int:
    """Registers an atomic's value covers: its access size, or a 64-bit type (ATOMG.E.MIN.S64 R18 writes R18..R19
    and reads R6..R7; RED.E.ADD.F64 reads R14..R15: nvdisasm's life ranges, tests/sass/test_register_widths.py)."""
    if any(m in modifiers for m in ("S64", "U64", "F64")):
        return 2
    return _access_width(modifiers)


# The sub-word sizes of a load (LDC / ULDC: a kernel's .u8 / .s8 / .u16 / .s16 parameter, which ptxas
# reads as a byte, or a half word at offset 2 of a word: tools/ptx_corpus/subword_params.ptx): one
# register, zero- (U) or sign- (S) extended from the bytes read.
SUBWORD_BYTES = {"U8": 1, "S8": 1, "U16": 2, "S16": 2}


def constant_load_bytes(modifiers: list[str]) -> int:
    """How many bytes an LDC / ULDC of these modifiers reads from its bank: 1 (.U8 / .S8), 2
    (.U16 / .S16), 4, 8 (.64) or 16 (.128).  Its offset is a multiple of it (a read is naturally
    aligned, as every ptxas listing's is)."""
    for m in modifiers:
        if m in SUBWORD_BYTES:
            return SUBWORD_BYTES[m]
    return 4 * _access_width(modifiers)


def _conversion_types(op: str, mods: list[str]) -> tuple[str, str]:
    """(destination, source) types of F2F / I2F / F2I as nvdisasm names them: it prints only the
    types that are not the default (32 bits: F32 for a float, S32 for an integer), and a type's
    letter says which side it is on -- I2F.F64 (s32 -> f64) names its destination, I2F.U64
    (u64 -> f32) its source, F2I.S64.F64 both; F2F names both, destination first.  BF16 is a float type
    too: sm_90's F2F.BF16.F64 R7, R6 (cvt.rn.bf16.f64) writes R7 alone and F2F.F64.BF16 R6, R6 reads R6 alone
    (nvdisasm -plr; tools/ptx_corpus/sm90_user_forms_s45.ptx), not pairs."""
    types = [m for m in mods if m[:1] in "FSU" and m[1:].isdigit() or m == "BF16"]
    if op == "F2F":
        return (types[0], types[-1]) if types else ("F32", "F32")
    floats = [t for t in types if t[0] in "FB"]
    integers = [t for t in types if t[0] not in "FB"]
    if op == "I2F":
        return (floats[0] if floats else "F32"), (integers[0] if integers else "S32")
    return (integers[0] if integers else "S32"), (floats[0] if floats else "F32")   # F2I


def _reg_width(inst: Instruction, slot: str) -> int:
    """How many consecutive registers an operand slot covers (for dependency tracking and the
    register count).  Checked against nvdisasm's own register life ranges (-plr: which registers
    each instruction reads and assigns) over the whole ptxas corpus of both targets:
    tests/sass/test_register_widths.py."""
    op, mods = mnemonic_parts(inst.mnemonic)
    if op in ("F2F", "I2F", "F2I"):
        dest, source = _conversion_types(op, mods)
        if slot == "Rd":
            return 2 if dest.endswith("64") else 1
        if slot == "Sb":
            return 2 if source.endswith("64") else 1
    if op in ("DADD", "DMUL", "DFMA", "DSETP") and slot in ("Rd", "Ra", "Sb", "Sc"):
        return 2
    if op == "FRND" and "F64" in mods and slot in ("Rd", "Sb"):
        return 2        # FRND.F64 R12, R6: cvt.rmi.f64.f64 rounds the pair R6..R7 into R12..R13
    if op == "HMMA":
        # m16n8k16: A 4 registers, B 2; m16n8k8: A 2, B 1 (TF32: A 4, B 2); C/D 4 (F32) or 2 (F16)
        big = "16816" in mods or "TF32" in mods
        return {"Rd": 4 if "F32" in mods else 2, "Sc": 4 if "F32" in mods else 2,
                "Ra": 4 if big else 2, "Sb": 2 if big else 1}.get(slot, 1)
    if op == "HGMMA":
        # HGMMA.64xNx16.F32: N/2 accumulators per thread (N/4 for .F16); A in registers: 4
        shape = next((m for m in mods if "x" in m), "64x8x16")
        n = int(shape.split("x")[1])
        accumulators = n // 2 if "F32" in mods else n // 4
        return {"Rd": accumulators, "Rc": accumulators, "Ra": 4}.get(slot, 1)
    if op == "LDSM" and slot == "Rd":
        return next((int(m) for m in mods if m in ("1", "2", "4")), 1)
    # 64-bit uniform arithmetic (sm_90: UIADD3.64 UR24, UR8, UR12, URZ reads UR8..9 and UR12..13
    # and writes UR24..25).  SYNCS.EXCH.64 URZ, [UR10], UR4 reads UR4..5 too (nvdisasm's life
    # ranges): the sm_90 matrix products' mbarrier initialisation (UMOV UR29, then SYNCS.EXCH.64
    # [UR15], UR28) had its UMOV waited 8 cycles, where schedule.ASYNC_UNIFORM_READ asks 9.
    if op == "UIADD3" and "64" in mods and slot in ("Ud", "Ra", "Sb", "Sc"):
        return 2
    if op == "SYNCS" and "EXCH" in mods and "64" in mods and slot == "Sb":
        return 2
    if op in ("IMAD", "UIMAD") and "WIDE" in mods and slot in ("Rd", "Ud", "Sc"):
        return 2        # a 64-bit product and addend
    if op == "IMAD" and "HI" in mods and slot == "Sc":
        return 2        # IMAD.HI R7, R3, R9, R6 adds the pair R6..R7 (UR4..UR5 for a uniform one)
    if op == "MATCH" and "U64" in mods and slot == "Ra":
        return 2        # MATCH.ANY.U64 R11, R2 compares the pair R2..R3 (match.any.sync.b64)
    if op == "RET" and slot == "Ra":
        return 2        # RET.REL.NODEC R8: the 64-bit return address R8..R9
    if slot == "Rd":
        if op in ("ATOMG", "ATOMS"):
            return _atomic_width(mods)
        if op in ("LDG", "LDS", "LDC", "LDL", "LD"):
            return _access_width(mods)
        if op == "CS2R" and "32" not in mods:
            return 2
        return 1
    if slot == "Ud" and op == "ULDC":
        return _access_width(mods)
    if slot == "Sb" and op in ("RED", "REDG", "ATOMG", "ATOMS"):
        return _atomic_width(mods)
    if slot == "Sb" and op in ("STG", "STS", "STL", "ST"):
        return _access_width(mods)
    if slot == "Sc" and op in ("ATOMG", "ATOMS") and ("CAS" in mods or "CAST" in mods):
        return _atomic_width(mods)  # ATOMS.CAST.SPIN.64 R6, [R23.X8+0x200], R4, R6: new value R6..R7
    return 1


class Encoder:
    """Encodes instructions for one architecture."""

    def __init__(self, arch: str):
        self.arch: ArchEncoding = ENCODINGS[arch]
        self.forms = forms_for(arch)
        self.implicit_descriptor = 4   # UR pair ptxas loads from the memory-descriptor slot

    # -- keys ---------------------------------------------------------------
    def key(self, inst: Instruction) -> str:
        return inst.key()

    # -- operands -----------------------------------------------------------
    def resolve_const(self, c: Const) -> int:
        if c.symbol is None:
            return c.offset
        if c.symbol not in self.arch.symbols:
            known = ", ".join(sorted(self.arch.symbols))
            raise EncodeProblem(f"unknown constant symbol '{c.symbol}' (known: {known})")
        return self.arch.symbols[c.symbol] + c.offset

    def immediate(self, inst: Instruction, imm: Imm, width: int = 32, what: str = "immediate") -> int:
        """The bits of an immediate operand for a field of `width` bits: the 32-bit source field
        takes an integer opcode's value signed or unsigned (tables.layouts: nvdisasm prints both),
        a float opcode's bits unsigned; every narrower field (a count, a LUT, a shift) is unsigned.
        A value out of range is refused (check_field), never wrapped."""
        bits = inst.opcode in L.FLOAT_IMMEDIATE or inst.opcode in L.DOUBLE_IMMEDIATE or inst.opcode in L.HALF_OPCODES
        if imm.is_float and (not bits or width != L.IMM_B[1]):
            raise EncodeProblem(_not_an_integer(inst, imm, width, what))
        if imm.text.upper().lstrip("+-") == "SNAN":
            raise EncodeProblem(f"{imm.text} names no payload (nvdisasm prints every signalling NaN so): write the "
                                f"immediate's bits, e.g. {'0xffbfffff' if imm.text.startswith('-') else '0x7fbfffff'}")
        if inst.opcode in L.DOUBLE_IMMEDIATE and not imm.text.lower().lstrip("+-").startswith("0x"):
            return _double_high_word(imm)
        if imm.problem and (imm.is_float or inst.opcode in L.FLOAT_IMMEDIATE):
            raise EncodeProblem(imm.problem)
        value = imm.value
        if inst.opcode in L.FLOAT_IMMEDIATE and not imm.is_float and not imm.text.lower().lstrip("+-").startswith("0x"):
            try:
                value = binary32_of_decimal(imm.text or str(value))
            except ValueError as problem:
                raise EncodeProblem(str(problem)) from None
        both = width == L.IMM_B[1] and not bits
        return check_field(value, width, f"{inst.opcode}'s {what}", imm.text, both=both)

    def unread_problem(self, inst: Instruction) -> str | None:
        """Why an operand of `inst` cannot be read (syntax.Unread), with the forms its opcode has here."""
        unread = next((op for op in inst.operands if isinstance(op, Unread)), None)
        if unread is None:
            return None
        same = sorted(k for k in self.forms if k.split(" ")[0] == inst.mnemonic)
        others = sorted(k for k in self.forms if k.split(" ")[0].split(".")[0] == inst.opcode and k not in same)
        known = (same + others)[:8]
        forms = (f"; known {self.arch.name} forms of {inst.opcode}: " + "; ".join(known)
                 + (f" (and {len(same) + len(others) - len(known)} more)" if len(same) + len(others) > len(known) else "")
                 if known else f"; {inst.opcode} has no {self.arch.name} form in the tables")
        return f"cannot read operand '{_quoted(unread.text)}' of {inst.mnemonic}: {unread.looks}{forms}"

    def place_operands(self, inst: Instruction, pc: int = 0) -> Placed:
        problem = self.unread_problem(inst)
        if problem:
            raise EncodeProblem(problem)
        placed = Placed()
        pairing = match_layout(inst, self.arch.name)
        slots = [name for name, _ in pairing]
        # the C-slot swap: an immediate/constant/uniform third source takes B's fields and
        # B's register moves to the C field
        home = "UR" if inst.opcode in L.UNIFORM_OPCODES else "R"
        third = dict(pairing).get("Sc")
        swap = "Sc" in slots and not (isinstance(third, Reg) and third.bank == home)
        for position, (name, operand) in enumerate(pairing):
            try:
                spec = L.SLOTS[name]
                sign_slot = name in ("Rsa", "Rsb", "Rsc")
                if isinstance(operand, Reg) and operand.sign != sign_slot:
                    raise EncodeProblem(
                        f"{inst.opcode} takes no '.SIGN' here: a register's sign bit is a source of PLOP3's "
                        f"register form alone" if operand.sign else
                        f"PLOP3's register form reads each register's sign bit: write R{operand.index}.SIGN "
                        f"(nvdisasm's text; the whole register is no PLOP3 source)".replace("R255", "RZ"))
                if sign_slot:
                    # only '.reuse' besides '.SIGN' (the parser reads no '-' or '|..|' with it)
                    self._put_vector(placed, operand, spec["reg"], (), inst.opcode)
                elif name in ("Rd", "Ud", "Pu", "Pv"):
                    self._put_reg(placed, operand, spec["field"], name)
                    if operand.index != ZERO_REGISTER[operand.bank]:
                        placed.writes.append((operand.bank, operand.index, _reg_width(inst, name)))
                elif name == "Ra":
                    self._put_source(inst, placed, operand, "A", name)
                elif name == "Sb":
                    self._put_source(inst, placed, operand, "C" if swap else "B", name)
                elif name == "Sc":
                    self._put_source(inst, placed, operand, "B" if swap else "C", name)
                elif name == "Iplut":
                    (lo_at, lo_width), (hi_at, hi_width) = spec["split"]
                    value = self.immediate(inst, operand, lo_width + hi_width, spec["what"])
                    placed.put(lo_at, lo_width, value & 7, "LUT")
                    placed.put(hi_at, hi_width, value >> 3, "LUT")
                elif name == "SBn":
                    last = L.SCOREBOARDS - 1
                    if not (operand.name.startswith("SB") and operand.name[2:].isdigit()):
                        raise EncodeProblem(f"expected a scoreboard SB0..SB{last}, found {operand.name}")
                    number = int(operand.name[2:])
                    if number > last:   # the field has room for 7; the GPU has L.SCOREBOARDS (nvdisasm: INVALID6)
                        raise FieldRange(f"{inst.opcode}'s {spec['what']} {operand.name} does not exist "
                                            f"(SB0..SB{last}, one for each bit of a control code's wait mask)")
                    placed.put(*spec["field"], number, "scoreboard")
                elif name in ("Idep", "Ibpt", "Imask8"):
                    placed.put(*spec["field"], self.immediate(inst, operand, spec["field"][1], spec["what"]), name)
                elif name in ("Pp", "Pq", "Pr"):
                    self._put_reg(placed, operand, spec["field"], name, negatable=True)
                    placed.flag(spec["neg"], operand.neg)
                    placed.reads.append((operand.bank, operand.index, 1))
                elif name in ("Ilut", "Ishift", "Ibar", "Icount"):
                    lsb, width = spec["field"]
                    placed.put(lsb, width, self.immediate(inst, operand, width, spec["what"]), name)
                elif name in ("Ilane", "Iclamp"):
                    if isinstance(operand, Reg):
                        self._put_vector(placed, operand, spec["reg"])
                    else:
                        lsb, width = spec["field"]
                        what = f"{inst.opcode}'s {spec['what']}"
                        if not isinstance(operand, Imm) or operand.is_float:
                            raise EncodeProblem(f"{what} {_quoted(operand.text)} is no integer ({_hex(0)}.."
                                                f"{_hex((1 << width) - 1)})")
                        placed.put(lsb, width, check_field(operand.value, width, what, operand.text), spec["what"])
                elif name == "SR":
                    if operand.name not in SPECIAL_REGISTERS:
                        raise EncodeProblem(f"unknown special register {operand.name} (known: "
                                            f"{', '.join(n for n in SPECIAL_REGISTERS if n.startswith('SR_'))}, SRZ)")
                    placed.put(72, 8, SPECIAL_REGISTERS[operand.name], "special register")
                elif name in ("Mem", "MemSt", "MemCas", "MemShared", "MemGlobal", "MemSync"):
                    if (self.arch.name in L.ZERO_BASE_ILLEGAL.get((inst.opcode, name), ())
                            and (operand.base is None or operand.base.index == ZERO_REGISTER["R"])):
                        problem = EncodeProblem(
                            f"{inst.mnemonic}'s address cannot have base RZ on {self.arch.name}: that word is an "
                            f"illegal instruction (nvdisasm rejects it; ptxas never writes it)")
                        problem.hint = ("for an absolute address, zero a register pair and use it as the base, as ptxas "
                                        "does: CS2R R4, SRZ then [R4.64+offset]")
                        raise problem
                    self._put_memory(inst, placed, operand, spec)
                elif name in ("MemUA", "MemU24", "MemU32"):
                    self._put_uniform_address(inst, placed, operand, spec, name)
                elif name == "Rc":
                    if not (isinstance(operand, Reg) and operand.bank == "R") or operand.neg or operand.abs \
                            or operand.invert or operand.reuse or operand.swizzle:
                        raise EncodeProblem(f"{inst.opcode}'s accumulator is a plain vector register, found {operand}")
                    self._put_reg(placed, operand, spec["field"], name)
                    if operand.index != 255:
                        placed.reads.append(("R", operand.index, _reg_width(inst, name)))
                elif name in ("GdA", "GdB"):
                    self._put_matrix_descriptor(inst, placed, operand, spec, a_in_registers=name == "GdB")
                elif name == "Pg":
                    self._put_reg(Placed(), operand, spec["field"], name, negatable=True)   # modifiers checked
                    placed.put(*spec["field"], operand.index ^ 7, name)   # stored inverted: UPT = 0
                    placed.flag(spec["neg"], operand.neg)
                    placed.reads.append((operand.bank, operand.index, 1))
                elif name == "Gsb":
                    if operand.name != "gsb0":
                        raise EncodeProblem(f"expected the warpgroup scoreboard gsb0, found {operand.name}")
                    placed.put(*spec["field"], 0, name)
                elif name in ("Iwg", "Imaxreg"):
                    value = self.immediate(inst, operand, spec["field"][1], spec["what"])
                    if name == "Imaxreg" and not (24 <= value <= 256 and value % 8 == 0):
                        # PTX setmaxnreg's count: a multiple of 8 in 24..256 (ptxas emits no other)
                        raise EncodeProblem(f"USETMAXREG's register count {operand.text or value} ({value}) is not a "
                                            f"multiple of 8 from 24 to 256 (PTX setmaxnreg's range)")
                    placed.put(*spec["field"], value, name)
                elif name == "Target":
                    self._put_target(placed, operand, pc)
                elif name == "Target34":
                    self._put_target(placed, operand, pc, split=False)
                elif name == "Bar":
                    lsb, width = spec["field"]
                    placed.put(lsb, width, check_field(operand.index, width, f"{inst.opcode}'s {spec['what']}",
                                                       f"B{operand.index}", register="B"), spec["what"])
                elif name == "PR":
                    if operand.name != "PR":
                        raise EncodeProblem(f"expected PR, found {operand.name}")
                    # the predicate file: P2R reads, R2P writes, the predicates its mask (the last
                    # operand) selects -- bit i is Pi; a mask in a register may select any of P0..P6
                    mask = inst.operands[-1]
                    selected = mask.value & 0x7F if isinstance(mask, Imm) else 0x7F
                    (placed.writes if inst.opcode == "R2P" else placed.reads).extend(
                        ("P", p, 1) for p in range(7) if selected >> p & 1)
            except EncodeProblem as problem:
                if problem.operand is None:   # the operands pair with slots in order: this is operand `position`
                    problem.operand = position
                raise
        if inst.guard is not None:
            bank = L.guard_bank(inst.mnemonic)
            if inst.guard.bank != bank:
                written = f"@{'!' if inst.guard.neg else ''}{inst.guard.bank}{'T' if inst.guard.index == 7 else inst.guard.index}"
                kind = "a uniform predicate (@UP0..@UP6, @UPT)" if bank == "UP" else "a predicate (@P0..@P6, @PT)"
                problem = EncodeProblem(f"{inst.opcode} is guarded by {kind}, not {written}: the guard field "
                                        f"names a register of the bank the opcode implies")
                # what to do instead (probe s45 hazards4: no vector instruction, a branch included, takes a uniform
                # guard -- ptxas 13 itself copies a uniform condition to a predicate before `@P0 BRA`)
                problem.hint = ("compute the condition into a predicate (P0..P6) and guard with that: a vector "
                                "compare (ISETP, FSETP) takes uniform registers as operands" if bank == "P" else
                                "compute the condition into a uniform predicate (UP0..UP6) with a uniform compare "
                                "(UISETP) and guard with that, or use the vector instruction")
                raise problem
            placed.put(12, 3, inst.guard.index, "guard predicate")
            placed.flag(15, inst.guard.neg)
            placed.reads.append((inst.guard.bank, inst.guard.index, 1))
        else:
            placed.put(12, 3, 7, "guard predicate")
            placed.flag(15, False)
        return placed

    def _put_reg(self, placed: Placed, reg: Reg, fieldspec, what: str, negatable: bool = False) -> None:
        """A register placed whole (a destination, a predicate): no modifier but a predicate
        source's '!' (`negatable`) has a bit here, so any other is refused, never dropped."""
        written = [sign for sign, on in (("'-'", reg.neg and not negatable), ("'|..|'", reg.abs),
                                         ("'~'", reg.invert), ("'.reuse'", reg.reuse),
                                         (f"'.{reg.swizzle}'", bool(reg.swizzle))) if on]
        if written:
            name = {"R": "R", "UR": "UR", "P": "P", "UP": "UP"}[reg.bank]
            index = {"R": "Z", "UR": "Z", "P": "T", "UP": "T"}[reg.bank] if reg.index == ZERO_REGISTER[reg.bank] \
                else reg.index
            raise EncodeProblem(f"{' and '.join(written)} on {name}{index}: this operand takes no modifier")
        lsb, width = fieldspec
        placed.put(lsb, width, reg.index, what)

    def _put_vector(self, placed: Placed, reg: Reg, spec: dict, allowed: tuple = (),
                    opcode: str = "", reuse_bit: int | None = None, carry: bool = False) -> None:
        if reg.bank != "R":
            raise EncodeProblem(f"expected a vector register here, found {reg.bank}{reg.index}")
        lsb, width = spec["field"]
        placed.put(lsb, width, reg.index, "register")
        self._put_modifiers(placed, reg, spec, allowed, opcode or "this instruction", carry)
        if reuse_bit is None:
            reuse_bit = spec.get("reuse")
        if reg.reuse and opcode and opcode not in L.REUSE_OPCODES:
            raise EncodeProblem(f"this assembler places no '.reuse' on {opcode} (tables.layouts.REUSE_OPCODES: "
                                f"the opcodes ptxas was seen marking)")
        if reg.reuse and self.arch.name not in L.REUSE_TARGETS.get(opcode, {self.arch.name}):
            raise EncodeProblem(f"{opcode} takes no '.reuse' on {self.arch.name} (nvdisasm shows no reuse flag there; "
                                f"only on {', '.join(sorted(L.REUSE_TARGETS[opcode]))})")
        if reuse_bit is not None and opcode in L.REUSE_OPCODES:
            placed.flag(reuse_bit, reg.reuse)
        elif reg.reuse:
            raise EncodeProblem("'.reuse' is not available on this operand")
        if reg.index != 255:
            placed.reads.append(("R", reg.index, 1))

    def _put_modifiers(self, placed: Placed, operand, spec: dict, allowed: tuple, opcode: str,
                       carry: bool = False) -> None:
        """'-', '|..|' and '~' of a source, at the bits of the field it sits in (`spec`), where the
        operand's position allows them (`allowed`).  `carry`: an addition with carry-in (IADD3.X,
        IMAD.X, UIADD3.X: L.COMPLEMENT_WITH_CARRY), whose negate bit nvdisasm prints as '~'."""
        written = {"neg": getattr(operand, "neg", False), "abs": getattr(operand, "abs", False)}
        invert = getattr(operand, "invert", False)
        if carry:
            if written["neg"]:
                what = (f"{opcode} complements an operand with '~', not '-' (nvdisasm prints its negate bit as '~')"
                        if opcode in L.COMPLEMENTED else
                        f"{opcode}.X complements an operand with '~', not '-' (nvdisasm prints "
                        f"the negate bit of a carry-in addition as '~')")
                raise EncodeProblem(what)
            written["neg"] = invert
        elif invert:
            where = "this operand" if opcode not in L.COMPLEMENT_WITH_CARRY else "this operand without .X"
            raise EncodeProblem(f"{opcode} takes no '~' on {where} (nvdisasm prints '~' only on the sources "
                                f"of IADD3.X, IMAD.X, UIADD3.X, LEA.X and FLO)")
        for name in ("neg", "abs"):
            if name in allowed:
                placed.flag(spec[name], written[name])
            elif written[name]:
                sign = ("'~'" if carry else "'-'") if name == "neg" else "'|..|'"
                raise EncodeProblem(f"{opcode} takes no {sign} on this operand in this assembler "
                                    f"(tables.layouts.OPERAND_MODIFIERS: where a bit for it is known)")

    def _put_source(self, inst: Instruction, placed: Placed, operand, position: str, slot: str) -> None:
        width = _reg_width(inst, slot)
        # which modifiers an operand takes is its logical position's (A, B, C as written); the bits
        # are those of the field it lands in (`position`: an immediate or constant third source
        # moves B's register to C's field and takes B's): ptxas's IMAD.X R5, RZ, RZ, ~c[0x0][0x16c]
        # sets bit 63, and IMAD's B register in C's field has no negate (nvdisasm shows none)
        logical = {"Ra": "A", "Sb": "B", "Sc": "C"}[slot]
        opcode, mods = mnemonic_parts(inst.mnemonic)
        modifiers = next((by_position for variant, by_position in _MODIFIER_VARIANTS.get(opcode, ())
                          if variant in mods),
                         L.OPERAND_MODIFIERS.get(opcode, {}))
        allowed = modifiers.get(logical, ())
        carry = opcode in L.COMPLEMENT_WITH_CARRY and "X" in mods
        if logical in L.COMPLEMENTED.get(opcode, ()):
            allowed, carry = ("neg",), True
        if isinstance(operand, Reg) and operand.bank == "R":
            spec = {"A": L.REG_A, "B": L.REG_B, "C": L.REG_C}[position]
            if inst.opcode in L.HALF_OPCODES and position == "C":
                spec = L.REG_C_HALF_PAIR      # 75/74 are A's lane field there: C's register (or B's moved
                                              # by an immediate pair) has its own bits
            reuse_bit = L.REUSE_BIT_OVERRIDES.get(inst.opcode, {}).get(slot, L.REUSE_BIT[slot])
            if operand.reuse and any(inst.opcode == op and variant in inst.modifiers and slot in slots
                                     for (op, variant), slots in L.REUSE_FORBIDDEN.items()):
                raise EncodeProblem(f"'.reuse' is not available on {inst.opcode}'s {position} operand "
                                    f"with .{'.'.join(inst.modifiers)}")
            self._put_vector(placed, operand, spec, allowed, inst.opcode, reuse_bit, carry)
            # B's register moved to the C field by an immediate pair has no lane field (refused if written)
            self._put_swizzle(inst, placed, operand, "C moved" if position == "C" and slot == "Sb" else position)
            if operand.index != 255 and width > 1:
                placed.reads[-1] = ("R", operand.index, width)
        elif isinstance(operand, Reg) and operand.bank == "UR":
            spec = {"A": L.UREG_A, "B": L.UREG_B, "C": L.UREG_C}[position]
            placed.put(*spec["field"], operand.index, "uniform register")
            # '-' and '|..|' sit where they do for a vector register in the same position
            # (checked by nvdisasm in tests/sass/test_roundtrip.py); never dropped silently
            self._put_modifiers(placed, operand, {"A": L.REG_A, "B": L.REG_B, "C": L.REG_C}[position],
                                allowed, inst.opcode, carry)
            if operand.reuse:
                raise EncodeProblem("'.reuse' is not available on a uniform register")
            # a packed-half opcode's uniform B takes a lane selection where its register does (ptxas
            # sm_90: HADD2 R2, R4.H0_H0, UR4.H0_H0 sets 2 at 60..61); other opcodes refuse it
            self._put_swizzle(inst, placed, operand, position)
            if operand.index != 63:
                placed.reads.append(("UR", operand.index, width))
        elif isinstance(operand, Imm):
            placed.put(*L.IMM_B, self.immediate(inst, operand), "immediate")
        elif isinstance(operand, Const):
            offset = self.resolve_const(operand)
            loads = inst.opcode in ("LDC", "ULDC")
            # LDC / ULDC read the bytes their size says (a byte, a half word, 4, 8): their offset is a
            # multiple of it; every other opcode reads a whole 32-bit word (low two bits zero)
            if offset % 4 and not (loads and constant_load_bytes(inst.modifiers) < 4):
                written = f"{operand.symbol}+{operand.offset:#x} = " if operand.symbol else ""
                raise EncodeProblem(f"constant offset {written}{offset:#x} in c[{operand.bank:#x}][...] is not a multiple "
                                    f"of 4: constant banks are read in whole 32-bit words "
                                    f"(nearest: {offset & ~3:#x} or {(offset | 3) + 1:#x})")
            # nvdisasm prints the offset signed (c[0x0][-0x4] for 0xfffc), a bank's bytes are 0..0xffff
            written = f"{operand.symbol}+{operand.offset:#x} = {offset:#x}" if operand.symbol else None
            placed.put(*L.CONST_OFFSET, check_field(offset, L.CONST_OFFSET[1], f"{inst.opcode}'s constant offset",
                                                    written, both=True), "constant offset")
            placed.put(*L.CONST_BANK, check_field(operand.bank, L.CONST_BANK[1], f"{inst.opcode}'s constant bank",
                                                  f"{operand.bank:#x}"), "constant bank")
            # LDC.64 / ULDC.64 load 8 bytes, a binary64 or IMAD.WIDE addend in the bank is a pair
            placed.constant_bytes = constant_load_bytes(inst.modifiers) if loads else 4 * width
            if loads and offset % placed.constant_bytes:
                # a wide load is naturally aligned, as every ptxas listing's is (PTX's ld requires it):
                # LDC.64 at c[0x0][0x16c] would read another pair than the one written, or fault.
                # (Not an operand pair of another opcode: ptxas's IMAD.WIDE.U32.X reads c[0x0][0x16c].)
                size = placed.constant_bytes
                written = f"{operand.symbol}+{operand.offset:#x} = " if operand.symbol else ""
                raise EncodeProblem(f"{inst.mnemonic} reads {size} bytes: its offset must be a multiple of {size} "
                                    f"(c[{operand.bank:#x}][{written}{offset:#x}]; nearest: "
                                    f"{offset - offset % size:#x} or {offset - offset % size + size:#x})")
            self._put_modifiers(placed, operand, L.REG_B, allowed, inst.opcode, carry)
            # a packed-half opcode's constant takes B's lane selection (ptxas: HADD2.F32 R0, -RZ,
            # c[0x0] [0x16c].H0_H0 sets 2 at 60..61, as R9.H0_H0 there does)
            self._put_swizzle(inst, placed, operand, "B")
            if operand.index is not None:
                self._put_vector(placed, operand.index, L.REG_A)
        else:
            raise EncodeProblem(f"unexpected operand {operand} for {inst.mnemonic}")

    def _put_swizzle(self, inst: Instruction, placed: Placed, reg, position: str) -> None:
        """Packed-half lane selection; refused where the opcode or position has none."""
        opcode, mods = mnemonic_parts(inst.mnemonic)
        if reg.swizzle == "H1" and opcode not in L.HALF_OPCODES:
            self._put_half_select(inst, placed, reg, position, opcode, mods)
            return
        absent = set().union(*(positions for variant, positions in _SWIZZLE_ABSENT.get(opcode, ())
                               if variant in mods))
        if opcode in L.HALF_OPCODES and position in L.SWIZZLE_FIELD and position not in absent:
            if reg.swizzle not in L.SWIZZLE_VALUE:
                raise EncodeProblem(f"lane selection .{reg.swizzle} is not supported on {inst.opcode}")
            placed.put(*L.SWIZZLE_FIELD[position], L.SWIZZLE_VALUE[reg.swizzle], "lane selection")
        elif reg.swizzle:
            raise EncodeProblem(f"lane selection .{reg.swizzle} is not available on this operand of {inst.opcode}")

    def _put_half_select(self, inst: Instruction, placed: Placed, operand, position: str, opcode: str, mods) -> None:
        """`R10.H1`: the high half of a 16-bit source (L.HALF_SELECT), on B's register where the source is
        16 bits (L.HALF_SELECT_SOURCES); refused elsewhere (a uniform register's or a constant's: never seen)."""
        if opcode not in L.HALF_SELECT or position != "B" or not (isinstance(operand, Reg) and operand.bank == "R"):
            raise EncodeProblem(f"'.H1' (a register's high half) is not available on this operand of {inst.opcode} "
                                f"(tables.layouts.HALF_SELECT: {', '.join(sorted(L.HALF_SELECT))}, on B's register)")
        source = _conversion_types(opcode, mods)[1] if opcode in ("I2F", "F2F", "F2I") else None
        sources = L.HALF_SELECT_SOURCES[opcode]
        if not (source in sources if source is not None else any(m in sources for m in mods)):
            reads = f"a {source} source" if source else f"no {' / '.join('.' + m for m in sources)}"
            raise EncodeProblem(f"'.H1' selects the high half of a 16-bit source; {inst.mnemonic} has {reads} "
                                f"(it takes one with {' or '.join('.' + m for m in sources)})")
        placed.flag(L.HALF_SELECT[opcode], True)

    def _put_memory(self, inst: Instruction, placed: Placed, mem: Mem, spec: dict) -> None:
        if mem.base is not None and mem.base.bank != "R":
            raise EncodeProblem("a memory address's base register is a vector register")
        base = mem.base.index if mem.base is not None else 255      # [0x100], [UR6+0x10]: base RZ
        if base == 255 and mem.suffix.startswith(".X"):
            # RZ scaled is still zero, and nvdisasm prints the word as [RZ] -- which assembles without
            # the scale bit: the text would not say the word (probe s33 asmfuzz finding 6)
            raise EncodeProblem(f"{inst.opcode}'s address [RZ{mem.suffix}...] scales the zero register: write it "
                                f"without {mem.suffix} (RZ times any scale is zero)")
        placed.put(*spec["base"], base, "address register")
        # sm_90's descriptor-less generic access (bit 91 clear) has a 32-bit-spelled address alone:
        # nvdisasm prints no `.64` there (bit 90 is ignored without the descriptor).  A `.64` address
        # with no desc[..] written is the descriptor form with the implicit descriptor, as on sm_86
        # (the same words there, desc hidden) and as for LDG/STG; a desc[..] on a 32-bit address has
        # no encoding (with bit 91 set, bit 90 clear reads as [Ra.U32+URb]) and is refused.
        descriptorless = (self.arch.shows_descriptor and inst.opcode in L.DESCRIPTORLESS_OFFSET
                          and mem.suffix != ".64")
        if descriptorless and mem.desc is not None:
            raise EncodeProblem(f"{inst.opcode} with desc[UR{mem.desc.index}] takes a 64-bit address: write "
                                f"[R{mem.base.index if mem.base is not None else 'Z'}.64...] (on {self.arch.name} "
                                f"the address without .64 and without desc[..] is the descriptor-less access)")
        if base != 255:
            # a 64-bit address (.E) is a register pair even where the text writes no .64: sm_90's
            # descriptor-less LD.E Rd, [Ra] (ptxas's listing) reads Ra and Ra+1, its high word
            # as is sm_86's ATOMG.E.CAS [R4+0x4] (nvdisasm's life ranges: R4..R5 read)
            extended = "E" in inst.modifiers and (descriptorless or inst.opcode == "ATOMG")
            placed.reads.append(("R", base, 2 if mem.suffix == ".64" or extended else 1))
        lsb, width = L.DESCRIPTORLESS_OFFSET[inst.opcode] if descriptorless else spec["offset"]
        # an address with no register ([0xfffff0]) is nvdisasm's print of [RZ-0x10]: it prints the offset of
        # an RZ base unsigned, so there it takes both spellings of the field's bits
        absolute = (mem.base is None or mem.base.index == 255) and mem.uoffset is None and mem.suffix == ""
        placed.put(lsb, width, check_field(mem.offset, width, f"{inst.opcode}'s address offset", None,
                                           signed=not absolute, both=absolute), "address offset")
        if mem.uoffset is not None:
            if "uoffset" not in spec:
                raise EncodeProblem(f"{inst.opcode} takes no uniform register in this address")
            placed.put(*spec["uoffset"], mem.uoffset.index, "uniform address register")
            if mem.uoffset.index != 63:
                placed.reads.append(("UR", mem.uoffset.index, 1))
        if inst.opcode in L.DESCRIPTOR_OPCODES and "desc" in spec and not descriptorless:
            desc = mem.desc.index if mem.desc is not None else self.implicit_descriptor
            placed.put(*spec["desc"], desc, "memory descriptor register")
            placed.reads.append(("UR", desc, 2))
            placed.descriptor = desc
        elif mem.desc is not None:
            raise EncodeProblem(f"{inst.opcode} takes no memory descriptor here")

    def _put_uniform_address(self, inst: Instruction, placed: Placed, mem: Mem, spec: dict, slot: str = "") -> None:
        """[URn] or [URn+offset]: an address held in a uniform register (sm_90's SYNCS.EXCH and
        TMA instructions), the register in `ubase`, an offset only where the spec has one."""
        if mem.base is not None or mem.uoffset is None or mem.desc is not None:
            raise EncodeProblem(f"{inst.opcode} takes its address in one uniform register: [URn]"
                                + (" or [URn+offset]" if "offset" in spec else ""))
        placed.put(*spec["ubase"], mem.uoffset.index, "uniform address register")
        if mem.uoffset.index != 63:
            count = next((n for (opcode, shape, operand), n in L.UNIFORM_ADDRESS_READS.items()
                          if opcode == inst.opcode and shape in inst.modifiers and operand == slot), 1)
            placed.reads.append(("UR", mem.uoffset.index, count))
        if "offset" in spec:
            lsb, width = spec["offset"]
            placed.put(lsb, width, check_field(mem.offset, width, f"{inst.opcode}'s address offset", None,
                                               signed=True), "address offset")
        elif mem.offset:
            raise EncodeProblem(f"{inst.opcode} takes no address offset: write [UR{mem.uoffset.index}]")

    def _put_matrix_descriptor(self, inst: Instruction, placed: Placed, gdesc, spec: dict,
                               a_in_registers: bool) -> None:
        if not isinstance(gdesc, MatrixDescriptor) or gdesc.reg.bank != "UR":
            raise EncodeProblem(f"expected gdesc[URn], found {gdesc}")
        placed.put(*spec["field"], gdesc.reg.index, "matrix descriptor register")
        for flag in gdesc.flags:
            if flag not in L.MATRIX_DESCRIPTOR_FLAGS or (a_in_registers and flag.endswith("A")):
                known = [f for f in L.MATRIX_DESCRIPTOR_FLAGS if not (a_in_registers and f.endswith("A"))]
                raise EncodeProblem(f"unknown matrix descriptor flag .{flag} (known here: "
                                    f"{', '.join('.' + f for f in known)}"
                                    + ("; negate A in registers as -Rn" if a_in_registers else "") + ")")
        for flag, bit in L.MATRIX_DESCRIPTOR_FLAGS.items():
            if not (a_in_registers and flag.endswith("A")):
                placed.flag(bit, flag in gdesc.flags)
        # A's descriptor and B's (64 bits each); with A in registers nvdisasm's life ranges still
        # show the whole block read (HGMMA.64x64x16.F32 R24, R56, gdesc[UR8]: UR8..UR11)
        placed.reads.append(("UR", gdesc.reg.index, 4))
        if a_in_registers:
            # ... but the A descriptor's value is not used: ptxas leaves it unwritten (tests/sass/data
            # listings, sm90_async wgmma_m64n64k16_a_registers: UR10..UR11 set, UR8..UR9 never)
            placed.ignored.append(("UR", gdesc.reg.index, 2))

    def _put_target(self, placed: Placed, label: Label, pc: int, split: bool = True) -> None:
        if label.address is None:
            raise EncodeProblem(f"unresolved label '{label.name}'")
        delta = label.address - (pc + 16)
        if delta % 4:
            raise EncodeProblem(f"branch target {label.address:#x} is not 4-byte aligned")
        units = delta // 4
        if not -(1 << 47) <= units < 1 << 47:
            raise EncodeProblem("branch target out of range")
        units &= (1 << 48) - 1
        if self.arch.branch_split_low8 and split:
            placed.put(16, 8, units & 0xFF, "branch offset")
            high = units >> 8
            if units >> 47:
                high |= 0xFF << 40   # sign-extend the 40-bit remainder into 48 bits
            placed.put(34, 48, high & ((1 << 48) - 1), "branch offset")
        else:
            placed.put(34, 48, units, "branch offset")

    # -- whole instruction ----------------------------------------------------
    def encode(self, inst: Instruction, pc: int = 0, control: int = 0) -> int:
        inst = self.normalize(inst)
        key = self.key(inst)
        form = self.forms.get(key)
        if form is None:
            raise self.unknown_form(inst, key)
        placed = self.place_operands(inst, pc)
        return form.fixed | placed.value | ((control & 0x1FFFF) << 105)

    def observe(self, inst: Instruction) -> None:
        """Track program state the text leaves implicit: which uniform register pair holds the
        memory descriptor (the last `ULDC.64 URn, c[0x0][memory_descriptor]`; UR4 before any)."""
        if inst.opcode == "ULDC" and inst.operands and isinstance(inst.operands[-1], Const):
            c = inst.operands[-1]
            if self.resolve_const(c) == self.arch.symbols["memory_descriptor"] and isinstance(inst.operands[0], Reg):
                self.implicit_descriptor = inst.operands[0].index

    def normalize(self, inst: Instruction) -> Instruction:
        """observe(), read a mnemonic in the other target's spelling (TARGET_SPELLINGS) as
        this target's, and read `LDC Rd, c[b][n]` (nvdisasm's spelling of c[b][RZ+n]) as the
        indexed form where this target's table only has that one."""
        self.observe(inst)
        spelled = TARGET_SPELLINGS.get(inst.mnemonic)
        if spelled and f"{spelled} {inst.signature()}" in self.forms and inst.key() not in self.forms:
            inst = replace(inst, mnemonic=spelled)
        if (inst.opcode == "LDC" and len(inst.operands) == 2 and isinstance(inst.operands[1], Const)
                and inst.operands[1].index is None and inst.key() not in self.forms):
            c = inst.operands[1]
            inst = replace(inst, operands=[inst.operands[0], replace(c, index=Reg("R", 255))])
        return self._nvdisasm_spellings(inst)

    def _nvdisasm_spellings(self, inst: Instruction) -> Instruction:
        """Read what nvdisasm prints for a form of the tables, where the text alone names no form
        (probe s33 asmfuzz finding 6), each tried only when `inst`'s own key has none:
        - an RZ / URZ destination nvdisasm hides (VOTE.ANY P1, P0 is VOTE.ANY RZ, P1, P0:
          layouts.HIDDEN_ZERO_DESTINATION);
        - a display alias (IMAD.MOV.U32 R24, RZ, -0x3a, R235 is IMAD.U32's word; IMAD R83, R115,
          0x1, RZ prints as IMAD.MOV): layouts.DISPLAY_ALIASES name no bits (every alias form of
          the tables has its base form's fixed bits), so either spelling is the other's form;
        - an address without a base register ([0x100]) is nvdisasm's print of [RZ+0x100]."""
        if inst.key() in self.forms:
            return inst
        spans = inst.operand_spans
        zero = L.HIDDEN_ZERO_DESTINATION.get(inst.opcode)
        if zero and inst.operands and isinstance(inst.operands[0], Reg) and inst.operands[0].bank in ("P", "UP"):
            # read so even where the form is not learned (ptxas's VOTE.ALL P1, !P1): it is refused as
            # that form, not as an operand count VOTE never has in nvdisasm's text
            return replace(inst, operands=[Reg(zero, ZERO_REGISTER[zero]), *inst.operands],
                           operand_spans=(spans[:1] + spans) if spans else spans)
        for alias in L.DISPLAY_ALIASES:
            opcode, name = alias.split(".")
            if inst.opcode != opcode:
                continue
            if name in inst.modifiers:
                other = ".".join([opcode] + [m for m in inst.modifiers if m != name])
            else:
                other = ".".join([opcode, name] + inst.modifiers)
            if f"{other} {inst.signature()}" in self.forms:
                return replace(inst, mnemonic=other)
        if any(isinstance(op, Mem) and op.base is None and op.uoffset is None for op in inst.operands):
            based = replace(inst, operands=[replace(op, base=Reg("R", 255)) if isinstance(op, Mem) and op.base is None
                                            and op.uoffset is None else op for op in inst.operands])
            if based.key() in self.forms:
                return based
        return inst

    def _spelling_here(self, inst: Instruction, key: str, theirs: list, other: str):
        """(what to write, its opcode) where this target spells the other target's opcode otherwise: an
        opcode of this target's tables that the other's lack, one letter longer or shorter than the one
        written (RED / REDG, IMNMX / VIMNMX), and holding at least one of its forms under the same
        modifiers and operands -- the written form itself where this target has it, else the opcode
        alone; None where no opcode is so related (derived from the tables, not listed per opcode)."""
        def opcode_of(k):
            return k.split(" ")[0].split(".")[0]
        def respelt(k, opcode):
            return opcode + k[len(inst.opcode):]
        their_opcodes = {opcode_of(k) for k in forms_for(other)}
        candidates = sorted({opcode_of(k) for k in self.forms} - their_opcodes)
        for opcode in candidates:
            if not _one_letter_apart(opcode, inst.opcode):
                continue
            if not any(respelt(k, opcode) in self.forms for k in theirs):
                continue
            here = respelt(key, opcode)
            return (here.split(" ")[0] if here in self.forms else opcode), opcode
        return None

    def unknown_form(self, inst: Instruction, key: str) -> EncodeProblem:
        """Why `key` has no form in this target's tables, with what to do: an opcode of the other
        target only, a modifier the opcode's forms never have (did-you-mean), an operand count no
        form takes -- or, for a form of a known opcode the tables have not learned, how to learn it."""
        problem = EncodeProblem(self._unknown_form(inst, key))
        if self.unread_problem(inst):
            return problem
        arch = self.arch.name
        # the target whose tables have the opcode (the first other target where none has it)
        others = [name for name in ENCODINGS if name != arch]
        other = next((name for name in others if any(k.split(" ")[0].split(".")[0] == inst.opcode
                                                     for k in forms_for(name))), others[0] if others else None)
        mine = [k for k in self.forms if k.split(" ")[0].split(".")[0] == inst.opcode]
        theirs = [k for k in forms_for(other) if k.split(" ")[0].split(".")[0] == inst.opcode] if other else []
        head = f"no {arch} encoding for '{key}'"
        spelling = self._spelling_here(inst, key, theirs, other) if not mine and theirs else None
        if spelling and inst.opcode not in self.arch.lacks:
            # RED on sm_90, REDG on sm_86: ptxas writes red.global as RED for sm_86 and REDG for sm_90
            # (probe s46 kernelauthor2 finding 4) -- the other target's spelling, not a form to learn
            written, opcode = spelling
            problem = EncodeProblem(f"{head}: {inst.opcode} is {other}'s spelling of what {arch} writes {opcode} "
                                    f"(the {arch} tables have no form of {inst.opcode} and hold {opcode}'s under "
                                    f"the same modifiers and operands; {other}'s have no {opcode})")
            problem.hint = (f"on {arch} write {written}; or put the {other} code in the kernel's variant for "
                            f"{other} (<stem>.{other}.sass beside the base <stem>.sass, which {arch} builds)")
            return problem
        if not mine and theirs and inst.opcode not in self.arch.lacks:
            # an opcode only the other target's tables hold, but one this target has (ptxas writes UIMAD
            # and ULEA for sm_86 too): a form not learned here, never "the other target's opcode"
            problem = EncodeProblem(f"{head}: the {arch} tables have no form of {inst.opcode} (the {other} "
                                    f"tables have {len(theirs)}): not learned for {arch}")
            problem.hint = (f"if ptxas writes {inst.opcode} for {arch}, it is a form the tables have not learned: in a "
                            f"bobc checkout, add a PTX kernel to tools/ptx_corpus that makes ptxas emit it, and "
                            f"relearn (python -m bobc.sass.learn; compiler/bobc/sass/README.md, Corpus); code for "
                            f"{other} alone belongs in the kernel's variant for {other} (<stem>.{other}.sass)")
            return problem
        if not mine and theirs:
            instead = self.arch.instead.get(inst.opcode) or (spelling and spelling[0])  # tables/arch.py's row
            problem = EncodeProblem(f"{head}: {inst.opcode} is an {other} opcode, not one of {arch}'s "
                                    f"(the {arch} tables have no form of it)")
            problem.hint = ((f"on {arch} write {instead}; or " if instead else "")
                            + f"put the {other} code in the kernel's variant for {other} (<stem>.{other}.sass "
                              f"beside the base <stem>.sass, which {arch} builds)")
            return problem
        if not mine:
            return problem
        known = {m for k in mine for m in k.split(" ")[0].split(".")[1:]}
        elsewhere = {m for k in theirs for m in k.split(" ")[0].split(".")[1:]}
        anywhere = _all_modifiers()
        modifiers = (f"the modifiers of {inst.opcode} on {arch}: " + " ".join("." + m for m in sorted(known))
                     if known else f"{inst.opcode} takes no modifier on {arch}")
        operands = key.split(" ", 1)[1] if " " in key else ""
        # the forms with the modifiers written, in another order -- but only where the data types keep
        # their order: a conversion's types are its destination then its source (F2F.F64.F16 widens a
        # half, F2F.F16.F64 narrows a double), IDP.4A's A then B (.S8.U8, .U8.S8), so a form with them
        # swapped is another instruction, never a spelling of this one (probe s41 nanprobes2)
        same_set = sorted({k.split(" ")[0] for k in mine
                           if sorted(k.split(" ")[0].split(".")[1:]) == sorted(inst.modifiers)})
        written_types = data_types(inst.modifiers)
        reordered = sorted((m for m in same_set if data_types(m.split(".")[1:]) == written_types),
                           key=lambda m: (f"{m} {operands}".strip() not in self.forms, m))
        swapped = [m for m in same_set if data_types(m.split(".")[1:]) != written_types]
        if reordered and inst.mnemonic not in reordered:
            # FADD.RZ.FTZ: every modifier known, written in another order than the tables' (ptxas's)
            problem = EncodeProblem(f"{head}: {inst.opcode} writes these modifiers in the order "
                                    f"{reordered[0][len(inst.opcode):]}: write {reordered[0]}")
            problem.hint = modifiers
            return problem
        for modifier in inst.modifiers:
            if modifier in known:
                continue
            if modifier in anywhere and modifier not in elsewhere or is_ptxas_spelling(modifier):
                # a modifier of other opcodes (HADD2.FTZ), or one ptxas writes (a data type such as
                # .BF16, a cache hint such as .EL): a form not learned, which the corpus hint is for --
                # never a did-you-mean, which would change the type or the meaning (.BF16 -> .F16)
                continue
            if modifier in elsewhere:
                problem = EncodeProblem(f"{head}: no {arch} form of {inst.opcode} has .{modifier}, which "
                                        f"{other}'s forms of it have")
                problem.hint = (modifiers
                                + f"; code for {other} alone belongs in the kernel's variant for {other} "
                                  f"(<stem>.{other}.sass)")
                return problem
            from .assembler import _edit_distance
            near = sorted((_edit_distance(modifier, m), m) for m in known)
            near = [m for d, m in near if d <= (1 if len(modifier) <= 3 else 2)][:3]
            problem = EncodeProblem(f"{head}: {inst.opcode} takes no modifier .{modifier}"
                                    + (f" (did you mean {' or '.join('.' + m for m in near)}?)" if near else ""))
            problem.hint = (modifiers + f"; if ptxas itself writes .{modifier} on {inst.opcode}, it is a form the "
                            f"tables have not learned: in a bobc checkout, add a PTX kernel to tools/ptx_corpus that makes ptxas "
                            f"emit it, and relearn (python -m bobc.sass.learn)")
            return problem
        arity = {}                  # each mnemonic's operand counts (IADD3: 4 or 5, IADD3.X: 6)
        for k in mine:
            arity.setdefault(k.split(" ")[0], set()).add(len(k.split(" ", 1)[1].split(",")) if " " in k and
                                                         k.split(" ", 1)[1] else 0)
        counts = sorted(set().union(*arity.values()))
        count = len(inst.operands)
        try:        # operands the opcode's layout places (ULEA's carry-out UP0) are a form not learned, not a count
            match_layout(inst, arch)
            fits = True
        except EncodeProblem:
            fits = False
        if count not in counts and not fits:
            same = sorted(k for k in mine if k.split(" ")[0] == inst.mnemonic) or sorted(mine)
            written = sorted(arity.get(inst.mnemonic, counts))
            # the other mnemonics that take other counts than the one written (IADD3.X's 6), by name
            others = sorted((sorted(numbers), mnemonic) for mnemonic, numbers in arity.items()
                            if mnemonic != inst.mnemonic and not numbers <= set(written))
            takes = _numbers(written) + f" operand{'s' if written != [1] else ''}"
            if others:
                takes += (" (" + "; ".join(f"{mnemonic} takes {_numbers(numbers)}" for numbers, mnemonic in others[:3])
                          + ("; ..." if len(others) > 3 else "") + ")")
            problem = EncodeProblem(f"{head}: {inst.mnemonic if inst.mnemonic in arity else inst.opcode} takes "
                                    f"{takes}, not {count}")
            problem.hint = (f"its {arch} forms: " + "; ".join(same[:8])
                            + (f" (and {len(same) - 8} more)" if len(same) > 8 else ""))
            return problem
        if swapped:
            problem.hint = (f"{' and '.join(swapped)} {'has' if len(swapped) == 1 else 'have'} these modifiers with "
                            f"the data types in another order: another instruction, not a spelling of "
                            f"{inst.mnemonic} (the order of data types is meaning: a conversion's name its "
                            f"destination, then its source)")
        return problem

    def _i2fp_spelling(self, inst: Instruction, key: str):
        """(form, rounding, source) when `inst` is an I2F of a 32-bit integer to binary32 rounded to
        nearest or toward zero that the tables lack, and the tables hold the form ptxas writes for it
        on sm_86 and sm_90 (I2FP.F32.S32 / .U32, .RZ; cvt.rn.f32.u32 gives `I2FP.F32.U32 R0, R1`, never
        I2F: probe s46 newuser11 wrote `I2F.U32 R13, R11` and was told only I2F's .RM / .RP forms)."""
        if inst.opcode != "I2F":
            return None
        modifiers = [m for m in inst.modifiers if m != "RN"]
        rounding = [m for m in modifiers if m in ("RZ", "RM", "RP")]
        types = data_types(modifiers)
        if rounding not in ([], ["RZ"]) or len(modifiers) != len(types) + len(rounding) or len(types) > 2:
            return None
        target, source = (types if len(types) == 2 else ["F32"] + types if types else ["F32", "S32"])
        if target != "F32" or source not in ("S32", "U32"):
            return None
        mnemonic = f"I2FP.F32.{source}" + (".RZ" if rounding else "")
        form = f"{mnemonic} {key.split(' ', 1)[1]}" if " " in key else mnemonic
        return (form, "RZ" if rounding else "RN", source) if form in self.forms else None

    def _unknown_form(self, inst: Instruction, key: str) -> str:
        import difflib
        unread = self.unread_problem(inst)     # 'DEPBAR ?' names no form: say which operand is unread
        if unread:
            return unread
        near = [k for k in self.forms if k.split(" ")[0] == inst.mnemonic]
        if not near:
            near = [k for k in self.forms if k.split(".")[0].split(" ")[0] == inst.opcode]
        # nearest first: the most alike in modifiers and operand kinds
        near.sort(key=lambda k: (-difflib.SequenceMatcher(None, key, k).ratio(), k))
        hint = ("; known forms, nearest first: " + "; ".join(near[:8])) if near else ""
        spelling = self._i2fp_spelling(inst, key)
        if spelling:
            hint = (f"; ptxas writes this conversion (cvt.{spelling[1].lower()}.f32.{spelling[2].lower()}) on "
                    f"{self.arch.name} as {spelling[0]}: write {spelling[0].split(' ')[0]}" + hint)
        from .derive import class_name
        return (f"no {self.arch.name} encoding for '{key}'{hint}; encoding {class_name(inst.opcode)}: "
                f"in a bobc checkout, add a PTX kernel to tools/ptx_corpus that makes ptxas emit it, or a "
                f"sibling of the class with this operand kind, and relearn (python -m bobc.sass.learn)")


def _numbers(numbers) -> str:
    """4; 4 or 5; 4, 5 or 6."""
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


# Modifiers ptxas writes on sm_80..sm_90 that the tables may not have learned (no corpus kernel made
# ptxas emit them yet): a form with one is refused with the corpus hint, never a did-you-mean to a
# modifier the tables know (.EL is an eviction hint, not a misspelt .E)
PTXAS_MODIFIERS = frozenset("""
    E EL EF EN EU LU NA IL ZFILL LTC64B LTC128B LTC256B CONSTANT STRONG WEAK MMIO VOLATILE PRIVATE CG CS CV CI
    SM CTA GPU SYS VC GL BYPASS NODEP PRED
    RN RZ RM RP RNA RS SAT FTZ NTZ RELU PACK_AB MERGE_C NAN XORSIGN ABS NEG
    SH WIDE HI LO X EX SX32 CC MOV IADD SHL LUT U SC ALL ANY EQ UNI
    F LT LE GT GE NE NUM LTU LEU GTU GEU EQU NEU T AND OR XOR
    ADD MIN MAX INC DEC EXCH CAS CAST SPIN POPC ARRIVE ARV SYNC SYNCALL RED DEFER_BLOCKING
    IDX UP DOWN BFLY EX2 LG2 RCP RSQ SIN COS SQRT TANH RCP64H RSQ64H FLOOR CEIL TRUNC
    M88 MT88 M816 M832 MMA SP TRANS64 A1T0 PHASECHK TRYWAIT TRY_ALLOC DEALLOC CTAPOOL VIEW ASYNC
    F4E B4E RC8 ECL ECR RC16 4A 2A CLEAR ABS REL NODEC NOINC DIV CONV RECONVERGENT LZ LL B AOFFI DC
    IVALL IVALLP S G GS TILE IM2COL MULTICAST COLLECTIVE PF DEPBAR RESULT SUM
""".split())


# a data-type modifier as ptxas spells them: .F16, .BF16, .TF32, .E4M3, .F16_V2, .S4, .U64
DATA_TYPE = re.compile(r"(?:[USFBI]|BF|TF)(?:1|2|4|8|16|32|64|128)(?:_V2|X2|x2)?|UE8M0|UE4M3|E[2-5]M[0-3]")


def data_types(modifiers) -> list:
    """The data-type modifiers among `modifiers`, in their written order: where an opcode has two
    (F2F.F64.F16, I2F.F64.S32, IDP.4A.S8.U8) the order is meaning, not spelling."""
    return [m for m in modifiers if DATA_TYPE.fullmatch(m)]


def is_ptxas_spelling(modifier: str) -> bool:
    """Whether `modifier` is one ptxas writes: a data type (.BF16, .TF32, .E4M3, .F16_V2, .S4),
    a shape (.16816, .64x128x16), or one of PTXAS_MODIFIERS -- not a misspelling to correct."""
    return modifier in PTXAS_MODIFIERS or bool(DATA_TYPE.fullmatch(modifier) or re.fullmatch(r"\d+(?:x\d+)*", modifier))


def _one_letter_apart(a: str, b: str) -> bool:
    """Whether one of `a`, `b` is the other with one letter added (RED / REDG, IMNMX / VIMNMX)."""
    short, long = sorted((a, b), key=len)
    return len(long) == len(short) + 1 and any(long[:i] + long[i + 1:] == short for i in range(len(long)))


@cache
def _all_modifiers() -> frozenset:
    """Every modifier a form of either target's tables has: one outside them is misspelt (.U23)."""
    return frozenset(m for name in ENCODINGS for k in forms_for(name) for m in k.split(" ")[0].split(".")[1:])


# One source serves both targets: nvdisasm spells a few mnemonics differently on sm_86 and
# sm_90 with the same bits (sass-facts.md, "sm_90 versus sm_86"); a mnemonic written in one
# spelling is read as the other where only that one is in this target's table.
TARGET_SPELLINGS = {
    "F2FP.PACK_AB": "F2FP.F16.F32.PACK_AB",
    "F2FP.F16.F32.PACK_AB": "F2FP.PACK_AB",
}


def _not_an_integer(inst: Instruction, imm: Imm, width: int, what: str) -> str:
    """The refusal of a float literal (a fraction, an exponent, INF or NAN) where the field holds
    an integer: an integer opcode's immediate (IADD3, IMAD, ISETP, LOP3, MOV ...: every opcode
    outside tables.layouts' FLOAT_IMMEDIATE, DOUBLE_IMMEDIATE and HALF_OPCODES) or a narrower
    field (a count, a LUT, a shift).  nvdisasm never prints one there, and its binary32 bits
    would silently be a very different integer (probe s32 sasssyntax finding 3: `IADD3 R0, R1,
    1.5, RZ` added 0x3fc00000)."""
    holder = f"{inst.opcode} takes an integer immediate" if what == "immediate" and width == L.IMM_B[1] \
        else f"{inst.opcode}'s {what} is an integer"
    text = _quoted(imm.text)
    word = imm.text.upper().lstrip("+-") in ("INF", "NAN", "QNAN", "SNAN")
    try:
        value = None if word or imm.problem else float(imm.text)
    except ValueError:
        value = None
    if value is not None and value == int(value):
        # suggest the integer only where the field takes it (probe s33 asmfuzz finding 7: `write
        # 10000000000` for a 32-bit immediate, a 39-digit number for LEA's 5-bit shift)
        lo, hi = field_range(width, both=width == L.IMM_B[1])
        if lo <= int(value) <= hi:
            return f"{holder}, not the float literal {text}: write {int(value)}"
        return (f"{holder}, not the float literal {text}, whose value is beyond the field's {width} bits "
                f"({_hex(lo)}..{_hex(hi)}) too")
    written = f"the fraction {text}" if value is not None else f"the float value {text}"
    if width == L.IMM_B[1] and not imm.problem:
        return f"{holder}, not {written}: write its binary32 bits {imm.value:#010x} if they are meant"
    return f"{holder}, not {written}"


def _double_high_word(imm: Imm) -> int:
    """A binary64 immediate: the instruction holds its high 32 bits (the low 32 must be zero)."""
    words = {"+INF": "inf", "INF": "inf", "-INF": "-inf", "+QNAN": "nan", "QNAN": "nan", "-QNAN": "-nan",
             "+NAN": "nan", "NAN": "nan", "-NAN": "-nan"}
    text = words.get(imm.text.upper(), imm.text)
    try:
        value = float(text)
        bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    except ValueError:
        raise EncodeProblem(f"'{imm.text}' is not a binary64 value") from None
    # decimal literals beyond binary64 are refused, not taken as INF or 0 (ptxas's own PTX writes
    # binary64 immediates as bits, 0dXXXXXXXXXXXXXXXX; nvdisasm prints them so they read back exact)
    if value in (float("inf"), float("-inf")) and imm.text.upper() not in words:
        raise EncodeProblem(beyond_range(imm.text, "binary64"))
    if value == 0 and not literal_is_zero(imm.text):
        raise EncodeProblem(f"{shown_literal(imm.text)} is below binary64's smallest value (5e-324): it would be 0")
    if text.endswith("nan"):
        bits = (0xFFF8 if text.startswith("-") else 0x7FF8) << 48
    if bits & 0xFFFFFFFF:
        raise EncodeProblem(f"{imm.text} needs more than the 20 fraction bits a binary64 immediate holds")
    return bits >> 32


def _is_vector_reg(operand) -> bool:
    return isinstance(operand, Reg) and operand.bank == "R"
