"""Pointers: every address a launch passes lies in one resident, with the extent its kernel touches."""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from ..errors import shown_plan_text
from ..plan.model import Plan, Resident, place
from .findings import Finding, describe, end, span
from .limits import shown_bytes, shown_hex
from .kernels import Argument, KernelContract, TensorMap


class ByAddress(tuple):
    """Residents, the tuple they are (same order), that also find the one holding an address by
    bisection when no two share a byte (then at most one holds any address, the one a walk in
    order finds); otherwise _containing walks them in order.  check_pointers and
    launch_footprints make one for every pointer of every launch they look up: a walk per pointer
    cost pointers x residents."""

    def __new__(cls, residents):
        self = super().__new__(cls, residents)
        held = sorted((r.address, i) for i, r in enumerate(self) if r.size > 0)
        disjoint = all(end(self[i]) <= following for (_, i), (following, _) in zip(held, held[1:]))
        self.starts = [address for address, _ in held] if disjoint else None
        self.order = [i for _, i in held]
        return self


def _containing(residents, address: int) -> Resident | None:
    starts = getattr(residents, "starts", None) if type(residents) is ByAddress else None
    if starts is not None:
        at = bisect_right(starts, address) - 1
        if at >= 0:
            r = residents[residents.order[at]]
            if address < end(r):
                return r
        return None
    for r in residents:
        if r.address <= address < end(r):
            return r
    return None


def _nearest(residents, address: int) -> str:
    best = None
    for r in residents:
        distance = r.address - address if address < r.address else address - end(r) + 1
        if best is None or distance < best[0]:
            best = (distance, r)
    if best is None:
        return "no residents are declared"
    distance, r = best
    if address < r.address:
        return f"nearest: {describe(r)}, the address {shown_bytes(r.address - address, True)} below its start"
    return f"nearest: {describe(r)}, the address {shown_bytes(address - end(r), True)} past its end"


MAX_BATCHES = 1 << 16          # batches a certificate checks one by one


def pointer_extent(residents, argument: Argument, address: int,
                   words: dict[int, int]) -> tuple[Resident | None, int | None, str]:
    """(the resident `address` lies in or None, the bytes the pointer may touch from there or
    None, why not): the extent evaluated on the launch's own words; a `resident` extent runs to
    the end of its resident (None outside every resident)."""
    home = _containing(residents, address)
    if argument.rule == "resident" and home is None:
        return None, None, "its extent runs to the end of its resident, and it lies in no resident"
    extent, why = argument.extent_for(words, end(home) if home is not None else 0, address)
    return home, extent, why


@dataclass(frozen=True)
class DeclaredPointer:
    """One pointer a launch's contract declares and the launch makes the kernel touch
    (inactive ones, by their `when`/`unless` condition, are left out)."""
    argument: Argument
    where: str                     # "launch I (identity) argument A (word W, what)"
    address: int | None            # the patched value (None: not patched -- a null pointer)
    offsets: list[int] | None      # each batch's offset from the address (None: `problem` says why)
    words: dict[int, int]          # the launch's words by argument index (extents are evaluated on them)
    problem: str = ""              # why the pointer's activity or batches cannot be known


def declared_pointers(index: int, launch, contract: KernelContract | None,
                      argument_word: int) -> list[DeclaredPointer]:
    """The active declared pointers of launch `index`: what check_pointers holds to the
    arena and footprints turns into byte ranges (one reading of the contract for both)."""
    words = {p.word: p.value for p in launch.patches}
    own_words = {w - argument_word: v for w, v in words.items()}
    out = []
    for argument in contract.arguments if contract else ():
        if argument.kind != "pointer":
            continue
        word = argument_word + argument.index
        where = f"launch {index} ({shown_plan_text(launch.identity)}) argument {argument.index} (word {word}, {argument.what})"
        active, why = argument.active(own_words)
        if active is None:
            out.append(DeclaredPointer(argument, where, words.get(word), None, own_words, why))
            continue
        if not active:
            continue
        if word not in words:
            out.append(DeclaredPointer(argument, where, None, None, own_words))
            continue
        offsets, why = argument.batch_offsets(own_words, MAX_BATCHES)
        out.append(DeclaredPointer(argument, where, words[word], offsets, own_words, why))
    return out


