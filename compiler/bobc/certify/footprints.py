"""Footprints: the bytes each launch may read and write, for ordering launches.

Two launches of one submission may run at the same time only when neither writes a
byte the other reads or writes.  A launch's footprint is the union, over every pointer
its kernel contract declares and the launch makes the kernel touch (an inactive `when`
or `unless` pointer is left out), of every batch's [address, address + extent) --
exactly the ranges check_pointers holds to the arena (pointers.declared_pointers and
pointer_extent, shared with it), and of every tensor map it makes the kernel read: the
map's extent from its pointer, with that pointer's access (pointers.declared_maps).  The contracts' extents cover every byte a kernel may
touch, so a footprint over-approximates, never under-approximates, what the launch
touches.

`launch_footprints` gives None for a launch whose footprint is unknown -- its region
has no contract, a condition, batch count or extent cannot be evaluated, a pointer is
not patched or lies in no resident with a `resident` extent, or a word the contract
does not declare holds an address inside a window (check_pointers' rule (b): the
kernel may use it; a word declared unused may hold anything, since check_code_reads
refuses code that reads one) -- and a caller must order such a launch against every
other.

Intervals are kept sorted and merged, so that `conflicts` is a bisection per interval
of the shorter list (a submission's pairs in well under a second), never a byte scan.
"""
from __future__ import annotations

from bisect import bisect_left

from ..errors import shown_path
from ..plan.model import Plan
from .kernels import KernelContract
from .limits import shown_bytes
from .pointers import ByAddress, declared_maps, declared_pointers, pointer_extent, window_addresses


def merged(intervals) -> tuple[tuple[int, int], ...]:
    """[start, end) intervals sorted, empty ones dropped, overlapping or adjacent ones joined."""
    out: list[list[int]] = []
    for start, stop in sorted(i for i in intervals if i[1] > i[0]):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], stop)
        else:
            out.append([start, stop])
    return tuple((a, b) for a, b in out)


class _Intervals:
    """Sorted, merged, disjoint [start, end) intervals with their starts and ends apart (bisect)."""

    __slots__ = ("spans", "starts", "ends")

    def __init__(self, spans: tuple[tuple[int, int], ...]):
        self.spans = spans
        self.starts = [a for a, _ in spans]
        self.ends = [b for _, b in spans]

    def meets(self, other: "_Intervals") -> bool:
        """Whether some byte lies in both."""
        if not self.spans or not other.spans:
            return False
        if self.starts[0] >= other.ends[-1] or other.starts[0] >= self.ends[-1]:
            return False
        few, many = (self, other) if len(self.spans) <= len(other.spans) else (other, self)
        for start, stop in few.spans:
            # the last of `many` starting before `stop` ends furthest of those (disjoint, sorted)
            at = bisect_left(many.starts, stop) - 1
            if at >= 0 and many.ends[at] > start:
                return True
        return False


class Footprint:
    """The byte ranges one launch may read and may write (`reads`, `writes`: sorted, merged)."""

    __slots__ = ("reads", "writes", "_writes", "_touched", "pointers")

    def __init__(self, reads=(), writes=(), pointers=()):
        self.reads = merged(reads)
        self.writes = merged(writes)
        # (start, end, what) of each declared pointer's bytes, unmerged, for messages only
        # (nearest_pointer): `what` names its parameter word, its access and extent and //@ line
        self.pointers = tuple(pointers)
        self._writes = _Intervals(self.writes)
        self._touched = _Intervals(merged(self.reads + self.writes))

    def conflicts(self, other: "Footprint") -> bool:
        """True when one writes a byte the other reads or writes (they must stay ordered)."""
        return self._writes.meets(other._touched) or other._writes.meets(self._touched)

    def nearest_pointer(self, address: int) -> str:
        """Which declared pointer's bytes `address` lies in, or lies nearest to, for a message:
        "param P (what: ACCESS EXTENT = N bytes, FILE:LINE) [start, end), A bytes in" (or "A bytes
        past its end", "A bytes before its start"); "" when the footprint names no pointer."""
        def distance(span):
            start, end = span[0], span[1]
            return 0 if start <= address < end else (address - end + 1 if address >= end else start - address)
        if not getattr(self, "pointers", ()):       # a footprint pickled before it had them
            return ""
        start, end, argument, batch, word, source = min(self.pointers, key=lambda span: (distance(span), span[0]))
        where = (f"{shown_bytes(address - start, True)} in" if start <= address < end else
                 f"{shown_bytes(address - end, True)} past its end" if address >= end else
                 f"{shown_bytes(start - address, True)} before its start")
        which = "" if batch is None else f" batch {batch}"
        line = f", {shown_path(source)}:{argument.line}" if argument.line and source else ""
        return (f"param {argument.index}{which} (word {word}, {argument.what}: {argument.access} "
                f"{argument.rule or argument.extent} = {shown_bytes(end - start)}{line}) [{start:#x}, {end:#x}), {where}")

    def __eq__(self, other) -> bool:
        return isinstance(other, Footprint) and (self.reads, self.writes) == (other.reads, other.writes)

    def __repr__(self) -> str:
        show = lambda spans: ", ".join(f"[{a:#x}, {b:#x})" for a, b in spans)   # noqa: E731
        return f"Footprint(reads=[{show(self.reads)}], writes=[{show(self.writes)}])"


