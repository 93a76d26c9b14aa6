"""The GPU channel: GPFIFO entries -> pushbuffer methods -> semaphores and launches.

Formats and method offsets are declared here from open-gpu-doc, not taken
from bobc.nvidia: classes/host/clc56f.h (AMPERE_CHANNEL_GPFIFO_A; Hopper's
clc86f.h keeps these offsets) for GP entries, method headers and the host
semaphore methods; classes/compute/clc7c0.h and clcbc0.h for the compute
methods (the offsets we use are the same in both classes).  Every method the
simulator executes is listed by name; any other is refused by name.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from ..nvidia.pushbuffer import (SEM_EXECUTE_OPERATION, SEM_EXECUTE_PAYLOAD_SIZE_64BIT, SEM_EXECUTE_REDUCTION_SHIFT,
                                 SEM_EXECUTE_REDUCTIONS, SEM_EXECUTE_RELEASE_TIMESTAMP, SEM_EXECUTE_RELEASE_WFI)
from . import qmd_fields, sass_frontend
from ..resources import doc
from .executor import MAX_STEPS, Launch, LaunchGeometry
from .faults import SimulationFault, Unmodeled, UnorderedLaunches
from .contracts import begin_copies, end_copies
from .memory import LaunchAccesses, Memory
from .qmd_reader import COMPUTE_CLASSES, LaunchDescription, read_launch

# clc56f.h NVC56F_GP_ENTRY0/1: (dword, high, low)
GP_ENTRY = {"FETCH": (0, 0, 0), "GET": (0, 31, 2), "GET_HI": (1, 7, 0), "LEVEL": (1, 9, 9),
            "LENGTH": (1, 30, 10), "SYNC": (1, 31, 31), "OPCODE": (1, 7, 0)}
# clc56f.h NVC56F_DMA_*: method header fields
HEADER = {"ADDRESS": (11, 0), "SUBCHANNEL": (15, 13), "COUNT": (28, 16), "SEC_OP": (31, 29)}
SEC_OPS = {0: "GRP0_USE_TERT", 1: "INC_METHOD", 2: "GRP2_USE_TERT", 3: "NON_INC_METHOD",
           4: "IMMD_DATA_METHOD", 5: "ONE_INC", 6: "RESERVED", 7: "END_PB_SEGMENT"}
# Host methods (clc56f.h), every subchannel
HOST_METHODS = {0x0000: "SET_OBJECT", 0x005C: "SEM_ADDR_LO", 0x0060: "SEM_ADDR_HI",
                0x0064: "SEM_PAYLOAD_LO", 0x0068: "SEM_PAYLOAD_HI", 0x006C: "SEM_EXECUTE"}
# The host channel class of the GPU each compute class runs on, and the width of its
# SEM_ADDR_HI OFFSET (address bits 32 and up): AMPERE_CHANNEL_GPFIFO_A's is 7:0 (clc56f.h
# NVC56F_SEM_ADDR_HI_OFFSET), HOPPER_CHANNEL_GPFIFO_A's 24:0 (OGKM clc86f.h); the host takes
# those bits of the data and no others.
CHANNEL_CLASSES = {0xC7C0: ("AMPERE_CHANNEL_GPFIFO_A", 8), 0xCBC0: ("HOPPER_CHANNEL_GPFIFO_A", 25)}
# Compute methods (clc7c0.h / clcbc0.h)
COMPUTE_METHODS = {
    0x0100: "NO_OPERATION", 0x0110: "WAIT_FOR_IDLE",
    0x02A0: "SET_SHADER_SHARED_MEMORY_WINDOW_A", 0x02A4: "SET_SHADER_SHARED_MEMORY_WINDOW_B",
    0x02B4: "SEND_PCAS_A", 0x02C0: "SEND_SIGNALING_PCAS2_B",
    0x02E4: "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A", 0x02E8: "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B",
    0x02EC: "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C",
    0x0790: "SET_SHADER_LOCAL_MEMORY_A", 0x0794: "SET_SHADER_LOCAL_MEMORY_B",
    0x07B0: "SET_SHADER_LOCAL_MEMORY_WINDOW_A", 0x07B4: "SET_SHADER_LOCAL_MEMORY_WINDOW_B",
    0x1698: "INVALIDATE_SHADER_CACHES_NO_WFI",
}
# Methods whose only effect the simulator needs is their value: the local memory backing
# (our kernels use none: the executor models no local memory instruction) and the cache
# invalidation (the simulator has no caches: every read sees memory).
RECORDED_METHODS = frozenset({
    "SET_SHADER_LOCAL_MEMORY_A", "SET_SHADER_LOCAL_MEMORY_B", "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A",
    "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B", "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C",
    "INVALIDATE_SHADER_CACHES_NO_WFI"})
# SEND_SIGNALING_PCAS2_B PCAS_ACTION 3:0 values that schedule the QMD (the simulator
# always reads the QMD from memory, so the invalidate/copy parts need nothing more)
LAUNCHING_ACTIONS = {2: "SCHEDULE", 3: "INVALIDATE_COPY_SCHEDULE"}
QMD_BYTES = {layout: (max(h for h, _ in qmd_fields.all_fields(layout).values()) + 32) // 32 * 4
             for layout in qmd_fields.LAYOUTS}


def _bits(value: int, high: int, low: int) -> int:
    return (value >> low) & ((1 << (high - low + 1)) - 1)


@dataclass(frozen=True)
class GPEntry:
    address: int
    dwords: int
    level: int
    sync: int


def decode_gp_entry(raw: bytes, index: int) -> GPEntry:
    words = (int.from_bytes(raw[0:4], "little"), int.from_bytes(raw[4:8], "little"))

    def get(name):
        w, high, low = GP_ENTRY[name]
        return _bits(words[w], high, low)
    if get("FETCH"):
        raise Unmodeled(f"GPFIFO entry {index} asks for a conditional fetch, which the simulator does not model")
    length = get("LENGTH")
    if length == 0:
        raise Unmodeled(f"GPFIFO entry {index} is a control entry (opcode {get('OPCODE')}), not modeled")
    if get("LEVEL"):
        raise Unmodeled(f"GPFIFO entry {index} is a SUBROUTINE entry, which the simulator does not model")
    return GPEntry(get("GET") << 2 | get("GET_HI") << 32, length, get("LEVEL"), get("SYNC"))


@dataclass
class ChannelLog:
    """What the channel did, for tests and `bobc sim`'s summary."""

    methods: list = field(default_factory=list)     # (entry, name, data)
    launches: list = field(default_factory=list)    # (qmd address, description name)
    releases: list = field(default_factory=list)    # (address, payload)


