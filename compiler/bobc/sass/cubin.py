"""A minimal cubin (ELF) around one assembled kernel, for loading through the CUDA driver in tests.

The native host never needs this (it places the raw stream itself); tests use
it to run our code with cupy.RawModule before the host exists.  Layout follows
what ptxas 13 writes (sass-facts.md "Cubin"): .text.<k> (sh_info bits 24..31 =
registers on sm_86), .nv.info (REGCOUNT, FRAME_SIZE, MIN_STACK_SIZE),
.nv.info.<k> (CUDA_API_VERSION, PARAM_CBANK, CBANK_PARAM_SIZE, KPARAM_INFO per
parameter (default_parameters: one per 8-byte word; KPARAM_INFO_V2 for a block of more than
4,352 bytes, as ptxas), MAXREG_COUNT, NUM_BARRIERS when the code has a BAR, EXIT_INSTR_OFFSETS,
MAX_THREADS), .nv.constant0.<k>
(parameter base + parameter bytes), a symbol table, three program headers (as ptxas), and
- .note.nv.tkinfo and .note.nv.cuinfo: the driver answers CUDA_ERROR_INVALID_IMAGE
  without either (H200, driver 580: found by dropping sections from a ptxas cubin
  one at a time; program headers, .nv.callgraph, .debug_frame, .nv.compat and
  .nv.shared.reserved.0 could all go);
- .nv.compat on sm_90: nvdisasm refuses an sm_90 cubin without it.
Verified: tests/gpu/test_kernels.py runs kernels from these cubins on the H200.
"""
from __future__ import annotations

import struct
from functools import lru_cache

from .. import __version__
from ..errors import BobcError
from ..targets import Target
from .encoder import Encoder
from .syntax import Control, parse_instruction

ELF_ABI = 0x41
ELF_ABI_VERSION = 8
EM_CUDA = 190
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOTE, SHT_NOBITS, SHT_NVINFO = 1, 2, 3, 7, 8, 0x70000000
SHF_WRITE, SHF_ALLOC, SHF_EXEC, SHF_INFO_LINK = 1, 2, 4, 0x40
PT_LOAD, PT_PHDR = 1, 6
PF_X, PF_R = 1, 4

# nv.info attributes: (format << 8 | attribute) as ptxas 13 writes them
EIATTR_REGCOUNT = 0x2F
EIATTR_FRAME_SIZE = 0x11
EIATTR_MIN_STACK_SIZE = 0x12
EIATTR_CUDA_API_VERSION = 0x37
EIATTR_PARAM_CBANK = 0x0A
EIATTR_CBANK_PARAM_SIZE = 0x19
EIATTR_KPARAM_INFO = 0x17
EIATTR_MAXREG_COUNT = 0x1B
EIATTR_EXIT_INSTR_OFFSETS = 0x1C
EIATTR_MAX_THREADS = 0x05
# the block the kernel must be launched with (x, y, z): ptxas writes it for PTX's .reqntid, in place
# of MAX_THREADS (ptxas 13.5's cubin of `.reqntid 256, 2, 1`)
EIATTR_REQNTID = 0x10
EIATTR_NUM_BARRIERS = 0x4C
# the blocks of a thread-block cluster the kernel is launched in (x, y, z), as ptxas 13 writes
# PTX's .reqnctapercluster (tools/ptx_corpus/sm90_cluster.ptx's cubin; CUDA's __cluster_dims__)
EIATTR_CTA_PER_CLUSTER = 0x3D
# PTX's .explicitcluster (a flag record, format 1: the kernel runs only in a launch that gives
# cluster dimensions) and .maxclusterrank N (one u32: the most blocks a cluster of its launch may
# hold), as ptxas 13.5 writes them for sm_90 and nvdisasm names them
EIATTR_EXPLICIT_CLUSTER = 0x3E
EIATTR_MAX_CLUSTER_RANK = 0x3F
FMT_BVAL, FMT_HVAL, FMT_SVAL = 2, 3, 4
# KPARAM_INFO's last word, as ptxas 13.5 writes it for every parameter of its cubins (sizes 4, 8,
# 12 and 128 compared: 0x0011f000, 0x0021f000, 0x0031f000, 0x0201f000; 1 and 2, a .u8's and a .u16's:
# 0x0005f000, 0x0009f000): bits 12..15 all set, bit 16 set, the parameter's size in bytes from bit 18
KPARAM_FLAGS = 0x1F000
KPARAM_SIZE_SHIFT = 18
# Which attribute describes the parameters is a rule of the parameter block's size (CBANK_PARAM_SIZE),
# not of any one parameter's: ptxas 13.5 (-arch=sm_86 and sm_90 alike) writes a KPARAM_INFO record
# per parameter for a block of at most KPARAM_INFO_BLOCK_MAX = 4,352 bytes (0x1100: one parameter of
# 4352 bytes is 0x4401f000) and, for every larger block, an EIATTR_KPARAM_INFO_V2 record (0x45,
# nvdisasm's name) per parameter in its place, however small each is: 4356 bytes as (8, 4344, 4)
# gives three V2 records, (8, 4344) two KPARAM_INFO ones.  A V2 record is (u32 index 0, u16
# ordinal, u16 offset, u32 size in bytes): the whole last word is the size, no flags, so one
# parameter may take the whole block (ptxas writes one of 32764 bytes, 0x7ffc).  A KPARAM_INFO
# record's size field (bits 18..31, 14 bits) always holds its parameter: no parameter of a block of
# at most 4352 bytes is larger.  (tests/sass/test_kparam_info_v2.py compiles PTX across the boundary.)
EIATTR_KPARAM_INFO_V2 = 0x45
KPARAM_INFO_BLOCK_MAX = 0x1100
# a constant bank's word: the code reads the bank in 32-bit words (or a byte or half of one, ULDC.U8 /
# ULDC.U16), and default_parameters describes whole words.  A parameter itself may be of any size
# at any offset (check_parameters): ptxas 13.5 writes a KPARAM_INFO record of size 1 for a .u8 /
# .b8 / .s8 parameter, 2 for .u16 / .b16 / .f16, 3 at offset 1 for `.align 1 .b8 p[3]` after a .u8
# (tests/sass/test_subword_parameters.py)
PARAMETER_UNIT = 4
WORD_BYTES = 8                        # a kernel contract's parameter word (docs/kernel-contracts.md)
# NUM_BARRIERS: ptxas writes it for every kernel with a BAR (the highest barrier number
# + 1, tests/sass/data listings) and the driver sizes a block's named barriers from it.
# Our cubins lacked it; on the H200 BAR.SYNC 0 behaved the same without it (2026-12-01,
# the tiled matrix products), barriers above 0 were never tried without it.
ALL_BARRIERS = 16                     # a barrier number held in a register: any of the 16


