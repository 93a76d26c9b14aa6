"""A minimal cubin (ELF) around one assembled kernel, for loading through the CUDA driver in tests.

The native host never needs this (it places the raw stream itself); tests use
it to run our code with cupy.RawModule before the host exists.  Layout follows
what ptxas 13 writes (sass-facts.md "Cubin"): .text.<k> (sh_info bits 24..31 =
registers on sm_86), .nv.info (REGCOUNT, FRAME_SIZE, MIN_STACK_SIZE),
.nv.info.<k> (CUDA_API_VERSION, PARAM_CBANK, CBANK_PARAM_SIZE, KPARAM_INFO per
8-byte word, MAXREG_COUNT, NUM_BARRIERS when the code has a BAR, EXIT_INSTR_OFFSETS,
MAX_THREADS), .nv.constant0.<k>
(parameter base + parameter bytes), a symbol table, two program headers, and
- .note.nv.tkinfo and .note.nv.cuinfo: the driver answers CUDA_ERROR_INVALID_IMAGE
  without either (H200, driver 580: found by dropping sections from a ptxas cubin
  one at a time; program headers, .nv.callgraph, .debug_frame, .nv.compat and
  .nv.shared.reserved.0 could all go);
- .nv.compat on sm_90: nvdisasm refuses an sm_90 cubin without it.
Verified: tests/gpu/test_kernels.py runs kernels from these cubins on the H200.
"""
from __future__ import annotations

import struct

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
EIATTR_NUM_BARRIERS = 0x4C
# the blocks of a thread-block cluster the kernel is launched in (x, y, z), as ptxas 13 writes
# PTX's .reqnctapercluster (tools/ptx_corpus/sm90_cluster.ptx's cubin; CUDA's __cluster_dims__)
EIATTR_CTA_PER_CLUSTER = 0x3D
FMT_BVAL, FMT_HVAL, FMT_SVAL = 2, 3, 4
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
# .note.nv.cuinfo, as ptxas 13 writes it: "NVIDIA Corp" note type 1000, (2, 0x56, CUDA API 0x87).
CUINFO_NOTE = bytes.fromhex("0c00000008000000e80300004e564944494120436f7270000200560087000000")
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
    """The named barriers the code uses (ptxas's NUM_BARRIERS): the highest barrier number
    of its BAR instructions + 1, all 16 when one names its barrier by register, 0 without BAR."""
    import re
    count = 0
    for inst in assembled.instructions:
        m = re.match(r"(?:@!?U?P\w+\s+)?BAR(?:\.[\w.]+)?\s+([^,\s;]+)", inst.text)
        if m:
            operand = m.group(1)
            count = max(count, int(operand, 16) + 1 if operand.startswith("0x") else ALL_BARRIERS)
    return count


def code_barrier_count(code: bytes, arch: str) -> int:
    """barrier_count of encoded code (a region's machine code, whose text is gone): the highest
    barrier number of its BAR instructions + 1, all 16 when one names its barrier by register,
    0 without BAR.  An instruction is 16 bytes whose bits 0..11 are its opcode, bits 9..11 the
    operand form (sass-facts.md); BAR's immediate-barrier forms are the learned tables' (the
    only ones the assembler encodes), their barrier number in tables.layouts' Ibar field.  A BAR
    of another form holds its barrier in a register: any of the 16."""
    from .encoder import forms_for
    from .tables.layouts import SLOTS
    immediate = {form.fixed & 0xFFF for key, form in forms_for(arch).items() if key.split()[0].split(".")[0] == "BAR"}
    if not immediate:
        raise AssertionError(f"the {arch} encoding tables have no BAR form")
    bar = {opcode & 0x1FF for opcode in immediate}
    lsb, width = SLOTS["Ibar"]["field"]
    count = 0
    for at in range(0, len(code) - len(code) % 16, 16):
        word = int.from_bytes(code[at:at + 16], "little")
        if word & 0x1FF not in bar:
            continue
        count = max(count, (word >> lsb & (1 << width) - 1) + 1 if word & 0xFFF in immediate else ALL_BARRIERS)
    return count


