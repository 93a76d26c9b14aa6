"""bob-loss-gradient variant 'warp-rows': a whole warp per row, so a lane holds 8 values
and the next row's values fit in a second set of registers within the seed's 32.

Warp w takes rows 8i + w (i = 0..31); lane l holds columns 4l..4l+3 and 128+4l..128+4l+3
(two 16-byte loads, 512 contiguous bytes each across the warp) and the target of its
row i = l.  Rows alternate between R8..R15 (A) and R16..R23 (B): while a row is worked
the next row's values, target and W[r,t] load into the other set.  With `touch` the row
after next is also touched into L1 (one 32-byte sector per lane).
Run from the repository root: python3 bench/gpu/variants/make_warp_rows.py [OUT_DIR]
"""
import sys
from pathlib import Path

SOURCE = Path("specs/Realization/Nvidia/SM86/bob-loss-gradient.sass")
OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "bench/gpu/variants")


def contract_lines() -> str:
    return "".join(line + "\n" for line in SOURCE.read_text().splitlines() if line.startswith("//@ "))


def half(c: int, n: int, t: int, w: int, t_next: int, w_next: int, touch: bool) -> list[str]:
    v = [f"R{c + j}" for j in range(8)]
    s = ["// -- this row (values R%d..R%d); the next row's values, target and W[r,t]" % (c, c + 7),
         "ISETP.LT.U32.AND P3, PT, R1, 0x3e000, PT",
         "IADD3 R2, P0, R1, UR6, R0",
         "IADD3.X R3, RZ, UR7, RZ, P0, !PT",
         f"@P3 LDG.E.128.CONSTANT R{n}, [R2.64+0x2000]",
         f"@P3 LDG.E.128.CONSTANT R{n + 4}, [R2.64+0x2200]",
         "SHF.R.U32.HI R27, RZ, 0xd, R1",
         "IADD3 R27, R27, 0x1, RZ",
         f"SHFL.IDX PT, R{t_next}, R4, R27, 0x1f"]
    if touch:
        s += ["LEA R28, R0, R1, 0x1",
              "IADD3 R28, P0, R28, UR6, RZ",
              "IADD3.X R29, RZ, UR7, RZ, P0, !PT",
              "ISETP.LT.U32.AND P4, PT, R1, 0x3c000, PT",
              "@P4 LDG.E.CONSTANT RZ, [R28.64+0x4000]"]
    s += [f"SHF.L.U32 R25, R{t}, 0x2, RZ",
          "LOP3.LUT R25, R25, 0x1f0, RZ, 0xc0, !PT",
          "ISETP.EQ.AND P2, PT, R25, R0, PT",
          "// -- m: a tree over the lane's 8 values, then five butterfly levels",
          f"FMNMX R25, {v[0]}, {v[1]}, !PT",
          f"FMNMX R26, {v[2]}, {v[3]}, !PT",
          f"FMNMX R27, {v[4]}, {v[5]}, !PT",
          f"LEA R28, R{t_next}, R1, 0x2",
          "IADD3 R28, P0, R28, UR6, RZ",
          "IADD3.X R29, RZ, UR7, RZ, P0, !PT",
          f"@P3 LDG.E.CONSTANT R{w_next}, [R28.64+0x2000]",
          f"FMNMX R28, {v[6]}, {v[7]}, !PT",
          "FMNMX R25, R25, R26, !PT",
          "FMNMX R27, R27, R28, !PT",
          "FMNMX R25, R25, R27, !PT"]
    for k in ("0x10", "0x8", "0x4", "0x2", "0x1"):
        s += [f"SHFL.BFLY PT, R27, R25, {k}, 0x1f", "FMNMX R25, R25, R27, !PT"]
    s += ["// -- e_j = 2^((W - m) * log2e), e_t likewise from W[r,t]", f"FADD R{w}, R{w}, -R25"]
    s += [f"FADD {x}, {x}, -R25" for x in v]
    s += [f"FFMA {x}, {x}, UR14, RZ" for x in v]
    s += [f"MUFU.EX2 {x}, {x}" for x in v]
    s += [f"FFMA R25, R{w}, UR14, RZ", "MUFU.EX2 R25, R25",
          "// -- s: a tree over the lane's 8 values, then five butterfly levels",
          f"FADD R26, {v[0]}, {v[1]}", f"FADD R27, {v[2]}, {v[3]}",
          f"FADD R28, {v[4]}, {v[5]}", f"FADD R29, {v[6]}, {v[7]}",
          "FADD R26, R26, R27", "FADD R28, R28, R29", "FADD R26, R26, R28"]
    for k in ("0x10", "0x8", "0x4", "0x2", "0x1"):
        s += [f"SHFL.BFLY PT, R27, R26, {k}, 0x1f", "FADD R26, R26, R27"]
    s += ["// -- loss = lg2(s) * ln2 - d;  G = e * (inverse_rows / s)",
          "MUFU.LG2 R27, R26", "MUFU.RCP R26, R26",
          f"FFMA R27, R27, UR15, -R{w}", "FFMA R26, R26, UR16, RZ"]
    s += [f"FMUL {x}, {x}, R26" for x in v]
    s += ["FMUL R25, R25, R26", "FADD R25, R25, -UR16",
          "IADD3 R2, P0, R1, UR8, R0",
          "IADD3.X R3, RZ, UR9, RZ, P0, !PT",
          f"STG.E.128 [R2.64], R{c}",
          f"STG.E.128 [R2.64+0x200], R{c + 4}",
          f"LEA R28, R{t}, R1, 0x2",
          "IADD3 R28, P0, R28, UR8, RZ",
          "IADD3.X R29, RZ, UR9, RZ, P0, !PT",
          "@P2 STG.E [R28.64], R25",
          f"SHF.R.U32.HI R{t}, RZ, 0x8, R1",
          f"IADD3 R2, P0, R{t}, UR12, RZ",
          "IADD3.X R3, RZ, UR13, RZ, P0, !PT",
          "@P1 STG.E [R2.64], R27",
          "IADD3 R1, R1, 0x2000, RZ"]
    return s


