"""Automatic control codes: stalls, yield, scoreboards and wait masks from data dependencies.

Correctness first, speed second (sass-facts.md "Control codes and latencies"):
- a fixed-latency result is ready FIXED_LATENCY cycles after issue (predicates:
  PREDICATE_LATENCY); a consumer, or a later writer of the same register,
  issues no earlier, by lengthening the stall of the instruction before it;
- every variable-latency instruction gets a write scoreboard; its consumers,
  and any later writer of its destination, wait on it;
- memory/shuffle instructions that read registers late also get a read
  scoreboard that any later writer of those registers waits on;
- at a branch and at a label everything outstanding is drained (all
  scoreboards waited, all fixed latencies covered), so no path can see a
  value early;
- explicit control codes are kept as written and their effects tracked.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .syntax import Control
from .tables.layouts import READS_LATE, VARIABLE_LATENCY

FIXED_LATENCY = 6          # ptxas uses 4-6 for ALU chains; 6 covers IMAD.WIDE's high half
PREDICATE_LATENCY = 13     # ISETP/FSETP -> a guarded instruction (ptxas)
BARRIER_SETTER_MIN_STALL = 2
CONTROL_FLOW_STALL = {"BRA": 5, "EXIT": 5, "BAR": 6}
BARRIERS = range(6)
# Scoreboards by latency class.  A global load's result takes microseconds (over
# PCIe, for a host-mapped arena); shuffles, MUFU, constant and shared loads,
# and the register reads of stores take tens of cycles.  Each class has its
# own scoreboards, and when a class has none free the new operation joins the
# class's most recent one (a scoreboard counts its operations; a wait waits for
# all of them) instead of stalling until the oldest completes: so a burst of
# shuffles never waits on an outstanding prefetch, and several loads issued
# together stay in flight together.
LONG_LATENCY_RESULTS = {"LDG"}
LONG_BARRIERS = (0, 1, 2)
SHORT_BARRIERS = (3, 4, 5)


@dataclass
class Item:
    opcode: str
    reads: set[tuple[str, int]]
    writes: set[tuple[str, int]]
    explicit: Control | None = None
    label_here: bool = False       # a branch may land on this instruction


_ZERO = {"R": 255, "UR": 63, "P": 7, "UP": 7}


def expand(refs) -> set[tuple[str, int]]:
    """(bank, first, count) references -> the set of single registers, zero registers left out."""
    out = set()
    for bank, first, count in refs:
        if first == _ZERO[bank]:
            continue
        for i in range(count):
            out.add((bank, first + i))
    return out


@dataclass
class _State:
    cycle: int = 0
    ready: dict = field(default_factory=dict)          # reg -> cycle its value is ready
    pending_write: dict = field(default_factory=dict)  # reg -> barrier
    pending_read: dict = field(default_factory=dict)   # reg -> barrier
    busy: list = field(default_factory=list)           # barriers in use, oldest first

    def wait(self, barrier: int) -> None:
        self.pending_write = {r: b for r, b in self.pending_write.items() if b != barrier}
        self.pending_read = {r: b for r, b in self.pending_read.items() if b != barrier}
        if barrier in self.busy:
            self.busy.remove(barrier)

    def allocate(self, opcode: str = "", result: bool = True) -> tuple[int, int]:
        """A scoreboard for a variable-latency operation's result (or its late register
        reads), from its latency class; (barrier, wait mask) -- the mask is always 0."""
        pool = LONG_BARRIERS if result and opcode in LONG_LATENCY_RESULTS else SHORT_BARRIERS
        for b in pool:
            if b not in self.busy:
                self.busy.append(b)
                return b, 0
        newest = next(b for b in reversed(self.busy) if b in pool)
        self.busy.remove(newest)
        self.busy.append(newest)
        return newest, 0


def schedule(items: list[Item]) -> list[Control]:
    controls: list[Control] = []
    issue: list[int] = []
    state = _State()

    def require(cycle_needed: int) -> None:
        """Delay the current instruction to `cycle_needed` by lengthening the previous stall."""
        if not controls or cycle_needed <= state.cycle:
            return
        if items[len(controls) - 1].explicit is not None:
            return  # written by hand: kept as is
        deficit = cycle_needed - state.cycle
        prev = controls[-1]
        stall = min(15, prev.stall + deficit)
        state.cycle += stall - prev.stall
        controls[-1] = _with_stall(prev, stall)

    for index, item in enumerate(items):
        drain = item.label_here or item.opcode in CONTROL_FLOW_STALL
        wait_mask = 0
        if drain:
            for b in list(state.busy):
                wait_mask |= 1 << b
                state.wait(b)
            require(max(state.ready.values(), default=0))
        for reg in item.reads | item.writes:
            b = state.pending_write.get(reg)
            if b is not None:
                wait_mask |= 1 << b
                state.wait(b)
        for reg in item.writes:
            b = state.pending_read.get(reg)
            if b is not None:
                wait_mask |= 1 << b
                state.wait(b)
        needed = max((state.ready.get(r, 0) for r in item.reads | item.writes), default=0)
        require(needed)

        if item.explicit is not None:
            control = item.explicit
            for b in BARRIERS:
                if control.wait_mask >> b & 1:
                    state.wait(b)
            if control.write_barrier != 7:
                for reg in item.writes:
                    state.pending_write[reg] = control.write_barrier
                if control.write_barrier not in state.busy:
                    state.busy.append(control.write_barrier)
            else:
                for reg in item.writes:
                    state.ready[reg] = state.cycle + _latency(reg)
            if control.read_barrier != 7:
                for reg in item.reads:
                    state.pending_read[reg] = control.read_barrier
                if control.read_barrier not in state.busy:
                    state.busy.append(control.read_barrier)
        else:
            write_barrier = read_barrier = 7
            stall = CONTROL_FLOW_STALL.get(item.opcode, 1)
            if item.opcode in VARIABLE_LATENCY:
                if item.writes:
                    write_barrier, extra = state.allocate(item.opcode)
                    wait_mask |= extra
                    for reg in item.writes:
                        state.pending_write[reg] = write_barrier
                        state.ready.pop(reg, None)
                late = {r for r in item.reads if r[0] == "R"} if item.opcode in READS_LATE else set()
                if late:
                    read_barrier, extra = state.allocate(item.opcode, result=False)
                    wait_mask |= extra
                    for reg in late:
                        state.pending_read[reg] = read_barrier
                stall = max(stall, BARRIER_SETTER_MIN_STALL)
            else:
                for reg in item.writes:
                    state.ready[reg] = state.cycle + _latency(reg)
            control = Control(stall=stall, yield_bit=1, write_barrier=write_barrier,
                              read_barrier=read_barrier, wait_mask=wait_mask)
            control = _with_stall(control, stall)
        controls.append(control)
        issue.append(state.cycle)
        state.cycle += control.stall
    return controls


def _latency(reg: tuple[str, int]) -> int:
    return PREDICATE_LATENCY if reg[0] in ("P", "UP") else FIXED_LATENCY


def _with_stall(control: Control, stall: int) -> Control:
    """Set the stall and a yield bit nvdisasm accepts (bit 109 = 1 only with stalls 1..11)."""
    return Control(stall=stall, yield_bit=1 if 1 <= stall <= 11 else 0,
                   write_barrier=control.write_barrier, read_barrier=control.read_barrier,
                   wait_mask=control.wait_mask)