@dataclass(frozen=True)
class DeclaredMap:
    """One tensor map a launch's contract declares and the launch makes the kernel read
    (inactive ones left out): the bytes from its pointer word's address it may touch."""
    tensor_map: TensorMap
    pointer: Argument              # the declared pointer whose address the map covers
    where: str                     # "launch I (identity) tensor map word W (of argument P, what)"
    address: int | None            # the pointer word's patched value (None: not patched)
    extent: int | None             # TensorMap.extent on the launch's words (None: `problem` says why)
    problem: str = ""


def launch_words(launch, argument_word: int) -> dict[int, int]:
    """The launch's patched words by argument index (word 0 = the parameter base)."""
    return {p.word - argument_word: p.value for p in launch.patches}


def declared_maps(index: int, launch, contract: KernelContract | None, argument_word: int) -> list[DeclaredMap]:
    """The active tensor maps of launch `index`: what check_pointers holds to the arena and
    footprints counts as their pointer's access."""
    words = {p.word: p.value for p in launch.patches}
    own_words = launch_words(launch, argument_word)
    out = []
    for declared in contract.tensor_maps if contract else ():
        pointer = contract.argument(declared.pointer)
        where = (f"launch {index} ({shown_plan_text(launch.identity)}) tensor map word {declared.word} (of argument "
                 f"{declared.pointer}, {declared.what})")
        active, why = declared.active(own_words)
        if active is False:
            continue
        address = words.get(argument_word + declared.pointer)
        if active is None:
            out.append(DeclaredMap(declared, pointer, where, address, None, why))
            continue
        extent, why = declared.extent(own_words)
        out.append(DeclaredMap(declared, pointer, where, address, extent, why))
    return out


def window_addresses(launch, contract: KernelContract | None, argument_word: int, windows,
                     unused: bool = True) -> list[tuple[int, int]]:
    """(word, value) of each patched word the contract does not declare a pointer or scalar
    whose value lies inside a window: an address, as far as anyone can tell (rule (b)).
    `unused`: with the words the contract declares unused (check_code_reads refuses code
    that reads those, so the kernel cannot touch what they point at)."""
    table = {a.index: a for a in contract.arguments} if contract else {}
    skipped = ("pointer", "scalar") if unused else ("pointer", "scalar", "unused")
    out = []
    for word, value in sorted((p.word, p.value) for p in launch.patches):
        argument = table.get(word - argument_word)
        if argument is not None and argument.kind in skipped:
            continue
        if any(w.address <= value < end(w) for w in windows):
            out.append((word, value))
    return out


def _undeclared_patches(name: str, launch, contract: KernelContract | None, argument_word: int) -> list[Finding]:
    """A patched parameter word the kernel's contract does not declare (param, scalar, unused,
    tensor map or table row): the kernel never reads it, so a wrong argument index goes unseen.
    A zero patch is the unpatched word's own value (a plan filling a block's words up to a later
    one), so it is not one."""
    if contract is None:
        return []
    declared = {a.index for a in contract.arguments}
    for table in contract.tables:
        declared.update(range(table.first, table.first + table.rows * table.words))
    strays = sorted((p.word - argument_word, p.at) for p in launch.patches
                    if p.value and p.word >= argument_word and p.word - argument_word not in declared)
    if not strays:
        return []
    stray = [w for w, _ in strays]
    words = ", ".join(str(w) for w in stray)
    return [Finding("contract", f"{name} patches argument{'s' if len(stray) > 1 else ''} {words} (word "
                                f"{', '.join(str(argument_word + w) for w in stray)}), which {shown_plan_text(launch.identity)}'s "
                                f"contract does not declare: the kernel never reads {'them' if len(stray) > 1 else 'it'}; "
                                f"patch the argument its contract names, or declare the word "
                                f"(//@ param N scalar|unused ...) in {contract.source.name}",
                    strays[0][1] or launch.at)]


