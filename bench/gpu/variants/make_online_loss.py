#!/usr/bin/env python3
"""Loss-kernel variants with a shorter chain per row (issue 21).

Bob's kernel works a row in series: a tree and four shuffle levels for the row max m, then
sixteen ex2 on the quarter-rate MUFU pipe, then a tree and four shuffle levels for the sum.
Here each lane first takes the max m_l of its own sixteen values and starts its ex2s at once,
    e_j = 2^((W_j - m_l) log2e),  s_l = sum_j e_j
while the four shuffle levels for m run beside them (the MUFU pipe and the shuffles overlap
instead of following each other); then
    c_l = 2^((m_l - m) log2e),  s = sum over the half of s_l c_l  (four shuffle levels)
    G_j = e_j (c_l inverse_rows / s),  G_t = 2^((W_t - m) log2e) inverse_rows / s - inverse_rows
    loss = lg2(s) ln2 - (W_t - m)
The max is still subtracted before scaling by log2e (x log2e - m log2e loses the row for the
-8e37 rows), c_l is 0 where m_l is far below m, and every e_j <= 1, so no row overflows.
The ex2s are given scoreboards of their own (1: values 0-7, 2: 8-15, 3: c_l and e_t; 1/2
again for RCP/LG2 of s; W[r,t]'s load takes 0; the row loads' scoreboards are free by then)
so the sum starts on the first eight and the max's shuffle waits never wait on the MUFU
pipe (online-u2-auto leaves them to the scheduler: it timed the same).  The target and W[r,t] of a row are fetched at
the top of its own iteration (their latency hides under the row's loads and max), so no
register pair is double-buffered and the body is the same for every row.

    python3 bench/gpu/variants/make_online_loss.py [OUT_DIR]
writes bob-loss-gradient@online-*.sass (see VARIANTS).
"""
from __future__ import annotations

import sys
from pathlib import Path

HEADER = """// bob-loss-gradient (grid 1 x block 256): each half-warp works one row at a time, so a
// warp instruction serves two rows.  Warp w, half h (lanes 0-15 / 16-31), iteration i
// (0..15) takes row 16i + 2w + h; lane l of a half holds columns 4l..4l+3, 64+4l..,
// 128+4l.. and 192+4l.. (four 16-byte loads, each 256 contiguous bytes across the half).
// A lane takes the max m_l of its 16 values and starts their ex2 at once while four
// butterfly shuffles find the row max m beside them (MUFU pipe and shuffles overlap):
//   e_j = 2^((W[r,j] - m_l) log2e);  c = 2^((m_l - m) log2e);  s = sum over the half of c sum_j e_j
//   loss[r] = lg2(s) ln2 - d, d = W[r,t] - m                 (stored by the half's first lane)
//   G[r,j] = e_j (c inverse_rows / s);  G[r,t] = 2^(d log2e) inverse_rows / s - inverse_rows
//   (G[r,t] stored again by the lane holding column t, after its row stores: same thread,
//   same address, so the later store wins; W[r,t] is loaded on its own)
// The max is subtracted before scaling by log2e, so a constant row of -8e37 keeps ln 256;
// every e_j <= 1 and c <= 1, so no row overflows.  The ex2 results have scoreboards of
// their own (1: values 0-7, 2: 8-15, 3: c and e_t; 1/2 again for RCP/LG2 of s; W[r,t]'s
// load takes 0), written as control codes on the MUFU lines.  The next
// row's 1 KiB is touched into L1 (loads into RZ, one 32-byte sector per lane and load).
// Arguments: 0 P, 1 G, 2 targets (u32 per row), 3 loss block, 4-5 unused,
// 6 (log2e f32, ln2 f32), 7 (inverse rows f32, 0).
// Registers: R0 l*16, R1 the row's byte offset (row * 1024; i = R1 >> 14, h = R1 >> 10 & 1),
// R2:R3 the lane's row address in P, then in G; R4 the targets of this lane's rows (lane
// (l, h): row 16l + 2w + h); R5 t; R6:R7 the touch address, then the loss address; R8..R23
// the row's values; R24 W[r,t], then d, then the loss; R25 m_l, then c, then c/256, then
// the scale; R26 m, then s; R27 e_t, then G[r,t]; R28 s_l; R28:R29 the address of W[r,t],
// then of G[r,t]; R26..R29 temporaries besides.  Uniform registers: UR6 P, UR8 G, UR10 targets, UR12 loss,
// UR14 log2e, UR15 ln2, UR16 inverse rows.  P1: the half's first lane; P2: this lane holds
// column t; P3: a next row exists.
// Contract (bobc.certify.kernels): the parameter words, from the parameter base.
//@ block 256
//@ param 0 pointer read 262144 the parameter table W
//@ param 1 pointer write 262144 the gradients G
//@ param 2 pointer read 1024 the 256 targets (u32)
//@ param 3 pointer write 1024 the loss block (256 binary32)
//@ param 4 unused
//@ param 5 unused
//@ param 6 scalar log2 e, ln 2
//@ param 7 scalar 1/256
.kernel bob_loss_gradient
.registers 32
"""