def kernel(touch: bool) -> str:
    prologue = [
        "S2R R0, SR_TID.X",
        "ULDC.64 UR4, c[0x0][memory_descriptor]",
        "ULDC.64 UR6, c[0x0][param+0x0]",
        "ULDC.64 UR8, c[0x0][param+0x8]",
        "ULDC.64 UR10, c[0x0][param+0x10]",
        "ULDC.64 UR12, c[0x0][param+0x18]",
        "ULDC.64 UR14, c[0x0][param+0x30]",
        "ULDC UR16, c[0x0][param+0x38]",
        "SHF.R.U32.HI R1, RZ, 0x5, R0",
        "LOP3.LUT R0, R0, 0x1f, RZ, 0xc0, !PT",
        "ISETP.EQ.AND P1, PT, R0, RZ, PT",
        "LEA R5, R0, R1, 0x3",
        "SHF.L.U32 R1, R1, 0xa, RZ",
        "SHF.L.U32 R0, R0, 0x4, RZ",
        "LEA R2, P0, R5, UR10, 0x2",
        "IADD3.X R3, RZ, UR11, RZ, P0, !PT",
        "LDG.E R4, [R2.64]",
        "IADD3 R2, P0, R1, UR6, R0",
        "IADD3.X R3, RZ, UR7, RZ, P0, !PT",
        "LDG.E.128.CONSTANT R8, [R2.64]",
        "LDG.E.128.CONSTANT R12, [R2.64+0x200]",
        "SHF.R.U32.HI R27, RZ, 0xd, R1",
        "SHFL.IDX PT, R5, R4, R27, 0x1f",
        "LEA R2, R5, R1, 0x2",
        "IADD3 R2, P0, R2, UR6, RZ",
        "IADD3.X R3, RZ, UR7, RZ, P0, !PT",
        "LDG.E.CONSTANT R24, [R2.64]"]
    if touch:
        prologue += ["LEA R28, R0, R1, 0x1", "IADD3 R28, P0, R28, UR6, RZ",
                     "IADD3.X R29, RZ, UR7, RZ, P0, !PT", "LDG.E.CONSTANT RZ, [R28.64+0x2000]"]
    body = (half(8, 16, 5, 24, 6, 7, touch) + half(16, 8, 6, 7, 5, 24, touch)
            + ["ISETP.LT.U32.AND P0, PT, R1, 0x40000, PT", "@P0 BRA row_pair"])
    doc = "".join("// " + line + "\n" for line in __doc__.split("\n\n")[0].splitlines())
    return (doc + "// Registers: R0 l*16, R1 row*1024, R4 targets, R5/R6 t and R24/R7 W[r,t] of rows A/B,\n"
            "// R25..R29 temporaries.  P1 lane 0, P2 this lane holds column t, P3 a next row exists.\n"
            + contract_lines() + ".kernel bob_loss_gradient\n.registers 32\n"
            + "".join(f"    {x}\n" for x in prologue) + "row_pair:\n"
            + "".join(f"    {x}\n" for x in body) + "    EXIT\ndone:\n    BRA done\n")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "bob-loss-gradient@warp-rows.sass").write_text(kernel(False))
    (OUT / "bob-loss-gradient@warp-rows-touch.sass").write_text(kernel(True))