def _bytes_read(contract: KernelContract, index: int) -> tuple[set[int], list]:
    """(the bytes 0..7 of argument `index`'s word that the code reads, the reads that read them):
    each of the contract's reads by its offset and width (`LDC.64` all eight, `LDC` at
    `param+8*index+4` the high four; a register-indexed read of a table's first row reads the same
    bytes of every row).  The contract's reads are its assembled code's where the certifier read
    them (KernelContract.assembled: absolute offsets such as sm_86's c[0x0][0x170] too), else its
    source's `param+N` operands.  All eight, with no read, when none of them is of the word, so a
    word whose reads are not known is set only as a whole."""
    first = 8 * index
    found, reads = set(), []
    for read in contract.reads:
        if read.below is not None:
            continue
        shifts = [0]
        if read.indexed:
            table = next((t for t in contract.tables
                          if all(t.first <= w < t.first + t.words for w in read.words)), None)
            shifts = [8 * row * table.words for row in range(table.rows)] if table is not None else []
        for shift in shifts:
            hit = {b - first for b in range(read.offset + shift, read.offset + shift + read.width)
                   if first <= b < first + 8}
            if hit:
                found |= hit
                reads.append(read)
    return (found, reads) if found else (set(range(8)), [])


def _byte_span(offsets) -> str:
    """`bytes 0..3` (or `byte 5`, `bytes 0..1, 4..7`) of a word."""
    runs: list[list[int]] = []
    for b in sorted(offsets):
        if runs and b == runs[-1][1] + 1:
            runs[-1][1] = b
        else:
            runs.append([b, b])
    shown = ", ".join(f"{a}..{b}" if a != b else f"{a}" for a, b in runs)
    return f"byte{'s' if len(offsets) > 1 else ''} {shown}"