PROLOGUE = """    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ULDC.64 UR6, c[0x0][param+0x0]
    ULDC.64 UR8, c[0x0][param+0x8]
    ULDC.64 UR10, c[0x0][param+0x10]
    ULDC.64 UR12, c[0x0][param+0x18]
    ULDC.64 UR14, c[0x0][param+0x30]
    ULDC UR16, c[0x0][param+0x38]
    SHF.R.U32.HI R1, RZ, 0x5, R0
    LOP3.LUT R29, R0, 0x10, RZ, 0xc0, !PT
    LOP3.LUT R0, R0, 0xf, RZ, 0xc0, !PT
    ISETP.EQ.AND P1, PT, R0, RZ, PT
    SHF.R.U32.HI R27, RZ, 0x4, R29
    LEA R27, R1, R27, 0x1
    LEA R5, R0, R27, 0x4
    SHF.L.U32 R1, R27, 0xa, RZ
    SHF.L.U32 R0, R0, 0x4, RZ
    LEA R2, P0, R5, UR10, 0x2
    IADD3.X R3, RZ, UR11, RZ, P0, !PT
    LDG.E R4, [R2.64]
"""

# batch_loss: the header lines that change (the loss is kept by lanes, R6/R7 and P4 change role)
BATCH_LOSS_HEADER = [
    ("//   loss[r] = lg2(s) ln2 - d, d = W[r,t] - m                 (stored by the half's first lane)\n",
     "//   loss[r] = lg2(s) ln2 - d, d = W[r,t] - m      (kept by the lane that holds row r's target)\n"
     "//   (each lane stores the one loss it kept after the last row: one coalesced store)\n"),
    ("R5 t; R6:R7 the touch address, then the loss address;",
     "R5 t; R6 the loss of row 16l + 2w + h; R7 the lane id;"),
    ("R28:R29 the address of W[r,t],\n// then of G[r,t];",
     "R28:R29 the touch address, then\n// the address of W[r,t], then of G[r,t];"),
    ("P1: the half's first lane; P2", "P4: this lane keeps the row's loss; P2"),
    ("R24 W[r,t], then d, then the loss;", "R24 W[r,t], then d;"),
]

BATCH_LOSS_EPILOGUE = """    // -- each lane stores the loss of row 16l + 2w + h (kept in R6)
    S2R R8, SR_TID.X
    SHF.R.U32.HI R9, RZ, 0x5, R8
    LOP3.LUT R10, R8, 0x10, RZ, 0xc0, !PT
    SHF.R.U32.HI R10, RZ, 0x4, R10
    LEA R10, R9, R10, 0x1
    IADD3 R10, R0, R10, RZ
    LEA R2, P0, R10, UR12, 0x2
    IADD3.X R3, RZ, UR13, RZ, P0, !PT
    STG.E [R2.64], R6
"""


def mufu(dst: int, barrier: int | None, what: str = "EX2") -> str:
    code = f"[B------:R-:W{barrier}:-:S02] " if barrier is not None else ""
    return f"    {code}MUFU.{what} R{dst}, R{dst}\n"


