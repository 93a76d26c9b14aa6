"""A NumPy stand-in for the device of plans/Native/Request.bob's requestSubmits (the
`--kernels FILE` of `bobc run PLAN native ... --reference`, docs/native-host.md): ring entry
0xA0 is the update -- the arena's first u64 += the staged context's first u64 (mod 2^64) --
and every submission releases the counting semaphore (its first word + 1)."""
from __future__ import annotations

STAGING, ARENA, SEMAPHORES = 0x2100500000, 0x2100600000, 0x2100200000
UPDATE_ENTRY = 0xA0


def SUBMIT(machine, entry):  # noqa: N802 (the name bobc run looks for)
    if entry != UPDATE_ENTRY:
        raise ValueError(f"ring entry 0x{entry:x} is no submission of this plan")
    word = int.from_bytes(machine.mapped_read(ARENA, 8), "little")
    context = int.from_bytes(machine.mapped_read(STAGING + 1024, 8), "little")
    machine.mapped_write(ARENA, ((word + context) % 2 ** 64).to_bytes(8, "little"))
    count = int.from_bytes(machine.mapped_read(SEMAPHORES, 8), "little")
    machine.mapped_write(SEMAPHORES, (count + 1).to_bytes(8, "little"))
