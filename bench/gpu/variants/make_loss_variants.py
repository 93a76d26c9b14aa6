"""Variants of bob-loss-gradient.sass aimed at more loads in flight (issue 21).

Derived from the kernel's own source so the arithmetic stays the same:
  pipelined:   the next row's 16 values are loaded into a second register set
               (R32..R47) while this row is worked, instead of touched into L1;
  pipelined-l1: the same, and the row after next touched into L1 as well.
Run from the repository root; writes bench/gpu/variants/bob-loss-gradient@<label>.sass.
"""
import re
import sys
from pathlib import Path

SOURCE = Path("specs/Realization/Nvidia/SM86/bob-loss-gradient.sass")
OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "bench/gpu/variants")

THIS_ROW_LOADS = """    IADD3 R2, P0, R1, UR6, R0
    IADD3.X R3, RZ, UR7, RZ, P0, !PT
    LDG.E.128.CONSTANT R8, [R2.64]
    LDG.E.128.CONSTANT R12, [R2.64+0x100]
    LDG.E.128.CONSTANT R16, [R2.64+0x200]
    LDG.E.128.CONSTANT R20, [R2.64+0x300]
    ISETP.LT.U32.AND P3, PT, R1, 0x3c000, PT
"""
TOUCH = """    @P3 LDG.E.CONSTANT RZ, [R28.64+0x4000]
    @P3 LDG.E.CONSTANT RZ, [R28.64+0x4200]
"""


def next_row_loads(base: int) -> str:
    return ("    ISETP.LT.U32.AND P3, PT, R1, 0x3c000, PT\n"
            "    IADD3 R2, P0, R1, UR6, R0\n"
            "    IADD3.X R3, RZ, UR7, RZ, P0, !PT\n"
            + "".join(f"    @P3 LDG.E.128.CONSTANT R{base + 4 * k}, [R2.64+{hex(0x4000 + 0x100 * k)}]\n"
                      for k in range(4)))


def rename_values(text: str, shift: int) -> str:
    return re.sub(r"\bR(\d+)\b",
                  lambda m: f"R{int(m.group(1)) + shift}" if 8 <= int(m.group(1)) <= 23 else m.group(0), text)


def variant(touch_ahead: bool) -> str:
    text = SOURCE.read_text()
    head, rest = text.split("row_pair:\n")
    body, tail = rest.split("    ISETP.LT.U32.AND P0, PT, R1, 0x40000, PT\n")
    half_a, half_b = body.split("    IADD3 R1, R1, 0x4000, RZ\n")[:2]
    assert half_a.count(THIS_ROW_LOADS) == 1 and half_b.count(THIS_ROW_LOADS) == 1
    touch = ("    ISETP.LT.U32.AND P4, PT, R1, 0x38000, PT\n"
             "    @P4 LDG.E.CONSTANT RZ, [R28.64+0x8000]\n"
             "    @P4 LDG.E.CONSTANT RZ, [R28.64+0x8200]\n") if touch_ahead else ""
    half_a = half_a.replace(THIS_ROW_LOADS, next_row_loads(32)).replace(TOUCH, touch)
    half_b = half_b.replace(THIS_ROW_LOADS, next_row_loads(8)).replace(TOUCH, touch)
    half_b = rename_values(half_b, 24)
    # the loads for the next row (R8..R23) must not be renamed
    half_b = half_b.replace(next_row_loads(32), next_row_loads(8))
    prologue = ("    IADD3 R2, P0, R1, UR6, R0\n    IADD3.X R3, RZ, UR7, RZ, P0, !PT\n"
                + "".join(f"    LDG.E.128.CONSTANT R{8 + 4 * k}, [R2.64+{hex(0x100 * k)}]\n" for k in range(4)))
    head = head.replace(".registers 32", ".registers 56")
    note = ("// Variant (bench/gpu/variants/make_loss_variants.py): row values double-buffered,\n"
            "// R8..R23 for rows A, R32..R47 for rows B; the next row's values load while this\n"
            "// row is worked" + (", and the row after next is touched into L1.\n" if touch_ahead else ".\n"))
    return (note + head + prologue + "row_pair:\n" + half_a + "    IADD3 R1, R1, 0x4000, RZ\n" + half_b
            + "    IADD3 R1, R1, 0x4000, RZ\n" + "    ISETP.LT.U32.AND P0, PT, R1, 0x40000, PT\n" + tail)


def touch_ahead(depth: int) -> str:
    """Bob's own kernel, within its 32 registers, touching the row `depth` rows ahead into L1
    (rows 1..depth-1 touched before the loop) instead of the next row only."""
    text = SOURCE.read_text()
    head, rest = text.split("row_pair:\n")
    limit = 0x40000 - 0x4000 * depth
    touch = (f"    ISETP.LT.U32.AND P4, PT, R1, {hex(limit)}, PT\n"
             f"    @P4 LDG.E.CONSTANT RZ, [R28.64+{hex(0x4000 * depth)}]\n"
             f"    @P4 LDG.E.CONSTANT RZ, [R28.64+{hex(0x4000 * depth + 0x200)}]\n")
    assert rest.count(TOUCH) == 2
    rest = rest.replace(TOUCH, touch)
    prologue = ("    LEA R28, R0, R1, 0x1\n    IADD3 R28, P0, R28, UR6, RZ\n"
                "    IADD3.X R29, RZ, UR7, RZ, P0, !PT\n"
                + "".join(f"    LDG.E.CONSTANT RZ, [R28.64+{hex(0x4000 * j + half)}]\n"
                          for j in range(1, depth) for half in (0, 0x200)))
    note = (f"// Variant (bench/gpu/variants/make_loss_variants.py): Bob's kernel touching the row\n"
            f"// {depth} rows ahead into L1 (rows 1..{depth - 1} before the loop), not the next row.\n")
    return note + head + prologue + "row_pair:\n" + rest


def without_stores(l1_resident: bool) -> str:
    """Probes, not kernels (their outputs differ): Bob's kernel with its stores taken out
    (its loads and arithmetic alone), and also with every row's values read from row 0's
    lanes' row 0 (L1 hits after the first: its arithmetic alone, nearly)."""
    kept = []
    for line in SOURCE.read_text().splitlines(keepends=True):
        if " STG." in line:
            continue
        if l1_resident and line.strip() in ("IADD3 R2, P0, R1, UR6, R0",):
            line = line.replace("R1, UR6, R0", "RZ, UR6, R0")
        if l1_resident and "LDG.E.CONSTANT RZ" in line:
            continue
        kept.append(line)
    return "".join(kept)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for label, ahead in (("pipelined", False), ("pipelined-l1", True)):
        (OUT / f"bob-loss-gradient@{label}.sass").write_text(variant(ahead))
    for depth in (2, 4):
        (OUT / f"bob-loss-gradient@touch-{depth}.sass").write_text(touch_ahead(depth))
    (OUT / "bob-loss-gradient@probe-no-stores.sass").write_text(without_stores(False))
    (OUT / "bob-loss-gradient@probe-arithmetic.sass").write_text(without_stores(True))