def row(explicit: bool, touch: bool, last: bool, stores: bool = True, presum: bool = False,
        ahead: int = 1, batch_loss: bool = False, interleave: bool = False, touch4: bool = False) -> str:
    """One row's iteration; R1 is the row's byte offset.  `last`: no next row to touch;
    `stores`: False only for the timing probe that leaves the stores out; `presum`: the sum
    of e_0..e_7 is taken beside the last two shuffle levels for m, not after them; `ahead`:
    which row after this one is touched into L1; `batch_loss`: the row's loss is kept by the
    lane that holds its target (R6, P4: that lane) and stored once after the last row, so the
    row has no loss address and no scalar loss store; `interleave`: each 16-byte group of G is
    stored as soon as it is scaled; `touch4`: the next row is touched by four loads from the
    row's own address (16 bytes a lane, every sector), with no touch address."""
    b = (lambda n: n) if explicit else (lambda n: None)
    out = []
    w = out.append
    w("    // -- this row's values and its target t\n")
    w("    IADD3 R2, P0, R1, UR6, R0\n")
    w("    SHF.R.U32.HI R27, RZ, 0xe, R1\n")
    w("    SHF.R.U32.HI R28, RZ, 0x6, R1\n")
    w("    IADD3.X R3, RZ, UR7, RZ, P0, !PT\n")
    w("    LOP3.LUT R28, R28, 0x10, RZ, 0xc0, !PT\n")
    w("    LDG.E.128.CONSTANT R8, [R2.64]\n")
    w("    LDG.E.128.CONSTANT R12, [R2.64+0x100]\n")
    w("    LDG.E.128.CONSTANT R16, [R2.64+0x200]\n")
    w("    LDG.E.128.CONSTANT R20, [R2.64+0x300]\n")
    w("    IADD3 R27, R27, R28, RZ\n")
    w("    SHFL.IDX PT, R5, R4, R27, 0x1f\n")
    if batch_loss:
        w("    ISETP.EQ.AND P4, PT, R27, R7, PT\n")
    do_touch = touch and not last
    if do_touch and touch4:
        w(f"    ISETP.LT.U32.AND P3, PT, R1, {0x40000 - 0x4000 * ahead:#x}, PT\n")
    elif do_touch and batch_loss:
        w("    IADD3 R28, P0, R2, R0, RZ\n")
        w(f"    ISETP.LT.U32.AND P3, PT, R1, {0x40000 - 0x4000 * ahead:#x}, PT\n")
        w("    IADD3.X R29, RZ, R3, RZ, P0, !PT\n")
    elif do_touch:
        w("    LEA R6, R0, R1, 0x1\n")
        w(f"    ISETP.LT.U32.AND P3, PT, R1, {0x40000 - 0x4000 * ahead:#x}, PT\n")
        w("    IADD3 R6, P0, R6, UR6, RZ\n")
        w("    IADD3.X R7, RZ, UR7, RZ, P0, !PT\n")
    w("    // -- m_l: a tree over the lane's 16 values\n")
    tree = [(25, 8, 9), (26, 10, 11), (27, 12, 13), (25, 25, 26), (26, 14, 15), (27, 27, 26),
            (26, 16, 17), (25, 25, 27), (27, 18, 19), (26, 26, 27), (27, 20, 21), (25, 25, 26),
            (26, 22, 23), (27, 27, 26), (25, 25, 27)]
    for d, a, c in tree:
        w(f"    FMNMX R{d}, R{a}, R{c}, !PT\n")
    w("    // -- e_j = 2^((W - m_l) log2e) on the MUFU pipe, beside four butterfly levels for m;\n")
    w("    //    the next row touched into L1, W[r,t] loaded\n")
    touch_base = "R2" if touch4 else "R28" if batch_loss else "R6"
    touch_offsets = (0, 0x100, 0x200, 0x300) if touch4 else (0, 0x200)
    side = [
        [f"    @P3 LDG.E.CONSTANT RZ, [{touch_base}.64+{0x4000 * ahead + k:#x}]\n" for k in touch_offsets]
        if do_touch else [],
        ["    LEA R28, R5, R1, 0x2\n", "    IADD3 R28, P0, R28, UR6, RZ\n",
         "    IADD3.X R29, RZ, UR7, RZ, P0, !PT\n", "    LDG.E.CONSTANT R24, [R28.64]\n"],
        [] if batch_loss else
        ["    SHF.R.U32.HI R6, RZ, 0x8, R1\n", "    IADD3 R6, P0, R6, UR12, RZ\n",
         "    IADD3.X R7, RZ, UR13, RZ, P0, !PT\n"],
        [],
    ]
    if presum:
        side[2] += ["    FADD R28, R8, R9\n", "    FADD R29, R10, R11\n", "    FADD R28, R28, R29\n",
                    "    FADD R29, R12, R13\n"]
        side[3] += ["    FADD R28, R28, R29\n", "    FADD R29, R14, R15\n", "    FADD R28, R28, R29\n"]
    src = 25
    for level, lane_mask in enumerate((0x8, 0x4, 0x2, 0x1)):
        w(f"    SHFL.BFLY PT, R27, R{src}, {lane_mask:#x}, 0x1f\n")
        group = range(8 + 4 * level, 12 + 4 * level)
        for r in group:
            w(f"    FADD R{r}, R{r}, -R25\n")
        for r in group:
            w(f"    FFMA R{r}, R{r}, UR14, RZ\n")
        for r in group:
            out.append(mufu(r, b(1 if r < 16 else 2)))
        out.extend(side[level])
        w(f"    FMNMX R26, R{src}, R27, !PT\n")
        src = 26
    w("    // -- c = 2^((m_l - m) log2e), d = W[r,t] - m, e_t = 2^(d log2e)\n")
    w("    FADD R25, R25, -R26\n")
    w("    FADD R24, R24, -R26\n")
    w("    FFMA R25, R25, UR14, RZ\n")
    w("    FFMA R27, R24, UR14, RZ\n")
    out.append(mufu(25, b(3)))
    out.append(mufu(27, b(3)))
    w("    // -- s_l c: a tree over the lane's 16 e_j, then four butterfly levels for s\n")
    if presum:
        rest = [(26, 16, 17), (29, 18, 19), (26, 26, 29), (29, 20, 21), (28, 28, 26), (26, 22, 23),
                (29, 29, 26), (28, 28, 29)]
    else:
        rest = [(26, 8, 9), (28, 10, 11), (29, 12, 13), (26, 26, 28), (28, 14, 15), (29, 29, 28),
                (28, 16, 17), (26, 26, 29), (29, 18, 19), (28, 28, 29), (29, 20, 21), (26, 26, 28),
                (28, 22, 23), (29, 29, 28), (28, 26, 29)]
    for d, a, c in rest:
        w(f"    FADD R{d}, R{a}, R{c}\n")
    w("    FMUL R26, R28, R25\n")
    w("    FMUL R25, R25, UR16\n")
    w("    FMUL R27, R27, UR16\n")
    fill = [
        ["    IADD3 R2, P0, R1, UR8, R0\n", "    IADD3.X R3, RZ, UR9, RZ, P0, !PT\n"],
        ["    SHF.L.U32 R28, R5, 0x2, RZ\n", "    LOP3.LUT R28, R28, 0xf0, RZ, 0xc0, !PT\n",
         "    ISETP.EQ.AND P2, PT, R28, R0, PT\n"],
        ["    LOP3.LUT R28, R5, 0xc3, RZ, 0xc0, !PT\n", "    SHF.L.U32 R28, R28, 0x2, RZ\n"],
        [],
    ]
    for level, lane_mask in enumerate((0x8, 0x4, 0x2, 0x1)):
        w(f"    SHFL.BFLY PT, R29, R26, {lane_mask:#x}, 0x1f\n")
        out.extend(fill[level])
        w("    FADD R26, R26, R29\n")
    w("    // -- r = 1/s; G = e_j (c inverse_rows) r, G[r,t] = (e_t inverse_rows) r - inverse_rows;\n")
    w("    //    loss = lg2(s) ln2 - d\n")
    out.append(f"    {'[B------:R-:W1:-:S02] ' if explicit else ''}MUFU.RCP R29, R26\n")
    out.append(f"    {'[B------:R-:W2:-:S02] ' if explicit else ''}MUFU.LG2 R26, R26\n")
    w("    FMUL R25, R25, R29\n")
    w("    FMUL R27, R27, R29\n")
    if batch_loss:
        w("    @P4 FFMA R6, R26, UR15, -R24\n")
    if interleave:
        order = [("mul", 0), ("st", 0), ("mul", 1), ("st", 1), ("mul", 2), ("st", 2), ("mul", 3), ("st", 3)]
    else:
        order = [("mul", 0), ("mul", 1), ("st", 0), ("mul", 2), ("st", 1), ("mul", 3), ("st", 2), ("st", 3)]
    for kind, k in order:
        if kind == "mul":
            for r in range(8 + 4 * k, 12 + 4 * k):
                w(f"    FMUL R{r}, R{r}, R25\n")
        elif stores:
            w(f"    STG.E.128 [R2.64{'+' + hex(0x100 * k) if k else ''}], R{8 + 4 * k}\n")
    w("    FADD R27, R27, -UR16\n")
    w("    IADD3 R28, P0, R2, R28, RZ\n")
    w("    IADD3.X R29, RZ, R3, RZ, P0, !PT\n")
    if not batch_loss:
        w("    FFMA R24, R26, UR15, -R24\n")
    if stores and batch_loss:
        w("    @P2 STG.E [R28.64], R27\n")
    elif stores:
        w("    @P2 STG.E [R28.64], R27\n")
        w("    @P1 STG.E [R6.64], R24\n")
    else:   # keep the results live: one store per row, of a value that depends on all of them
        w("    FADD R24, R24, R27\n")
        w("    FADD R8, R8, R23\n")
        w("    FADD R24, R24, R8\n")
        w("    @P1 STG.E [R6.64], R24\n")
    w("    IADD3 R1, R1, 0x4000, RZ\n")
    return "".join(out)


