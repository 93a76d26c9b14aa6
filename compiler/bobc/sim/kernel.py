"""Run one kernel in the simulator: SASS text or a code image in, NumPy buffers out.

For verifying a kernel numerically on CPU (no sm_86 GPU exists here) without
a plan around it: the caller names its buffers, the parameter block and the
launch shape; every buffer gets a GPU address of its own (pointers in the
parameter block resolve to them) and is the one resident its pointers may
address, so a stray access is reported as in a plan's launch.  The code runs
through the same decoder (nvdisasm), executor and control-code checker as
`bobc sim`.

    from bobc.sim.kernel import run_kernel, Pointer
    out = run_kernel(sass_text, "sm_86", grid=(4, 1, 1), block=(128, 1, 1),
                     params=[Pointer("x"), Pointer("y"), np.int32(n)],
                     buffers={"x": x, "y": np.zeros_like(x)}, shared_bytes=0)
    out["y"]                     # the buffer after the run (same dtype and shape)

docs/simulator.md ("One kernel") describes the parameter layout.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UsageError
from ..nvidia.encode import bank_zero, clusters_of
from ..plan.model import cluster_tiles
from ..targets import TARGETS, Target
from . import sass_frontend
from .arch import sim_arch
from .executor import MAX_STEPS, Launch, LaunchGeometry
from .faults import Hazard, SimulationFault
from .memory import Buffer, Memory, Resident

# Where the buffers live: each in its own 1 MiB-aligned slot with at least 64 KiB
# unmapped after it, so an access one row past a buffer hits no mapped byte; the
# base is above 4 GiB so a pointer truncated to 32 bits shows.
BUFFER_BASE = 0x7F00_0000_0000
BUFFER_ALIGN = 1 << 20
BUFFER_GAP = 1 << 16
MAX_REGISTERS = 255
# Constant bank 0 words ptxas's code reads besides the parameters (ntid, nctaid, the memory
# windows, a cluster's words) are bobc.nvidia.encode.bank_zero's, as a bobc-built launch has them;
# the local-memory stack pointer's start (ptxas: LDC R1, c[0x0][0x28]; the frame grows down) is set here.
LOCAL_STACK = 0x28
# A 64-bit value that stands for the global memory descriptor (its bits are opaque to code).
DESCRIPTOR_WORD = 0x0000_00FF_0000_0000 | 0x1


@dataclass(frozen=True)
class Pointer:
    """A 64-bit parameter: the GPU address of buffer `buffer`, plus `offset` bytes."""
    buffer: str
    offset: int = 0


def _target(target) -> Target:
    if isinstance(target, Target):
        return target
    if target not in TARGETS:
        raise UsageError(f"unknown target {target!r}; known: {', '.join(sorted(TARGETS))}")
    return TARGETS[target]


def buffer_addresses(buffers: dict[str, np.ndarray]) -> dict[str, int]:
    """The GPU address each buffer gets (in the dict's order): deterministic, so a caller that
    writes a raw parameter block can compute its pointers."""
    out, address = {}, BUFFER_BASE
    for name, array in buffers.items():
        out[name] = address
        size = max(np.asarray(array).nbytes, 1)
        address += -(-(size + BUFFER_GAP) // BUFFER_ALIGN) * BUFFER_ALIGN
    return out


def parameter_block(params, addresses: dict[str, int]) -> bytes:
    """The parameter bytes: each item at its natural alignment (CUDA's ABI), in order.
    Pointer or a buffer name: 8 bytes; np.int32/np.uint32/np.float32/np.float16 (padded to 4):
    4 bytes; np.int64/np.uint64/np.float64: 8 bytes; bytes: as given (aligned to 4)."""
    if isinstance(params, (bytes, bytearray)):
        return bytes(params)
    out = bytearray()

    def put(data: bytes, align: int):
        out.extend(bytes(-len(out) % align))
        out.extend(data)

    for k, item in enumerate(params):
        if isinstance(item, str):
            item = Pointer(item)
        if isinstance(item, Pointer):
            if item.buffer not in addresses:
                raise UsageError(f"parameter {k} points at buffer {item.buffer!r}, which is not among the "
                                 f"buffers ({', '.join(addresses) or 'none'})")
            put(struct.pack("<Q", addresses[item.buffer] + item.offset), 8)
        elif isinstance(item, (np.int32, np.uint32, np.float32)):
            put(np.asarray(item).tobytes(), 4)
        elif isinstance(item, np.float16):
            put(np.asarray(item).tobytes() + bytes(2), 4)
        elif isinstance(item, (np.int64, np.uint64, np.float64)):
            put(np.asarray(item).tobytes(), 8)
        elif isinstance(item, (bytes, bytearray)):
            put(bytes(item), 4)
        else:
            raise UsageError(f"parameter {k} is a {type(item).__name__}; give a Pointer (or a buffer name), a "
                             "NumPy scalar of a stated width (np.int32, np.uint32, np.float32, np.int64, "
                             "np.uint64, np.float64) or bytes")
    return bytes(out)


@dataclass(frozen=True)
class CodeImage:
    code: bytes
    registers: int
    shared_bytes: int     # static shared memory the image declares
    name: str | None = None       # the kernel's name (a source's `.kernel`, a cubin's symbol)
    spans: tuple = ()             # (address, Span) of each instruction of a source, for a fault's place
    source: bool = False          # SASS source: shared_bytes is its `.shared`, all a block needs
    # where in constant bank 0 the code reads its parameters, as the image says (a cubin's
    # EIATTR_PARAM_CBANK, a listing's printed one); None: the rule for the block given (parameter_base)
    parameter_base: int | None = None
    # constant bank 2, a cubin's `.nv.constant2.<kernel>`: the literals ptxas's code reads as c[0x2][..] (sm_86's
    # cvt.rni.f64.f64 compares with 2^52 there); empty for SASS source and raw words
    bank2: bytes = b""


def _directives(text: str, source_name: str, assembled, target: Target) -> tuple[str | None, int]:
    """A SASS source's `.kernel`, `.registers` and `.shared` lines, honoured as bobc.sass.assemble_kernel
    honours them in a plan, for the run's `target` (a `.shared` past what a block of it may use is
    refused, as a plan's build for it refuses it): (the kernel's name, its shared memory per block);
    a kernel needing more registers than its `.registers` budget is refused with the assembler's
    message.  A listing (nvdisasm's `.section` lines) has none of them."""
    from ..sass.assembler import check_register_budget, is_listing, source_directives
    from ..sass.syntax import parse_source

    lines = parse_source(text, source_name)
    if is_listing(lines):
        return None, 0
    found = source_directives(lines, target)
    if found.registers is not None:
        check_register_budget(assembled, found.registers, found.name or source_name, source_name)
    return found.name, found.shared or 0


def cubin_kernel(cubin: bytes, kernel_name: str | None) -> CodeImage:
    """The code of one kernel of a cubin (ELF): its `.text.<name>` section; registers from the
    EIATTR_REGCOUNT (0x2f) attribute of `.nv.info` for the kernel's symbol (sh_info bits 23:0; ptxas
    also writes the count in bits 31:24)
    and static shared memory from the size of `.nv.shared.<name>` (NVIDIA's cubin conventions, as
    cuobjdump -elf prints them)."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise UsageError("the code image is not a 64-bit ELF cubin")
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]

    def name_of(h):
        start = strtab[4] + h[0]
        return cubin[start:cubin.index(b"\0", start)].decode()

    sections = {name_of(h): h for h in headers}
    texts = sorted(n[len(".text."):] for n in sections if n.startswith(".text."))
    if kernel_name is None:
        if len(texts) != 1:
            raise UsageError(f"the cubin holds {len(texts)} kernels ({', '.join(texts)}); name one (kernel_name=)")
        kernel_name = texts[0]
    if kernel_name not in texts:
        raise UsageError(f"the cubin has no kernel {kernel_name!r}; it has {', '.join(texts) or 'none'}")
    h = sections[".text." + kernel_name]
    code = cubin[h[4]:h[4] + h[5]]
    shared = sections.get(".nv.shared." + kernel_name)
    registers = _regcount(cubin, sections.get(".nv.info"), h[7] & 0xFFFFFF) or (h[7] >> 24) or None
    if registers is None:
        raise UsageError(f"the cubin gives no register count (EIATTR_REGCOUNT) for {kernel_name}; pass registers=")
    literals = sections.get(".nv.constant2." + kernel_name)
    return CodeImage(sass_frontend.code_at(code, 0, len(code)), registers, shared[5] if shared else 0, kernel_name,
                     parameter_base=_param_cbank(cubin, sections.get(".nv.info." + kernel_name)),
                     bank2=cubin[literals[4]:literals[4] + literals[5]] if literals else b"")


EIATTR_REGCOUNT = 0x2F
# (u32 symbol of .nv.constant0.<k>, u32 the block's size << 16 | its offset in bank 0), as ptxas
# writes it (bobc.sass.cubin EIATTR_PARAM_CBANK): the driver places the parameters there
EIATTR_PARAM_CBANK = 0x0A
EIFMT_SVAL, EIFMT_HVAL, EIFMT_BVAL, EIFMT_NVAL = 0x04, 0x03, 0x02, 0x01


def _info_records(cubin: bytes, info):
    """(attribute, payload) of every EIFMT_SVAL record of an .nv.info section (`info`: its section
    header's fields); the other formats carry no payload the simulator reads."""
    if info is None:
        return
    data = cubin[info[4]:info[4] + info[5]]
    at = 0
    while at + 4 <= len(data):
        fmt, attribute = data[at], data[at + 1]
        if fmt == EIFMT_SVAL:
            size, = struct.unpack_from("<H", data, at + 2)
            yield attribute, data[at + 4:at + 4 + size]
            at += 4 + size
        else:
            at += 4


def _param_cbank(cubin: bytes, info) -> int | None:
    """The bank-0 offset of the kernel's parameter block, from its .nv.info.<k> PARAM_CBANK record
    (None without one)."""
    for attribute, payload in _info_records(cubin, info):
        if attribute == EIATTR_PARAM_CBANK and len(payload) == 8:
            return struct.unpack_from("<I", payload, 4)[0] & 0xFFFF
    return None


def _listing_parameter_base(text: str, source_name: str, kernel_name: str | None) -> int | None:
    """A listing's PARAM_CBANK offset for its kernel (`kernel_name`, or its one kernel), as nvdisasm
    prints the record; None for a kernel source or a listing without one."""
    from ..sass.assembler import is_listing, split_listing
    from ..sass.listing_info import listing_info
    from ..sass.syntax import parse_source

    lines = parse_source(text, source_name)
    if not is_listing(lines):
        return None
    kernels = list(split_listing(lines))
    name = kernel_name if kernel_name is not None else (kernels[0] if len(kernels) == 1 else None)
    return None if name is None else listing_info(lines, name).parameter_base


def parameter_base(image: CodeImage, target: Target, parameter_bytes: int) -> int:
    """Where a launch of `image` with `parameter_bytes` of parameters places them in constant bank 0:
    where the image's code reads them (its PARAM_CBANK: ptxas -arch=sm_86 keeps a block of more than
    4352 bytes at 0x1a80, not at Target.parameter_base), else bobc.sass.cubin.cubin_parameter_base's
    rule for a block of that size (the cubin `bobc asm --cubin` writes for the code)."""
    from ..sass.cubin import cubin_parameter_base

    if image.parameter_base is not None:
        return image.parameter_base
    return cubin_parameter_base(target, parameter_bytes)


def _regcount(cubin: bytes, info, symbol: int) -> int | None:
    for attribute, payload in _info_records(cubin, info):
        if attribute == EIATTR_REGCOUNT and len(payload) == 8:
            index, count = struct.unpack_from("<II", payload)
            if index == symbol:
                return count
    return None


def code_image(kernel, target: Target, kernel_name: str | None) -> CodeImage:
    """SASS text (assembled by bobc.sass for `target`), a cubin, or raw instruction words."""
    source_name = kernel_name or "<kernel>"
    if isinstance(kernel, Path):
        if kernel.suffix == ".sass":
            # the assembler's bounded reader (bobc.sass.source): a FIFO, a device or a source past
            # 4 MiB is refused by name, unread, with `bobc asm`'s message
            from ..sass.source import read_source

            source_name = str(kernel)
            kernel = read_source(kernel)
        else:
            from ..nvidia.decode import read_bounded

            path, kernel = kernel, read_bounded(kernel)      # a cubin or raw words: any file bobc reads, 1 GiB at most
            if kernel[:4] != b"\x7fELF" and kernel and b"\0" not in kernel[:4096] and _is_text(kernel[:4096]):
                # instruction words hold NULs (RZ's fields, zero offsets); text has none: a listing or source
                # run as words would only be nvdisasm's "Illegal instruction" at address 0
                raise UsageError(f"{path} is text, not a cubin or instruction words: a SASS source or an nvdisasm "
                                 f"listing is run from a Path ending .sass, or from its text (Path.read_text())")
    if isinstance(kernel, str):
        from ..sass.assembler import assemble
        listed = _listing_kernel(kernel, source_name, kernel_name, target)
        if listed is not None:
            return listed
        assembled = assemble(kernel, target, source_name=source_name)
        if not assembled.instructions:
            # the assembler's own refusal (bobc asm, a plan's kernel), not nvdisasm's of no code at all
            from ..errors import BobcError, Span
            raise BobcError(f"{Path(source_name).name} holds no instructions: a kernel is at least its EXIT",
                            Span(source_name, 1, 1), hint="write the kernel's instructions, ending with EXIT")
        name, shared = _directives(kernel, source_name, assembled, target)
        return CodeImage(assembled.code, assembled.registers, shared, name,
                         tuple((i.address, i.span) for i in assembled.instructions if i.span is not None), True,
                         parameter_base=_listing_parameter_base(kernel, source_name, kernel_name))
    kernel = bytes(kernel)
    if kernel[:4] == b"\x7fELF":
        return cubin_kernel(kernel, kernel_name)
    if not kernel:
        raise UsageError("the code image holds no instructions: a kernel is at least its EXIT")
    if len(kernel) % sass_frontend.INSTRUCTION_BYTES:
        raise UsageError(f"a code image is a whole number of 16-byte instructions; this one is {len(kernel)} bytes")
    return CodeImage(sass_frontend.code_at(kernel, 0, len(kernel)), MAX_REGISTERS, 0)


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as cut:
        return cut.start >= len(data) - 3          # a character cut at the 4096-byte boundary
    return True


def _listing_kernel(text: str, source_name: str, kernel_name: str | None, target: Target) -> CodeImage | None:
    """The kernel `kernel_name` of an nvdisasm listing (its one kernel when it holds one), assembled as
    printed, with the static shared memory its `.nv.shared.<kernel>` section declares (as a cubin's
    run takes it: the launch's shared_bytes are added, as dynamic shared memory); None for a kernel
    source.  A name the listing lacks, or none given for a listing of several, is refused naming its
    kernels (bobc asm --kernel's and a plan's refusal): the whole listing is no one kernel's code."""
    from ..errors import BobcError, Span
    from ..sass.assembler import assemble_listing, is_listing, split_listing
    from ..sass.syntax import parse_source

    lines = parse_source(text, source_name)
    if not is_listing(lines):
        return None
    names = list(split_listing(lines))
    name = kernel_name if kernel_name is not None else (names[0] if len(names) == 1 else None)
    if name not in names:
        raise BobcError(f"the listing holds {len(names)} kernels ({', '.join(names) or 'none'}); "
                        f"{'kernel ' + repr(kernel_name) + ' is not one of them' if kernel_name else 'name one'}",
                        Span(source_name, 1, 1), hint="run_kernel(kernel_name=NAME) picks one")
    assembled = assemble_listing(text, target, source_name)[name]
    return CodeImage(assembled.code, assembled.registers, assembled.shared_bytes or 0, name,
                     tuple((i.address, i.span) for i in assembled.instructions if i.span is not None), False,
                     parameter_base=_listing_parameter_base(text, source_name, name))


def _triple(value, what: str) -> tuple[int, int, int]:
    v = tuple(int(x) for x in (value if isinstance(value, (tuple, list)) else (value,)))
    v = v + (1,) * (3 - len(v))
    if len(v) != 3 or min(v) < 1:
        raise UsageError(f"{what} must be 1 to 3 positive extents, not {value!r}")
    return v


def run_kernel(kernel, target, grid, block, params, buffers: dict[str, np.ndarray] | None = None,
               shared_bytes: int = 0, *, kernel_name: str | None = None, registers: int | None = None,
               local_bytes: int = 4096, check_hazards: bool = True,
               cluster=(1, 1, 1), max_steps: int = MAX_STEPS, contract: bool = False) -> dict[str, np.ndarray]:
    """Run one launch of `kernel` and return every buffer after it (copies, same dtype and shape).

    kernel: SASS source text (str, or a Path ending .sass; assembled by bobc.sass for `target`, its
        `.kernel`, `.registers` and `.shared` lines honoured as in a plan: the name faults give, a
        register budget the code must fit, the shared memory a block gets at least), a cubin (bytes or
        Path; `kernel_name` picks the kernel when it holds several) or raw instruction words (bytes).
    target: "sm_86" / "sm_90" (or a bobc.targets.Target).
    grid, block: (x, y, z) (or fewer extents, the rest 1).
    params: a list of Pointer / buffer name (8-byte pointer), NumPy scalars (np.int32, np.uint32,
        np.float32: 4 bytes; np.int64, np.uint64, np.float64: 8 bytes, 8-aligned) and bytes, laid out
        at natural alignment; or the whole parameter block as bytes (see buffer_addresses()).  They
        are placed where the code reads them (parameter_base: a cubin's or listing's PARAM_CBANK,
        else 0x1a80 for a block of more than 4352 bytes on sm_86, as ptxas places it).
    buffers: name -> array; each is copied to its own GPU address (buffer_addresses()).
    shared_bytes: shared memory per block, static + dynamic (a cubin's static size is added; a source's
        `.shared N` makes it at least N).
    registers: per-thread register count (default: the assembler's / cubin's count; 255 for raw words).
    local_bytes: local memory per thread (LDL/STL; the stack pointer c[0x0][0x28] starts at its end).
    cluster: blocks a thread-block cluster, (x, y, z) dividing the grid, on a target that has clusters
        (bank 0 then says so as the CUDA driver's does: bobc.nvidia.encode.ClusterLaunch); elsewhere
        the blocks run alone, as a bobc-built launch's do.
    max_steps: the instructions the launch may issue (one per step of the grid, docs/simulator.md
        "Step limit") before it is stopped as a kernel that probably never ends.
    contract: hold the launch to the SASS source's contract lines (docs/kernel-contracts.md) as a
        plan's launch is held: its `//@ block`, the words the code reads against those declared,
        every global access inside the footprint its pointers' extents give on these parameters
        (each buffer a resident), and each `//@ copy` made exactly.  Refused (UsageError) for a cubin
        or code words, which carry no contract.
    A fault (bobc.sim.faults.SimulationFault) names the launch, instruction, address and first
    faulting thread; for SASS source its .span is the instruction's line.
    """
    t = _target(target)
    buffers = dict(buffers or {})
    image = code_image(kernel, t, kernel_name)
    addresses = buffer_addresses(buffers)
    parameters = parameter_block(params, addresses)
    # where the code reads them: a cubin's or listing's PARAM_CBANK, else the rule for this block's size
    # (sm_86: 0x1a80 past 4352 bytes).  A plan's launch is not run here: its QMD places bank 0 itself
    # (bobc.sim.invocation)
    base = parameter_base(image, t, len(parameters))
    if base + len(parameters) > 0x10000:
        raise UsageError(f"the parameter block is {len(parameters)} bytes; constant bank 0 ends at 64 KiB")
    grid, block = _triple(grid, "grid"), _triple(block, "block")
    if block[0] * block[1] * block[2] > 1024:
        raise UsageError(f"a block of {block} is more than 1024 threads")

    cluster = _triple(cluster, "cluster")
    if not cluster_tiles(grid, cluster):
        raise UsageError(f"clusters of {cluster} blocks do not tile the grid {grid}")
    if clusters_of(t, cluster) is None:
        cluster = (1, 1, 1)
    bank0 = bytearray(max(t.parameter_block_bytes, base + len(parameters)))
    bank0[:t.parameter_block_bytes] = bank_zero(t, grid, block, cluster)     # ntid, nctaid, windows, cluster
    struct.pack_into("<Q", bank0, sim_arch(t.nvdisasm_arch).memory_descriptor, DESCRIPTOR_WORD)
    struct.pack_into("<I", bank0, LOCAL_STACK, local_bytes)
    bank0[base:base + len(parameters)] = parameters

    memory_buffers, residents = [], []
    for name, array in buffers.items():
        raw = np.ascontiguousarray(array).view(np.uint8).reshape(-1).copy()
        memory_buffers.append(Buffer(name, addresses[name], raw))
        residents.append(Resident(name, addresses[name], raw.size))
    memory = Memory(memory_buffers, [r for r in residents if r.size])
    held = _held_to_contract(kernel, t, kernel_name, image, block, base, bytes(bank0), residents, len(parameters)) \
        if contract else None

    count = registers if registers is not None else image.registers
    if image.source:
        shared = max(shared_bytes, image.shared_bytes)       # a source's `.shared`: what a block needs
    else:
        shared = shared_bytes + image.shared_bytes           # a cubin's static shared memory, plus dynamic
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise UsageError(f"max_steps must be a positive number of instructions, not {max_steps!r}")
    geometry = LaunchGeometry(f"kernel {kernel_name or image.name or ''}".strip(), grid, block, count, bytes(bank0),
                              t.nvdisasm_arch, shared_bytes=shared,
                              local_bytes=local_bytes, cluster=cluster,
                              parameters=(base, len(parameters)), bank2=image.bank2)
    instructions = sass_frontend.decode(image.code, t.nvdisasm_arch)
    copies = []
    try:
        if held is not None:
            from .contracts import begin_copies
            memory.footprint, memory.tensor_maps = held.held_to(geometry.name, 0, bytes(bank0))
            copies = begin_copies(memory, held.copies(geometry.name, 0, bytes(bank0)), geometry.name)
        Launch(geometry, instructions, memory, check_hazards, max_steps).run()
        if held is not None:
            from .contracts import end_copies
            end_copies(memory, copies, geometry.name)
    except SimulationFault as fault:
        if fault.span is None and fault.pc is not None:
            spans = dict(image.spans)
            fault.span = spans.get(fault.pc)
            # the other instructions a hazard names (its producer or earlier reader), placed as `bobc sim` places them
            others = [f"{place:#06x} is {spans[place]}" for place in fault.places
                      if place in spans and isinstance(fault, Hazard)]
            if others:
                fault.extend(f" ({'; '.join(others)})")
        raise

    out = {}
    for buffer, (name, array) in zip(memory_buffers, buffers.items()):
        a = np.asarray(array)
        out[name] = buffer.data.view(a.dtype).reshape(a.shape).copy()
    return out


def _held_to_contract(kernel, target: Target, kernel_name, image, block, base: int, bank0: bytes, residents,
                      parameter_bytes: int):
    """The contract a run_kernel launch with contract=True is held to (a bobc.sim.contracts.LaunchContracts
    of this one kernel, at QMD address 0), after refusing what the launch's words and block alone decide:
    a block other than `//@ block`'s, words breaking a `//@ require` line (a shape the code does not
    serve: the certifier's words, at the contract line), and code reading words the contract does not
    declare (or declares unused), or never reading a declared pointer -- rule 1, at the instruction's line."""
    from types import SimpleNamespace

    from ..certify.kernels import ContractError, _contract_of, check_code_reads, code_reads
    from ..certify.pointers import ByAddress
    from ..errors import BobcError, Span
    from .contracts import LaunchContracts

    if not (isinstance(kernel, str) or isinstance(kernel, Path) and kernel.suffix == ".sass"):
        raise UsageError("contract=True holds the launch to a SASS source's contract lines (//@ ...); a cubin or "
                         "code words carry none: pass the kernel's .sass source")
    if isinstance(kernel, Path):
        from ..sass.source import read_source
        path, text = kernel, read_source(kernel)
    else:
        path, text = Path(kernel_name or "<kernel>"), kernel
    identity = image.name or path.name
    try:
        contract = _contract_of(path, identity, text)
    except ContractError as problem:
        raise BobcError(*problem.placed()) from None
    if contract.block is not None and tuple(contract.block) != tuple(block):
        line = next((n for n, written in enumerate(text.splitlines(), start=1)
                     if written.lstrip().startswith("//@") and written.lstrip()[3:].split()[:1] == ["block"]), 1)
        declared = " ".join(str(v) for v in contract.block)
        raise BobcError(f"kernel {identity}: the launch's block {tuple(block)} is not the one its contract declares "
                        f"(//@ block {declared}): its code indexes its threads for that block",
                        Span(str(path), line, 1),
                        hint=f"launch it with block={tuple(contract.block)}, or change the `//@ block` line with the code")
    _held_to_requirements(contract, identity, path, text, bank0[base:base + parameter_bytes])
    reads, problems = code_reads(path, image.code, base, target, text=text)
    if problems:
        raise BobcError(f"kernel {identity}: its parameter reads cannot be read off its code: {problems[0]}")
    findings = check_code_reads(contract, tuple(reads))
    if findings:
        first = findings[0]
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        raise BobcError(first.message + more, first.at, hint=first.hint or
                        "declare every parameter word the code reads (//@ param), and read every pointer declared")
    return LaunchContracts({identity: contract}, {0: identity}, SimpleNamespace(parameter_base=base),
                           residents=ByAddress(residents))


def _held_to_requirements(contract, identity: str, path: Path, text: str, parameters: bytes) -> None:
    """Refuse a launch whose parameter words break one of the contract's `//@ require` lines (the
    shapes its code serves), in the certifier's words (bobc.certify.pointers.requirement_refusal), at
    the line's expression; a requirement naming a word past the parameter block is refused by name."""
    from ..certify.pointers import requirement_refusal, requirement_source
    from ..errors import BobcError, Span

    padded = parameters + bytes(-len(parameters) % 8)
    words = {i: struct.unpack_from("<Q", padded, 8 * i)[0] for i in range(len(padded) // 8)}
    lines = text.splitlines()
    for required in contract.requirements:
        written = lines[required.line - 1] if 0 < required.line <= len(lines) else ""
        at = Span(str(path), required.line, written.find(required.expression) + 1 if required.expression in written
                  else 1)
        met, value, problem = required.check(words)
        if met is None:
            raise BobcError(f"kernel {identity}: {problem} ({requirement_source(contract, required)})", at,
                            hint="pass every parameter word the kernel's contract declares")
        if not met:
            message, hint = requirement_refusal(f"kernel {identity}", identity, contract, required, value)
            raise BobcError(message, at, hint=hint)


__all__ = ["run_kernel", "Pointer", "buffer_addresses", "parameter_block", "cubin_kernel", "SimulationFault"]