def manifest_shared_bytes(manifest: dict) -> dict[int, int]:
    """QMD address -> the shared bytes its launch's region gives a block, before the QMD rounds
    them up to the target's granule (Channel's `shared_bytes`), for the regions whose manifest
    entry says them."""
    sizes = {region["index"]: region["shared_bytes"] for region in manifest["regions"] if "shared_bytes" in region}
    return {launch["qmd_address"]: sizes[launch["region"]] for launch in manifest["launches"]
            if launch["region"] in sizes and "qmd_address" in launch}


def manifest_code_bytes(manifest: dict) -> dict[int, int]:
    """QMD address -> the size of the code its launch runs, from an images manifest (Channel's
    `code_bytes`)."""
    sizes = {region["index"]: region["size"] for region in manifest["regions"]}
    return {launch["qmd_address"]: sizes[launch["region"]] for launch in manifest["launches"]}


def _first_common(mine: np.ndarray, theirs: np.ndarray) -> int | None:
    """The smallest word in both sorted, distinct arrays, or None: np.intersect1d's first, found
    by bisecting the longer for each word of the shorter instead of sorting both together (a
    launch's words against every launch it may overlap: a sixth of a simulated update's time)."""
    if not mine.size or not theirs.size:
        return None
    few, many = (mine, theirs) if mine.size <= theirs.size else (theirs, mine)
    at = np.searchsorted(many, few)
    inside = at < many.size
    hit = np.zeros(few.size, dtype=bool)
    hit[inside] = many[at[inside]] == few[inside]
    return int(few[np.argmax(hit)]) if hit.any() else None


