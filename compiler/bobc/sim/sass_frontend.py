"""Instructions from NVIDIA's own disassembler, control codes from the raw bits.

The simulator never decodes an opcode itself: it runs `nvdisasm -b SMxx` (the
nvidia-cuda-nvdisasm wheel, bobc.nvtools) over a launch's code and executes
what NVIDIA's text says, so a wrong encoding runs as the wrong instruction.
The control codes are not in that text; they are read from the raw 128-bit
words at the positions the public Volta+ encoders document (Mesa NAK
encode_sm70.rs, CuAssembler): stall 108:105, yield 109, write scoreboard
112:110 (7 = none), read scoreboard 115:113, wait mask 121:116, reuse 125:122.

nvdisasm's text is cached per code image and nvdisasm (its identity) by SHA-256: the TEXTS_KEPT
most recently used are kept, the least recently used dropped first (read again if asked for again,
giving the same text; probe s37 leftovers finding 4).  Across processes, the user cache keeps each
successful run (nvtools.run_on_code, docs/cache.md's `nvdisasm-runs`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass

from ..bounded import BoundedCache
from ..errors import BobcError
from ..nvtools import nvdisasm, run_on_code, tool_identity
from ..sass.syntax import split_operands
from .arch import sim_arch
from .faults import SimulationFault

INSTRUCTION_BYTES = 16
NO_SCOREBOARD = 7


@dataclass(frozen=True)
class Control:
    stall: int
    yield_: int
    write_scoreboard: int     # 7: none
    read_scoreboard: int      # 7: none
    wait_mask: int            # bit b: wait for scoreboard b
    reuse: int

    @classmethod
    def from_word(cls, word: int) -> "Control":
        def bits(high, low):
            return (word >> low) & ((1 << (high - low + 1)) - 1)
        return cls(bits(108, 105), bits(109, 109), bits(112, 110), bits(115, 113), bits(121, 116), bits(125, 122))


@dataclass(frozen=True)
class Operand:
    kind: str                 # reg, ureg, pred, upred, imm, fimm, const, mem, sreg
    index: int = 0            # register / predicate number (RZ 255, URZ 63, PT 7)
    value: int = 0            # imm bits; const offset; mem offset
    negate: bool = False      # -R, !P
    absolute: bool = False    # |R|
    wide: bool = False        # mem: [R.64]
    bank: int = 0             # const bank
    const_reg: int = 255      # const: c[bank][R + offset] (RZ when absent)
    desc: int = -1            # mem: desc[URn] (sm_90 syntax), -1 when implicit
    name: str = ""            # sreg name
    ureg: int = 63            # mem: [R + URn + offset] (URZ when absent); [URn + offset] has index RZ
    scale: int = 1            # mem: [R.X4] / [R.X8]: the register scaled
    half: str = ""            # reg: H0_H0 / H1_H1 / F32 lane selection (packed binary16 operands)
    literal: str = ""         # imm / fimm: the text as printed (a float context reads "-126" as -126.0)
    invert: bool = False      # ~R / ~URZ: bitwise not (read only where the executor applies it: BRA.DIV / .CONV)


@dataclass(frozen=True)
class Instruction:
    pc: int                   # byte offset from the code start
    text: str                 # nvdisasm's text, for messages
    opcode: str               # base opcode: IADD3
    modifiers: tuple[str, ...]
    guard: int                # predicate number, PT = 7; UPn = 8 + n (UPT 15)
    guard_negated: bool
    operands: tuple[Operand, ...]
    control: Control
    unreadable: str = ""      # why an operand could not be read (refused if the instruction runs)

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode,) + self.modifiers)


class ToolMissing(BobcError):
    """NVIDIA's nvdisasm, which the simulator decodes through, is not installed: bobc refuses to
    simulate (exit 1, README's "a plan or file it refuses"), which is no GPU fault (a
    SimulationFault's 7, the host's code for one)."""

    exit_code = 1


_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_NUMBER = r"(?:0x[0-9a-fA-F]+|\d+)"

TEXTS_KEPT = 256
_cache: BoundedCache = BoundedCache(TEXTS_KEPT)


TOOL_HINT = ("reinstall it (pip install --force-reinstall nvidia-cuda-nvdisasm), or point BOBC_NVDISASM "
             "at a working nvdisasm")


def _nvdisasm(tool: str, code: bytes, arch: str):
    """nvdisasm -b `arch` over `code`; a tool that cannot be started (a missing file, one not
    executable, a folder) is refused by its path, exit 1, as `bobc disasm` refuses it."""
    try:
        return run_on_code(tool, ["-b", arch], code, prefix="bobc-sim-")   # kept in the user cache
    except OSError as e:
        raise ToolMissing(f"cannot run nvdisasm at {tool}: {e.strerror or e}",
                          hint="pip install nvidia-cuda-nvdisasm (or set BOBC_NVDISASM)") from None


def _broken_tool(tool: str, arch: str) -> ToolMissing | None:
    """The refusal of an nvdisasm that does not work, or None when it does: it is asked to list one
    NOP of the target, which every nvdisasm of that target lists as one instruction.  Asked only
    after a listing went wrong, so a tool that fails (or prints no listing) is not said as a fault
    of the device code (a SimulationFault's exit 7, the GPU's) -- only a working nvdisasm's refusal
    of the code is (probe s36 exitcodes findings 1 and 3)."""
    from ..sass.oracle import nop_word

    done = _nvdisasm(tool, nop_word(arch), arch)
    listed = sum(1 for line in done.stdout.splitlines() if _LINE.search(line))
    if done.returncode == 0 and listed == 1:
        return None
    said = (done.stderr.strip() or done.stdout.strip()).splitlines()
    status = f"exit status {done.returncode}" if done.returncode >= 0 else f"signal {-done.returncode}"
    what = (f"it fails on one NOP ({status}{': ' + said[0] if said else ''})" if done.returncode != 0
            else f"it lists {listed} instructions for one NOP")
    return ToolMissing(f"nvdisasm at {tool} does not work: {what}; the simulator decodes instructions only "
                       f"through it", hint=TOOL_HINT)


def disassembly_text(code: bytes, arch: str) -> str:
    """nvdisasm's listing of `code`, cached by content and by the nvdisasm that printed it
    (nvtools.tool_identity): another nvdisasm later in the process (BOBC_NVDISASM changed, an
    upgrade) reads the code again, as a fresh process does (probe s36 inprocess2 finding 3)."""
    tool = nvdisasm()
    if tool is None:
        raise ToolMissing("nvdisasm is not installed; the simulator decodes instructions only through it",
                          hint="pip install nvidia-cuda-nvdisasm (or set BOBC_NVDISASM)")
    key = hashlib.sha256(tool_identity(tool).encode() + b"\0" + arch.encode() + b"\0" + code).hexdigest()
    known = _cache.get(key)
    if known is not None:
        return known
    done = _nvdisasm(tool, code, arch)
    if done.returncode != 0:
        broken = _broken_tool(tool, arch)
        if broken is not None:
            raise broken
        raise SimulationFault(f"nvdisasm -b {arch} refuses the code: {done.stderr.strip() or done.stdout.strip()}")
    _cache[key] = done.stdout
    return done.stdout


def parse_operand(text: str) -> Operand:
    t = text.strip()
    negate = False
    if t.startswith("gdesc["):      # HGMMA's matrix descriptors: URn..URn+3, flags after (.tnspA ...)
        m = re.fullmatch(r"gdesc\[UR(\d+)\]((?:\.\w+)*)", t)
        if not m:
            raise SimulationFault(f"cannot read matrix descriptor operand '{text}'")
        return Operand("gdesc", index=int(m.group(1)), name=m.group(2))
    if t == "gsb0":                 # warpgroup MMA's group scoreboard
        return Operand("gsb", name=t)
    if t.startswith("desc["):
        m = re.fullmatch(r"desc\[UR(\d+)\](\[.*\])", t)
        if not m:
            raise SimulationFault(f"cannot read memory operand '{text}'")
        return dataclasses.replace(_address(m.group(2), text), desc=int(m.group(1)))
    if t.startswith("["):
        return _address(t, text)
    if t.startswith(("-c[", "|c[", "-|c[")):
        inner = parse_operand(t.lstrip("-").strip("|"))
        return dataclasses.replace(inner, negate=t.startswith("-"), absolute="|" in t)
    if t.startswith("~") and len(t) > 1:
        return dataclasses.replace(parse_operand(t[1:]), invert=True)
    if t.startswith("c["):
        # nvdisasm prints a packed-half opcode's constant as `c[0x0] [0x16c]`, with a lane selection
        # where it has one (ptxas's .f16 parameter: HADD2.F32 R0, -RZ, c[0x0] [0x16c].H0_H0), and PLOP3's
        # the same way with its sign bit (ptxas's sm_86 add.sat.s32 of a parameter: PLOP3.LUT P2, PT, R3.SIGN,
        # c[0x0] [0x16c].SIGN, R2.SIGN, 0x8, 0x0; probe s45 simint)
        m = re.fullmatch(r"c\[(" + _NUMBER + r")\]\s*\[(?:(R\d+|RZ)\s*\+?\s*)?(" + _NUMBER + r")?\]"
                         r"(?:\.(H0_H0|H1_H1|H0_H1|H1_H0|SIGN))?", t)
        if not m:
            raise SimulationFault(f"cannot read constant operand '{text}'")
        return Operand("const", value=int(m.group(3) or "0", 0), bank=int(m.group(1), 0),
                       const_reg=_reg(m.group(2)) if m.group(2) else 255, half=m.group(4) or "")
    if t.startswith("!"):
        negate, t = True, t[1:]
    elif t.startswith("-") and not re.fullmatch(r"-" + _NUMBER, t) and t != "-INF":
        negate, t = True, t[1:]
    t = t.replace(".reuse", "")
    half = ""
    # .24 / .28: I2IP's merge source, the bits of it kept above the packed fields (ptxas's cvt.pack.sat.s4 / .s2:
    # I2IP.S4.S32.SAT R19, R2, R5, R6.24)
    m = re.fullmatch(r"(.*)\.(H0_H0|H1_H1|F32|H0_H1|H1_H0|F16|SIGN|H1|24|28)", t)
    if m and not re.fullmatch(r"[-+]?\d+\.\d*(e[-+]?\d+)?", t):
        t, half = m.group(1), m.group(2)
    absolute = t.startswith("|") and t.endswith("|")
    if absolute:
        t = t[1:-1]
    if t == "RZ":
        return Operand("reg", 255, negate=negate, absolute=absolute, half=half)
    if t == "URZ":
        return Operand("ureg", 63, negate=negate, absolute=absolute)
    if t in ("PT", "UPT"):
        return Operand("pred" if t == "PT" else "upred", 7, negate=negate)
    m = re.fullmatch(r"(U?)(R|P)(\d+)", t)
    if m:
        kind = {("", "R"): "reg", ("U", "R"): "ureg", ("", "P"): "pred", ("U", "P"): "upred"}[(m.group(1), m.group(2))]
        return Operand(kind, int(m.group(3)), negate=negate, absolute=absolute, half=half)
    m = re.fullmatch(r"(SB|B)(\d+)", t)
    if m:
        return Operand("sb" if m.group(1) == "SB" else "breg", int(m.group(2)))
    if t.startswith("SR_") or t in ("SRZ", "PR"):
        return Operand("sreg", name=t)
    if t in ("+INF", "INF", "-INF", "+QNAN", "-QNAN", "QNAN", "NAN"):
        value = {"+INF": 0x7F800000, "INF": 0x7F800000, "-INF": 0xFF800000}.get(t, 0x7FFFFFFF)
        return Operand("fimm", value=value, literal=t)
    if re.fullmatch(r"-?" + _NUMBER, t):
        value = int(t, 0)
        return Operand("imm", value=value & 0xFFFFFFFF, literal=t)
    if re.fullmatch(r"[-+]?\d+\.\d*(e[-+]?\d+)?", t):
        import struct
        t = ("-" if negate else "") + t          # a float immediate carries its sign in its bits
        # a binary64 opcode's immediate (ptxas's DMUL R2, R4, 8.98846567431157953865e+307) may lie beyond binary32's
        # range: its value is read from the literal (executor.f64); the bits kept here are binary32's infinity
        try:
            bits = struct.unpack("<I", struct.pack("<f", float(t)))[0]
        except OverflowError:
            bits = 0xFF800000 if t.startswith("-") else 0x7F800000
        return Operand("fimm", value=bits, literal=t)
    raise SimulationFault(f"cannot read operand '{text}'")


def _address(t: str, text: str) -> Operand:
    """[R2.64+UR4+0x10], [R2.X4], [UR6+0x100], [0x40], [R2+-0x8]: register, scale, uniform
    register and offset, any of them absent."""
    inner = t.strip()[1:-1]
    index, ureg, offset, wide, scale = 255, 63, 0, False, 1
    for term in re.split(r"\+(?=[^+])", inner.replace(" ", "")):
        if not term:
            continue
        m = re.fullmatch(r"(R\d+|RZ)(\.64)?(?:\.X(\d+))?(\.U32)?", term)
        if m:
            index, wide, scale = _reg(m.group(1)), bool(m.group(2)), int(m.group(3) or "1")
            continue
        m = re.fullmatch(r"UR(\d+|Z)(\.64)?", term)
        if m:
            ureg = 63 if m.group(1) == "Z" else int(m.group(1))
            continue
        if re.fullmatch(r"-?" + _NUMBER, term):
            offset += int(term, 0)
            continue
        raise SimulationFault(f"cannot read memory operand '{text}'")
    return Operand("mem", index, offset, wide=wide, ureg=ureg, scale=scale)


def _reg(text: str) -> int:
    return 255 if text == "RZ" else int(text[1:])


# The opcodes whose 32-bit immediate is a binary32 number (the ISA's, declared here apart from the
# assembler's tables, as the rest of the simulator's facts are): nvdisasm prints 1.0 there as `1`.
FLOAT_IMMEDIATE_OPCODES = frozenset({"FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "FSEL", "MUFU"})

_INVERTED_MASK = {"BRA.DIV", "BRA.CONV"}      # BRA.DIV ~URZ, target: the full-warp mask (the executor inverts it)
# The carry-in additions' sources: nvdisasm prints their negate bit as `~` (the assembler's README: `~` on the
# sources of IADD3.X, IMAD.X, UIADD3.X), the bitwise complement a two-word subtraction's high word adds
# (ptxas's neg.s64 is IADD3 R8, P0, RZ, -R2, RZ then IADD3.X R9, RZ, ~R3, RZ, P0, !PT); executor.u32 applies it
_COMPLEMENTED = {"IADD3", "IMAD", "UIADD3", "LEA"}   # LEA.HI.X.SX32 R15, R6, ~R15 (ptxas: sad.s32)
# Opcodes whose one source nvdisasm may print complemented, `~` being the bitwise not of its 32 bits: FLO (ptxas's
# bfind.s64 / bfind.shiftamt.s64 and clz / bfind of a not.b32 or not.b64: `FLO.U32 R9, ~R2`, `FLO.U32.SH R2, ~R2`,
# `FLO.U32 R7, ~c[0x0][0x168]`, `FLO.U32 R8, ~UR7`; probe s45 simint); executor.u32 applies it
_COMPLEMENTED_SOURCE = {"FLO"}


def _binary32_immediate(o: Operand) -> Operand:
    """An immediate of an opcode whose immediates are binary32 values (FLOAT_IMMEDIATE_OPCODES) is
    a number, whatever its spelling: nvdisasm prints 1.0 as `1` and -126.0 as `-126` there, and a
    decimal written so stands for its binary32 bits; a hex immediate is the bits themselves.  So
    `FSEL R7, R2, 1, !P0` selects 0x3f800000."""
    import struct

    if o.kind != "imm" or not o.literal or o.literal.lower().lstrip("+-").startswith("0x"):
        return o
    try:
        bits = struct.unpack("<I", struct.pack("<f", float(o.literal)))[0]
    except (OverflowError, ValueError):
        raise SimulationFault(f"cannot read float immediate '{o.literal}': beyond binary32's range") from None
    return dataclasses.replace(o, kind="fimm", value=bits)


_HIGH_HALF = ("MUFU", "F2FP")      # opcodes whose register source may name its high half, `R2.H1`


def parse_line(pc: int, text: str, word: int) -> Instruction:
    guard, negated = 7, False
    body = text.strip()
    m = re.match(r"@(!?)(U?P)(T|\d+)\s+(.*)", body)
    if m:
        negated = m.group(1) == "!"
        guard = 7 if m.group(3) == "T" else int(m.group(3))
        if m.group(2) == "UP":
            guard += 8                      # uniform predicates: rows 8-15 of the predicate file
        body = m.group(4)
    head, _, rest = body.partition(" ")
    parts = head.split(".")
    try:
        texts = list(split_operands(rest)) if rest.strip() else []
        if parts[0] == "RET" and len(texts) == 1 and len(texts[0].split()) == 2:
            texts = texts[0].split()        # RET.REL.NODEC R4 0x0: the return address register, then the base
        operands = tuple(parse_operand(o) for o in texts)
        if parts[0] in FLOAT_IMMEDIATE_OPCODES:
            operands = tuple(_binary32_immediate(o) for o in operands)
        for k, (written, o) in enumerate(zip(texts, operands)):
            if o.half == "SIGN" and (parts[0] != "PLOP3" or o.kind not in ("reg", "const") or o.negate or o.absolute):
                raise SimulationFault(f"cannot read operand '{written.strip()}' (a register's or constant's .SIGN, its "
                                      "bit 31, is read only as a source of PLOP3, as ptxas's add.sat.s32 writes it)")
            if o.half in ("24", "28") and (parts[0] != "I2IP" or o.kind != "reg" or k != len(texts) - 1):
                raise SimulationFault(f"cannot read operand '{written.strip()}' (a register's .{o.half} is read only as "
                                      "I2IP's merge source, as ptxas's cvt.pack.sat.s4 / .s2 writes it)")
            if o.half == "H1" and (parts[0] not in _HIGH_HALF or o.kind != "reg"):
                raise SimulationFault(f"cannot read operand '{written.strip()}' (a register's .H1, its high 16 bits, "
                                      f"is read only as the source of {' / '.join(sorted(_HIGH_HALF))}: ptxas's "
                                      "ex2.approx.f16x2 / tanh.approx.f16x2 and cvt.rn.f16x2.e4m3x2)")
            complemented = (parts[0] in _COMPLEMENTED and "X" in parts[1:] or
                            parts[0] in _COMPLEMENTED_SOURCE and k == len(texts) - 1) and \
                o.kind in ("reg", "ureg", "const", "imm")
            if o.invert and not complemented and (head not in _INVERTED_MASK or k != 0):
                raise SimulationFault(f"cannot read operand '{written.strip()}' (a bitwise not is read only as the "
                                      f"mask of {' / '.join(sorted(_INVERTED_MASK))} and on the sources of "
                                      f"{', '.join(sorted(c + '.X' for c in _COMPLEMENTED))} and the source of "
                                      f"{', '.join(sorted(_COMPLEMENTED_SOURCE))})")
        unreadable = ""
    except SimulationFault as error:
        operands, unreadable = (), error.message
    if parts[0] in ("ATOMG", "ATOM") and "CAS" in parts[1:] and "E" in parts[1:]:
        # nvdisasm prints ATOMG.E.CAS's 64-bit (.E) address without .64 (`ATOMG.E.CAS.STRONG.GPU PT, R10,
        # [R6], R11, R3`), where ptxas fills R6:R7 as a pair (atom.global.cas.b32 of a .u64 address, and its
        # CAS loops of atom.global.add.noftz.f16 / .bf16): read as [R6.64], as every other .E access prints
        operands = tuple(dataclasses.replace(o, wide=True) if o.kind == "mem" and o.index != 255 else o
                         for o in operands)
    return Instruction(pc, text.strip(), parts[0], tuple(parts[1:]), guard, negated, operands,
                       Control.from_word(word), unreadable)


# Where nvdisasm does not print a global access's memory descriptor (desc[URn]; sm_86: arch.ARCHES'
# descriptor_printed), the uniform register is read from the word (sass-facts.md: "LDG desc UR in
# 32..37, STG desc UR in 64..69"; ptxas's sm_90 corpus, which prints desc[URn], puts LD's at 32..37 as LDG's and
# ATOMG / RED(G) / LDGSTS's at 64..69 as STG's, and so does its sm_86 corpus for the same opcodes).
_DESCRIPTOR_FIELD = {"LDG": 32, "LD": 32, "STG": 64, "ATOMG": 64, "RED": 64, "REDG": 64, "LDGSTS": 64}


def _encoded_descriptor(ins: Instruction, word: int) -> Instruction:
    """`ins` with its global memory operand's descriptor register taken from the word.  ATOMG.CAS
    (whose second data register sits at 64..69) and 32-bit addresses keep none."""
    bit = _DESCRIPTOR_FIELD.get(ins.opcode)
    if bit is None or "CAS" in ins.modifiers:
        return ins
    mems = [k for k, o in enumerate(ins.operands) if o.kind == "mem"]
    if not mems:
        return ins
    k = mems[-1] if ins.opcode == "LDGSTS" else mems[0]          # LDGSTS [shared], [global]
    o = ins.operands[k]
    if o.desc >= 0 or not o.wide:
        return ins
    operands = ins.operands[:k] + (dataclasses.replace(o, desc=(word >> bit) & 0x3F),) + ins.operands[k + 1:]
    return dataclasses.replace(ins, operands=operands)


def decode(code: bytes, arch: str) -> list[Instruction]:
    """Every instruction of `code` (a whole number of 16-byte words, no padding)."""
    printed = sim_arch(arch).descriptor_printed
    listing = disassembly_text(code, arch)
    out = []
    for line in listing.splitlines():
        m = _LINE.search(line)
        if not m:
            continue
        pc = int(m.group(1), 16)
        word = int.from_bytes(code[pc:pc + INSTRUCTION_BYTES], "little")
        ins = parse_line(pc, m.group(2), word)
        if not printed:
            ins = _encoded_descriptor(ins, word)
        out.append(ins)
    if len(out) != len(code) // INSTRUCTION_BYTES:
        tool = nvdisasm()
        broken = _broken_tool(tool, arch) if tool is not None else None
        if broken is not None:
            raise broken
        raise SimulationFault(f"nvdisasm listed {len(out)} instructions for {len(code) // INSTRUCTION_BYTES} words")
    return out


def code_at(program: bytes, offset: int, window: int) -> bytes:
    """The code from `offset` through the window the QMD prefetches, less trailing zero words
    (alignment padding, which no instruction encodes as)."""
    code = program[offset:offset + window]
    end = len(code) - len(code) % INSTRUCTION_BYTES
    while end >= INSTRUCTION_BYTES and not any(code[end - INSTRUCTION_BYTES:end]):
        end -= INSTRUCTION_BYTES
    return code[:end]