def _record(attr: int, payload: bytes) -> bytes:
    return struct.pack("<BBH", FMT_SVAL, attr, len(payload)) + payload


def _hval(attr: int, value: int) -> bytes:
    return struct.pack("<BBH", FMT_HVAL, attr, value)


def _raw_records(records) -> bytes:
    """.nv.info records given as (format, attribute, value) (bobc.targets CubinFacts)."""
    out = bytearray()
    for fmt, attr, value in records:
        out += _record(attr, struct.pack("<I", value)) if fmt == FMT_SVAL else struct.pack("<BBH", fmt, attr, value)
    return bytes(out)


def _padded_text(assembled, target: Target) -> bytes:
    """The code padded with NOPs to a multiple of 128 bytes, as ptxas pads .text."""
    code = bytearray(assembled.code)
    if len(code) % 128:
        nop = Encoder(target.name).encode(parse_instruction("NOP"), 0, Control(stall=0, yield_bit=0).bits())
        while len(code) % 128:
            code += nop.to_bytes(16, "little")
    return bytes(code)


# .nv.compat: nvdisasm (and the driver) refuse an sm_90 cubin without it.  Its records
# (nv.info format) are copied from ptxas 13.5's output for sm_90; their meaning is not
# documented.
NV_COMPAT_SM90 = bytes.fromhex("02090000020c000002020100030d010102030000040b08000000000000000000030e4004")
SHT_NVCOMPAT = 0x70000086
# The reserved shared memory's symbols, as ptxas 13.5 names them for sm_90 kernels with mbarriers
RESERVED_SYMBOLS = (".nv.reservedSmem.offset0", "__nv_reservedSMEM_offset_0_alias")
# The CUDA driver refuses a cubin (CUDA_ERROR_INVALID_IMAGE) without both notes below
# (found on the H200 by dropping sections from a ptxas cubin one at a time).
# .note.nv.cuinfo, as ptxas 13 writes it: "NVIDIA Corp" note type 1000, (2, the SM version as a
# number -- 0x56 = 86 for sm_86, 0x5a = 90 for sm_90 --, CUDA API 0x87, 0).
CUINFO_API_VERSION = 0x87


def cuinfo_note(target: Target) -> bytes:
    """The .note.nv.cuinfo note of `target`: Target.sm's hex digits spell the SM version (0x90:
    sm_90), which the note holds as the number they spell (90 = 0x5a), as ptxas writes it."""
    return _note(1000, struct.pack("<HHHH", 2, int(f"{target.sm:x}"), CUINFO_API_VERSION, 0))
