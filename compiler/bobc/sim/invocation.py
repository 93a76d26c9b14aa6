"""A whole host invocation on the simulator: input files in, the three outputs out.

Carries out the lowered step list (bobc.plan.schedule.lower) exactly as
runtime_c/plan_host.c does (bobc_host_main, run_steps, one handler per step
kind): the input record checked by the plan's checks and the checkpoint read
(or the fresh state) before anything runs, buffers zeroed and the images
copied in, the prologue issued, then each step.  Ring entries go through the
shim's GPFIFO ring (runtime_c/nv_shim.c rt_gpu_submit: RT_GPU_DEFAULT_RING_ENTRIES
slots, written at GPPut, which wraps) and the channel fetches them at GPGet;
a submission's semaphores are reset before it is issued and each one's
payload is waited for after.  Scalar fills are computed in binary64 as
runtime_c/plan_fill.c computes them.  Publication follows plan_host.c: an
interval checkpoint that is not the request's last is published when its
interval ends; the predictions, the result and the last checkpoint are
returned together for the caller to publish (checkpoint last).  A step kind
with no handler here is refused by name before anything runs.  The GPU's
part is the simulator's channel.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import printable
from ..reference import envelope, safe_io
from ..reference.host import check_record, read_past_input, wrote_other_than_the_contract
from .channel import Channel
from .faults import HostStepFault, SemaphoreNotReleased, SimulationFault, Unmodeled
from .host_adapter import HostFill, HostPlan, constructor_of
from .memory import Buffer, Memory

ENTRY_BYTES = 8
RING_ENTRIES = 1024           # runtime_c/nv_shim.h RT_GPU_DEFAULT_RING_ENTRIES
from ..plan.host import STAMP_SLOTS, STAT_BYTES    # runtime_c/plan_host.c BOBC_STAT_BYTES, BOBC_STAMP_SLOTS
from ..plan.host import FillValueError, ScalarProgramError, encoded_fill, fill_refusal, scalar_value    # plan_fill.c's evaluation and encoding, shared with the reference
OUTPUTS = ("checkpoint-out", "predictions", "result")


@dataclass
class SimulatedOutputs:
    predictions: bytes
    result: bytes
    checkpoint: bytes             # the last checkpoint's envelope (published last, with the others)
    channel: Channel
    publications: list = field(default_factory=list)   # (step, envelope) per CheckpointPublish, in order
    issued: int = 0               # ring entries issued (Submit and Reissue)


class Ring:
    """The shim's GPFIFO ring: the host writes an entry at GPPut and moves it on (mod the
    ring's size); the channel fetches from GPGet until it catches up.  Launches complete
    synchronously here, so the ring never fills."""

    def __init__(self, channel: Channel, entries: int = RING_ENTRIES):
        self.channel = channel
        self.slots = [bytes(ENTRY_BYTES)] * entries
        self.put = self.get = 0

    def issue(self, entry: bytes, label) -> None:
        self.slots[self.put] = entry
        self.put = (self.put + 1) % len(self.slots)
        while self.get != self.put:
            self.channel.run_entry(self.slots[self.get], label)
            self.get = (self.get + 1) % len(self.slots)


def evaluate(fill: HostFill, t: int) -> float:
    """A fill's scalar program at global step t, in binary64 (bobc.plan.host.scalar_value, the
    reference host's evaluator: plan_fill.c bobc_scalar_eval)."""
    try:
        return scalar_value(fill.terms, t)
    except ScalarProgramError as malformed:
        raise HostStepFault(f"fill ({fill.note}): its scalar program leaves {malformed.values} values, "
                            "not one") from None


def fill_bytes(fill: HostFill, input_step: int) -> bytes:
    """plan_fill.c bobc_fill_bytes: the value at step input + fill.step, encoded."""
    t = input_step + fill.step
    try:
        return encoded_fill(fill.encoding, evaluate(fill, t), t)
    except FillValueError as refused:
        raise HostStepFault(str(refused)) from None


