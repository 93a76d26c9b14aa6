"""A whole host invocation on the simulator: input files in, the three outputs out.

Carries out the host's schedule exactly as runtime_c/plan_host.c does
(bobc_host_main / run_steps): inputs checked first, buffers zeroed and the
images copied in, the prologue submitted, then each step: read a file into a
buffer, write AdamW scalars into a parameter block, submit ring entries and
wait for each one's semaphore, copy buffer bytes into an output, publish the
checkpoint.  The GPU's part is the simulator's channel.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..reference.formats import (Checkpoint, adamw_scalars, decode_checkpoint, decode_input_record,
                                 encode_checkpoint, fresh_parameters)
from .channel import Channel
from .faults import SemaphoreNotReleased, SimulationFault
from .host_adapter import HostPlan
from .memory import Buffer, Memory

ENTRY_BYTES = 8


@dataclass
class SimulatedOutputs:
    predictions: bytes
    result: bytes
    checkpoint: bytes
    channel: Channel


def simulate(host: HostPlan, images, operation: str, record: bytes, checkpoint: bytes | None = None,
             check_hazards: bool = True) -> SimulatedOutputs:
    """Run one `train` or `predict` invocation of `host` over `images` (program, qmd, push, gpfifo)."""
    if operation not in ("train", "predict"):
        raise SimulationFault(f"operation must be train or predict, not {operation!r}")
    decode_input_record(record)
    contract = host.contract
    if checkpoint is not None:
        state = decode_checkpoint(checkpoint, contract)
        payload, step = b"".join(p.astype("<f4").tobytes() for p in (state.P, state.M, state.V)), state.step
    else:
        P = fresh_parameters(contract.seed, host.parameter_count).astype("<f4")
        zeros = np.zeros(host.parameter_count, dtype="<f4")
        payload, step = P.tobytes() + zeros.tobytes() + zeros.tobytes(), 0

    buffers = []
    for b in host.buffers:
        data = np.zeros(b.size, dtype=np.uint8)
        if b.image:
            image = getattr(images, b.image)
            if len(image) > b.size:
                raise SimulationFault(f"image {b.image} ({len(image)} bytes) does not fit buffer {b.name}")
            data[:len(image)] = np.frombuffer(image, dtype=np.uint8)
        buffers.append(Buffer(b.name, b.address, data))
    memory = Memory(buffers, list(host.residents))
    channel = Channel(memory, check_hazards, host.launch_names)
    ring = images.gpfifo
    channel.run_entry(host.prologue_entry, -1)

    outputs: dict[str, bytearray] = {"predictions": bytearray(), "result": bytearray(), "checkpoint-out": bytearray()}
    published = None
    for s in host.steps:
        if s.op == "submit":
            if not 0 <= s.a <= s.b <= len(ring) // ENTRY_BYTES:
                raise SimulationFault(f"the schedule submits entries {s.a}..{s.b}; the ring holds "
                                      f"{len(ring) // ENTRY_BYTES}")
            for i in range(s.a, s.b):
                memory.write(host.semaphores[i], bytes(16), "a semaphore reset")
            for i in range(s.a, s.b):
                channel.run_entry(ring[ENTRY_BYTES * i:ENTRY_BYTES * (i + 1)], i)
            for i in range(s.a, s.b):
                value = memory.u64(host.semaphores[i])
                if value < host.semaphore_payload:
                    raise SemaphoreNotReleased(
                        f"GPFIFO entry {i} finished without releasing its semaphore at {host.semaphores[i]:#x} "
                        f"(it holds {value}, the host waits for {host.semaphore_payload}): the host would time "
                        "out and exit 7")
        elif s.op == "read":
            source = record if s.file == "input" else payload
            if s.c + s.b > len(source):
                raise SimulationFault(f"the schedule reads {s.b} bytes at {s.c} of a {len(source)}-byte {s.file}")
            memory.write(s.a, source[s.c:s.c + s.b], f"reading {s.file}")
        elif s.op in ("write", "write_at"):
            out = outputs[s.file]
            data = memory.read(s.a, s.b, f"writing {s.file}")
            at = len(out) if s.op == "write" else s.c
            if at + s.b > len(out):
                out.extend(bytes(at + s.b - len(out)))
            out[at:at + s.b] = data
        elif s.op == "operation":
            if operation == "predict":
                break
        elif s.op == "checkpoint_begin":
            outputs["checkpoint-out"] = bytearray()
        elif s.op == "checkpoint_publish":
            planes = np.frombuffer(bytes(outputs["checkpoint-out"]), dtype="<f4")
            if planes.nbytes != contract.payload_bytes:
                raise SimulationFault(f"the schedule wrote {planes.nbytes} checkpoint bytes, the contract holds "
                                      f"{contract.payload_bytes}")
            n = host.parameter_count
            published = encode_checkpoint(contract, Checkpoint(planes[:n], planes[n:2 * n], planes[2 * n:],
                                                               step + s.a))
        elif s.op == "adamw":
            scalars = adamw_scalars(host.hyper, step + s.b + 1, host.parameter_count)
            block = b"".join(p.to_bytes(8, "little") for p in host.adamw_pointers) + scalars.pack()
            memory.write(host.parameter_blocks[s.a] + host.parameter_base, block, f"launch {s.a}'s AdamW block")
        else:
            raise SimulationFault(f"the schedule has a step '{s.op}' the simulator cannot carry out")
    if published is None:
        n = host.parameter_count
        planes = np.frombuffer(payload, dtype="<f4")
        published = encode_checkpoint(contract, Checkpoint(planes[:n], planes[n:2 * n], planes[2 * n:], step))
    return SimulatedOutputs(bytes(outputs["predictions"]), bytes(outputs["result"]), published, channel)