# .note.nv.tkinfo: "NVIDIA Corp" note type 2000 naming the producing tool: a header of
# (2, 0, offsets of the tool, version, build and options strings) then the strings.
TOOLKIT_STRINGS = ("bobc", f"bobc SASS assembler {__version__}", "bobc", "-arch {arch}")


def _note(note_type: int, desc: bytes) -> bytes:
    name = b"NVIDIA Corp\0"
    while len(desc) % 4:
        desc += b"\0"
    return struct.pack("<III", len(name), len(desc), note_type) + name + desc


def toolkit_note(arch: str) -> bytes:
    strings = bytearray(b"\0")
    offsets = []
    for text in TOOLKIT_STRINGS:
        offsets.append(len(strings))
        strings += text.format(arch=arch).encode() + b"\0"
    return _note(2000, struct.pack("<IIIIII", 2, 0, *offsets) + bytes(strings))


def barrier_count(assembled) -> int:
    """The named barriers the code uses (ptxas's NUM_BARRIERS): code_barrier_count of its encoded
    words (for the target it was assembled for), so that `BAR.SYNC 1` and `BAR.SYNC 0x1` (the same
    word) count alike: one rule for a cubin's NUM_BARRIERS and a plan's QMD (nvidia/encode.py)."""
    return code_barrier_count(bytes(assembled.code), assembled.arch)


def code_barrier_count(code: bytes, arch: str) -> int:
    """barrier_count of encoded code (a region's machine code, whose text is gone): the highest
    barrier number of its BAR instructions + 1, all 16 when one names its barrier by register,
    0 without BAR.  An instruction is 16 bytes whose bits 0..11 are its opcode, bits 9..11 the
    operand form (sass-facts.md); BAR's immediate-barrier forms are the learned tables' (the
    only ones the assembler encodes), their barrier number in tables.layouts' Ibar field.  A BAR
    of another form holds its barrier in a register: any of the 16.  A plan's encode asks this
    of every launch's region, and a build encodes its images several times (nvidia/encode.py
    qmd_barriers): the count of the same code is kept (bench/results/build.md, session 35)."""
    return _code_barrier_count(bytes(code), arch)


@lru_cache(maxsize=256)
def _code_barrier_count(code: bytes, arch: str) -> int:
    immediate, bar = _bar_opcodes(arch)
    from .tables.layouts import SLOTS
    lsb, width = SLOTS["Ibar"]["field"]
    count = 0
    for at in range(0, len(code) - len(code) % 16, 16):
        word = int.from_bytes(code[at:at + 16], "little")
        if word & 0x1FF not in bar:
            continue
        count = max(count, (word >> lsb & (1 << width) - 1) + 1 if word & 0xFFF in immediate else ALL_BARRIERS)
    return count


@lru_cache(maxsize=None)
def _bar_opcodes(arch: str) -> tuple[frozenset[int], frozenset[int]]:
    """The 12-bit opcodes of `arch`'s immediate-barrier BAR forms (its learned tables', which
    forms_for keeps for the process) and their 9-bit opcodes without the operand form."""
    from .encoder import forms_for
    immediate = frozenset(form.fixed & 0xFFF for key, form in forms_for(arch).items()
                          if key.split()[0].split(".")[0] == "BAR")
    if not immediate:
        raise AssertionError(f"the {arch} encoding tables have no BAR form")
    return immediate, frozenset(opcode & 0x1FF for opcode in immediate)


# How ptxas opens a local-memory frame right after loading the stack pointer into R1: R1 less the
# frame, as an integer immediate (VIADD on sm_90)
FRAME_OPENERS = ("IADD3 R1, R1, {}, RZ", "VIADD R1, R1, {}")
FRAME_SEARCH = 16       # instructions from the start the frame is looked for in
IMMEDIATE_FIELD = (32, 32)   # the 32-bit immediate of IADD3/VIADD's immediate forms (tables.layouts Sb)


def stack_frame(assembled, arch: str) -> int:
    """The bytes of local memory per thread the code reserves: ptxas opens a frame with
    `IADD3 R1, R1, -N, RZ` (or VIADD R1, R1, -N) right after loading the stack pointer.  Read from
    the encoded words, not the text: an instruction opens the frame when its word is the word of
    one of FRAME_OPENERS with its own immediate field (negative), whatever spelling assembled it
    (`-0x80`, `-128`, `0xffffff80`, no spaces)."""
    from ..errors import BobcError as Refused
    from .encoder import EncodeProblem

    encoder = Encoder(arch)
    lsb, width = IMMEDIATE_FIELD
    for inst in assembled.instructions[:FRAME_SEARCH]:
        immediate = inst.word >> lsb & (1 << width) - 1
        signed = immediate - (1 << width) if immediate >> width - 1 else immediate
        if signed >= 0:
            continue
        for form in FRAME_OPENERS:
            try:
                word = encoder.encode(parse_instruction(form.format(signed)), inst.address, inst.control.bits())
            except (EncodeProblem, Refused, ValueError):
                continue
            if word == inst.word:
                return -signed
    return 0