class SimulatedHost:
    """plan_host.c's `host` state, with one handler per step kind (step_<kind>)."""

    def __init__(self, host: HostPlan, images, operation: str, record: bytes, payload: bytes, step: int,
                 check_hazards: bool, publish_checkpoint: Callable[[bytes], None], check_order: bool = True,
                 max_steps: int | None = None):
        self.plan, self.images, self.operation = host, images, operation
        self.record, self.payload, self.step = record, payload, step
        self.publish_checkpoint = publish_checkpoint
        buffers = []
        for b in host.buffers:
            data = np.zeros(b.size, dtype=np.uint8)
            if b.image:
                image = getattr(images, b.image)
                if len(image) > b.size:
                    raise HostStepFault(f"image {b.image} ({len(image)} bytes) does not fit buffer {b.name} "
                                        f"({b.size} bytes)")
                data[:len(image)] = np.frombuffer(image, dtype=np.uint8)
            buffers.append(Buffer(b.name, b.address, data))
        self.memory = Memory(buffers, list(host.residents))
        self.channel = Channel(self.memory, check_hazards, host.launch_names, check_order, host.code_bytes,
                               max_steps, contracts=host.contracts, shared_bytes=host.shared_bytes)
        self.ring = Ring(self.channel)
        self.ring_image = images.gpfifo
        if len(self.ring_image) != ENTRY_BYTES * len(host.semaphores):
            raise HostStepFault(f"the ring image holds {len(self.ring_image)} bytes, the plan "
                                f"{len(host.semaphores)} entries")
        self.out = {name: bytearray() for name in OUTPUTS}
        self.gp_put = self.issued = self.cursor = 0
        self.cursor_from = None
        self.published = self.published_step = 0
        self.publications: list = []
        self.staged: bytes | None = None
        self.stat, self.stat_size = bytearray(STAT_BYTES), 0
        self.stamps: dict[int, int] = {}
        self.identity = b""
        self.closed: set[str] = set()
        self.stopped = False
        # count_publications: a predict request stops at its first Operation step
        self.total = 0
        for s in host.steps:
            if s.kind == "operation" and operation == "predict":
                break
            self.total += s.kind == "checkpoint_publish"

    # ---- helpers ----
    def at(self, address: int, size: int, what: str) -> np.ndarray:
        """at_or_fail: the mapped bytes, or the C host's internal error."""
        if self.memory._buffer_of(address, size) is None:
            raise HostStepFault(f"{what} at {address:#x} ({size} bytes) lies in no buffer the host maps")
        return self.memory.view(address, size, what)

    def output(self, file: str, what: str) -> bytearray:
        if file not in OUTPUTS:
            raise HostStepFault(f"the schedule {what} {file}, which is no output")
        return self.out[file]

    def place(self, file: str, at: int | None, data: bytes, what: str) -> None:
        o = self.output(file, what)
        at = len(o) if at is None else at
        if at + len(data) > len(o):
            o.extend(bytes(at + len(data) - len(o)))
        o[at:at + len(data)] = data

    def wait(self, index: int, label=None) -> None:
        address = self.plan.semaphores[index]
        value = self.memory.u64(address)
        if value < self.plan.semaphore_payload:
            raise SemaphoreNotReleased(
                f"GPFIFO entry {index if label is None else label} finished without releasing its semaphore at {address:#x} "
                f"(it holds {value}, the host waits for {self.plan.semaphore_payload}): the host would time "
                "out and exit 7")

    def read_input(self, to: int, extent: int, offset: int, kind: str) -> None:
        """A cyclic read's or a read at the cursor's bytes of the input (`kind` as
        reference.host.read_past_input takes it), refused as the C host refuses them."""
        dst = self.at(to, extent, "a cyclic read" if kind == "read_cyclic" else "a read at the cursor")
        if offset > self.plan.record_bytes or extent > self.plan.record_bytes - offset:
            raise read_past_input(kind, extent, offset, self.plan.record_bytes, self.cursor_from)
        dst[:] = np.frombuffer(self.record[offset:offset + extent], dtype=np.uint8)

    # ---- the steps (plan_host.c step_<kind>) ----
    def step_submit(self, v):
        first, end = self.gp_put, v["gp_put"]
        if end > len(self.plan.semaphores) or first > end:
            raise HostStepFault(f"the schedule submits up to {end}, the ring holds {len(self.plan.semaphores)} "
                                "entries")
        for i in range(first, end):
            self.at(self.plan.semaphores[i], 16, "a semaphore")[:] = 0
        for i in range(first, end):
            self.ring.issue(self.ring_image[ENTRY_BYTES * i:ENTRY_BYTES * (i + 1)], i)
        for i in range(first, end):
            self.wait(i)
        self.gp_put = end
        self.issued += end - first

    def step_reissue(self, v):
        piece = v["piece"]
        if piece >= len(self.plan.semaphores):
            raise HostStepFault("a reissue names no submission of the plan")
        self.at(self.plan.semaphores[piece], 8, "a semaphore")[:] = 0
        label = f"{piece} (reissued)"
        self.ring.issue(struct.pack("<Q", v["entry"]), label)
        self.wait(piece, label)
        self.issued += 1

    def step_scalar_fill(self, v):
        if v["fill"] >= len(self.plan.fills):
            raise HostStepFault(f"the schedule computes fill {v['fill']}, the plan has {len(self.plan.fills)}")
        fill = self.plan.fills[v["fill"]]
        destination = self.at(fill.va, 4, "a fill's destination")
        try:
            encoded = fill_bytes(fill, self.step)
        except HostStepFault as refused:    # the C host's ScalarFill words (plan_fill.c bobc_fill_step_bytes)
            if not refused.message.startswith("a fill's value "):
                raise
            raise HostStepFault(fill_refusal(v["fill"], self.step, fill.step, refused.message)) from None
        destination[:] = np.frombuffer(encoded, dtype=np.uint8)

    def step_read(self, v):
        dst = self.at(v["host"], v["extent"], "a read's destination")
        if v["file"] == "input":
            source = self.record
        elif v["file"] == "checkpoint-in":
            source = self.payload
        else:
            raise HostStepFault(f"the schedule reads file {v['file']}, which is an output")
        if v["offset"] + v["extent"] > len(source):
            raise HostStepFault(str(read_past_input("read", v["extent"], v["offset"], len(source))))
        dst[:] = np.frombuffer(source[v["offset"]:v["offset"] + v["extent"]], dtype=np.uint8)

    def step_read_cyclic(self, v):
        if not v["count"]:
            raise HostStepFault("a cyclic read over zero records")
        self.read_input(v["host"], v["extent"], v["offset"] + (v["index"] % v["count"]) * v["record_bytes"],
                        "read_cyclic")

    def step_read_at_cursor(self, v):
        if v["file"] != "input":
            raise HostStepFault("a cursor read of a file other than the input")
        self.read_input(v["host"], v["extent"], self.cursor + v["delta"], "read_at_cursor")

    def step_cursor_from_checkpoint(self, v):
        self.cursor = v["base"] + self.step * v["scale"]
        self.cursor_from = (self.step, v["scale"], v["base"])     # messages (plan_host.c read_input)

    def step_cursor_advance(self, v):
        self.cursor += v["bytes"]

    def step_write(self, v):
        data = self.at(v["host"], v["extent"], "a write's source").tobytes()
        self.place(v["file"], None, data, "writes")

    def step_write_at(self, v):
        data = self.at(v["host"], v["extent"], "a write's source").tobytes()
        self.place(v["file"], v["offset"], data, "writes")

    def step_write_stat(self, v):
        self.place(v["file"], None, bytes(self.stat[:self.stat_size]), "appends to")

    def step_write_status(self, v):
        words = (self.published_step if self.published else self.step, self.issued, self.published)
        self.place(v["file"], None, struct.pack("<3Q", *words), "appends to")

    def step_write_timestamps(self, v):
        count = max(self.stamps) + 1 if self.stamps else 0
        self.place(v["file"], None, b"".join(struct.pack("<Q", self.stamps.get(k, 0)) for k in range(count)),
                   "appends to")

    def step_record_stat(self, v):
        offset, extent = v["stat_offset"], v["extent"]
        if offset > STAT_BYTES or extent > STAT_BYTES - offset:
            raise HostStepFault("a stat lies past the stat block")
        self.stat[offset:offset + extent] = self.at(v["host"], extent, "a stat's source").tobytes()
        self.stat_size = max(self.stat_size, offset + extent)

    def step_stamp(self, v):
        if v["gp_put"] >= len(self.plan.semaphores) or v["which"] >= STAMP_SLOTS:
            raise HostStepFault("a stamp names no submission or a slot past the stamp table")
        # the semaphore's second word: the GPU's release timestamp (the channel's clock here)
        self.stamps[v["which"]] = self.memory.u64(self.plan.semaphores[v["gp_put"]] + 8)

    def step_fill(self, v):
        self.at(v["host"], len(v["payload"]), "a fill's destination")[:] = np.frombuffer(v["payload"], np.uint8)

    def step_assert_word(self, v):
        word = struct.unpack("<I", self.at(v["host"], 4, "an asserted word").tobytes())[0]
        if word != v["expected"]:
            raise SimulationFault(f"{printable(v['identity'])}: the word at {v['host']:#x} is "
                                  f"{word}, expected {v['expected']}")

    def step_bind_input_identity(self, v):
        if v["offset"] > self.plan.record_bytes or v["extent"] > self.plan.record_bytes - v["offset"]:
            raise HostStepFault("the input identity lies past the input")
        self.identity = self.record[v["offset"]:v["offset"] + v["extent"]]

    def step_write_input_identity(self, v):
        self.place("result", None, self.identity, "appends to")

    def step_begin_checkpoint(self, v):
        self.out["checkpoint-out"] = bytearray()

    step_checkpoint_begin = step_begin_checkpoint

    def step_operation(self, v):
        if self.operation == "predict":
            self.stopped = True

    def step_sync(self, v):
        pass                      # publication syncs; before it there is nothing on disk

    step_data_sync = step_sync

    def step_close(self, v):
        if v["file"] not in ("predictions", "result"):
            raise HostStepFault("the schedule closes a file that is neither the predictions nor the result")
        self.closed.add(v["file"])

    def step_checkpoint_publish(self, v):
        data = bytes(self.out["checkpoint-out"])
        if len(data) != self.plan.contract.payload_bytes:
            raise HostStepFault(str(wrote_other_than_the_contract(len(data), self.plan.contract.payload_bytes)))
        step = self.step + v["updates"]
        env = envelope.encode(self.plan.contract, step, data)
        # an interval's checkpoint is published when its interval ends; the request's
        # last one waits for the other outputs (published together, the checkpoint last)
        if self.published + 1 < self.total:
            self.publish_checkpoint(env)
        else:
            self.staged = env
        self.publications.append((step, env))
        self.published += 1
        self.published_step = step

    # ---- the invocation ----
    def step_commands(self, v):
        """plan_host.c step_commands: the one reference machine of native commands
        (bobc.reference.plan_commands) on the simulator's buffers."""
        from ..reference.plan_commands import CommandsStopped, PlanCommandsMachine
        if self.commands is None:
            self.commands = PlanCommandsMachine(self._commands_locate)
        try:
            self.commands.run_step(v["commands"], self.step_index)
        except CommandsStopped as stop:
            raise CommandsFault(stop.status, str(stop)) from None   # its bytes as the C host prints them

    def _commands_locate(self, address: int, count: int):
        buffer = self.memory._buffer_of(address, count)
        return None if buffer is None else (_ByteView(buffer.data), address - buffer.address)

    def run(self) -> SimulatedOutputs:
        self.ring.issue(self.plan.prologue_entry, -1)
        self.commands = None
        for self.step_index, s in enumerate(self.plan.steps):
            if self.stopped:
                break
            getattr(self, "step_" + s.kind)(s.values)
        if self.ring.get != self.ring.put:
            raise SimulationFault(f"after the schedule the ring's GPGet is {self.ring.get}, its GPPut "
                                  f"{self.ring.put}")
        if self.staged is None:   # a request that trained nothing hands its state on unchanged
            self.staged = envelope.encode(self.plan.contract, self.step, self.payload)
        return SimulatedOutputs(bytes(self.out["predictions"]), bytes(self.out["result"]), self.staged,
                                self.channel, self.publications, self.issued)