def kernel(unroll: int, explicit: bool = True, touch: bool = True, stores: bool = True,
           presum: bool = False, ahead: int = 1, batch_loss: bool = False, interleave: bool = False,
           touch4: bool = False) -> str:
    options = dict(stores=stores, presum=presum, ahead=ahead, batch_loss=batch_loss,
                   interleave=interleave, touch4=touch4)
    text = HEADER + PROLOGUE
    if batch_loss:
        for old, new in BATCH_LOSS_HEADER:
            assert old in text, old
            text = text.replace(old, new, 1)
        text = text.replace("    SHF.R.U32.HI R1, RZ, 0x5, R0\n",
                            "    LOP3.LUT R7, R0, 0x1f, RZ, 0xc0, !PT\n    SHF.R.U32.HI R1, RZ, 0x5, R0\n", 1)
        text = text.replace("    ISETP.EQ.AND P1, PT, R0, RZ, PT\n", "", 1)
    end = BATCH_LOSS_EPILOGUE if batch_loss else ""
    if unroll == 16:
        for i in range(16):
            text += row(explicit, touch, last=(i + ahead > 15), **options)
        return text + end + "    EXIT\ndone:\n    BRA done\n"
    text += "row_group:\n"
    for _ in range(unroll):
        text += row(explicit, touch, last=False, **options)
    text += ("    ISETP.LT.U32.AND P0, PT, R1, 0x40000, PT\n    @P0 BRA row_group\n" + end + "    EXIT\n"
             "done:\n    BRA done\n")
    return text


