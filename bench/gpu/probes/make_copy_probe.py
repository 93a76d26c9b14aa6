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
"""
import sys


def probe(in_flight: int) -> str:
    lines = [f"""// Probe, not a kernel of Bob: one block of 256 threads copies P (256 KiB) into G, {in_flight}
// 16-byte loads in flight per thread (the loss kernel keeps 4), to measure what one SM
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
    for first in range(0, 64, in_flight):
        group = list(range(first, min(first + in_flight, 64)))
        for j, chunk in enumerate(group):
            lines.append(f"    LDG.E.128.CONSTANT R{4 + 4 * j}, [R2.64+{chunk * 4096:#x}]")
        for j, chunk in enumerate(group):
            lines.append(f"    STG.E.128 [R0.64+{chunk * 4096:#x}], R{4 + 4 * j}")
    lines.append("    EXIT")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    if not 1 <= n <= 6:
        sys.exit("loads in flight: 1..6 (six 16-byte loads use R4..R27 of the 32-register budget)")
    sys.stdout.write(probe(n))