def _unset_scalars(name: str, launch, contract: KernelContract | None, argument_word: int, fills,
                   named=frozenset()) -> list[Finding]:
    """A word the kernel's contract declares a scalar (its code reads it) that the launch neither
    patches nor has host fills write every byte of that the code reads: the kernel would read 0
    where the plan meant a value (an argument patched at the wrong index, one forgotten, a fill
    of the other half of a lo/hi pair), as an unpatched pointer would be null.  A word whose 0 is
    meant is patched with 0 (no kernel or plan relies on an unset word).  The bytes the code reads
    of a word are its reads' (_bytes_read); a patch sets all eight, a fill its own four."""
    if contract is None:
        return []
    patched = {p.word for p in launch.patches}
    filled: dict[int, dict[int, int]] = {}          # argument -> byte of its word -> the fill writing it
    for k, fill in fills:
        for b in range(fill.offset, fill.offset + fill.width):
            filled.setdefault(b // 8, {}).setdefault(b % 8, k)
    scalars = [a for a in contract.arguments if a.kind == "scalar"
               and argument_word + a.index not in patched and a.index not in set(named)]
    unset, partial = [], []
    for argument in scalars:
        written = filled.get(argument.index, {})
        if not written:
            unset.append(argument)
            continue
        wanted, reads = _bytes_read(contract, argument.index)
        missing = wanted - set(written)
        if missing:
            partial.append((argument, written, wanted, missing, reads))
    out = []
    if unset:
        shown = "; ".join(f"argument {a.index} (word {argument_word + a.index}, {a.what}; "
                          f"{contract.source.name}:{a.line})" for a in unset)
        out.append(Finding("contract", f"{name} never sets {shown}, which {shown_plan_text(launch.identity)}'s contract declares "
                                       f"a scalar its code reads: the kernel would read 0", launch.at,
                           f"patch {'them' if len(unset) > 1 else 'it'} (with 0 where 0 is meant), or declare a "
                           f"word the code does not read unused in {contract.source.name}"))
    for argument, written, wanted, missing, reads in partial:
        by = sorted(set(written.values()))
        fills_text = f"host fill{'s' if len(by) > 1 else ''} {', '.join(str(k) for k in by)} write{'' if len(by) > 1 else 's'}"
        read_text = (f"its code reads {_byte_span(wanted)} ({'; '.join(r.source_at(contract) for r in reads[:2])}"
                     f"{'; ...' if len(reads) > 2 else ''})" if reads else
                     "its code never reads it, so all 8 bytes count" if contract.assembled else
                     "its code's reads of it are not known from its source's c[0x0][param+N] operands, so "
                     "all 8 bytes count")
        out.append(Finding("contract", f"{name} sets only part of argument {argument.index} (word "
                                       f"{argument_word + argument.index}, {argument.what}; "
                                       f"{contract.source.name}:{argument.line}), a scalar of {shown_plan_text(launch.identity)}'s "
                                       f"contract: {fills_text} its {_byte_span(set(written))}, but {read_text}: "
                                       f"the kernel would read 0 in its {_byte_span(missing)}", launch.at,
                           "patch the word, or fill every byte the code reads of it"))
    return out


# a term of an extent, batch or condition expression (kernels._ARGUMENT_TERM): the bytes of its word it reads
_TERM = re.compile(r"\b(lo|hi|word)\[(\d+)\]")
_ITSELF = "the pointer itself"
_TERM_BYTES = {"lo": frozenset(range(4)), "hi": frozenset(range(4, 8)), "word": frozenset(range(8))}


def pointer_words(argument: Argument) -> dict[int, dict[int, str]]:
    """Argument index -> byte of its word (0..7) -> what of the declared pointer `argument`
    reads it: the pointer's own word (all eight bytes), and each word its extent, its batches
    (`each COUNT by STRIDE`) and its `when`/`unless` condition name -- lo[i] bytes 0..3, hi[i]
    bytes 4..7, word[i] all eight.  The certifier evaluates the pointer on these bytes as the
    launch patches them; a host fill that rewrites one would run the kernel on others."""
    out: dict[int, dict[int, str]] = {argument.index: {b: _ITSELF for b in range(8)}}
    parts = (("extent", "" if argument.rule == "resident" else argument.rule),
             ("batch count", argument.batches), ("batch stride", argument.stride),
             ("condition", argument.condition))
    for what, expression in parts:
        for term in _TERM.finditer(expression or ""):
            bytes_of = out.setdefault(int(term.group(2)), {})
            for b in _TERM_BYTES[term.group(1)]:
                bytes_of.setdefault(b, f"its {what} {expression}")
    return out


def _unread_fills(name: str, launch, contract: KernelContract | None, argument_word: int, fills) -> list[Finding]:
    """A host fill whose bytes, in some word, are none the kernel reads: the word is not declared
    by the contract (nor a table row), is declared unused, or is a scalar the launch patches whose
    code reads (_bytes_read) only the other bytes.  Its value never reaches the kernel, which runs
    on the plan's baked word instead (a wrong offset, as a patch of an undeclared word is, below:
    _undeclared_patches).  An unpatched scalar's unread half is _unset_scalars'."""
    if contract is None or not fills:
        return []
    declared = {a.index: a for a in contract.arguments}
    rows = set()
    for table in contract.tables:
        rows.update(range(table.first, table.first + table.rows * table.words))
    patched = {p.word for p in launch.patches}
    out = []
    for k, fill in fills:
        by_word: dict[int, set[int]] = {}
        for b in range(fill.offset, fill.offset + fill.width):
            by_word.setdefault(b // 8, set()).add(b % 8)
        for index, written in sorted(by_word.items()):
            argument = declared.get(index)
            if index in rows or (argument is not None and argument.kind in ("pointer", "tensormap")):
                continue            # (a table row is read; a pointer's or map's word is refused already)
            if argument is None:
                why = f"which {shown_plan_text(launch.identity)}'s contract does not declare"
            elif argument.kind == "unused":
                why = (f"which {shown_plan_text(launch.identity)}'s contract declares unused ({argument.what}; "
                       f"{contract.source.name}:{argument.line})")
            else:
                wanted, reads = _bytes_read(contract, index)
                if wanted & written or argument_word + index not in patched:
                    continue
                why = (f"a scalar of {shown_plan_text(launch.identity)}'s contract ({argument.what}; "
                       f"{contract.source.name}:{argument.line}) whose code reads only its {_byte_span(wanted)} "
                       f"({'; '.join(r.source_at(contract) for r in reads[:2])})")
            out.append(Finding("contract", f"{name}: host fill {k} writes {_byte_span(written)} of argument {index} "
                                           f"(word {argument_word + index}), {why}: the kernel never reads the "
                                           f"fill's value, and runs on the word the plan baked",
                               place(fill, "offset") or launch.at,
                               f"give the fill the offset of the scalar it sets, from the parameter base: argument "
                               f"i's low half is byte 8i, its high half 8i + 4 (the arguments {contract.source.name} "
                               f"declares: {', '.join(str(i) for i in sorted(declared))})"))
    return out


def _filled_pointer_words(name: str, launch, contract: KernelContract | None, argument_word: int,
                          fills) -> list[Finding]:
    """A host fill (per step) that writes a byte of a declared pointer's word, or of a word its
    extent, batches or condition read (pointer_words): the certifier held the launch to its
    patched words, so the kernel would touch memory no check saw (as a tensor map would go
    stale).  Every declared pointer counts, active or not: a filled condition word could make
    an inactive one active."""
    if contract is None or not fills:
        return []
    read: dict[int, dict[int, list[tuple[Argument, str]]]] = {}    # word -> byte -> (pointer, why)
    for argument in contract.arguments:
        if argument.kind != "pointer":
            continue
        for index, bytes_of in pointer_words(argument).items():
            for b, why in bytes_of.items():
                read.setdefault(index, {}).setdefault(b, []).append((argument, why))
    out = []
    for k, fill in fills:
        hit: dict[int, set[int]] = {}
        for b in range(fill.offset, fill.offset + fill.width):
            if b % 8 in read.get(b // 8, {}):
                hit.setdefault(b // 8, set()).add(b % 8)
        for index, written in sorted(hit.items()):
            readers: dict[int, tuple[Argument, str]] = {}
            for b in sorted(written):
                for argument, why in read[index][b]:
                    readers.setdefault(argument.index, (argument, why))
            shown_readers = "; ".join(
                f"{'' if why == _ITSELF else why + ' of '}pointer argument {argument.index}"
                f"{' itself' if why == _ITSELF else ''} ({argument.what}; {contract.source.name}:{argument.line})"
                for argument, why in readers.values())
            out.append(Finding("contract", f"{name}: host fill {k} rewrites {_byte_span(written)} of argument "
                                           f"{index} (word {argument_word + index}) each step, which "
                                           f"{shown_plan_text(launch.identity)}'s contract reads as {shown_readers}: the certifier "
                                           f"checked the pointer on the launch's patched words, and the kernel "
                                           f"would touch memory by the filled ones",
                               place(fill, "offset") or launch.at,
                               "patch the word (patched words are what the certifier checks), or fill a "
                               "scalar no pointer's extent, batches or condition reads"))
    return out


def _check_address(residents, phase, argument, where: str, address: int, words: dict[int, int],
                   extent: tuple[int | None, str, str] | None = None, at=None) -> list[Finding]:
    """One address of a declared pointer: in a resident, its extent inside it, the resident in
    the launch's phase.  `extent`: (bytes, why not, how they were counted) given instead of the
    argument's own (a tensor map's over its pointer)."""
    if extent is None:
        home, extent, why = pointer_extent(residents, argument, address, words)
        rule = f" ({argument.rule})" if argument.rule else ""
    else:
        home = _containing(residents, address)
        extent, why, rule = extent
    if home is None:
        return [Finding("stray-pointer", f"{where}: address {shown_hex(address)} lies in no resident; "
                                         f"{_nearest(residents, address)}", at)]
    out = []
    if extent is not None and address + extent > end(home):
        # overlapping residents (refused on their own): the access is the one it lies wholly inside
        home = next((r for r in residents if r.address <= address and address + extent <= end(r)), home)
    if extent is None:
        out.append(Finding("extent", f"{where}: {why}", at))
    elif address + extent > end(home):
        over = address + extent - end(home)
        out.append(Finding("extent", f"{where} {argument.access}s {shown_bytes(extent)}{rule} at "
                                     f"{shown_hex(address)}: {span(address, extent)} runs {shown_bytes(over)} "
                                     f"past {describe(home)}", at))
    if phase is not None and (phase.reads or phase.writes):
        readable = {r.name for r in phase.reads} | {r.name for r in phase.writes}
        writable = {r.name for r in phase.writes}
        if argument.writes and home.name not in writable:
            out.append(Finding("phase", f"{where} writes {shown_plan_text(home.name)}, which phase {shown_plan_text(phase.identity)} "
                                        "does not list among its writes", at))
        elif argument.reads and home.name not in readable:
            out.append(Finding("phase", f"{where} reads {shown_plan_text(home.name)}, which phase {shown_plan_text(phase.identity)} "
                                        "does not list among its reads", at))
    return out


def check_pointers(plan: Plan, contracts: dict[str, KernelContract] | None = None) -> list[Finding]:
    """Every address a launch passes lies in one resident, with the extent its kernel touches.

    The rule.  A launch's patch is an address when (a) its region's kernel
    contract (`contracts`, bobc.certify.kernels) declares the word a pointer
    the launch makes the kernel touch (its `when`/`unless` condition, if any,
    holds on the launch's words), or (b) its value lies inside any window
    (whatever the slot: a word the table does not declare, or a kernel the
    table does not know).
    (a) must be patched (an unpatched pointer is a null pointer), must lie in
    one resident, and the argument's whole extent -- evaluated on the launch's
    own words (Argument.extent_for: `resident`, an expression such as
    4*hi[7], or a size the code fixes) -- must lie in that resident;
    a phase that names what it reads/writes must list that resident.  A
    pointer the kernel moves per batch (`each COUNT by STRIDE`) is held to
    that for every batch's address, each within one resident (batches may share one).  (b)
    must lie in one resident (extent 1 byte, all that is known).  Declared
    scalar slots (binary32 pairs) are never addresses, whatever their value.
    An inactive pointer is not checked: the kernel does not touch it.
    A tensor map the launch makes the kernel read (`//@ tensormap`, kernels.TensorMap)
    is held like its pointer word, with the map's extent (TensorMap.extent) from that
    word's address; its own word is bobc's to fill, so a plan that patches it is refused.
    """
    from ..nvidia.encode import plan_parameter_base
    arena = plan.arena
    program = plan.program
    contracts = contracts or {}
    argument_word = plan_parameter_base(program) // 8     # word 0 of the parameters in the plan's bank 0
    residents = ByAddress(arena.globals)
    phases = {p.identity: p for p in arena.phases}
    out: list[Finding] = []
    # each launch's fills, (index, fill) in the plan's order: found once, not by a pass over every
    # fill per launch (launches x fills: 7 s of a 4,000-update LinReg with a fill per update)
    fills_of: dict = {}
    for k, f in enumerate(plan.host.fills if plan.host else ()):
        fills_of.setdefault(f.launch, []).append((k, f))
    for index, launch in enumerate(program.launches):
        name = f"launch {index} ({shown_plan_text(launch.identity)})"
        first = len(out)           # this launch's findings start here
        if not 0 <= launch.region < len(program.regions):
            out.append(Finding("plan", f"{name} names region {launch.region}; the plan has "
                                       f"{len(program.regions)} regions", launch.at))
            continue
        contract = contracts.get(program.regions[launch.region].identity)
        phase = phases.get(launch.identity)
        if arena.phases and phase is None:
            out.append(Finding("phase", f"{name} has no phase in the device arena", launch.at))
        written = {p.word: p.at for p in launch.patches}       # where each word's patch was written
        for pointer in declared_pointers(index, launch, contract, argument_word):
            where, argument = pointer.where, pointer.argument
            patched_at = written.get(argument_word + argument.index) or launch.at
            if pointer.problem:
                out.append(Finding("extent", f"{where}: {pointer.problem}", patched_at))
                continue
            if pointer.address is None:
                out.append(Finding("stray-pointer", f"{where} is not patched: the kernel would use a null pointer",
                                   launch.at))
                continue
            for batch, offset in enumerate(pointer.offsets):
                at = where if not argument.batches else f"{where}, batch {batch} (+{shown_hex(offset)})"
                found = _check_address(residents, phase, argument, at, pointer.address + offset, pointer.words,
                                       at=patched_at)
                out += found
                if found:
                    break            # the first batch that fails says enough
        for mapped in declared_maps(index, launch, contract, argument_word):
            where = mapped.where
            patched_at = written.get(argument_word + mapped.tensor_map.pointer) or launch.at
            if mapped.address is None:
                out.append(Finding("stray-pointer", f"{where}: its pointer word is not patched: the map would "
                                                    f"cover a null pointer", launch.at))
            elif mapped.extent is None:
                out.append(Finding("extent", f"{where}: {mapped.problem}", patched_at))
            else:
                shape = mapped.tensor_map
                counted = (f" (the map's extent: {shape.element_bytes} + (dims - 1) x strides over dims "
                           f"({', '.join(shape.dims)}), strides ({shape.element_bytes}, {', '.join(shape.strides)}))")
                out += _check_address(residents, phase, mapped.pointer, where, mapped.address, {},
                                      (mapped.extent, "", counted), patched_at)
        patched = {p.word for p in launch.patches}
        out += _undeclared_patches(name, launch, contract, argument_word)
        fills = fills_of.get(index, [])
        out += _requirement_findings(name, launch, contract, argument_word, fills, written)
        # (a word an extent or condition names is refused by name already)
        named = {int(w) for f in out[first:] for w in re.findall(r"names parameter word (\d+), which the launch "
                                                                 r"does not set", f.message)}
        out += _unset_scalars(name, launch, contract, argument_word, fills, named)
        for declared in contract.tensor_maps if contract else ():
            if argument_word + declared.word in patched:
                out.append(Finding("contract", f"{name} argument {declared.word} (word "
                                               f"{argument_word + declared.word}): the plan patches it, but "
                                               f"{shown_plan_text(launch.identity)}'s contract declares it a tensor map's word, "
                                               f"which bobc fills with the map's address",
                                   written.get(argument_word + declared.word) or launch.at))
            named = declared.named_words()
            for k, fill in fills:
                hit = sorted(named & set(range(fill.offset // 8, (fill.offset + fill.width - 1) // 8 + 1)))
                if hit:
                    out.append(Finding("contract", f"{name}: host fill {k} rewrites argument {hit[0]} each step, "
                                                   f"from which tensor map word {declared.word} is built at build "
                                                   f"time ({declared.source_text}): the map would go stale",
                                       launch.at))
        out += _filled_pointer_words(name, launch, contract, argument_word, fills)
        out += _unread_fills(name, launch, contract, argument_word, fills)
        for word, value in window_addresses(launch, contract, argument_word, arena.windows):
            if _containing(residents, value) is None:
                index_text = f"argument {word - argument_word} (word {word})" \
                    if word >= argument_word else f"word {word}"
                out.append(Finding("stray-pointer", f"{name} {index_text}: address {shown_hex(value)} lies in a window "
                                                    f"but in no resident; {_nearest(residents, value)}",
                                   written.get(word) or launch.at))
    return out


def _requirement_findings(name: str, launch, contract: KernelContract | None, argument_word: int, fills,
                          written: dict) -> list[Finding]:
    """A launch whose words break a `//@ require` line of its kernel's contract (the shapes its code
    serves: kernels.Requirement), located at the patch of the first word the requirement names; a
    host fill that rewrites such a word each step (the kernel would run on a value never checked)."""
    out: list[Finding] = []
    words = launch_words(launch, argument_word)
    for required in contract.requirements if contract else ():
        source = requirement_source(contract, required)
        first = min(required.named_words(), default=None)
        at = (written.get(argument_word + first) if first is not None else None) or launch.at
        met, value, problem = required.check(words)
        if met is None:
            out.append(Finding("extent", f"{name}: {problem} ({source})", at))
        elif not met:
            message, hint = requirement_refusal(name, shown_plan_text(launch.identity), contract, required, value)
            out.append(Finding("contract", message, at, hint))
        named = required.named_bytes()
        for k, fill in fills:
            hit = sorted(named & set(range(fill.offset, fill.offset + fill.width)))
            if hit:
                out.append(Finding("contract", f"{name}: host fill {k} rewrites argument {hit[0] // 8} each step, which "
                                               f"{source} holds at build time: the kernel would run on a value "
                                               f"never checked", launch.at))
    return out


_PLAIN_TERM = re.compile(r"(?:lo|hi|word)\[\d+\]|\d+")


def requirement_source(contract: KernelContract, required) -> str:
    """Where a `//@ require` line is, as a refusal quotes it: FILE:LINE: the line as written."""
    return f"{contract.source.name}:{required.line}: {required.source_text}"


def requirement_refusal(name: str, kernel: str, contract: KernelContract, required, value: int) -> tuple[str, str]:
    """(message, hint) refusing launch `name` of `kernel`, whose words give `required`'s expression
    `value` outside its rule: the words as the certifier and run_kernel(contract=True) say them."""
    from ..resources import doc
    why = f": {required.what}" if required.what else ""
    shown = required.expression if _PLAIN_TERM.fullmatch(required.expression) else f"({required.expression})"
    return (f"{name}: {shown} is {value} on this launch, and its kernel {kernel} serves only {required.expression} "
            f"{required.rule_text} ({requirement_source(contract, required)}{why})",
            "launch the kernel only with the shapes its contract admits (or with a kernel that serves this one); a "
            f"model's own shape rule refuses such a shape where it is chosen ({doc('kernel-contracts.md')}, "
            "\"Requirements\")")


def program_requirement_findings(program, contracts: dict, target=None, folders=()) -> list[Finding]:
    """Every launch of a WholeProgramPlan held to its kernel's `//@ require` lines (_requirement_findings),
    for a plan whose images the plan's own compiler-native-encode makes (a native physical program:
    its arena certificate is the plan's, and check_pointers does not run on it).  With `target`, a
    region whose kernel source's contract does not parse (footprints.program_conflicts leaves it
    out, for the certifier to say, which does not run here) is refused at its line: a misspelt
    `//@ require` would otherwise drop the check it declares."""
    from ..nvidia.encode import plan_parameter_base
    argument_word = plan_parameter_base(program) // 8
    out: list[Finding] = []
    if target is not None:
        from ..kernel_search import SourceError
        from ..language.modules import specs_folder
        from .kernels import ContractError, find_source, parse_contract

        for identity in dict.fromkeys(r.identity for r in program.regions):
            if identity in contracts:
                continue
            try:
                source = find_source(identity, [*folders, specs_folder()], target)
                if source is not None:
                    parse_contract(source, identity)
            except ContractError as error:
                message, at = error.placed()
                out.append(Finding("contract", message, at))
            except SourceError:
                continue
    for index, launch in enumerate(program.launches):
        if not 0 <= launch.region < len(program.regions):
            continue
        contract = contracts.get(program.regions[launch.region].identity)
        if contract is None or not contract.requirements:
            continue
        name = f"launch {index} ({shown_plan_text(launch.identity)})"
        out += _requirement_findings(name, launch, contract, argument_word, [], {p.word: p.at for p in launch.patches})
    return out