def stack_frame(assembled) -> int:
    """The bytes of local memory per thread the code reserves: ptxas opens a frame with
    `IADD3 R1, R1, -N, RZ` (or VIADD R1, R1, -N) right after loading the stack pointer."""
    import re
    for inst in assembled.instructions[:16]:
        m = re.fullmatch(r"(?:IADD3 R1, R1, -(0x[0-9a-f]+), RZ|VIADD R1, R1, -(0x[0-9a-f]+))", inst.text)
        if m:
            return int(m.group(1) or m.group(2), 16)
    return 0


def write_cubin(assembled, kernel_name: str, target: Target, parameter_bytes: int, block_x: int,
                style: str = "minimal", frame_size: int | None = None, registers: int | None = None,
                static_shared: int = 0, reserved_shared: bool = False,
                cluster: tuple[int, int, int] | None = None) -> bytes:
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
    that shape, as a kernel of __cluster_dims__)."""
    if frame_size is None:
        frame_size = stack_frame(assembled)
    if registers is None:
        if any(parse_instruction(i.text).opcode == "USETMAXREG" for i in assembled.instructions):
            raise BobcError(f"kernel '{kernel_name}' resizes its registers (USETMAXREG): its register count "
                            f"at entry cannot be read from the code",
                            hint="pass registers= (the .maxnreg its setmaxnreg counts were chosen for)")
        registers = assembled.registers
    most = target.limits.registers_per_thread
    if not 0 <= registers <= most:
        # REGCOUNT and the text section's flags hold 8 bits: a thread has at most `most` registers
        raise BobcError(f"kernel '{kernel_name}' would have {registers} registers, more than the {most} a "
                        f"thread may have on {target.name}", hint=f"pass registers= of at most {most}")
    full = style == "ptxas"
    text = _padded_text(assembled, target)
    base = target.parameter_base
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
    for ordinal in reversed(range(parameter_bytes // 8)):
        kinfo += _record(EIATTR_KPARAM_INFO, struct.pack("<III", 0, (8 * ordinal) << 16 | ordinal, 0x21F000))
    if full:
        kinfo += _raw_records(facts.after_parameters)
    kinfo += _hval(EIATTR_MAXREG_COUNT, 0xFF)
    barriers = barrier_count(assembled)
    if barriers:
        kinfo += struct.pack("<BBH", FMT_BVAL, EIATTR_NUM_BARRIERS, barriers)
    if full:
        kinfo += _hval(0x5F, facts.attribute_5f)
    exits = exit_offsets(assembled)
    if exits:
        kinfo += _record(EIATTR_EXIT_INSTR_OFFSETS, b"".join(struct.pack("<I", e) for e in exits))
    kinfo += _record(EIATTR_MAX_THREADS, struct.pack("<III", block_x, 1, 1))
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
             (".note.nv.cuinfo", SHT_NOTE, 0x1000000, CUINFO_NOTE)]   # (name, type, flags, bytes)
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
        link = 8 if name == ".note.nv.cuinfo" else 0     # cuinfo links to tkinfo, as ptxas's does
        headers.append(sh(8 + offset, sh_type, flags, link=link))
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
    # PT_PHDR, PT_LOAD (constant0 .. end of text), and (ptxas style) PT_LOAD over the headers
    load_start = offsets[6]
    load_size = offsets[7] + len(text) - load_start
    n = 3 if full else 2
    phdrs = [struct.pack("<IIQQQQQQ", 6, 5, phoff, 0, 0, n * 56, n * 56, 8),
             struct.pack("<IIQQQQQQ", 1, 5, load_start, 0, 0, load_size, load_size, 8)]
    if full:
        phdrs.append(struct.pack("<IIQQQQQQ", 1, 5, phoff, 0, 0, n * 56, n * 56, 8))
    blob += b"".join(phdrs)
    ident = b"\x7fELF" + bytes([2, 1, 1, ELF_ABI, ELF_ABI_VERSION]) + bytes(7)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, EM_CUDA, 1, 0, phoff, shoff, target.elf_flags,
                                 64, 56, len(phdrs), 64, len(headers), 1)
    blob[:64] = header
    return bytes(blob)


def exit_offsets(assembled) -> list[int]:
    return [i.address for i in assembled.instructions
            if i.text.split()[-1:] == ["EXIT"] or i.text.strip().endswith(" EXIT") or i.text.strip() == "EXIT"]