def default_parameters(parameter_bytes: int) -> list[tuple[int, int]]:
    """The parameters (offset, size) a cubin describes when none are declared: one per 8-byte word,
    the kernel contracts' parameter word (docs/kernel-contracts.md), and a last one of 4 bytes when
    the block ends half-way into a word.  A byte count not a multiple of 4 is refused: these
    records describe whole 32-bit words, and a block of smaller parameters (a .u8: 1 byte) is
    described by its own records (write_cubin's parameters=, bobc asm --parameter-sizes)."""
    if parameter_bytes < 0 or parameter_bytes % PARAMETER_UNIT:
        raise BobcError(f"{parameter_bytes} bytes of parameters: a multiple of {PARAMETER_UNIT} is needed "
                        f"(the default records describe whole 32-bit words)",
                        hint=f"give {parameter_bytes + (-parameter_bytes) % PARAMETER_UNIT} bytes, or describe "
                             f"each parameter (parameters=[(offset, size), ...])")
    records = [(offset, WORD_BYTES) for offset in range(0, parameter_bytes - parameter_bytes % WORD_BYTES, WORD_BYTES)]
    if parameter_bytes % WORD_BYTES:
        records.append((parameter_bytes - parameter_bytes % WORD_BYTES, parameter_bytes % WORD_BYTES))
    return records


def check_parameters(parameters, parameter_bytes: int, kernel_name: str) -> None:
    """Parameters (offset, size) a cubin may describe: each of at least one byte, in order without
    overlap, the last ending at `parameter_bytes` (CBANK_PARAM_SIZE), as ptxas's records are.
    ptxas 13.5 (sm_86 and sm_90, KPARAM_INFO and KPARAM_INFO_V2 alike) writes a parameter of any
    size at any offset its PTX alignment gives: 1 byte for .u8 / .b8, 2 for .u16 / .f16, 3 or 5 for
    a `.b8 p[N]` array, a .u16 at offset 2 after a .u8, a 4-byte `.align 2` array at offset 2; it
    leaves the bytes between parameters that alignment skips to no parameter (a .u8 then a .u32:
    1 byte at 0, 4 at 4), and ends the block at the last parameter's end (a lone .u8: 1 byte).
    Refused, as nothing ptxas writes: a parameter of no bytes (PTX has none: `.b8 p[0]` is "an
    incomplete array"), one that starts before the one before it ends (ptxas lays parameters out
    in order, apart), and a block that does not end where the last parameter ends."""
    end = 0
    for ordinal, (offset, size) in enumerate(parameters):
        if size <= 0:
            raise BobcError(f"kernel '{kernel_name}': parameter {ordinal} ({size} bytes at offset {offset}) has no "
                            f"bytes, and a kernel parameter has at least one (PTX has no empty parameter)",
                            hint="give each parameter its size in bytes (a .u8 is 1)")
        if offset < 0:
            raise BobcError(f"kernel '{kernel_name}': parameter {ordinal} is at offset {offset}, before the "
                            f"parameter block's first byte (offset 0)")
        if offset < end:
            raise BobcError(f"kernel '{kernel_name}': parameter {ordinal} at offset {offset} overlaps the one "
                            f"before it (which ends at {end}): ptxas lays parameters out in order, apart",
                            hint=f"start it at {end} or later")
        end = offset + size
    if end != parameter_bytes:
        raise BobcError(f"kernel '{kernel_name}': its parameters end at byte {end}, but the parameter block has "
                        f"{parameter_bytes} bytes (ptxas's block ends where its last parameter ends)")


def cubin_parameter_base(target: Target, parameter_bytes: int) -> int:
    """The offset in constant bank 0 of a cubin's parameter block of `parameter_bytes` (its
    PARAM_CBANK, where the kernel's code reads its parameters): Target.parameter_base, or, for a
    block of more than KPARAM_INFO_BLOCK_MAX bytes on a target whose ptxas keeps such a block
    elsewhere, CubinFacts.large_parameter_base (sm_86: 0x1a80, ptxas 13.5's PARAM_CBANK)."""
    large = target.cubin.large_parameter_base
    return large if large is not None and parameter_bytes > KPARAM_INFO_BLOCK_MAX else target.parameter_base