class _ByteView:
    """A buffer's uint8 array as the native machine slices it (bytes in, bytes out)."""

    def __init__(self, data: np.ndarray):
        self.data = data

    def __getitem__(self, key) -> bytes:
        return self.data[key].tobytes()

    def __setitem__(self, key, value) -> None:
        self.data[key] = np.frombuffer(bytes(value), dtype=np.uint8)


class CommandsFault(HostStepFault):
    """A Commands step's Fail or fault: the native status, nothing published (plan_commands.c)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.exit_code = status


def unmodeled_steps(host: HostPlan) -> list[str]:
    """The step kinds of the schedule with no handler here, in order of first use."""
    seen = []
    for s in host.steps:
        if not hasattr(SimulatedHost, "step_" + s.kind) and s.kind not in seen:
            seen.append(s.kind)
    return seen


def simulate(host: HostPlan, images, operation: str, record: bytes, checkpoint: bytes | None = None,
             check_hazards: bool = True, publish_checkpoint: Callable[[bytes], None] | None = None,
             record_path="input", checkpoint_path="checkpoint", check_order: bool = True,
             max_steps: int | None = None) -> SimulatedOutputs:
    """Run one `train` or `predict` invocation of `host` over `images` (program, qmd, push, gpfifo).

    `checkpoint` is an envelope (None: the plan's fresh state); `publish_checkpoint` takes each
    interval checkpoint that is not the request's last, when its interval ends.  `max_steps`: the
    instructions each launch may issue before it is stopped (None: executor.MAX_STEPS)."""
    if operation not in ("train", "predict"):
        raise SimulationFault(f"operation must be train or predict, not {operation!r}")
    missing = unmodeled_steps(host)
    if missing:
        raise Unmodeled("the schedule has step kind(s) the simulator does not model: "
                        + ", ".join(f"{k} ({constructor_of(k)})" for k in missing))
    check_record(host.input_checks, host.record_bytes, record, record_path)
    if checkpoint is not None:
        payload, step = envelope.decode(checkpoint, host.contract, checkpoint_path)
        if operation == "train":
            safe_io.check_step_room(step, host.contract.updates_per_invocation, checkpoint_path)
    else:
        payload, step = host.fresh_payload, 0
    return SimulatedHost(host, images, operation, record, payload, step, check_hazards,
                         publish_checkpoint or (lambda data: None), check_order, max_steps).run()
