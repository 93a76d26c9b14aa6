"""Pointers: every address a launch passes lies in one resident, with the extent its kernel touches."""
from __future__ import annotations

from ..plan.model import Plan, Resident
from .findings import Finding, describe, end, span
from .kernels import Argument, KernelContract


def _containing(residents, address: int) -> Resident | None:
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
        return f"nearest: {describe(r)}, which starts {r.address - address} bytes after it"
    return f"nearest: {describe(r)}, which ends {address - end(r) + 1} byte(s) before it"


MAX_BATCHES = 1 << 16          # batches a certificate checks one by one


def _check_address(residents, phase, argument, where: str, address: int, words: dict[int, int]) -> list[Finding]:
    """One address of a declared pointer: in a resident, its extent inside it, the resident in
    the launch's phase."""
    home = _containing(residents, address)
    if home is None:
        return [Finding("stray-pointer", f"{where}: address {address:#x} lies in no resident; "
                                         f"{_nearest(residents, address)}")]
    out = []
    extent, why = argument.extent_for(words, end(home), address)
    if extent is None:
        out.append(Finding("extent", f"{where}: {why}"))
    elif address + extent > end(home):
        over = address + extent - end(home)
        rule = f" ({argument.rule})" if argument.rule else ""
        out.append(Finding("extent", f"{where} {argument.access}s {extent} bytes{rule} at "
                                     f"{address:#x}: {span(address, extent)} runs {over} "
                                     f"byte(s) past {describe(home)}"))
    if phase is not None and (phase.reads or phase.writes):
        readable = {r.name for r in phase.reads} | {r.name for r in phase.writes}
        writable = {r.name for r in phase.writes}
        if argument.writes and home.name not in writable:
            out.append(Finding("phase", f"{where} writes {home.name}, which phase {phase.identity} "
                                        "does not list among its writes"))
        elif argument.reads and home.name not in readable:
            out.append(Finding("phase", f"{where} reads {home.name}, which phase {phase.identity} "
                                        "does not list among its reads"))
    return out


def check_pointers(plan: Plan, contracts: dict[str, KernelContract] | None = None) -> list[Finding]:
    """Every address a launch passes lies in one resident, with the extent its kernel touches.

    The rule.  A launch's patch is an address when (a) its region's kernel
    contract (`contracts`, bobc.certify.kernels) declares the word a pointer
    arguments, or (b) its value lies inside any window (whatever the slot: a
    word the table does not declare, or a kernel the table does not know).
    (a) must be patched (an unpatched pointer is a null pointer), must lie in
    one resident, and the argument's whole extent -- evaluated on the launch's
    own words (Argument.extent_for: `resident`, an expression such as
    4*hi[7], or a size the code fixes) -- must lie in that resident;
    a phase that names what it reads/writes must list that resident.  A
    pointer the kernel moves per batch (`each COUNT by STRIDE`) is held to
    that for every batch's address, each in a resident of its own.  (b)
    must lie in one resident (extent 1 byte, all that is known).  Declared
    scalar slots (binary32 pairs) are never addresses, whatever their value.
    """
    from ..nvidia.encode import plan_parameter_base
    arena = plan.arena
    program = plan.program
    contracts = contracts or {}
    argument_word = plan_parameter_base(program) // 8     # word 0 of the parameters in the plan's bank 0
    residents = arena.globals
    phases = {p.identity: p for p in arena.phases}
    out: list[Finding] = []
    for index, launch in enumerate(program.launches):
        name = f"launch {index} ({launch.identity})"
        if not 0 <= launch.region < len(program.regions):
            out.append(Finding("plan", f"{name} names region {launch.region}; the plan has "
                                       f"{len(program.regions)} regions"))
            continue
        kernel = program.regions[launch.region].identity
        contract = contracts.get(kernel)
        table: dict[int, Argument] = {a.index: a for a in contract.arguments} if contract else {}
        words = {p.word: p.value for p in launch.patches}
        phase = phases.get(launch.identity)
        if arena.phases and phase is None:
            out.append(Finding("phase", f"{name} has no phase in the device arena"))
        for argument in table.values():
            if argument.kind != "pointer":
                continue
            word = argument_word + argument.index
            where = f"{name} argument {argument.index} (word {word}, {argument.what})"
            if word not in words:
                out.append(Finding("stray-pointer", f"{where} is not patched: the kernel would use a null pointer"))
                continue
            own_words = {w - argument_word: v for w, v in words.items()}
            offsets, why = argument.batch_offsets(own_words, MAX_BATCHES)
            if offsets is None:
                out.append(Finding("extent", f"{where}: {why}"))
                continue
            for batch, offset in enumerate(offsets):
                at = where if not argument.batches else f"{where}, batch {batch} (+{offset:#x})"
                found = _check_address(residents, phase, argument, at, words[word] + offset, own_words)
                out += found
                if found:
                    break            # the first batch that fails says enough
        for word, value in sorted(words.items()):
            argument = table.get(word - argument_word)
            if argument is not None and argument.kind in ("pointer", "scalar"):
                continue
            if not any(w.address <= value < end(w) for w in arena.windows):
                continue
            if _containing(residents, value) is None:
                index_text = f"argument {word - argument_word} (word {word})" \
                    if word >= argument_word else f"word {word}"
                out.append(Finding("stray-pointer", f"{name} {index_text}: address {value:#x} lies in a window "
                                                    f"but in no resident; {_nearest(residents, value)}"))
    return out