def parameter_records(parameters, parameter_bytes: int) -> bytes:
    """The .nv.info.<k> records of the parameters (offset, size), the last first as ptxas writes
    them: KPARAM_INFO records for a block of at most KPARAM_INFO_BLOCK_MAX bytes, KPARAM_INFO_V2
    records (the size as a whole 32-bit word) for a larger one (the rule above KPARAM_FLAGS)."""
    out = bytearray()
    for ordinal, (offset, size) in reversed(list(enumerate(parameters))):
        if parameter_bytes <= KPARAM_INFO_BLOCK_MAX:
            out += _record(EIATTR_KPARAM_INFO, struct.pack("<IHHI", 0, ordinal, offset,
                                                           size << KPARAM_SIZE_SHIFT | KPARAM_FLAGS))
        else:
            out += _record(EIATTR_KPARAM_INFO_V2, struct.pack("<IHHI", 0, ordinal, offset, size))
    return bytes(out)


def register_thread_bound(registers: int, target: Target) -> int:
    """The most threads a block of a kernel of `registers` registers a thread may have on `target`:
    the most whole warps whose registers, as the GPU's launch check counts them
    (SMResources.block_registers: a warp's allocation times the warps rounded up to a multiple of
    the sub-partitions), stay within TargetLimits.registers_per_block; at most threads_per_block."""
    from ..targets import WARP_THREADS

    sm = target.sm_resources
    per_partition = target.limits.registers_per_block // sm.sub_partitions // sm.warp_registers(max(registers, 1))
    return min(target.limits.threads_per_block, per_partition * sm.sub_partitions * WARP_THREADS)


_IDENTIFIER = __import__("re").compile(r"[A-Za-z][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+")


def check_kernel_name(name: str, span=None) -> None:
    """A cubin's kernel symbol is an entry's name, a PTX identifier (PTX ISA "Identifiers": a letter
    then letters, digits, `_` and `$`, or `_`, `$` or `%` then at least one of those): any other
    name no PTX or CUDA C entry can have, and nvdisasm's listing of the cubin would not read back
    (`we ird-name.v2:` is no label).  `span`: where a `.kernel` line wrote the name (None: the
    name is the file's), which the refusal points at and says to rename."""
    if not _IDENTIFIER.fullmatch(name):
        bad = next((c for c in name if not (c.isascii() and (c.isalnum() or c in "_$%"))), None)
        why = (f"it holds {bad!r}" if bad is not None else
               "it starts with a digit" if name[:1].isdigit() else
               "it is empty" if not name else f"'{name[0]}' needs a letter, digit, _ or $ after it")
        raise BobcError(f"kernel name {name!r} is not a PTX identifier ({why}): a cubin's kernel symbol is one "
                        f"(a letter, then letters, digits, _ and $)", span,
                        hint="rename the kernel in this `.kernel` line" if span is not None else
                             "name the kernel with a `.kernel NAME` line in the source (a file's name is used "
                             "only when there is none)")