def launch_footprint(plan: Plan, index: int, contract: KernelContract | None,
                     argument_word: int, residents=None) -> Footprint | None:
    """Launch `index`'s footprint, or None when it is unknown (the module's docstring).
    `residents`: the plan's global residents as a pointers.ByAddress, where the caller has one."""
    residents = plan.arena.globals if residents is None else residents
    return footprint_of(plan.program.launches[index], index, contract, argument_word, residents,
                        plan.arena.windows)


def footprint_of(launch, index: int, contract: KernelContract | None, argument_word: int, residents,
                 windows=()) -> Footprint | None:
    """launch_footprint of a launch given by itself: anything with `identity` and `patches` (each
    `word`, `value`: bank 0 words from `argument_word` on), held to `residents` (for `resident`
    extents) and `windows` (rule (b)).  bobc.sim.contracts gives it the words a launch's bank 0
    holds when it runs."""
    if contract is None:
        return None
    if window_addresses(launch, contract, argument_word, windows, unused=False):
        return None
    reads, writes, pointers = [], [], []
    for pointer in declared_pointers(index, launch, contract, argument_word):
        if pointer.problem or pointer.address is None:
            return None
        argument = pointer.argument
        for batch, offset in enumerate(pointer.offsets):
            address = pointer.address + offset
            _, extent, _ = pointer_extent(residents, argument, address, pointer.words)
            if extent is None:
                return None
            if argument.reads:
                reads.append((address, address + extent))
            if argument.writes:
                writes.append((address, address + extent))
            # its words, not its text: a message (nearest_pointer) names it, and most launches raise none
            pointers.append((address, address + extent, argument, batch if len(pointer.offsets) > 1 else None,
                             argument_word + argument.index, contract.source))
    for mapped in declared_maps(index, launch, contract, argument_word):
        # the Tensor Memory Accelerator touches the map's extent from its pointer, as that pointer
        if mapped.address is None or mapped.extent is None:
            return None
        if mapped.pointer.reads:
            reads.append((mapped.address, mapped.address + mapped.extent))
        if mapped.pointer.writes:
            writes.append((mapped.address, mapped.address + mapped.extent))
    return Footprint(reads, writes, pointers)


def launch_footprints(plan: Plan, contracts: dict[str, KernelContract]) -> list[Footprint | None]:
    """One entry per plan.program.launches: the launch's Footprint, or None (unknown: order it
    against every other launch)."""
    from ..nvidia.encode import plan_parameter_base

    program = plan.program
    argument_word = plan_parameter_base(program) // 8
    residents = ByAddress(plan.arena.globals)
    out: list[Footprint | None] = []
    for index, launch in enumerate(program.launches):
        if not 0 <= launch.region < len(program.regions):
            out.append(None)
            continue
        out.append(launch_footprint(plan, index, contracts.get(program.regions[launch.region].identity),
                                    argument_word, residents))
    return out


def program_conflicts(program, target, folders=()):
    """The conflict rule bobc.nvidia.launch_order orders a WholeProgramPlan's launches by:
    conflicts(a, b) is true when launch a or b has an unknown footprint or one writes bytes the
    other touches.  The contracts are each region's source for `target` (its
    `<identity>.<target>.sass` or `<identity>.sass`, bobc.kernel_search) in `folders`, then
    specs/.  Only the launches' own words and their contracts are read -- no arena, so a
    `resident` extent makes the launch's footprint unknown -- which gives the same images
    whether the plan is encoded by the build (pipeline.encode) or by a plan's own
    compiler-native-encode.  The function carries the contracts it read (`.contracts`,
    identity -> KernelContract): encode_images writes their tensor maps."""
    from ..language.modules import specs_folder
    from ..kernel_search import SourceError
    from .kernels import ContractError, find_source, parse_contract

    contracts: dict[str, KernelContract] = {}
    for region in program.regions:
        if region.identity in contracts:
            continue
        try:
            source = find_source(region.identity, [*folders, specs_folder()], target)
            if source is None:
                continue
            contracts[region.identity] = parse_contract(source, region.identity)
        except (ContractError, SourceError):
            continue                       # the certifier reports it; unknown here: ordered against all
    return contract_conflicts(program, contracts)


def contract_conflicts(program, contracts: dict):
    """program_conflicts' rule for the contracts given (region identity -> KernelContract; a
    region without one has an unknown footprint), which it carries as `.contracts`."""
    from ..plan.model import DeviceArena

    prints = launch_footprints(Plan(program, DeviceArena((), (), ())), contracts)

    def conflicts(a: int, b: int) -> bool:
        x, y = prints[a], prints[b]
        return x is None or y is None or x.conflicts(y)
    conflicts.contracts = contracts        # the same reading gives encode_images its tensor maps
    conflicts.footprints = prints          # and shows a program residence no launch writes
    return conflicts


def shipped_images(program, target, folders=()):
    """The device images a build writes for `program` (a WholeProgramPlan) and `target`: its
    launches ordered by program_conflicts' rule over the contracts in `folders`, then specs/
    (docs/launch-order.md).  The one encode of a `bobc build` or `bobc check`: the certifier
    sizes the host buffers from these images and the build writes them (bobc.pipeline.encode)."""
    from ..nvidia.encode import encode_images

    return encode_images(program, target, program_conflicts(program, target, folders))
