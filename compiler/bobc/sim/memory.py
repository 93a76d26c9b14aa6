"""GPU virtual memory as the host maps it, and the residents a kernel may touch.

The host allocates each plan buffer at its GPU address (runtime_c/plan_host.c
load_buffers); the simulator keeps one zeroed byte array per buffer.  Host
steps and pushbuffer methods read and write any mapped byte; a kernel's
global loads and stores must each lie inside one arena resident (the
certifier's promise), be naturally aligned (the GPU faults on a misaligned
access), and every access one instruction makes in a block must stay in the
one resident that block's first access of that instruction touched (its
pointer's resident: a kernel addresses one argument per memory instruction in
a block -- the same one in every block, or, in a kernel driven by a table of
pointers in its parameters, the block's own entry: Residency), so a pointer
that strays into a neighbouring resident is reported too, with the launch,
instruction and address.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from ..certify.limits import shown_bytes
from ..errors import shown_plan_text
from .faults import Misaligned, OutOfBounds, SimulationFault


class Residency:
    """The resident each memory instruction of a launch addresses, block by block (the module
    docstring's rule).  The executor names the blocks of the threads whose addresses come next
    (`lanes`); owners() gives each such thread its block's resident for that instruction, the
    first one the block touched with it."""

    def __init__(self, blocks: int):
        self.blocks = blocks
        self.lanes: np.ndarray | None = None
        self.warps: np.ndarray | None = None     # the same threads' warps (for bobc.sim.races), or None
        self._owner: dict[int, np.ndarray] = {}

    def owners(self, pc: int, resident: np.ndarray) -> np.ndarray:
        assert self.lanes is not None and len(self.lanes) == len(resident), "the addressing threads' blocks"
        owner = self._owner.get(pc)
        if owner is None:
            owner = self._owner[pc] = np.full(self.blocks, -1, dtype=np.int64)
        if self.lanes.size == 1:            # one thread: its block's resident, set by its first access
            block = int(self.lanes[0])
            if owner[block] < 0:
                owner[block] = resident[0]
            return owner[self.lanes]
        own = owner[self.lanes]
        new = own < 0
        if new.any():
            blocks, first = np.unique(self.lanes[new], return_index=True)     # a block's first thread decides
            owner[blocks] = resident[new][first]
            own = owner[self.lanes]
        return own


@dataclass
class Buffer:
    name: str
    address: int
    data: np.ndarray        # uint8

    @property
    def end(self) -> int:
        return self.address + self.data.size


@dataclass(frozen=True)
class Resident:
    name: str
    address: int
    size: int


class LaunchAccesses:
    """The 4-byte words of GPU memory one launch read and wrote (address // 4), gathered while
    it runs, for the channel's check that launches the GPU may overlap touch disjoint words
    (bobc.sim.channel).  An access narrower than a word counts as its whole word."""

    def __init__(self):
        self._reads: list[np.ndarray] = []
        self._writes: list[np.ndarray] = []

    @staticmethod
    def _words(addresses: np.ndarray, size: int) -> np.ndarray:
        first = addresses.astype(np.uint64) // np.uint64(4)
        count = max(1, -(-size // 4))
        return first if count == 1 else (first[:, None] + np.arange(count, dtype=np.uint64)).ravel()

    def read(self, addresses: np.ndarray, size: int) -> None:
        self._reads.append(self._words(addresses, size))

    def write(self, addresses: np.ndarray, size: int) -> None:
        self._writes.append(self._words(addresses, size))

    def read_rows(self, starts: np.ndarray, width: int) -> None:
        """Rows [start, start + width) that share their offset within a word (a TMA copy's box
        rows: a 16-byte aligned tensor, strides multiples of 16), every word each row touches."""
        if starts.size:
            offset = int(starts[0]) % 4
            first = starts.astype(np.uint64) // np.uint64(4)
            count = (offset + width + 3) // 4
            self._reads.append((first[:, None] + np.arange(count, dtype=np.uint64)).ravel())

    def sets(self) -> tuple[np.ndarray, np.ndarray]:
        """(words read, words written), each sorted and unique.  The words gathered are let go as
        they are merged (each kept as its merged set): a launch of 800,000 threads gathers some
        200 MB of them, and the merge used to copy them twice while holding them."""
        reads, self._reads = self._reads, []
        reads = _sorted_unique(reads)
        self._reads = [reads]
        writes, self._writes = self._writes, []
        writes = _sorted_unique(writes)
        self._writes = [writes]
        return reads, writes


def _sorted_unique(parts: list[np.ndarray]) -> np.ndarray:
    """The sorted distinct words of `parts` (the list is emptied, its arrays let go before the
    sort).  A sort and a comparison of neighbours, which is what np.unique did before numpy 2.3:
    its hashing replacement takes about 30 times as long on the millions of repeated words a launch touches (4.2 s against 0.15 s for 5 M words, 1 M distinct),
    a third of a simulated training update's time."""
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    words = np.concatenate(parts)     # a new array: sorted in place, with the parts let go first
    parts.clear()
    words.sort()
    keep = np.empty(words.size, dtype=bool)
    keep[:1] = True
    np.not_equal(words[1:], words[:-1], out=keep[1:])
    return words[keep]


def _within(addresses: np.ndarray, size: int, starts: np.ndarray, ends: np.ndarray):
    """(inside, index): whether each [address, address + size) lies in one of the sorted,
    disjoint spans [starts[i], ends[i]), and the span each address falls in (0 where none)."""
    if addresses.size == 1:
        # one thread's access (a single-thread kernel's every load and store): the same answer in
        # Python integers, without the eight NumPy calls below (each costs more than the search)
        address = int(addresses[0])
        k = int(starts.searchsorted(address, side="right")) - 1 if starts.size else -1
        ok = k >= 0 and (not ends.size or address + size <= int(ends[k]))
        return np.array([ok]), np.array([max(k, 0)], dtype=np.int64)
    index = np.searchsorted(starts, addresses, side="right").astype(np.int64) - 1
    inside = index >= 0
    safe = np.where(inside, index, 0)
    if ends.size:
        inside &= addresses + np.uint64(size) <= ends[safe]
    return inside, safe


class Memory:
    def __init__(self, buffers: list[Buffer], residents: list[Resident]):
        self.buffers = sorted(buffers, key=lambda b: b.address)
        for low, high in zip(self.buffers, self.buffers[1:]):
            if low.end > high.address:
                raise SimulationFault(f"buffers {shown_plan_text(low.name)} and {shown_plan_text(high.name)} overlap")
        self._buffer_starts = [b.address for b in self.buffers]
        self._buffer_ends = [b.end for b in self.buffers]
        self.residents = sorted(residents, key=lambda r: r.address)
        for resident in self.residents:
            buffer = self._buffer_of(resident.address, resident.size)
            if buffer is None:
                raise SimulationFault(f"resident {shown_plan_text(resident.name)} [{resident.address:#x}, +{resident.size}) "
                                      "lies in no mapped buffer")
        self.accesses: LaunchAccesses | None = None     # the running launch's, when the channel gathers them
        self.footprint = None     # the running launch's contract footprint (certify.footprints), when known
        self.tensor_maps = None   # the addresses of the tensor maps its contract declares, when known
        self.races = None         # the running launch's bobc.sim.races.BlockOrder, when it has several blocks
        self._footprint_spans = (None, None, None)
        self._starts = np.array([r.address for r in self.residents], dtype=np.uint64)
        self._ends = np.array([r.address + r.size for r in self.residents], dtype=np.uint64)

    # ------------------------------------------------------------ host side
    def _buffer_of(self, address: int, size: int) -> Buffer | None:
        """The buffer holding [address, address + size), or None.  The buffers are sorted and
        disjoint, so for a size of at least 1 only the last one starting at or below the address
        can hold it (a bisection: a TMA copy reads a box row by row, a million reads an update)."""
        if size > 0:
            k = bisect_right(self._buffer_starts, address) - 1
            if k >= 0 and address + size <= self._buffer_ends[k]:
                return self.buffers[k]
            return None
        for b in self.buffers:
            if b.address <= address and address + size <= b.end:
                return b
        return None

    def view(self, address: int, size: int, what: str = "an access") -> np.ndarray:
        """The mapped bytes [address, address + size) (a writable view)."""
        buffer = self._buffer_of(address, size)
        if buffer is None:
            raise SimulationFault(f"{what}: {size} bytes at {address:#x} lie in no mapped buffer")
        offset = address - buffer.address
        return buffer.data[offset:offset + size]

    def read(self, address: int, size: int, what: str = "a read") -> bytes:
        return self.view(address, size, what).tobytes()

    def write(self, address: int, data: bytes, what: str = "a write") -> None:
        self.view(address, len(data), what)[:] = np.frombuffer(data, dtype=np.uint8)

    def u64(self, address: int, what: str = "a read") -> int:
        return int.from_bytes(self.read(address, 8, what), "little")

    # ------------------------------------------------------------ kernel side
    def _check(self, addresses: np.ndarray, size: int, launch: str, pc: int, what: str,
               touched: Residency | None = None, alignment: int | None = None) -> np.ndarray:
        """Each address's resident index; faults named.  `touched` (a Residency) holds the
        resident each block addressed first with an instruction in this launch.  `alignment`: the
        multiple each address must be (the access's size unless given)."""
        misaligned = addresses % np.uint64(alignment or size) != 0
        if misaligned.any():
            first = int(np.argmax(misaligned))
            raise Misaligned(launch, pc, int(addresses[first]), alignment or size, what, index=first)
        inside, safe = _within(addresses, size, self._starts, self._ends)
        if not inside.all():
            first = int(np.argmin(inside))
            bad = int(addresses[first])
            near = self._nearest(bad)
            pointer = self.footprint.nearest_pointer(bad) if self.footprint is not None else ""
            near += f"; the nearest declared pointer: {pointer}" if pointer else ""
            raise OutOfBounds(launch, pc, bad, size, what, f"lies outside every arena resident ({near})", index=first)
        if touched is not None:
            owners = touched.owners(pc, safe)
            stray = safe != owners
            if stray.any():
                first = int(np.argmax(stray))
                bad = int(addresses[first])
                r = self.residents[int(owners[first])]
                where = (f"{shown_bytes(bad - (r.address + r.size), True)} past the end of {shown_plan_text(r.name)} [{r.address:#x}, "
                         f"{r.address + r.size:#x})" if bad >= r.address + r.size else
                         f"{shown_bytes(r.address - bad, True)} before the start of {shown_plan_text(r.name)} [{r.address:#x}, "
                         f"{r.address + r.size:#x})")
                raise OutOfBounds(launch, pc, bad, size, what,
                                  f"strays {where}, the resident this instruction addresses, into "
                                  f"{shown_plan_text(self.residents[int(safe[first])].name)}", index=first)
        return safe

    def _declared(self, addresses: np.ndarray, size: int, launch: str, pc: int, what: str, writes: bool) -> None:
        """Every byte accessed lies in what the launch's kernel contract declares it may read (or,
        for a store, write): a contract declaring less than its code touches would let the
        encoder run two launches at once that race, and certify a plan it cannot see into."""
        if self._footprint_spans[0] is not self.footprint:      # the launch's spans as arrays, once a launch
            from ..certify.footprints import merged

            def arrays(spans):
                spans = merged(spans)            # sorted, overlapping and touching spans joined
                return (np.array([a for a, _ in spans], dtype=np.uint64),
                        np.array([b for _, b in spans], dtype=np.uint64))
            self._footprint_spans = (self.footprint, arrays(self.footprint.reads + self.footprint.writes),
                                     arrays(self.footprint.writes))
        inside, _ = _within(addresses, size, *self._footprint_spans[2 if writes else 1])
        if not inside.all():
            first = int(np.argmin(inside))
            bad = int(addresses[first])
            declared = "writes" if writes else "reads or writes"
            nearest = self.footprint.nearest_pointer(bad)
            nearest = f"; the nearest declared pointer: {nearest}" if nearest else ""
            raise OutOfBounds(launch, pc, bad, size, what,
                              f"{'writes' if writes else 'reads'} bytes its kernel's contract does not say it "
                              f"{declared} ({self.resident_of(bad)}{nearest})", contract=True, index=first)

    def store_words(self) -> tuple[np.ndarray, np.ndarray]:
        """The 4-byte words (address // 4) the running launch's stores can reach, as sorted disjoint
        [start, end) spans: those its contract declares it writes (where every store must lie), or
        with no contract the residents'."""
        if self.footprint is not None:
            from ..certify.footprints import merged
            spans = self.footprint.writes
        else:
            def merged(spans):
                return spans
            spans = [(int(a), int(b)) for a, b in zip(self._starts, self._ends)]
        words = []
        for a, b in sorted((a // 4, -(-b // 4)) for a, b in merged(spans) if b > a):
            if words and a <= words[-1][1]:
                words[-1][1] = max(words[-1][1], b)
            else:
                words.append([a, b])
        return (np.array([a for a, _ in words], dtype=np.uint64), np.array([b for _, b in words], dtype=np.uint64))

    def resident_of(self, address: int) -> str:
        """Where `address` lies, for a message: "in NAME, N bytes in", or "in no resident"."""
        index = int(np.searchsorted(self._starts, np.uint64(address), side="right")) - 1
        if index >= 0 and address < int(self._ends[index]):
            resident = self.residents[index]
            return f"in {shown_plan_text(resident.name)}, {address - resident.address} bytes in"
        return "in no resident"

    def _nearest(self, address: int) -> str:
        before = [r for r in self.residents if r.address <= address]
        if before:
            r = before[-1]
            return f"{shown_bytes(address - (r.address + r.size), True)} past the end of {shown_plan_text(r.name)} " \
                   f"[{r.address:#x}, {r.address + r.size:#x})" if address >= r.address + r.size else \
                   f"inside {shown_plan_text(r.name)} but running past its end"
        return "below the first resident"

    def _arrays(self, addresses: np.ndarray, size: int) -> list:
        """[(threads, buffer, byte index matrix)] covering every address: one entry (threads a full
        slice) when all lie in one buffer, as a launch's accesses to its plan's arena do; else one per
        buffer the access reaches (a table-driven kernel's threads, each in its own buffer)."""
        first = int(addresses.min())
        buffer = self._buffer_of(first, 1)
        last = int(addresses.max())
        if buffer is not None and last + size <= buffer.end:
            offsets = (addresses - np.uint64(buffer.address)).astype(np.int64)
            return [(slice(None), buffer, offsets[:, None] + np.arange(size, dtype=np.int64))]
        out, left = [], np.ones(addresses.size, dtype=bool)
        for buffer in self.buffers:
            inside = left & (addresses >= np.uint64(buffer.address)) & (addresses + np.uint64(size) <= np.uint64(buffer.end))
            if inside.any():
                offsets = (addresses[inside] - np.uint64(buffer.address)).astype(np.int64)
                out.append((inside, buffer, offsets[:, None] + np.arange(size, dtype=np.int64)))
                left &= ~inside
        if left.any():
            bad = int(addresses[np.argmax(left)])
            raise SimulationFault(f"an access of {size} bytes at {bad:#x} lies in no mapped buffer (or spans two)")
        return out

    def _rows(self, addresses: np.ndarray, size: int):
        """(the buffer's bytes as rows of `size`, each access's row) where every access lies in one
        buffer at a multiple of `size` from its start, as an aligned access to a plan's arena does;
        else None.  A gather or scatter of whole rows needs no int64 [threads, size] index matrix
        (8 bytes for each byte moved: 106 MB for a 16-byte load of an 830,976-thread launch)."""
        one = addresses.size == 1          # one thread's access: its row in Python integers
        low = int(addresses[0]) if one else int(addresses.min())
        buffer = self._buffer_of(low, 1)
        data = None if buffer is None else buffer.data
        if (data is None or (low if one else int(addresses.max())) + size > buffer.end or buffer.address % size
                or data.size % size or data.dtype != np.uint8 or not data.flags.c_contiguous):
            return None
        unit = next(u for u in (8, 4, 2, 1) if size % u == 0)
        if one:
            if (low - buffer.address) % size:
                return None
            return data.view(f"<u{unit}").reshape(-1, size // unit), np.array([(low - buffer.address) // size])
        offsets = addresses - np.uint64(buffer.address)
        if (offsets % np.uint64(size)).any():
            return None
        return data.view(f"<u{unit}").reshape(-1, size // unit), (offsets // np.uint64(size)).astype(np.int64)

    def _gather(self, addresses: np.ndarray, size: int) -> np.ndarray:
        """uint8 [threads, size]: each thread's bytes."""
        rows = self._rows(addresses, size)
        if rows is not None:
            table, index = rows
            return table[index].view(np.uint8).reshape(addresses.size, size)
        pieces = self._arrays(addresses, size)
        if len(pieces) == 1:
            return np.ascontiguousarray(pieces[0][1].data[pieces[0][2]])
        out = np.empty((addresses.size, size), dtype=np.uint8)
        for threads, buffer, index in pieces:
            out[threads] = buffer.data[index]
        return out

    def _scatter(self, addresses: np.ndarray, data: np.ndarray) -> None:
        rows = self._rows(addresses, data.shape[1])
        if rows is not None:
            table, index = rows
            table[index] = np.ascontiguousarray(data, dtype=np.uint8).view(table.dtype).reshape(index.size, -1)
            return
        for threads, buffer, index in self._arrays(addresses, data.shape[1]):
            buffer.data[index] = data[threads]

    def _race(self, addresses: np.ndarray, size: int, pc: int, touched: Residency | None, writes: bool) -> None:
        """A plain access recorded for the check of races between the launch's blocks.  A load of
        bytes the launch's contract does not let it write is not: every store lies in those
        (_declared refuses any other), so no block stores to them (most of what a launch reads)."""
        if self.races is None or touched is None or touched.lanes is None:
            return
        lanes, warps = touched.lanes, touched.warps
        if not writes and self.footprint is not None:
            near = self._may_be_written(addresses, size)
            addresses, lanes = addresses[near], lanes[near]
            warps = warps[near] if warps is not None else None
        self.races.access(addresses, size, lanes, pc, writes, warps)

    def _may_be_written(self, addresses: np.ndarray, size: int) -> np.ndarray:
        """Which [address, address + size) overlap the launch's declared writes (set by _declared)."""
        starts, ends = self._footprint_spans[2]
        last = np.searchsorted(starts, addresses + np.uint64(size), side="left").astype(np.int64) - 1
        return (last >= 0) & (ends[np.maximum(last, 0)] > addresses) if ends.size else np.zeros(addresses.size, bool)

    def load(self, addresses: np.ndarray, size: int, launch: str, pc: int, what: str,
             touched: Residency | None = None, plain: bool = True) -> np.ndarray:
        """uint32 words [threads, size/4] loaded from each thread's address.  `plain`: False for
        an atomic's (checked here, never one side of a race between blocks: bobc.sim.races), which
        also writes, so its bytes must lie in what the contract says the launch writes: an atomic
        through a `read` pointer was accepted before probe s47 newuser12, though the launch order
        reads a `read` pointer's bytes as untouched by the launch's writes."""
        if addresses.size == 0:
            return np.zeros((0, size // 4), dtype=np.uint32)
        self._check(addresses, size, launch, pc, what, touched)
        if self.footprint is not None:
            self._declared(addresses, size, launch, pc, what, writes=not plain)
        if self.accesses is not None:
            self.accesses.read(addresses, size)
        if plain:
            self._race(addresses, size, pc, touched, writes=False)
        return self._gather(addresses, size).view("<u4").reshape(addresses.size, size // 4)

    def store(self, addresses: np.ndarray, words: np.ndarray, launch: str, pc: int, what: str,
              touched: Residency | None = None) -> None:
        if addresses.size == 0:
            return
        size = 4 * words.shape[1]
        self._check(addresses, size, launch, pc, what, touched)
        if self.footprint is not None:
            self._declared(addresses, size, launch, pc, what, writes=True)
        if self.accesses is not None:
            self.accesses.write(addresses, size)
        self._race(addresses, size, pc, touched, writes=True)
        self._scatter(addresses, np.ascontiguousarray(words.astype("<u4")).view(np.uint8).reshape(addresses.size, size))

    def load_bytes(self, addresses: np.ndarray, size: int, launch: str, pc: int, what: str,
                   touched: Residency | None = None) -> np.ndarray:
        """Sub-word loads: uint8 [threads, size] from each thread's address."""
        if addresses.size == 0:
            return np.zeros((0, size), dtype=np.uint8)
        self._check(addresses, size, launch, pc, what, touched)
        if self.footprint is not None:
            self._declared(addresses, size, launch, pc, what, writes=False)
        if self.accesses is not None:
            self.accesses.read(addresses, size)
        self._race(addresses, size, pc, touched, writes=False)
        return self._gather(addresses, size)

    def read_rows(self, starts: np.ndarray, width: int, element: int, launch: str, pc: int, what: str,
                  touched: Residency | None = None) -> None:
        """A TMA copy's reads of global memory, held to a load's rules: the rows [start, start +
        width) of its box's in-bounds elements (out-of-bounds ones touch no memory), each inside
        one arena resident (the same one for every row the instruction reads in a block), inside
        the launch's contract footprint, and recorded for the launch-order check.  The caller
        gathers the bytes."""
        if starts.size == 0:
            return
        self._check(starts, width, launch, pc, what, touched, alignment=element)
        if self.footprint is not None:
            self._declared(starts, width, launch, pc, what, writes=False)
        if self.accesses is not None:
            self.accesses.read_rows(starts, width)
        if self.races is not None and touched is not None and touched.lanes is not None:
            near = self._may_be_written(starts, width) if self.footprint is not None else slice(None)
            self.races.rows(starts[near], width, int(touched.lanes[0]), pc,
                            int(touched.warps[0]) if touched.warps is not None else None)

    def store_bytes(self, addresses: np.ndarray, data: np.ndarray, launch: str, pc: int, what: str,
                    touched: Residency | None = None) -> None:
        """Sub-word stores: data is uint8 [threads, size]."""
        if addresses.size == 0:
            return
        size = data.shape[1]
        self._check(addresses, size, launch, pc, what, touched)
        if self.footprint is not None:
            self._declared(addresses, size, launch, pc, what, writes=True)
        if self.accesses is not None:
            self.accesses.write(addresses, size)
        self._race(addresses, size, pc, touched, writes=True)
        self._scatter(addresses, data)
