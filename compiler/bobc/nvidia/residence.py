"""The program residence: the device reads a plan's program table from a copy in video memory.

A host layout may keep the program table (the kernels' code, one constant bank 0 block a launch,
the tensor maps) in system memory, where the host rewrites parameter words between submissions
(an optimizer's per-step scalars, say).  Every launch then fetches its instructions, its bank 0
and its tensor maps across PCIe when its grid starts: on the H200 about 2.2 us a launch
(bench/results/program-residence-h200.txt).
A plan that names a residence (Hardware.Nvidia.SM86.Command.
ProgramResidence: a video-memory range its arena plan certifies as a resident of its own) is
encoded so that:

- every QMD's program and prefetch addresses and its bank 0 address, and every tensor map word a
  parameter block holds, point into the residence, at the offsets they have in the program table;
- every submission starts with a stage: bobc's copy kernel (program_stage.sass) copies the whole
  program table, as the host left it, into the residence; the engine waits for it
  (WAIT_FOR_IDLE), drops its instruction, constant and data caches, and only then are the
  submission's own launches sent.  So the words the host wrote before a submission are the
  words its launches read, whichever submission a process issues first;
- the stage's QMD, parameter block and code lie in an appendix after the pushbuffer's segments
  (system memory the host loads with the pushbuffer image), so the program and QMD tables keep
  the plan's own arithmetic and the host's addresses of them stay true.

The encoder refuses a residence that is misaligned, smaller than the program table, overlaps a
buffer of the plan, or that a launch may write (its footprint, from its kernel's contract, touches
it, or is unknown).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BobcError, Span
from ..resources import doc
from . import pushbuffer as pb

STAGE_SOURCE = Path(__file__).with_name("program_stage.sass")
STAGE_IDENTITY = "bobc-program-stage"
STAGE_UNIT = 16            # bytes a thread copies (one LDG.E.128 / STG.E.128)
STAGE_BLOCK = 256          # threads a block
ALIGNMENT = 256            # the residence's base: code places, bank 0 blocks and maps keep their alignment
ADDRESS_LIMIT = 1 << 40    # QMD prefetch and dependent pointers hold address >> 8 in 32 bits


@dataclass(frozen=True)
class Residence:
    """Where the device reads the program table from: `base` (video memory), `size` bytes;
    `program_base` is the program table's own address (where the host writes)."""

    program_base: int
    base: int
    size: int
    # where the plan wrote the residence's size, and the definition's name when a definition holds
    # it (bobc.language.values.origin): a refusal of the residence is located there
    at: Span | None = field(default=None, compare=False)
    named: str | None = field(default=None, compare=False)

    def relocate(self, address: int) -> int:
        """A program-table address as the device reads it: the same offset in the residence."""
        return self.base + (address - self.program_base)


@dataclass(frozen=True)
class Stage:
    """The copy that starts every submission: its appendix bytes (at `offset` in the pushbuffer
    image) and where its QMD, bank 0 and code lie."""

    offset: int
    qmd_address: int
    parameter_address: int
    program_address: int
    grid: tuple[int, int, int]
    units: int                 # 16-byte units copied: the whole program table
    registers: int
    data: bytes

    def manifest(self) -> dict:
        return {"identity": STAGE_IDENTITY, "push_offset": self.offset, "bytes": len(self.data),
                "qmd_address": self.qmd_address, "parameter_address": self.parameter_address,
                "program_address": self.program_address, "grid": list(self.grid),
                "block": [STAGE_BLOCK, 1, 1], "units": self.units, "registers": self.registers}


def written_at(raw) -> tuple[Span | None, str | None]:
    """(where, the definition's name) of a plan value as a constructor field holds it, unforced:
    a definition's place and name, or an expression's place and None; (None, None) for a literal."""
    from ..language.values import GlobalThunk, origin

    definition = getattr(raw, "definition", None) if type(raw) is GlobalThunk else None
    return origin(raw), getattr(definition, "name", None)


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def check(plan, layout, residence: Residence, footprints) -> None:
    """Refuse a residence the launches could not read the program from (the module docstring).
    `footprints`: one bobc.certify.footprints.Footprint (or None, unknown) per launch."""
    base, size, need = residence.base, residence.size, layout.program_bytes
    named = residence.named
    where = f"the program residence at {base:#x} ({size} bytes{f', {named}' if named else ''})"
    at = residence.at
    sized = f"its size, {named}," if named else "its size"
    if base % ALIGNMENT:
        raise BobcError(f"{where} is not {ALIGNMENT}-byte aligned", at,
                        hint="give its arena resident a 256-byte alignment")
    if base + size > ADDRESS_LIMIT:
        raise BobcError(f"{where} reaches past 2^40, beyond what a QMD addresses", at)
    if size < need:
        raise BobcError(f"{where} cannot hold the {need}-byte program table of target {layout.target.name} "
                        f"(the kernels' code and one {layout.target.parameter_block_bytes}-byte bank 0 for each of "
                        f"the plan's {len(plan.launches)} launches)",
                        at, hint=f"make {sized} at least {need} bytes (or give the plan fewer launches)")
    buffers = (("program table", plan.program_base, need), ("QMD table", plan.qmd_base, layout.qmd_bytes),
               ("semaphores", plan.semaphore_base, layout.semaphore_bytes))
    for name, start, length in buffers:
        if start < base + size and base < start + length:
            raise BobcError(f"{where} overlaps the plan's {name} at [{start:#x}, {start + length:#x})", at)
    for index, footprint in enumerate(footprints if footprints is not None else [None] * len(plan.launches)):
        launch = plan.launches[index]
        name = f"launch {index} ({launch.identity})"
        if footprint is None:
            raise BobcError(f"{where}: {name} has no known footprint (its kernel has no contract, or an extent "
                            "bobc cannot evaluate), so nothing shows it leaves the residence alone",
                            hint=f"give the kernel's source its //@ contract lines ({doc('kernel-contracts.md')})")
        for start, end in footprint.writes:
            if start < base + size and base < end:
                raise BobcError(f"{where}: {name} writes [{start:#x}, {end:#x}), inside the residence",
                                hint="the residence must be an arena resident no launch is given")