class Channel:
    """A channel's methods executed in order; each launch runs to completion when scheduled.

    The GPU may instead start a grid while the one before it still runs, unless a
    WAIT_FOR_IDLE (or a semaphore release with RELEASE_WFI) stands between them, or the
    earlier QMD schedules the later as its dependent QMD (which starts once the earlier grid
    has ended; the channel runs it right after).  With `check_order` the channel keeps the
    words each launch read and wrote since the last such wait, and refuses a launch that
    touches a word one of them wrote, or writes a word one of them read (UnorderedLaunches):
    a race on the GPU that running launches one by one hides.
    """

    def __init_subclass__(cls, **kwargs):
        # A channel that ran launches its own way used to override `launch`; it would now skip
        # every launch a QMD schedules.  Refuse it where it is written, not where weights differ.
        super().__init_subclass__(**kwargs)
        if "launch" in cls.__dict__:
            raise TypeError(f"{cls.__qualname__} overrides Channel.launch; override run_qmd instead (it runs one "
                            "QMD and returns the dependent QMD it schedules, which launch then runs)")

    def __init__(self, memory: Memory, check_hazards: bool = True, launch_names: dict | None = None,
                 check_order: bool = True, code_bytes: dict | None = None, max_steps: int | None = None, *,
                 contracts, shared_bytes: dict | None = None):
        self.memory = memory
        self.max_steps = max_steps or MAX_STEPS     # instructions one launch may issue (executor.Launch)
        # every launched kernel's contract (bobc.sim.contracts.LaunchContracts), which each launch is
        # held to on the words its bank 0 holds: every access inside its footprint, a TMA copy only
        # through the maps its `//@ tensormap` words hold.  Required, so that no caller runs a
        # host's launches unchecked by leaving it out: None (a channel that runs no kernel of a
        # plan's, or a test of one launch's mechanics) says so where the channel is made.
        self.contracts = contracts
        # QMD address -> its kernel's code size (the images' manifest): a QMD whose program
        # prefetch is for what follows it (PREFETCH_POST) does not say where its own code ends
        self.code_bytes = code_bytes or {}
        # QMD address -> the shared bytes its region gives a block (manifest_shared_bytes): an
        # access past them, though inside the QMD's rounded window, is refused
        self.shared_bytes = shared_bytes or {}
        self.check_hazards = check_hazards
        self.check_order = check_order
        self.unordered: list[tuple] = []   # (where, reads, writes, token) of launches since the last wait for idle
        self._token = 0                    # numbers each launch run, for its dependents' `_ancestors`
        self._ancestors: frozenset = frozenset()
        self._current = 0
        self.launch_names = launch_names or {}
        self.bound: dict[int, int] = {}             # subchannel -> class
        self.sem_address = 0
        self.sem_payload = 0
        self.pcas_qmd = None
        self.windows = {"shared": None, "local": None}
        self.state: dict[str, int] = {}
        self.timestamp = 0
        self.log = ChannelLog()
        self._code_cache: dict[str, list] = {}

    # ------------------------------------------------------------ GPFIFO
    def run_entry(self, raw_entry: bytes, index: int) -> None:
        entry = decode_gp_entry(raw_entry, index)
        data = self.memory.read(entry.address, 4 * entry.dwords, f"GPFIFO entry {index}'s pushbuffer segment")
        self.run_segment(data, f"GPFIFO entry {index}")

    def run_segment(self, data: bytes, where: str) -> None:
        dwords = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
        i = 0
        while i < len(dwords):
            head = dwords[i]
            sec_op = _bits(head, *HEADER["SEC_OP"])
            count = _bits(head, *HEADER["COUNT"])
            sub = _bits(head, *HEADER["SUBCHANNEL"])
            method = _bits(head, *HEADER["ADDRESS"]) << 2
            at = f"{where}, dword {i}"
            if sec_op == 4:
                writes, i = [(method, count)], i + 1
            elif sec_op in (1, 3, 5):
                body = dwords[i + 1:i + 1 + count]
                if len(body) < count:
                    raise SimulationFault(f"{at}: a method header wants {count} data dwords; the segment "
                                          f"ends after {len(body)}")
                step = {1: lambda k: 4 * k, 3: lambda k: 0, 5: lambda k: 4 if k else 0}[sec_op]
                writes, i = [(method + step(k), d) for k, d in enumerate(body)], i + 1 + count
            else:
                raise Unmodeled(f"{at}: header {head:#010x} uses SEC_OP {SEC_OPS[sec_op]}, not modeled")
            for offset, value in writes:
                self.method(sub, offset, value, at)

    # ------------------------------------------------------------ methods
    def method(self, sub: int, offset: int, data: int, at: str) -> None:
        if offset < 0x100:
            name = HOST_METHODS.get(offset)
            if name is None:
                raise Unmodeled(f"{at}: host method {offset:#06x} is not one the simulator models "
                                f"({', '.join(HOST_METHODS.values())})")
        else:
            if sub not in self.bound:
                raise SimulationFault(f"{at}: method {offset:#06x} on subchannel {sub}, which no SET_OBJECT bound")
            name = COMPUTE_METHODS.get(offset)
            if name is None:
                raise Unmodeled(f"{at}: compute method {offset:#06x} is not one the simulator models")
        self.log.methods.append((at, name, data))
        if name in RECORDED_METHODS:
            self.state[name] = data
        else:
            getattr(self, "m_" + name)(sub, data, at)

    def m_SET_OBJECT(self, sub, data, at):
        cls = data & 0xFFFF
        if cls not in COMPUTE_CLASSES:
            raise Unmodeled(f"{at}: SET_OBJECT binds class {cls:#06x}; the simulator models the compute classes "
                            + ", ".join(f"{v[0]} ({k:#06x})" for k, v in COMPUTE_CLASSES.items()))
        self.bound[sub] = cls

    def m_SEM_ADDR_LO(self, sub, data, at):
        self.sem_address = (self.sem_address & ~0xFFFFFFFF) | (data & 0xFFFFFFFC)

    def m_SEM_ADDR_HI(self, sub, data, at):
        classes = {CHANNEL_CLASSES[cls] for cls in self.bound.values()}
        if len(classes) != 1:
            raise SimulationFault(f"{at}: SEM_ADDR_HI with {'no compute class' if not classes else 'compute classes of two GPUs'} "
                                  "bound: the simulator reads the channel's class (SEM_ADDR_HI's width) from the "
                                  "compute class SET_OBJECT binds first")
        _channel, width = classes.pop()
        self.sem_address = (self.sem_address & 0xFFFFFFFF) | ((data & (1 << width) - 1) << 32)

    def m_SEM_PAYLOAD_LO(self, sub, data, at):
        self.sem_payload = (self.sem_payload & ~0xFFFFFFFF) | data

    def m_SEM_PAYLOAD_HI(self, sub, data, at):
        self.sem_payload = (self.sem_payload & 0xFFFFFFFF) | (data << 32)

    def m_SEM_EXECUTE(self, sub, data, at):
        operation = SEM_EXECUTE_OPERATION.get(data & 7, f"OPERATION_{data & 7}")
        wide = bool(data & SEM_EXECUTE_PAYLOAD_SIZE_64BIT)
        size = 8 if wide else 4
        payload = self.sem_payload if wide else self.sem_payload & 0xFFFFFFFF
        if data & SEM_EXECUTE_RELEASE_WFI:
            self.unordered.clear()                # the engine is idle before the release
        if operation == "RELEASE":
            # launches complete synchronously here, so RELEASE_WFI holds by construction
            self.memory.write(self.sem_address, payload.to_bytes(size, "little"), f"{at}: semaphore release")
            if data & SEM_EXECUTE_RELEASE_TIMESTAMP:
                self.timestamp += 1000
                self.memory.write(self.sem_address + 8, self.timestamp.to_bytes(8, "little"),
                                  f"{at}: semaphore timestamp")
            self.log.releases.append((self.sem_address, payload))
        elif operation == "REDUCTION":
            # a counting submission's end (bobc.nvidia.encode's counting segments): the semaphore += payload, wrapping
            reduction = SEM_EXECUTE_REDUCTIONS.get(data >> SEM_EXECUTE_REDUCTION_SHIFT & 0xF)
            if reduction != "IADD":             # the only reduction bobc's images use
                raise Unmodeled(f"{at}: SEM_EXECUTE REDUCTION {reduction or data >> SEM_EXECUTE_REDUCTION_SHIFT & 0xF} "
                                "is not modeled")
            value = int.from_bytes(self.memory.read(self.sem_address, size, f"{at}: semaphore reduction"), "little")
            self.memory.write(self.sem_address, ((value + payload) % (1 << 8 * size)).to_bytes(size, "little"),
                              f"{at}: semaphore reduction")
            self.log.releases.append((self.sem_address, payload))
        elif operation in ("ACQUIRE", "ACQ_STRICT_GEQ"):
            value = int.from_bytes(self.memory.read(self.sem_address, size, f"{at}: semaphore acquire"), "little")
            if (value != payload) if operation == "ACQUIRE" else (value < payload):
                raise SimulationFault(f"{at}: SEM_EXECUTE {operation} waits for {payload:#x} at "
                                      f"{self.sem_address:#x}, which holds {value:#x}: the channel would wait forever")
        else:
            raise Unmodeled(f"{at}: SEM_EXECUTE operation {operation} is not modeled")

    def m_NO_OPERATION(self, sub, data, at):
        pass

    def m_WAIT_FOR_IDLE(self, sub, data, at):
        self.unordered.clear()                    # what follows starts after everything before has ended

    def _window(self, kind, part, data):
        self.state[f"{kind}_{part}"] = data
        if f"{kind}_A" in self.state and f"{kind}_B" in self.state:
            self.windows[kind] = self.state[f"{kind}_A"] << 32 | self.state[f"{kind}_B"]

    def m_SET_SHADER_SHARED_MEMORY_WINDOW_A(self, sub, data, at):
        self._window("shared", "A", data & 0x1FFFF)

    def m_SET_SHADER_SHARED_MEMORY_WINDOW_B(self, sub, data, at):
        self._window("shared", "B", data)

    def m_SET_SHADER_LOCAL_MEMORY_WINDOW_A(self, sub, data, at):
        self._window("local", "A", data & 0x1FFFF)

    def m_SET_SHADER_LOCAL_MEMORY_WINDOW_B(self, sub, data, at):
        self._window("local", "B", data)

    def m_SEND_PCAS_A(self, sub, data, at):
        self.pcas_qmd = data << 8

    def m_SEND_SIGNALING_PCAS2_B(self, sub, data, at):
        action = data & 0xF
        if action not in LAUNCHING_ACTIONS:
            raise Unmodeled(f"{at}: SEND_SIGNALING_PCAS2_B action {action} is not modeled "
                            f"(modeled: {', '.join(LAUNCHING_ACTIONS.values())})")
        if self.pcas_qmd is None:
            raise SimulationFault(f"{at}: SEND_SIGNALING_PCAS2_B with no QMD sent (SEND_PCAS_A)")
        self.launch(self.pcas_qmd, self.bound[sub], at)

    # ------------------------------------------------------------ launches
    def launch(self, qmd_address: int, compute_class: int, at: str) -> None:
        """Run the QMD sent at `at`, then the dependent QMDs it schedules, depth first: a
        dependent starts once its parent's grid has ended, beside its siblings and whatever else
        runs (so the order check skips only its ancestors)."""
        self._launch_tree(qmd_address, compute_class, at, ())

    def _launch_tree(self, qmd_address: int, compute_class: int, at: str, ancestors: tuple,
                     parent: LaunchDescription | None = None) -> None:
        if any(address == qmd_address for address, _token in ancestors):
            names = " -> ".join(self.launch_names.get(a, f"{a:#x}") for a, _t in ancestors + ((qmd_address, 0),))
            raise SimulationFault(f"{at}: the dependent QMDs loop ({names}): the GPU would launch forever")
        self._token += 1
        token = self._token
        self._ancestors = frozenset(t for _a, t in ancestors)
        self._current = token
        where = at if not ancestors else f"{at}, scheduled by the QMD before it"
        described = self._check_early_start(qmd_address, compute_class, where, parent)
        dependents = self.run_qmd(qmd_address, compute_class, where)
        if dependents is None or isinstance(dependents, int):
            raise TypeError(f"{type(self).__qualname__}.run_qmd returned {dependents!r}: it returns the tuple of "
                            "QMD addresses the launch schedules (the LaunchDescription's `dependents`)")
        for dependent in dependents:
            self._launch_tree(dependent, compute_class, at, ancestors + ((qmd_address, token),), described)

    def _check_early_start(self, qmd_address: int, compute_class: int, at: str,
                           parent: LaunchDescription | None) -> LaunchDescription:
        """Refuse a grid that starts before its parent's has ended (its parent enables PREEXIT:
        programmatic dependent launch) unless it waits on the latch its parent arrives at and its
        program opens with ACQBULK, which holds it until then (bobc.nvidia.encode.ProgrammaticLaunch),
        and a grid that waits on a latch no parent of it arrives at.  The simulator runs the
        parent's grid to its end first either way, so what it checks is that the GPU, which does
        not, would see the same.  The launch's description, for its dependents' own check."""
        d = self.describe(qmd_address, compute_class, at)
        name = self.launch_names.get(qmd_address, f"the QMD at {qmd_address:#x}")
        early = parent is not None and parent.early_dependents
        if not early:
            if d.wait_latch is not None:
                raise SimulationFault(f"{at}: {name} waits on latch {d.wait_latch}, but no grid launches it early and "
                                      "arrives at that latch: the GPU would hold it forever")
            return d
        if parent.arrive_latch is None or d.wait_latch != parent.arrive_latch:
            raise SimulationFault(f"{at}: {name} is launched before its parent's grid has ended (the parent enables "
                                  f"PREEXIT), but waits on {'no latch' if d.wait_latch is None else f'latch {d.wait_latch}'}"
                                  f" where its parent arrives at {'none' if parent.arrive_latch is None else f'latch {parent.arrive_latch}'}"
                                  ": it would run beside the grid whose results it reads")
        window = self.memory.read(d.program_address, sass_frontend.INSTRUCTION_BYTES, f"{at}: {name}'s program")
        first = sass_frontend.decode(window, d.arch)[0]
        if first.opcode != "ACQBULK":
            raise SimulationFault(f"{at}: {name} is launched before its parent's grid has ended, and its program opens "
                                  f"with {first.opcode}, not ACQBULK: it would read and write before its parent's "
                                  "writes are visible")
        return d

    def describe(self, qmd_address: int, compute_class: int, at: str):
        """The launch the QMD at `qmd_address` describes (a qmd_reader.LaunchDescription), read in
        the layout of the compute class bound."""
        layout = COMPUTE_CLASSES[compute_class][1]
        return read_launch(self.memory.read(qmd_address, QMD_BYTES[layout], f"{at}: the QMD"), compute_class, at)

    def run_qmd(self, qmd_address: int, compute_class: int, at: str) -> tuple[int, ...]:
        """Run the launch one QMD describes; the addresses of the dependent QMDs it schedules.
        A channel that runs launches its own way (a model's NumPy kernels, say) overrides this,
        and `launch` still follows the dependents."""
        name = self.launch_names.get(qmd_address, f"launch of the QMD at {qmd_address:#x}")
        where = f"{at}: {name}"
        if self.windows["shared"] is None or self.windows["local"] is None:
            raise SimulationFault(f"{where}: launched before the shared and local memory windows are set "
                                  f"(the H200 faults with SKEDCHECK17_MEMORY_WINDOW_OVERLAP; {doc('runtime.md')})")
        d = self.describe(qmd_address, compute_class, where)
        window_end = d.prefetch_address + d.prefetch_bytes
        if d.prefetch_post:
            # fetched when the grid ends, for its dependent: it must be there to fetch
            self.memory.read(d.prefetch_address, d.prefetch_bytes, f"{where}: the code it prefetches for what follows")
            for slot, address, size in d.post_banks:
                self.memory.read(address, size, f"{where}: constant bank {slot}, prefetched for what follows")
            if qmd_address not in self.code_bytes:
                raise Unmodeled(f"{where}: the QMD prefetches what follows it (PROGRAM_PREFETCH_TYPE PREFETCH_POST), so "
                                "it does not say where its own code ends; give the channel the images' code sizes "
                                "(Channel code_bytes, from the manifest's launches and regions)")
            window_end = d.program_address + self.code_bytes[qmd_address]
        elif not d.prefetch_address <= d.program_address < window_end:
            raise SimulationFault(f"{where}: the program at {d.program_address:#x} lies outside the "
                                  f"QMD's prefetch window [{d.prefetch_address:#x}, {window_end:#x})")
        window = self.memory.read(d.program_address, window_end - d.program_address, f"{where}: the program")
        code = sass_frontend.code_at(window, 0, len(window))
        key = hashlib.sha256(d.arch.encode() + code).hexdigest()
        if key not in self._code_cache:
            self._code_cache[key] = sass_frontend.decode(code, d.arch)
        bank0 = self.memory.read(d.cb0_address, d.cb0_bytes, f"{where}: constant bank 0")
        geometry = LaunchGeometry(name, d.grid, d.block, d.registers, bank0, d.arch, d.shared_memory,
                                  cluster=d.cluster, barriers=d.barriers,
                                  declared_shared=self.shared_bytes.get(qmd_address))
        if self.check_order:
            self.memory.accesses = LaunchAccesses()
        copies = []
        if self.contracts is not None:
            self.memory.footprint, self.memory.tensor_maps = self.contracts.held_to(where, qmd_address, bank0)
            # a kernel whose contract declares a copy (`//@ copy`) must do exactly that copy
            copies = begin_copies(self.memory, self.contracts.copies(where, qmd_address, bank0), where)
        try:
            Launch(geometry, self._code_cache[key], self.memory, self.check_hazards, self.max_steps).run()
        finally:
            accesses, self.memory.accesses = self.memory.accesses, None
            self.memory.footprint = None
            self.memory.tensor_maps = None
        end_copies(self.memory, copies, where)
        if self.check_order:
            self._ordered(where, *accesses.sets())
        self.log.launches.append((qmd_address, name))
        return d.dependents

    def _ordered(self, where: str, reads: np.ndarray, writes: np.ndarray) -> None:
        """Refuse a launch whose words meet those of a launch the GPU may still be running."""
        for earlier, their_reads, their_writes, token in self.unordered:
            if token in self._ancestors:
                continue                          # ended before this launch started
            for mine, does, theirs, did in ((reads, "reads", their_writes, "wrote"),
                                            (writes, "writes", their_writes, "wrote"),
                                            (writes, "writes", their_reads, "read")):
                common = _first_common(mine, theirs)
                if common is not None:
                    address = common * 4
                    raise UnorderedLaunches(where, does, earlier, did, address, self.memory.resident_of(address))
        self.unordered.append((where, reads, writes, self._current))
