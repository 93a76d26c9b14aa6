"""The arena certifier: a Plan is admitted only when its memory and schedule add up.

`findings(plan, target, needs=None)` lists every fault; `certify(...)`
raises CertificationError with all of them (never just the first), so one
run tells the plan's author everything that is wrong.  One exception: a plan declaring a
device the target cannot run (device.py) has its launches' arguments read at that device's
parameter base, so every argument would be "not patched" and the images could not be laid out;
those faults follow from the declaration and are folded into one line after it ("and N launch
faults that follow from it, not listed").

What is checked (one module per check):
- the device (device.py): the plan's declared architecture and compute class name a
  target, and the build's target can run plans written for it;
- residents (residents.py): non-empty, aligned as declared, each inside one window,
  pairwise disjoint (windows too);
- kernel contracts (kernels.py): each region's source declares its parameter
  words; the words its code reads are declared ones;
- pointers (pointers.py, with the contracts): see `check_pointers` for the rule;
- host buffers (program, QMD table, pushbuffer, semaphores, and any others
  the plan maps) pairwise disjoint in the GPU address space, the command
  buffers at the images' bases, each window inside a mapped buffer and clear
  of the command buffers (buffers.py);
- registers (registers.py): each region's declaration fits the hardware (<= 255, a block's
  registers within the 64K register file) and covers what the assembled
  kernel needs (`needs`: region identity -> registers, in ptxas's
  convention: highest GPR index + 1 + the 2 that sm_70+ reserves);
- limits (limits.py): what the runtime and the generated C can hold (docs/limits.md);
- schedule (schedule.py): submissions reference existing launches, every launch is
  submitted, launches are first submitted in plan order, semaphores are not
  shared between submissions;
- host steps (host_steps.py): every host address a file or memory step of the host's
  schedule touches lies in one buffer the plan maps, and none writes the machine's own buffers
  (program, QMDs, pushbuffer, semaphores, GPFIFO); each Reissue issues the ring image's entry of
  the submission it waits for (the images encoded for the target); a checkpoint the schedule writes is
  published, and never before its first Operation (where a predict request ends); every payload
  byte of a publication is written from the host byte a resume reads it into (not checked for a
  restore staged through one host area: docs/host-steps.md).
- a native physical program's mapped ranges (native_mapped.py, called by bobc.native.writer and
  `bobc run --reference`, not by `findings`: the program is no Plan): each lies whole in a buffer
  one of the program's Maps maps in the process.
- a request program's schedule (request_schedule.py, called by bobc.native.writer, not by
  `findings`): a plan host lowered to one native program (nvidiaPlanHostRequestCommands) is held to
  the host-step rules about its schedule's meaning (no write after a Close, each publication the
  contract's payload, the restore covering it, the updates, the predict/train split, a save from
  where an unstaged restore reads).

Not a check: footprints.py gives each launch's byte ranges (its active pointers'
extents, by the pointer check's own reading of the contracts), from which launches
that touch disjoint bytes can be run at the same time.
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path
from typing import Mapping

from ..errors import shown_path, shown_plan_text
from ..plan.model import Plan, place
from ..targets import Target
from .buffers import check_host_buffers, host_buffer_extents
from .device import check_declared_device
from .host_steps import check_host_steps
from .findings import FOLLOWING, CertificationError, Finding
from .limits import check_limits
from .pointers import check_pointers
from .registers import check_registers
from .residents import check_residents
from .schedule import check_schedule

__all__ = ["CertificationError", "Finding", "certified_contracts", "certify", "findings", "host_buffer_extents"]


def kernel_contracts(plan: Plan, target: Target, folders=(), encoded_from=None,
                     assembled=None, needs_out: dict | None = None) -> tuple[dict, list[Finding]]:
    """Each region's contract (its source for `target`: `<identity>.<target>.sass` or
    `<identity>.sass` in `folders`, then specs/, bobc.kernel_search), and the findings of
    parsing them and of checking their code's reads: the reads of the source assembled for
    `target` (its encoded constant-bank operands).  A per-target variant is certified on its
    own: its contract and code are the ones read for that target.  `encoded_from` (region
    identity -> the source its code was assembled from, where the build knows it) must name
    the file the search finds: a region whose code is another kernel's is refused.
    `assembled` (region identity -> the build's bobc.sass.Assembled of the source `encoded_from`
    names): the code whose reads are checked, rather than the source assembled once more.  The
    contracts returned carry those reads (KernelContract.assembled), where the code could be read.

    A build's region is certified by its bytes: its code must be exactly the code of an assembled
    kernel source the build knows.  `encoded_from` (a dict, empty where the build assembled no
    region's code) names the source of each code the build's encoder assembled (bobc.plan.
    intrinsics: looked up by the code's exact bytes); any other region (bytes appended to or
    changed in an encoding, literal bytes) has its identity's source assembled for `target` and
    its code compared with that, byte for byte: a difference is refused, at the region's code,
    saying what differs (_code_differs).  A dict given as `needs_out` receives the registers of
    each kernel so compared (region identity -> its assembly's registers, in check_registers'
    convention), which the build's `needs` lacks.  Without `encoded_from` (None: a caller holding a
    hand-built Plan, such as tests/images/synthetic_bob.py's stand-in code, and no build) the code
    is not compared: each region is held to its identity's source's contract and assembly."""
    from ..errors import BobcError
    from ..language.modules import specs_folder
    from ..kernel_search import find_source_and_base
    from .kernels import (ContractError, assembled_reads, check_code_reads, check_variant_contract,
                          check_written_before_read, parse_contract)

    contracts, out = {}, []
    launches_of = _launches_of(plan) if plan.program else {}
    for index, region in enumerate(plan.program.regions if plan.program else ()):
        named, coded = place(region, "identity"), place(region, "code")
        try:
            source, base = find_source_and_base(region.identity, [*folders, specs_folder()], target)
        except BobcError as error:
            out.append(Finding("contract", f"kernel {shown_plan_text(region.identity)}: {error.message}", named))
            continue
        if source is None:
            out.append(Finding("contract", f"kernel {shown_plan_text(region.identity)} has no source {shown_plan_text(region.identity)}.sass "
                                           f"(nor {shown_plan_text(region.identity)}.{target.name}.sass) with a contract in the "
                                           f"kernel search path", named))
            continue
        encoded = (encoded_from or {}).get(region.identity)
        if encoded is not None and Path(encoded).resolve() != source.resolve():
            out.append(Finding("contract", f"region {shown_plan_text(region.identity)}'s machine code was encoded from "
                                           f"{shown_path(encoded)}, but the kernel search finds "
                                           f"{shown_path(source)} for the identity "
                                           f"{shown_plan_text(region.identity)}, and a region is certified by its identity's "
                                           f"contract: give the region the identity of the kernel its code is "
                                           f"(its source's name), or its identity's kernel as its code",
                               place(region)))
            continue
        if encoded is None and encoded_from is not None:
            try:
                digest, registers = _identity_code(source, target)
            except BobcError as error:
                out.append(Finding("contract", f"kernel {shown_plan_text(region.identity)} ({source.name}) does not assemble for "
                                               f"{target.name}: {error.message}", coded))
                continue
            if hashlib.sha256(bytes(region.code)).hexdigest() != digest:
                out.append(_code_differs(region, source, target))
                continue
            if needs_out is not None:
                needs_out[region.identity] = registers
        try:
            contract = parse_contract(source, region.identity)
        except ContractError as error:
            out.append(_contract_line_fault(error, named))
            continue
        if not contract.arguments:
            out.append(Finding("contract", f"kernel {shown_plan_text(region.identity)} ({source.name}) declares no parameter "
                                           f"words (//@ param lines)", named))
        contracts[region.identity] = contract
        if base is not None:           # a per-target variant: its //@ param meanings are its base's
            try:
                out += check_variant_contract(contract, parse_contract(base, region.identity))
            except ContractError as error:
                out.append(_contract_line_fault(error, named))
        out += _block_findings(plan, region, contract, launches_of, index)
        out += _shared_findings(region, source, target)
        out += _listing_launch_findings(plan, region, source, target, launches_of, index)
        try:
            # the build's own assembly, only of the very source found (encoded_from says so)
            built = (assembled or {}).get(region.identity) if encoded is not None else None
            assembly: list = []
            reads, problems = assembled_reads(source, target, built, assembly)
        except BobcError as error:
            out.append(Finding("contract", f"kernel {shown_plan_text(region.identity)} ({source.name}) does not assemble for "
                                           f"{target.name}: {error.message}", coded))
            continue
        out += [Finding("contract", f"kernel {shown_plan_text(region.identity)}: {problem}", coded) for problem in problems]
        out += check_code_reads(contract, reads)
        try:
            out += check_written_before_read(region.identity, source, target,
                                             built if built is not None else next(iter(assembly), None))
        except BobcError as error:
            out.append(Finding("contract", f"kernel {shown_plan_text(region.identity)} ({source.name}) does not assemble for "
                                           f"{target.name}: {error.message}", coded))
        out += _local_memory_findings(region, source, target,
                                      built if built is not None else next(iter(assembly), None))
        if not problems:
            # the checks that read the contract's reads (the unset-scalar rule: which bytes of a
            # word the code reads) see the code's, absolute offsets (c[0x0][0x170]) among them
            contracts[region.identity] = dataclasses.replace(contract, reads=tuple(reads), assembled=True)
    return contracts, out


def _identity_code(source: Path, target: Target) -> tuple[str, int]:
    """(the SHA-256 of `source` assembled for `target` as a plan's kernel -- the code the encoder
    gives an SM86Program of it, launch prologue and all --, the registers it needs), kept in the
    user cache by the assembler's identity, the source's bytes and the target, so a warm build
    neither imports the assembler nor loads the kernel (as kernels.assembled_reads)."""
    from .. import cache
    from ..kernel_cache import _assembler_identity, assemble_kernel
    from ..sass.source import read_source_bytes

    data = read_source_bytes(source)
    key = cache.digest(_assembler_identity(), "region code", str(source), target.name, data)
    kept = cache.load("region-code", key, tuple)
    if kept is not None:
        return kept
    assembled = assemble_kernel(source, target)
    result = (hashlib.sha256(bytes(assembled.code)).hexdigest(), assembled.registers)
    # the assembler read the source again: kept only when that was still these bytes (edited in
    # between, the code is the new bytes' and no verdict of the old ones': probe s36 simwords
    # finding 7, as bobc.kernel_cache keeps an assembly)
    if read_source_bytes(source) == data:
        cache.store("region-code", key, result)
    return result


def _code_differs(region, source: Path, target: Target) -> Finding:
    """A region whose code is not its identity's kernel as the build assembles it: what differs."""
    from ..kernel_cache import assemble_kernel

    code, kernel = bytes(region.code), bytes(assemble_kernel(source, target).code)
    if len(code) > len(kernel) and code.startswith(kernel):
        what = f"it is the kernel's {len(kernel):,} bytes followed by {len(code) - len(kernel):,} more"
    elif kernel.startswith(code):
        what = f"it is the first {len(code):,} of the kernel's {len(kernel):,} bytes"
    else:
        first = next(i for i in range(min(len(code), len(kernel))) if code[i] != kernel[i])
        what = (f"its {len(code):,} bytes differ from the kernel's {len(kernel):,} from byte {first:#x} on "
                f"(instruction {first // 16})")
    return Finding("contract", f"region {shown_plan_text(region.identity)}'s machine code is not its identity's kernel "
                               f"{shown_path(source)} as this build assembles it for {target.name}: {what}; a "
                               f"region is certified by the code the assembler made of its identity's source "
                               f"(its parameter reads, its registers), so other bytes would run unchecked",
                   place(region, "code"),
                   "give the region its kernel's encoding (compiler-native-encode (family SM86Program) of "
                   "its identity's source) as its code, with no byte added or changed")


def _contract_line_fault(error, region_at) -> Finding:
    """A contract line that does not parse (kernels.ContractError): located at its file:line:column (which its message
    begins with), else at the region."""
    message, at = error.placed()
    return Finding("contract", message, at or region_at)


def _block_findings(plan: Plan, region, contract, launches_of: dict | None = None,
                    index: int | None = None) -> list[Finding]:
    """A kernel that declares the block its code is written for (`//@ block X [Y [Z]]`) is
    given that block: by its region (x) and by every launch of it (y, z).  `index`: the
    region's index in the plan's regions; `launches_of` (region index -> the indices of its
    launches, in order, _launches_of's): a caller checking every region passes them, so that
    the regions cost one pass over the launches in all rather than one each."""
    if contract.block is None:
        return []
    x, y, z = contract.block
    source = contract.source.name
    if region.block_x != x:
        return [Finding("block", f"region {shown_plan_text(region.identity)} declares blocks of {region.block_x} threads, but "
                                 f"{source} is written for {x} (its //@ block): the code's thread indexing "
                                 f"would cover other elements; give the region {x}", place(region, "block_x"))]
    if index is None:
        index = plan.program.regions.index(region)
    if launches_of is None:
        launches_of = _launches_of(plan)
    launches = plan.program.launches
    wrong = [i for i in launches_of.get(index, ()) if tuple(launches[i].block[1:]) != (y, z)]
    if not wrong:
        return []
    first = plan.program.launches[wrong[0]]
    # what to do (probe s41 newuser5, finding 3: a 2D block launched under a 1D `//@ block 16` was
    # told the mismatch only): the launches' y and z, or the contract line their block would need
    declared = " ".join(str(n) for n in (first.block if first.block[2] != 1 else first.block[:2]))
    return [Finding("block", f"launch{'es' if len(wrong) > 1 else ''} {', '.join(str(i) for i in wrong)} "
                             f"({shown_plan_text(region.identity)}) run{'' if len(wrong) > 1 else 's'} blocks of {first.block}, but "
                             f"{source} is written for ({x}, {y}, {z}) (its //@ block)", first.at,
                    hint=f"launch {'them' if len(wrong) > 1 else 'it'} with block y {y} and z {z}, or, if {source}'s code "
                         f"indexes a block of {first.block} (SR_TID.Y, SR_TID.Z), declare it: //@ block {declared}")]


_SHARED_LINE = re.compile(rb"^[ \t]*\.shared[ \t]+(\S+)", re.MULTILINE)
_NEWLINE = b"\n"
_LISTING_SHARED = re.compile(rb"^[ \t]*\.section[ \t]+\.nv\.shared\.", re.MULTILINE)


def _shared_findings(region, source: Path, target: Target) -> list[Finding]:
    """A kernel source that declares the shared memory a block of it uses (`.shared BYTES`) is
    given at least that much by its region: the region's shared bytes are its launches' QMD
    SHARED_MEMORY_SIZE, the block's whole shared memory, so a region giving fewer bytes certified
    a block whose code reaches past its shared memory (a shared-memory fault on the GPU; `bobc
    sim` stopped at the access without saying why).  The source is the one the build's target
    assembles (a per-target variant's own `.shared`); a value that is no number is the
    assembler's refusal, said when the source is assembled.  An nvdisasm listing declares it as
    ptxas wrote it, its `.nv.shared.<kernel>` section's size (`.zero N`), which the assembler reads
    (bobc.sass.assembler.listing_shared_bytes) and `sm86ProgramSharedBytes` gives: that is the
    declaration here too (a region of 0 bytes for a listing of `.zero 1152` was certified, and its
    first STS faulted on sm_90: probe s44 newuser9)."""
    from ..errors import BobcError
    from ..resources import doc
    from ..sass.source import read_source_bytes
    try:
        text = read_source_bytes(source)
        found = _SHARED_LINE.search(text)
        declared = int(found.group(1), 0) if found else None
        said = f".shared {found.group(1).decode()} (line {text[:found.start(1)].count(_NEWLINE) + 1})" if found else ""
        beyond = ""
        if found is None and _LISTING_SHARED.search(text):
            from ..kernel_cache import assemble_kernel
            declared = assemble_kernel(source, target).shared_bytes
            said = f"{declared} bytes of shared memory (its .nv.shared section, as ptxas wrote it)"
            # a PTX `.extern .shared` array (CUDA's dynamic shared memory) lies past the section, its size
            # the launch's, which no listing says (ptxas writes the same section with or without one)
            beyond = (", and past them the bytes of any .extern .shared array its code indexes (ptxas places "
                      "it after the section; the listing does not say its size)")
    except (BobcError, OSError, ValueError):
        return []
    if declared is None or region.shared_bytes >= declared:
        return []
    return [Finding("shared", f"region {shown_plan_text(region.identity)} gives its blocks {region.shared_bytes} bytes of "
                              f"shared memory, but {source.name} declares {said}: a block of it would use shared "
                              f"memory past its own",
                    place(region, "shared_bytes"),
                    hint=f"give the region at least {declared} bytes of shared memory{beyond}: its sharedBytes field "
                         f"(NvidiaDeviceRegionValue's last), or sm86ProgramSharedBytes of the kernel's program, "
                         f"the source's own declaration ({doc('kernel-contracts.md')}, \"Per-target sources\")")]


_LOCAL_ACCESS = re.compile(rb"\b(?:LDL|STL)\b")


def _local_memory_findings(region, source: Path, target: Target, assembled=None) -> list[Finding]:
    """A plan's kernel uses no local memory: no plan host gives its launches any (the QMD's
    SHADER_LOCAL_MEMORY sizes are 0 and the local window's backing is unset, so a local access
    faults on the GPU: docs/ampere-path-comparison.md), and `bobc sim` refuses a plan launch's
    first LDL / STL.  ptxas writes them for a `.local` array it cannot keep in registers (indexed
    by a value it does not know) and for spills; such a listing was certified and built, and only
    `bobc sim` stopped, with a hint about run_kernel (probe s44 newuser9).  Refused at the first
    one, in the source."""
    from ..errors import BobcError
    from ..sass.source import read_source_bytes
    try:
        if not _LOCAL_ACCESS.search(read_source_bytes(source)):
            return []
        if assembled is None:
            from ..kernel_cache import assemble_kernel
            assembled = assemble_kernel(source, target)
    except (BobcError, OSError):
        return []
    def opcode(text: str) -> str:
        words = text.split()
        words = words[1:] if words and words[0].startswith("@") else words      # a guard
        return words[0].split(".")[0] if words else ""

    first = next((i for i in assembled.instructions if opcode(i.text) in ("LDL", "STL")), None)
    if first is None:
        return []
    return [Finding("contract", f"kernel {shown_plan_text(region.identity)} accesses local memory ({first.text.strip()} "
                                f"at {source.name}:{first.span.line if first.span else '?'}), which no plan host gives "
                                f"its launches: a local access faults on the GPU",
                    first.span or place(region, "code"),
                    hint="keep the values in registers or shared memory: ptxas puts a .local array indexed by a "
                         "value it cannot know, and registers it spills, in local memory (index with constants, "
                         "or give the kernel more registers)")]


def _listing_launch_findings(plan: Plan, region, source: Path, target: Target, launches_of: dict | None = None,
                             index: int | None = None) -> list[Finding]:
    """What an nvdisasm listing's .nv.info.<kernel> records say of the launches its kernel runs in
    (bobc.sass.listing_info), each a launch the CUDA driver refuses otherwise, which a plan's host,
    launching without the driver, never did (probe s44 listingattrs):

    - PTX `.reqntid X, Y, Z` (EIATTR_REQNTID): blocks of exactly that shape; ptxas compiles the code
      for it (a `tid.x < 32` test under `.reqntid 32` is dropped), so a region of 64 threads ran
      its threads 32..63 through code written for 32 (probe s44 newuser9).  The region's x, then
      its launches' y and z;
    - PTX `.maxntid X, Y, Z` (EIATTR_MAX_THREADS): a block of at most X * Y * Z threads (PTX ISA,
      "Performance-Tuning Directives: .maxntid": exceeding it is a runtime error or a launch
      failure; ptxas fits its register allocation to it).  The region's x, then each launch's block;
    - `.reqnctapercluster X, Y, Z` (EIATTR_CTA_PER_CLUSTER, sm_90): clusters of exactly that shape
      (PTX ISA, "Cluster Dimension Directives": a launch of other cluster dimensions is a runtime
      error or a launch failure; CUDA launches a `__cluster_dims__` kernel in them unasked, and
      bobc's host launches an unclustered launch in clusters of one block);
    - `.explicitcluster` (EIATTR_EXPLICIT_CLUSTER): a launch in clusters (NvidiaLaunchKernelClustered
      of more than one block: bobc launches a cluster of 1 x 1 x 1 as none, %is_explicit_cluster 0);
    - `.maxclusterrank N` (EIATTR_MAX_CLUSTER_RANK): at most N blocks a cluster.

    A listing whose records do not parse is the assembler's to refuse (nothing said here)."""
    from ..errors import BobcError
    from ..sass.assembler import is_listing, split_listing
    from ..resources import doc
    from ..sass.listing_info import listing_info
    from ..sass.source import read_source
    from ..sass.syntax import parse_source
    try:
        text = read_source(source)
        if ".nv.info." not in text:
            return []
        lines = parse_source(text, str(source))
        kernels = list(split_listing(lines)) if is_listing(lines) else []
        if len(kernels) != 1:
            return []
        info = listing_info(lines, kernels[0])
    except (BobcError, OSError, ValueError):
        return []
    if (info.required_block is None and info.max_block is None and info.cluster is None
            and not info.explicit_cluster and info.max_cluster_rank is None):
        return []
    if index is None:
        index = plan.program.regions.index(region)
    if launches_of is None:
        launches_of = _launches_of(plan)
    launches = plan.program.launches
    runs = [(i, launches[i]) for i in launches_of.get(index, ())]
    name = shown_plan_text(region.identity)
    out: list[Finding] = []

    def wrong_launches(bad: list, what, why: str, hint: str) -> None:
        if bad:
            first = bad[0][1]
            out.append(Finding("block", f"launch{'es' if len(bad) > 1 else ''} "
                                        f"{', '.join(str(i) for i, _ in bad[:8])}{' ...' if len(bad) > 8 else ''} "
                                        f"({name}) run{'' if len(bad) > 1 else 's'} {what(first)}, but {why}",
                               first.at, hint=hint))

    if info.required_block is not None:
        x, y, z = info.required_block
        why = (f"{source.name} was compiled for blocks of exactly ({x}, {y}, {z}) threads (PTX .reqntid: the "
               f"EIATTR_REQNTID of its .nv.info section), and ptxas's code may rely on it")
        hint = f"launch it in blocks of ({x}, {y}, {z}), or compile the PTX without .reqntid"
        if region.block_x != x:
            out.append(Finding("block", f"region {name} declares blocks of {region.block_x} threads, but {why}",
                               place(region, "block_x"), hint=hint))
        else:
            wrong_launches([(i, l) for i, l in runs if tuple(l.block[1:]) != (y, z)],
                           lambda l: f"blocks of {l.block}", why, hint)
    if info.max_block is not None:
        x, y, z = info.max_block
        most = x * y * z
        why = (f"{source.name} was compiled for blocks of at most {most} threads (PTX .maxntid {x}, {y}, {z}: the "
               f"EIATTR_MAX_THREADS of its .nv.info section), and the CUDA driver refuses a larger block")
        hint = f"launch it in blocks of at most {most} threads, or compile the PTX with a larger .maxntid"
        if region.block_x > most:
            out.append(Finding("block", f"region {name} declares blocks of {region.block_x} threads, but {why}",
                               place(region, "block_x"), hint=hint))
        else:
            wrong_launches([(i, l) for i, l in runs if l.block[0] * l.block[1] * l.block[2] > most],
                           lambda l: f"blocks of {l.block} ({l.block[0] * l.block[1] * l.block[2]} threads)", why, hint)
    how = (f"a launch's kernel value NvidiaLaunchKernelClustered around its NvidiaLaunchKernelValue "
           f"({doc('kernel-contracts.md')}, \"Thread-block clusters\")")
    cluster_of = lambda l: tuple(getattr(l, "cluster", (1, 1, 1)))
    in_clusters = lambda l: f"in clusters of {cluster_of(l)}" if cluster_of(l) != (1, 1, 1) else "without clusters"
    if info.cluster is not None:
        shape = tuple(info.cluster)
        wrong_launches([(i, l) for i, l in runs if cluster_of(l) != shape], in_clusters,
                       f"{source.name} was compiled for clusters of exactly {shape} blocks (PTX .reqnctapercluster: "
                       f"the EIATTR_CTA_PER_CLUSTER of its .nv.info section), and the CUDA driver launches it in no "
                       f"other", f"launch it in clusters of {shape} ({how}), or compile the PTX without "
                                 f".reqnctapercluster")
    elif info.explicit_cluster:
        wrong_launches([(i, l) for i, l in runs if cluster_of(l) == (1, 1, 1)], in_clusters,
                       f"{source.name} was compiled with PTX .explicitcluster (the EIATTR_EXPLICIT_CLUSTER of its "
                       f".nv.info section): it runs only in a launch that gives clusters",
                       f"launch it in clusters of more than one block ({how}; bobc launches a cluster of 1 x 1 x 1 "
                       f"as none), or compile the PTX without .explicitcluster")
    if info.max_cluster_rank is not None:
        rank = info.max_cluster_rank
        wrong_launches([(i, l) for i, l in runs if cluster_of(l)[0] * cluster_of(l)[1] * cluster_of(l)[2] > rank],
                       in_clusters,
                       f"{source.name} was compiled for clusters of at most {rank} blocks (PTX .maxclusterrank: the "
                       f"EIATTR_MAX_CLUSTER_RANK of its .nv.info section), and the CUDA driver refuses a larger one",
                       f"launch it in clusters of at most {rank} blocks, or compile the PTX with a larger "
                       f".maxclusterrank")
    return out


def _launches_of(plan: Plan) -> dict[int, list[int]]:
    """Region index -> the indices of the launches that run it, in order."""
    out: dict[int, list[int]] = {}
    for i, launch in enumerate(plan.program.launches):
        out.setdefault(launch.region, []).append(i)
    return out


def findings(plan: Plan, target: Target, needs: Mapping[str, int] | None = None,
             contracts: dict | None = None, folders=(), encoded_from=None,
             read_contracts: dict | None = None, assembled=None, images_out: dict | None = None) -> list[Finding]:
    """Every fault of `plan` for `target`; empty when it certifies.  `contracts`
    (kernel identity -> KernelContract) replaces the search of `folders` and specs/;
    `encoded_from`, `assembled`: kernel_contracts'.  A dict given as `read_contracts` receives
    the contracts the checks read.

    The device images are encoded once, as the build encodes them (footprints.shipped_images:
    the contracts of `folders`, then specs/, order the launches; given `contracts`, those), and
    every check that reads them (the host buffers' sizes, the mapped spans, the ring entries)
    reads that one encoding.  A dict given as `images_out` receives them under "images" (the
    BobcError encoding raised, where it did), when they are the build's (no `contracts` given)."""
    from ..targets import declared_target

    limit_faults = check_limits(plan, target)
    if limit_faults or declared_target(plan.program.architecture, plan.program.compute_class) is None:
        # the later checks lay the images out, which needs every value within its field and a
        # device whose parameter layout bobc knows
        return limit_faults + check_declared_device(plan, target) + check_registers(plan, needs, target)
    contract_faults: list[Finding] = []
    given = contracts is not None
    if contracts is None:
        checked: dict = {}             # regions whose code was compared with their source's assembly
        contracts, contract_faults = kernel_contracts(plan, target, folders, encoded_from, assembled, checked)
        needs = {**checked, **(needs or {})}
    else:
        from .kernels import check_code_reads
        for contract in contracts.values():
            contract_faults += check_code_reads(contract)
    if read_contracts is not None:
        read_contracts.update(contracts)
    register_faults = check_registers(plan, needs, target,
                                      {i: c.source for i, c in contracts.items() if getattr(c, "source", None)})
    from ..errors import BobcError
    from .footprints import shipped_images
    from .host_steps import _images_of

    try:
        images = _images_of(plan, target, contracts) if given else shipped_images(plan.program, target, folders)
    except BobcError as error:
        images = error                 # the images cannot be laid out: check_host_buffers says why
    if images_out is not None and not given:
        images_out["images"] = images
    buffer_faults = check_host_buffers(plan, target, contracts, images)
    if register_faults:
        # a region the hardware cannot hold cannot be laid out either: said once, by its region
        buffer_faults = [f for f in buffer_faults if f.kind != "layout"]
    device_faults = check_declared_device(plan, target)
    pointer_faults = check_pointers(plan, contracts)
    if not built_for(plan, target):
        # a plan the target cannot run: its launches' arguments are read at the declared device's
        # parameter base, which the target's layout does not have, so every argument "is not
        # patched" and the images cannot be laid out -- faults of the declaration, said once
        following = pointer_faults + [f for f in buffer_faults if f.kind == "layout"]
        buffer_faults = [f for f in buffer_faults if f.kind != "layout"]
        pointer_faults = [followed(following, place(plan.program, "architecture"))] if following else []
    return (device_faults + pointer_faults + check_residents(plan)
            + contract_faults + buffer_faults
            + register_faults + check_schedule(plan) + check_host_steps(plan, target, folders, contracts, images))


def built_for(plan: Plan, target: Target) -> bool:
    """Whether `target` can run the plan as the device it declares lays it out (targets.py
    `builds_plans_for`); True where the declaration names no target (said by its own fault)."""
    from ..targets import declared_target

    declared = declared_target(plan.program.architecture, plan.program.compute_class)
    return declared is None or declared.name in target.builds_plans_for


def followed(faults: list[Finding], at) -> Finding:
    """The one line that stands for `faults`, which only follow from the device declaration
    (CertificationError counts it as none: the plan's faults are its causes)."""
    count = len(faults)
    return Finding(FOLLOWING, f"and {count} launch fault{'s' if count != 1 else ''} that follow"
                              f"{'s' if count == 1 else ''} from it, not listed: the launches' "
                              f"arguments are laid out for the device the plan declares", at)


def certify(plan: Plan, target: Target, needs: Mapping[str, int] | None = None,
            contracts: dict | None = None, folders=(), encoded_from=None, assembled=None) -> None:
    """Return when `plan` certifies; raise CertificationError listing every fault otherwise.
    The contracts a certified plan was held to are kept with it (`certified_contracts`), and
    the images its certification encoded as the build does, until the build takes them
    (`shipped_images_of`)."""
    read: dict = {}
    encoded: dict = {}
    faults = findings(plan, target, needs, contracts, folders, encoded_from, read_contracts=read,
                      assembled=assembled, images_out=encoded)
    if faults:
        raise CertificationError(faults, getattr(plan, "entry", None))
    _remember(plan, read)
    images = encoded.get("images")
    if images is not None and not isinstance(images, BaseException) and id(plan) in _CERTIFIED:
        _SHIPPED[id(plan)] = (target, tuple(folders), images)


# id(plan) -> the kernel contracts its certification read, while the plan lives: the reference
# runner holds each NumPy kernel to the write extents the certifier held its launches to
_CERTIFIED: dict[int, dict] = {}
# id(plan) -> (target, folders, the images its certification encoded as the build encodes them),
# until the build takes them (shipped_images_of): one encode a command (probe s36 encodeonce)
_SHIPPED: dict[int, tuple] = {}


def _remember(plan: Plan, contracts: dict) -> None:
    import weakref

    key = id(plan)
    try:
        if key not in _CERTIFIED:
            weakref.finalize(plan, _forget, key)
    except TypeError:           # an object that cannot be watched is not remembered
        return
    _CERTIFIED[key] = contracts


def _forget(key: int) -> None:
    _CERTIFIED.pop(key, None)
    _SHIPPED.pop(key, None)


def shipped_images_of(plan: Plan, target: Target, folders=()):
    """The device images `plan`'s certification for `target` encoded with the kernel search
    `folders` -- footprints.shipped_images(plan.program, target, folders), the very encode a
    build makes of it -- handed over once (the caller owns them), or None: not certified in
    this process with those inputs, or taken already."""
    kept = _SHIPPED.get(id(plan))
    if kept is None or kept[0] != target or kept[1] != tuple(folders):
        return None
    del _SHIPPED[id(plan)]
    return kept[2]


def certified_contracts(plan: Plan) -> dict | None:
    """The kernel contracts (identity -> KernelContract) `plan`'s certification read, or None
    when this very plan was not certified in this process."""
    return _CERTIFIED.get(id(plan))