def stage_kernel(target):
    """bobc's copy kernel, assembled for `target` (bobc.kernel_cache: once per source and target)."""
    from ..kernel_cache import assemble_kernel
    return assemble_kernel(STAGE_SOURCE, target, launched=False)     # sent by the pushbuffer, never started early


def build_stage(plan, layout, residence: Residence, offset: int, pushbuffer_base: int) -> Stage:
    """The stage's appendix at `offset` of the pushbuffer image (256-aligned): its QMD, then its
    bank 0 (source: the program table, destination: the residence, the units), then its code."""
    from .encode import bank_zero, grid_qmd, qmd_barriers

    target = layout.target
    if offset % ALIGNMENT:
        raise AssertionError(f"the stage's appendix at {offset:#x} is not {ALIGNMENT}-byte aligned")
    kernel = stage_kernel(target)
    code = bytes(kernel.code)
    if layout.program_bytes % STAGE_UNIT:
        raise AssertionError(f"a {layout.program_bytes}-byte program table is not whole {STAGE_UNIT}-byte units")
    units = layout.program_bytes // STAGE_UNIT
    grid = (max(1, -(-units // STAGE_BLOCK)), 1, 1)
    block = (STAGE_BLOCK, 1, 1)
    qmd_at = offset
    bank_at = _align(qmd_at + target.qmd_record_bytes, ALIGNMENT)
    code_at = _align(bank_at + target.parameter_block_bytes, ALIGNMENT)
    end = _align(code_at + len(code), ALIGNMENT)
    bank = bank_zero(target, grid, block)
    struct.pack_into("<3Q", bank, target.parameter_base, plan.program_base, residence.base, units)
    qmd = grid_qmd(target, STAGE_IDENTITY, grid, block, kernel.registers, 0, pushbuffer_base + code_at, len(code),
                   pushbuffer_base + bank_at, barriers=qmd_barriers(code, target))
    data = bytearray(end - offset)
    data[0:len(qmd)] = qmd
    data[bank_at - offset:bank_at - offset + len(bank)] = bank
    data[code_at - offset:code_at - offset + len(code)] = code
    return Stage(offset, pushbuffer_base + qmd_at, pushbuffer_base + bank_at, pushbuffer_base + code_at, grid,
                 units, kernel.registers, bytes(data))


def stage_reference(memory, launch) -> None:
    """The stage's arithmetic for a reference runner (bobc.reference.host's kernel interface:
    memory.read/write, launch.word): N 16-byte units from argument 0 to argument 1."""
    units = launch.word(2) & 0xFFFFFFFF
    memory.write(launch.word(1), memory.read(launch.word(0), STAGE_UNIT * units, "the program table"),
                 "the program residence")


def stage_methods(push: pb.Pushbuffer, qmd_address: int, compute_subchannel: int, pcas_action: int) -> None:
    """Send the stage's QMD, wait for it, and drop the caches that may hold the residence's old
    bytes; the submission's own sends follow."""
    push.inc(compute_subchannel, pb.COMPUTE["SEND_PCAS_A"], qmd_address >> 8)
    push.immd(compute_subchannel, pb.COMPUTE["SEND_SIGNALING_PCAS2_B"], pcas_action)
    push.immd(compute_subchannel, pb.COMPUTE["WAIT_FOR_IDLE"], 0)
    push.immd(compute_subchannel, pb.COMPUTE["INVALIDATE_SHADER_CACHES_NO_WFI"],
              pb.INVALIDATE_INSTRUCTION | pb.INVALIDATE_GLOBAL_DATA | pb.INVALIDATE_CONSTANT)
