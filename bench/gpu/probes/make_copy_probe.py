#!/usr/bin/env python3
"""Write the copy probe: the least any loss kernel can cost with seed 001's launch shape.

The loss kernel must read the 256 KiB table and write the 256 KiB of gradients,
and seed 001 launches it as one block of 256 threads (one SM).  The probe does
only that: each thread copies its 64 16-byte chunks of P into G, N loads in
flight.  Timed beside Bob's kernels by bench/gpu/kernel_times.py (it takes the
loss kernel's arguments and name, so put it in the --extra folder as
bob-loss-gradient@copy-probe-N.sass; its outputs are not the loss kernel's, so
"agrees" reads False):

    python bench/gpu/probes/make_copy_probe.py 4 > bench/gpu/probes/bob-loss-gradient@copy-probe-4.sass

`--read-only` only loads (summing what it loads into one register, stored once, so
the loads are not dead); `--write-only` only stores (zeros).  Together they say
which direction binds.
"""
import sys


def probe(in_flight: int, mode: str = "copy") -> str:
    what = {"copy": "copies P (256 KiB) into G", "read": "reads P (256 KiB)", "write": "writes 256 KiB of zeros to G"}
    lines = [f"""// Probe, not a kernel of Bob: one block of 256 threads {what[mode]}, {in_flight}
// 16-byte accesses in flight per thread (the loss kernel keeps 4), to measure what one SM
// can stream with the loss kernel's launch shape.  Arguments as bob-loss-gradient's.
.kernel bob_loss_gradient
.registers 32
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ULDC.64 UR6, c[0x0][param+0x0]
    ULDC.64 UR8, c[0x0][param+0x8]
    SHF.L.U32 R0, R0, 0x4, RZ
    IADD3 R2, P0, R0, UR6, RZ
    IADD3.X R3, RZ, UR7, RZ, P0, !PT
    IADD3 R0, P0, R0, UR8, RZ
    IADD3.X R1, RZ, UR9, RZ, P0, !PT"""]
    if mode == "write":
        lines += [f"    MOV R{r}, RZ" for r in range(4, 8)]
    if mode == "read":
        lines.append("    MOV R28, RZ")
    for first in range(0, 64, in_flight):
        group = list(range(first, min(first + in_flight, 64)))
        if mode != "write":
            for j, chunk in enumerate(group):
                lines.append(f"    LDG.E.128.CONSTANT R{4 + 4 * j}, [R2.64+{chunk * 4096:#x}]")
        if mode == "read":
            for j, _ in enumerate(group):
                lines.append(f"    FADD R28, R28, R{4 + 4 * j}")
        for j, chunk in enumerate(group):
            if mode == "copy":
                lines.append(f"    STG.E.128 [R0.64+{chunk * 4096:#x}], R{4 + 4 * j}")
            elif mode == "write":
                lines.append(f"    STG.E.128 [R0.64+{chunk * 4096:#x}], R4")
    if mode == "read":
        lines.append("    STG.E [R0.64], R28")
    lines.append("    EXIT")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    numbers = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(numbers[0]) if numbers else 4
    if not 1 <= n <= 6:
        sys.exit("loads in flight: 1..6 (six 16-byte loads use R4..R27 of the 32-register budget)")
    mode = "read" if "--read-only" in flags else "write" if "--write-only" in flags else "copy"
    sys.stdout.write(probe(n, mode))