def write_cubin(assembled, kernel_name: str, target: Target, parameter_bytes: int, block_x: int,
                style: str = "minimal", frame_size: int | None = None, registers: int | None = None,
                static_shared: int = 0, reserved_shared: bool = False,
                cluster: tuple[int, int, int] | None = None,
                parameters: list[tuple[int, int]] | None = None,
                max_block: tuple[int, int, int] | None = None,
                required_block: tuple[int, int, int] | None = None) -> bytes:
    """The cubin bytes.  style "ptxas" also writes the records ptxas 13 adds whose meaning
    is not documented (attributes 0x66, 0x35, 0x50, 0x5f, 0x36, 0x6b, 0x6d) and a third
    program header; "minimal" writes only the documented records.  frame_size: local memory
    per thread (FRAME_SIZE and MIN_STACK_SIZE; default: the frame the code opens).
    registers: REGCOUNT (default: the assembler's count); required for code that resizes its
    register allocation (USETMAXREG: the count at entry is the one its setmaxnreg counts share
    out, ptxas's .maxnreg, not the highest register used).  static_shared: bytes of shared
    memory the kernel declares itself (a `.nv.shared.<kernel>` NOBITS section, as ptxas writes
    for `.shared` variables; a launch's dynamic shared memory comes on top).  cluster: the
    kernel's thread-block cluster (sm_90; CUDA then launches every grid of it in clusters of
    that shape, as a kernel of __cluster_dims__).  parameters: each parameter's (offset, size), one
    KPARAM_INFO record each as ptxas writes them (KPARAM_INFO_V2 past KPARAM_INFO_BLOCK_MAX bytes;
    default: default_parameters(parameter_bytes)).
    max_block: MAX_THREADS (default (block_x, 1, 1)); required_block: the block the kernel must
    be launched with (REQNTID, written in place of MAX_THREADS, as ptxas does for .reqntid).  A
    block of more threads than `registers` registers a thread allow is refused
    (register_thread_bound); so is a static_shared past the target's static bound (ptxas refuses
    it: "uses too much shared data (0x10000 bytes, 0xc000 max)")."""
    if frame_size is None:
        frame_size = stack_frame(assembled, target.name)
    if registers is None:
        resize = next((i for i in assembled.instructions if parse_instruction(i.text).opcode == "USETMAXREG"), None)
        if resize is not None:
            raise BobcError(f"kernel '{kernel_name}' resizes its registers (USETMAXREG): its register count "
                            f"at entry cannot be read from the code", resize.span,
                            hint="give the count its setmaxnreg counts were chosen for (PTX .maxnreg): "
                                 "bobc asm --register-count N (a listing's own EIATTR_REGCOUNT is taken), "
                                 "write_cubin's registers=N")
        registers = assembled.registers
    most = target.limits.registers_per_thread
    if not 0 <= registers <= most:
        # REGCOUNT and the text section's flags hold 8 bits: a thread has at most `most` registers
        raise BobcError(f"kernel '{kernel_name}' would have {registers} registers, more than the {most} a "
                        f"thread may have on {target.name}",
                        hint=f"give at most {most} (bobc asm --register-count, write_cubin's registers=)")
    for inst in assembled.instructions:
        if inst.constant is not None and inst.constant[0] != 0:
            # ptxas's __constant__ data (bank 3) and its own tables (bank 2: switch targets) are
            # sections of its cubin, and this one writes bank 0 alone: the code would read whatever
            # the bank holds
            raise BobcError(f"kernel '{kernel_name}': {inst.text} reads constant bank {inst.constant[0]:#x}, which "
                            f"this cubin does not carry (it writes bank 0, the parameters, alone)", inst.span,
                            hint="read the values from a parameter or from global memory, or keep ptxas's cubin "
                                 "for this kernel")
    if parameters is None:
        parameters = default_parameters(parameter_bytes)
    check_parameters(parameters, parameter_bytes, kernel_name)
    base = cubin_parameter_base(target, parameter_bytes)
    for inst in assembled.instructions:
        # a block kept past parameter_base (sm_86's of more than 4352 bytes) leaves the bytes from
        # parameter_base to it to the driver: code reading there reads no parameter
        if (inst.constant is not None and inst.constant[0] == 0
                and target.parameter_base <= inst.constant[1] < base):
            raise BobcError(f"kernel '{kernel_name}': {inst.text} reads c[0x0][{inst.constant[1]:#x}], but a "
                            f"parameter block of {parameter_bytes} bytes starts at c[0x0][{base:#x}] on "
                            f"{target.name} (ptxas 13.5's PARAM_CBANK for a block of more than "
                            f"{KPARAM_INFO_BLOCK_MAX} bytes)", inst.span,
                            hint=f"read parameter byte N at c[0x0][{base:#x} + N], or keep the parameters to "
                                 f"{KPARAM_INFO_BLOCK_MAX} bytes")
    block = required_block or max_block or (block_x, 1, 1)
    threads = block[0] * block[1] * block[2]
    bound = register_thread_bound(registers, target)
    if threads > bound:
        raise BobcError(f"kernel '{kernel_name}' declares blocks of {threads} threads ({' x '.join(map(str, block))}), "
                        f"but at {registers} registers a thread a block of {target.name} holds at most {bound} "
                        f"({target.limits.registers_per_block} registers a block, allocated per warp in units of "
                        f"{target.sm_resources.register_unit}, the warps rounded up to a multiple of the SM's "
                        f"{target.sm_resources.sub_partitions} sub-partitions)",
                        hint=f"declare at most {bound} threads, or use fewer registers")
    static_bound = (target.sm_resources.block_shared_bytes if target.cubin.static_shared_whole_block
                    else target.limits.static_shared_bytes)
    if static_shared > static_bound:
        raise BobcError(f"kernel '{kernel_name}' declares {static_shared} bytes of static shared memory, more than "
                        f"the {static_bound} a kernel may declare statically on {target.name} "
                        f"(ptxas refuses the same: 'uses too much shared data')",
                        hint="declare at most that much in the cubin, and pass the rest at launch as dynamic "
                             "shared memory (cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES)")
    full = style == "ptxas"
    text = _padded_text(assembled, target)
    names = ["", ".shstrtab", ".strtab", ".symtab", ".nv.info", f".nv.info.{kernel_name}",
             f".nv.constant0.{kernel_name}", f".text.{kernel_name}"]
    SEC_SYMTAB, SEC_CONST, SEC_TEXT = 3, 6, 7
    shstrtab = bytearray(b"\0")
    name_offsets = [0]
    for n in names[1:]:
        name_offsets.append(len(shstrtab))
        shstrtab += n.encode() + b"\0"
    strtab = bytearray(b"\0")
    sym_name = {}
    for n in (f".text.{kernel_name}", f".nv.constant0.{kernel_name}", kernel_name, *RESERVED_SYMBOLS):
        sym_name[n] = len(strtab)
        strtab += n.encode() + b"\0"
    # symbols: 0 null, 1 section .text, 2 section .nv.constant0, 3 the kernel
    symtab = bytes(24)
    symtab += struct.pack("<IBBHQQ", sym_name[f".text.{kernel_name}"], 3, 0, SEC_TEXT, 0, 0)
    symtab += struct.pack("<IBBHQQ", sym_name[f".nv.constant0.{kernel_name}"], 3, 0, SEC_CONST, 0, 0)
    symtab += struct.pack("<IBBHQQ", sym_name[kernel_name], 0x12, 0x10, SEC_TEXT, 0, len(text))
    SYM_KERNEL, SYM_CONST = 3, 2
    facts = target.cubin
    extras_count = 3 if facts.compat_section else 2
    reserved_section = 8 + extras_count + (1 if static_shared else 0)
    if reserved_shared:
        # ptxas: a weak undefined 4-byte object and a weak alias (other 0xa0) in the reserved section
        symtab += struct.pack("<IBBHQQ", sym_name[RESERVED_SYMBOLS[0]], 0x21, 0, 0, 0, 4)
        symtab += struct.pack("<IBBHQQ", sym_name[RESERVED_SYMBOLS[1]], 0x20, 0xA0, reserved_section, 0, 0)

    nv_info = (_record(EIATTR_REGCOUNT, struct.pack("<II", SYM_KERNEL, registers))
               + _record(EIATTR_FRAME_SIZE, struct.pack("<II", SYM_KERNEL, frame_size))
               + _record(EIATTR_MIN_STACK_SIZE, struct.pack("<II", SYM_KERNEL, frame_size)))
    kinfo = bytearray()
    if full:
        kinfo += _record(0x66, struct.pack("<I", 3))
    kinfo += _record(EIATTR_CUDA_API_VERSION, struct.pack("<I", 0x87))
    if full:
        kinfo += _raw_records(facts.after_api_version)
    kinfo += _record(EIATTR_PARAM_CBANK, struct.pack("<II", SYM_CONST, parameter_bytes << 16 | base))
    kinfo += _hval(EIATTR_CBANK_PARAM_SIZE, parameter_bytes)
    kinfo += parameter_records(parameters, parameter_bytes)
    if full:
        kinfo += _raw_records(facts.after_parameters)
    kinfo += _hval(EIATTR_MAXREG_COUNT, 0xFF)
    barriers = code_barrier_count(bytes(assembled.code), target.name)   # barrier_count, for this target
    if barriers:
        kinfo += struct.pack("<BBH", FMT_BVAL, EIATTR_NUM_BARRIERS, barriers)
    if full:
        kinfo += _hval(0x5F, facts.attribute_5f)
    exits = exit_offsets(assembled)
    if exits:
        kinfo += _record(EIATTR_EXIT_INSTR_OFFSETS, b"".join(struct.pack("<I", e) for e in exits))
    if required_block is not None:
        kinfo += _record(EIATTR_REQNTID, struct.pack("<III", *required_block))
    else:
        kinfo += _record(EIATTR_MAX_THREADS, struct.pack("<III", *block))
    if cluster is not None:
        if not target.clusters:
            raise ValueError(f"{target.name} has no thread-block clusters")
        kinfo += _record(EIATTR_CTA_PER_CLUSTER, struct.pack("<III", *cluster))
    if full:
        kinfo += _raw_records(facts.closing)
    constant0 = bytes(base + parameter_bytes)

    # file layout: header, section contents (aligned), section headers, program headers
    contents = {1: bytes(shstrtab), 2: bytes(strtab), 3: symtab, 4: nv_info, 5: bytes(kinfo),
                6: constant0, 7: text}
    aligns = {1: 1, 2: 1, 3: 8, 4: 4, 5: 4, 6: 4, 7: 128}
    extra = [(".note.nv.tkinfo", SHT_NOTE, 0x2000000, toolkit_note(target.name)),
             (".note.nv.cuinfo", SHT_NOTE, 0x1000000, cuinfo_note(target))]   # (name, type, flags, bytes)
    if facts.compat_section:
        extra.append((".nv.compat", SHT_NVCOMPAT, 0, NV_COMPAT_SM90))
    for name, _, _, data in extra:
        index = len(contents) + 1
        names.append(name)
        name_offsets.append(len(shstrtab))
        shstrtab += name.encode() + b"\0"
        contents[index] = data
        aligns[index] = 4
    shared_name = len(shstrtab)
    if static_shared:
        shstrtab += f".nv.shared.{kernel_name}".encode() + b"\0"
    reserved_name = len(shstrtab)
    if reserved_shared:
        shstrtab += b".nv.shared.reserved.0\0"
    contents[1] = bytes(shstrtab)
    count = len(contents) + 1
    blob = bytearray(64)
    offsets = {}
    for index in range(1, count):
        while len(blob) % aligns[index]:
            blob += b"\0"
        offsets[index] = len(blob)
        blob += contents[index]
    while len(blob) % 8:
        blob += b"\0"
    shoff = len(blob)
    headers = [bytes(64)]

    def sh(i, sh_type, flags, link=0, info=0, entsize=0):
        return struct.pack("<IIQQQQIIQQ", name_offsets[i], sh_type, flags, 0, offsets[i],
                           len(contents[i]), link, info, aligns[i], entsize)

    headers.append(sh(1, SHT_STRTAB, 0))
    headers.append(sh(2, SHT_STRTAB, 0))
    headers.append(sh(3, SHT_SYMTAB, 0, link=2, info=SYM_KERNEL, entsize=24))
    headers.append(sh(4, SHT_NVINFO, 0, link=SEC_SYMTAB))
    headers.append(sh(5, SHT_NVINFO, SHF_INFO_LINK, link=SEC_SYMTAB, info=SEC_TEXT))
    headers.append(sh(6, SHT_PROGBITS, SHF_ALLOC | SHF_INFO_LINK, info=SEC_TEXT))
    text_info = (registers << 24 | SYM_KERNEL) if facts.registers_in_text_info else SYM_KERNEL
    headers.append(sh(7, SHT_PROGBITS, SHF_ALLOC | SHF_EXEC, link=SEC_SYMTAB, info=text_info))
    for offset, (name, sh_type, flags, _) in enumerate(extra):
        link = info = 0
        if name == ".note.nv.cuinfo":
            link = 8        # cuinfo links to tkinfo, as ptxas's does, and (sm_90) its info is .nv.compat
            if facts.compat_section:
                flags |= SHF_INFO_LINK
                info = 8 + [e[0] for e in extra].index(".nv.compat")
        headers.append(sh(8 + offset, sh_type, flags, link=link, info=info))
    if static_shared:
        # NOBITS: no bytes in the file, sh_size the kernel's static shared memory (ptxas: flags
        # WRITE | ALLOC | INFO_LINK, info = the kernel's .text, aligned 1024 on sm_90)
        headers.append(struct.pack("<IIQQQQIIQQ", shared_name, SHT_NOBITS, SHF_WRITE | SHF_ALLOC | SHF_INFO_LINK, 0,
                                   shoff, static_shared, 0, SEC_TEXT, 1024, 0))
    if reserved_shared:
        assert len(headers) == reserved_section, (len(headers), reserved_section)
        headers.append(struct.pack("<IIQQQQIIQQ", reserved_name, SHT_NOBITS, SHF_WRITE | SHF_ALLOC, 0,
                                   shoff, 0, 0, 0, 1, 0))
    blob += b"".join(headers)
    phoff = len(blob)
    # PT_PHDR, PT_LOAD (constant0 .. end of text), and a PT_LOAD over the program headers, as ptxas
    # writes (without it readelf says "the PHDR segment is not covered by a LOAD segment"); the
    # headers' segments are R E on sm_86 and R on sm_90, as ptxas's (CubinFacts.header_segment_flags)
    load_start = offsets[6]
    load_size = offsets[7] + len(text) - load_start
    n = 3
    flags = facts.header_segment_flags
    phdrs = [struct.pack("<IIQQQQQQ", PT_PHDR, flags, phoff, 0, 0, n * 56, n * 56, 8),
             struct.pack("<IIQQQQQQ", PT_LOAD, PF_R | PF_X, load_start, 0, 0, load_size, load_size, 8),
             struct.pack("<IIQQQQQQ", PT_LOAD, flags, phoff, 0, 0, n * 56, n * 56, 8)]
    blob += b"".join(phdrs)
    ident = b"\x7fELF" + bytes([2, 1, 1, ELF_ABI, ELF_ABI_VERSION]) + bytes(7)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, EM_CUDA, 1, 0, phoff, shoff, target.elf_flags,
                                 64, 56, len(phdrs), 64, len(headers), 1)
    blob[:64] = header
    return bytes(blob)


def exit_offsets(assembled) -> list[int]:
    return [i.address for i in assembled.instructions
            if i.text.split()[-1:] == ["EXIT"] or i.text.strip().endswith(" EXIT") or i.text.strip() == "EXIT"]