VARIANTS = {
    "online-u2": dict(unroll=2),
    "online-u1": dict(unroll=1),
    "online-u4": dict(unroll=4),
    "online-u16": dict(unroll=16),
    "online-u2-auto": dict(unroll=2, explicit=False),
    "online-u2-notouch": dict(unroll=2, touch=False),
    "online-u2-nostores": dict(unroll=2, stores=False),
    "online-u2-presum": dict(unroll=2, presum=True),
    "online-u16-presum": dict(unroll=16, presum=True),
    "online-u2-touch2": dict(unroll=2, ahead=2),
    "online-u16-touch2": dict(unroll=16, ahead=2),
    "online-u2-presum-il": dict(unroll=2, presum=True, interleave=True),
    "online-u2-presum-bl": dict(unroll=2, presum=True, batch_loss=True),
    "online-u2-presum-bl-il": dict(unroll=2, presum=True, batch_loss=True, interleave=True),
    "online-u16-presum-bl": dict(unroll=16, presum=True, batch_loss=True),
    "online-u16-presum-bl-il": dict(unroll=16, presum=True, batch_loss=True, interleave=True),
    "online-u2-presum-bl-t4": dict(unroll=2, presum=True, batch_loss=True, touch4=True),
}

if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "bench/gpu/variants")
    for label, options in VARIANTS.items():
        (out / f"bob-loss-gradient@{label}.sass").write_text(kernel(**options))
