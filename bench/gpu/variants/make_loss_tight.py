#!/usr/bin/env python3
"""Loss-kernel variants with fewer instructions and shorter issue stalls per row (issue 21);
Bob's kernel is one of them (BOB, below).

The algorithm is online-u2-presum-il's (make_online_loss.py: each lane's own max m_l, the
ex2s beside the four max shuffles, the first eight e_j summed beside the last two, each
16-byte group of G stored as soon as it is scaled).  What changes:

- `fixed` addressing (the `-fx` sources): the sixteen rows of a warp are unrolled, so every
  row's P and G accesses take the row's offset in their immediate ([R2.64+0x4000 i + ...]):
  two base pairs (R2:R3 into P, R6:R7 into G) are set once and nothing is added per row.
  The next row is touched into L1 by four 4-byte loads from the row's own base (no touch
  address); W[r,t] is loaded at R2 + 4 (t & 0xc3), which is W[r,t]'s address for the lane that
  holds column t (4t - 16l = 4 (t & 0xc3) there) and a value of the row for every other lane,
  so that lane (P2) stores both G[r,t] and the row's loss.  156-161 instructions a row
  against 166.
- `tight` control codes (the `-s1` sources): bobc's scheduler gives every instruction that
  sets a scoreboard a stall of at least 2 (schedule.BARRIER_SETTER_MIN_STALL).  ptxas gives
  such an instruction a stall of 1 whenever the next instruction does not wait on that
  scoreboard, and 2 or more when it does (tests/sass/data/listings: 688 setters with stall 1,
  none followed by a wait on the scoreboard they set; 145 with stall 2 and such a wait).
  `tighten` schedules with a minimum of 1, raises each setter that the next instruction waits
  on back to 2 (a longer stall is always safe), and writes every instruction's control code
  out explicitly, so the source assembles to exactly these codes
  (tests/golden/test_loss_kernel_controls.py holds Bob's kernel to the rule; the simulator's
  hazard checker does not model it).
- the options of fixed_row / fixed_kernel (hoist, own, first_after, ilv, ...: their
  docstrings), each written into the source's header when used.

On the H200 (bench/results/loss-kernel-h200.md, session 4) the fixed addressing was the
lever (8.1 -> 7.8 us), the own store scoreboards and next-row loads between the stores took
it to 7.6-7.7 us (1.22-1.23x the copy probe); the stalls of 1 alone changed nothing
measurable.

    python3 bench/gpu/variants/make_loss_tight.py [OUT_DIR]
writes bob-loss-gradient@tight-*.sass (see VARIANTS); check them with sim_loss.py;
    python3 bench/gpu/variants/make_loss_tight.py --bob
writes Bob's kernel (the BOB variant) to specs/Realization/Nvidia/SM86/bob-loss-gradient.sass.
"""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "compiler"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_online_loss  # noqa: E402
from bobc.sass import assemble  # noqa: E402
from bobc.sass import schedule as scheduler  # noqa: E402
from bobc.sass.syntax import Control, parse_source  # noqa: E402
from bobc.targets import TARGETS  # noqa: E402

FIXED_HEADER = """// bob-loss-gradient (grid 1 x block 256): each half-warp works one row at a time, so a
// warp instruction serves two rows.  Warp w, half h (lanes 0-15 / 16-31), row i (0..15,
// unrolled) is row 16i + 2w + h; lane l of a half holds columns 4l..4l+3, 64+4l..,
// 128+4l.. and 192+4l.. (four 16-byte loads, each 256 contiguous bytes across the half).
// A lane takes the max m_l of its 16 values and starts their ex2 at once while four
// butterfly shuffles find the row max m beside them (MUFU pipe and shuffles overlap):
//   e_j = 2^((W[r,j] - m_l) log2e);  c = 2^((m_l - m) log2e);  s = sum over the half of c sum_j e_j
//   G[r,j] = e_j (c inverse_rows / s);  G[r,t] = 2^(d log2e) inverse_rows / s - inverse_rows
//   loss[r] = lg2(s) ln2 - d, d = W[r,t] - m
// The max is subtracted before scaling by log2e, so a constant row of -8e37 keeps ln 256;
// every e_j <= 1 and c <= 1, so no row overflows.  Every access takes its row's offset in
// its immediate (0x4000 a row): R2:R3 and R6:R7 are set once.  The lane that holds column
// t (P2: 4t - 16l = 4 (t & 0xc3) there) loads W[r,t] at R2 + 4 (t & 0xc3) + the row's
// offset (every other lane loads some value of the row there and ignores it), stores the
// row's loss and stores G[r,t] again after the row's 16-byte stores (same thread, same
// address: the later store wins).  The next row is touched into L1 (four 4-byte loads into
// RZ from the row's own base: every 32-byte sector of it).  Control codes are explicit
// (bench/gpu/variants/make_loss_tight.py: bobc's scheduler with a stall of 1 after a
// scoreboard setter the next instruction does not wait on, as ptxas does); the ex2 results
// have scoreboards of their own (1: values 0-7, 2: 8-15, 3: c and e_t; 1/2 again for
// RCP/LG2 of s).
{variant}// Arguments: 0 P, 1 G, 2 targets (u32 per row), 3 loss block, 4-5 unused,
// 6 (log2e f32, ln2 f32), 7 (inverse rows f32, 0).
// Registers: R0 l*16; R1 4 (2w + h), the loss block offset of the half's first row;
// R2:R3 P + 1024 (2w + h) + 16l; R4 the targets of this lane's rows (lane (l, h): row
// 16l + 2w + h); R5 the source lane of t, then t; R6:R7 G + 1024 (2w + h) + 16l;
// R8..R23 the row's values; R24 W[r,t], then d, then the loss; R25 m_l, then c, then c/256,
// then the scale, then G[r,t]; R26 m, then s, then lg2 s; R26:R27 the loss address; R27
// e_t, then e_t/256; R28 s_l, then 4 (t & 0xc3); R28:R29 the address of W[r,t], then of
// G[r,t]; R29 1/s, then e_t/256/s; R25..R29 temporaries besides.  Uniform registers: UR6 P,
// UR8 G, UR10 targets, UR12 loss, UR14 log2e, UR15 ln2, UR16 inverse rows.  P2: this lane
// holds column t.
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

FIXED_PROLOGUE = """    S2R R0, SR_TID.X
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
    SHF.R.U32.HI R27, RZ, 0x4, R29
    LEA R27, R1, R27, 0x1
    LEA R5, R0, R27, 0x4
    SHF.L.U32 R28, R27, 0xa, RZ
    SHF.L.U32 R1, R27, 0x2, RZ
    SHF.L.U32 R0, R0, 0x4, RZ
    LEA R24, P0, R5, UR10, 0x2
    IADD3.X R25, RZ, UR11, RZ, P0, !PT
    LDG.E R4, [R24.64]
    IADD3 R2, P0, R28, UR6, R0
    IADD3.X R3, RZ, UR7, RZ, P0, !PT
    IADD3 R6, P0, R28, UR8, R0
    IADD3.X R7, RZ, UR9, RZ, P0, !PT
"""


def mufu(dst: int, barrier: int, what: str = "EX2", src: int | None = None) -> str:
    return f"    [B------:R-:W{barrier}:-:S01] MUFU.{what} R{dst}, R{dst if src is None else src}\n"


def spread(main: list[str], side: list[str]) -> list[str]:
    """`side` spread evenly between the lines of `main` (independent work into its stalls)."""
    out, n, m = [], len(main), len(side)
    after = [round((j + 1) * n / (m + 1)) for j in range(m)]
    j = 0
    for k, line in enumerate(main):
        out.append(line)
        while j < m and after[j] <= k + 1:
            out.append(side[j])
            j += 1
    return out + side[j:]


def fixed_row(i: int, hoist: bool = False, stores: bool = True, own: bool = False,
              first_after: bool = False, early_touch: bool = False, ilv: bool = False, lag: int = 1,
              late_touch: bool = False) -> str:
    """Row i of 16 (all offsets immediate).  `hoist`: the next row's source lane of t and its
    shuffle are issued in this row's tail (row 0's in the prologue), the side work of each
    ex2 level is spread between its FADD/FFMA lines and the tail's address and loss work sits
    between the scaling and the stores; `stores`: False only for the timing probe; `own`: each
    16-byte store k reads its registers on scoreboard k and the next row's load into them
    waits on that one only (the scheduler would join the four stores' reads, the shuffles'
    and the touches' on scoreboards 4 and 5); the loads' own register reads (R2:R3, never
    written again) go on scoreboards nothing waits on before those reads are surely done
    (memory instructions leave in order): group k's on k ^ 1, the touches' on 3 (next waited
    on after W[r,t], loaded after them, has come back).  The session's timed sources set no
    read scoreboard there; tests/sass/test_schedule.py's checker wants one on every late
    reader, and ptxas never puts a read and a write scoreboard of one index on one
    instruction; `first_after`: row 0's t is shuffled after
    row 0's loads are issued (not in the prologue, where it waits on the targets' load before
    any row load goes out); `early_touch`: the next row is touched right after this row's
    loads, not beside the first ex2s; `ilv` (with `own`): the next row's load into group k is
    issued in this row's tail right after the store of group k + `lag`, not after all stores;
    `late_touch`: the next row is touched beside the last two ex2 levels, not the first two."""
    load_code = (lambda k: f"[B{'-' * k}{k}{'-' * (5 - k)}:R{k ^ 1}:W{k}:-:S01] ") if own else (lambda k: "")
    store_code = (lambda k: f"[B------:R{k}:W-:-:S01] ") if own else (lambda k: "")
    touch_code = "[B------:R3:W-:-:S01] " if own else ""
    off = 0x4000 * i
    out = []
    w = out.append
    w(f"    // -- row {i}: its values and its target t\n")
    load = [f"    {load_code(k)}LDG.E.128.CONSTANT R{8 + 4 * k}, [R2.64+{off + 0x100 * k:#x}]\n"
            for k in range(4)]
    nxt = [f"    {load_code(k)}LDG.E.128.CONSTANT R{8 + 4 * k}, [R2.64+{off + 0x4000 + 0x100 * k:#x}]\n"
           for k in range(4)] if i < 15 else []
    if not ilv or i == 0:
        out.extend(load)
    touch = [f"    {touch_code}LDG.E.CONSTANT RZ, [R2.64+{off + 0x4000 + 0x100 * k:#x}]\n"
             for k in range(4)] if i < 15 else []
    if early_touch:
        out.extend(touch)
        touch = []
    if hoist and first_after and i == 0:
        w("    LOP3.LUT R5, R1, 0x4, RZ, 0xc0, !PT\n")
        w("    SHF.L.U32 R5, R5, 0x2, RZ\n")
        w("    SHFL.IDX PT, R5, R4, R5, 0x1f\n")
    if not hoist:
        w("    LOP3.LUT R5, R1, 0x4, RZ, 0xc0, !PT\n")
        w(f"    LEA R5, R5, {i:#x}, 0x2\n")
        w("    SHFL.IDX PT, R5, R4, R5, 0x1f\n")
    w("    // -- m_l: a tree over the lane's 16 values\n")
    tree = [(25, 8, 9), (26, 10, 11), (27, 12, 13), (25, 25, 26), (26, 14, 15), (27, 27, 26),
            (26, 16, 17), (25, 25, 27), (27, 18, 19), (26, 26, 27), (27, 20, 21), (25, 25, 26),
            (26, 22, 23), (27, 27, 26), (25, 25, 27)]
    for d, a, c in tree:
        w(f"    FMNMX R{d}, R{a}, R{c}, !PT\n")
    w("    // -- e_j = 2^((W - m_l) log2e) on the MUFU pipe, beside four butterfly levels for m;\n")
    w("    //    the next row touched into L1, W[r,t] loaded, e_0..e_7 summed\n")
    side = [
        touch[:2],
        touch[2:] + ["    LOP3.LUT R28, R5, 0xc3, RZ, 0xc0, !PT\n", "    SHF.L.U32 R28, R28, 0x2, RZ\n",
                     "    IADD3 R28, P0, R2, R28, RZ\n", "    IADD3.X R29, RZ, R3, RZ, P0, !PT\n",
                     f"    LDG.E.CONSTANT R24, [R28.64+{off:#x}]\n"],
        ["    FADD R28, R8, R9\n", "    FADD R29, R10, R11\n", "    FADD R28, R28, R29\n",
         "    FADD R29, R12, R13\n"],
        ["    FADD R28, R28, R29\n", "    FADD R29, R14, R15\n", "    FADD R28, R28, R29\n"],
    ]
    if late_touch:
        side = [[], side[1][len(touch[2:]):], touch[:2] + side[2], touch[2:] + side[3]]
    src = 25
    for level, lane_mask in enumerate((0x8, 0x4, 0x2, 0x1)):
        w(f"    SHFL.BFLY PT, R27, R{src}, {lane_mask:#x}, 0x1f\n")
        group = range(8 + 4 * level, 12 + 4 * level)
        run = [f"    FADD R{r}, R{r}, -R25\n" for r in group] + [f"    FFMA R{r}, R{r}, UR14, RZ\n" for r in group]
        if hoist:
            out.extend(spread(run, side[level]))
            out.extend(mufu(r, 1 if r < 16 else 2) for r in group)
        else:
            out.extend(run)
            out.extend(mufu(r, 1 if r < 16 else 2) for r in group)
            out.extend(side[level])
        w(f"    FMNMX R26, R{src}, R27, !PT\n")
        src = 26
    w("    // -- c = 2^((m_l - m) log2e), d = W[r,t] - m, e_t = 2^(d log2e)\n")
    w("    FADD R25, R25, -R26\n")
    w("    FADD R24, R24, -R26\n")
    w("    FFMA R25, R25, UR14, RZ\n")
    w("    FFMA R27, R24, UR14, RZ\n")
    w(mufu(25, 3))
    w(mufu(27, 3))
    w("    // -- s_l c: the rest of the lane's tree, then four butterfly levels for s\n")
    for d, a, c in [(26, 16, 17), (29, 18, 19), (26, 26, 29), (29, 20, 21), (28, 28, 26), (26, 22, 23),
                    (29, 29, 26), (28, 28, 29)]:
        w(f"    FADD R{d}, R{a}, R{c}\n")
    w("    FMUL R26, R28, R25\n")
    w("    FMUL R25, R25, UR16\n")
    w("    FMUL R27, R27, UR16\n")
    fill = [
        ["    SHF.L.U32 R28, R5, 0x2, RZ\n", "    LOP3.LUT R28, R28, 0xf0, RZ, 0xc0, !PT\n"],
        ["    ISETP.EQ.AND P2, PT, R28, R0, PT\n"],
        ["    LOP3.LUT R28, R5, 0xc3, RZ, 0xc0, !PT\n", "    SHF.L.U32 R28, R28, 0x2, RZ\n"],
        ["    LOP3.LUT R5, R1, 0x4, RZ, 0xc0, !PT\n", f"    LEA R5, R5, {i + 1:#x}, 0x2\n"]
        if hoist and i < 15 else [],
    ]
    for level, lane_mask in enumerate((0x8, 0x4, 0x2, 0x1)):
        w(f"    SHFL.BFLY PT, R29, R26, {lane_mask:#x}, 0x1f\n")
        out.extend(fill[level])
        w("    FADD R26, R26, R29\n")
    w("    // -- 1/s; G = e_j (c inverse_rows) / s, stored as each group is scaled; the loss\n")
    w("    //    lg2(s) ln2 - d and G[r,t] = (e_t inverse_rows) / s - inverse_rows by the P2 lane\n")
    w(mufu(29, 1, "RCP", 26))
    w(mufu(26, 2, "LG2"))
    w("    FMUL R25, R25, R29\n")
    w("    FMUL R29, R27, R29\n")
    loss = ["    FFMA R24, R26, UR15, -R24\n", "    IADD3 R26, P0, R1, UR12, RZ\n",
            "    IADD3.X R27, RZ, UR13, RZ, P0, !PT\n"]
    for k in range(4):
        for r in range(8 + 4 * k, 12 + 4 * k):
            w(f"    FMUL R{r}, R{r}, R25\n")
        if hoist and k == 0:
            out.extend(loss[:2])
        if hoist and k == 3:
            w("    FADD R25, R29, -UR16\n")
            w("    IADD3 R28, P0, R6, R28, RZ\n")
        w(f"    {store_code(k)}STG.E.128 [R6.64+{off + 0x100 * k:#x}], R{8 + 4 * k}\n" if stores else "")
        if ilv and k >= lag and nxt:
            w(nxt[k - lag])
        if k == 0:
            out.extend(loss[2:] if hoist else loss)
        if k == 1:
            if hoist and i < 15:
                w("    SHFL.IDX PT, R5, R4, R5, 0x1f\n")
            w(f"    @P2 STG.E [R26.64+{0x40 * i:#x}], R24\n")
    if not hoist:
        w("    FADD R25, R29, -UR16\n")
        w("    IADD3 R28, P0, R6, R28, RZ\n")
    w("    IADD3.X R29, RZ, R7, RZ, P0, !PT\n")
    if not stores:   # keep every result live: one value depending on all of them, stored
        w("    FADD R25, R25, R8\n    FADD R25, R25, R23\n")
    w(f"    @P2 STG.E [R28.64+{off:#x}], R25\n")
    if ilv and nxt:
        out.extend(nxt[4 - lag:])
    return "".join(out)


STAGGER = """    // -- warps {which} start about half a row later
    LOP3.LUT R29, R1, {mask:#x}, RZ, 0xc0, !PT
    ISETP.NE.AND P4, PT, R29, RZ, PT
    MOV R29, {count:#x}
stagger:
    @P4 IADD3 R29, R29, -0x1, RZ
    ISETP.NE.AND P4, PT, R29, RZ, P4
    @P4 BRA stagger
"""


def fixed_kernel(hoist: bool = False, stores: bool = True, own: bool = False, first_after: bool = False,
                 early_touch: bool = False, ilv: bool = False, stagger: int | None = None, lag: int = 1,
                 late_touch: bool = False) -> str:
    """The 16-row kernel (see fixed_row); `stagger`: warps with bit `stagger` of w set start
    with a delay loop of ~10 iterations (the SMSPs' store bursts out of phase)."""
    prologue = FIXED_PROLOGUE
    if stagger is not None:
        cut = prologue.index("    LEA R24, P0, R5, UR10, 0x2")   # before any load: a label drains all
        prologue = (prologue[:cut] + STAGGER.format(which=f"with bit {stagger} of w", mask=8 << stagger, count=10)
                    + prologue[cut:])
    if hoist and not first_after:
        prologue += ("    LOP3.LUT R5, R1, 0x4, RZ, 0xc0, !PT\n    SHF.L.U32 R5, R5, 0x2, RZ\n"
                     "    SHFL.IDX PT, R5, R4, R5, 0x1f\n")
    notes = []
    if hoist:
        notes.append("the next row's t is shuffled in this row's tail (R5 then holds it), the side work of "
                     "each ex2 level sits between its FADD/FFMA lines, the loss and its address between the "
                     "scaling and the stores")
    if first_after:
        notes.append("row 0's t is shuffled after row 0's loads have gone out")
    if own:
        notes.append("each 16-byte store k of a row reads its registers on scoreboard k, and the next row's "
                     "load of group k waits on that scoreboard alone and sets it for its result (its read of "
                     "R2:R3 on k ^ 1; the touches' on 3: nothing waits on those before they are done)")
    if ilv:
        notes.append(f"the next row's load of group k is issued right after this row's store of group "
                     f"k + {lag}" + (" (group 3's after the G[r,t] store)" if lag else ""))
    if early_touch:
        notes.append("the next row is touched right after this row's loads")
    if late_touch:
        notes.append("the next row is touched beside the last two ex2 levels")
    if not stores:
        notes.append("PROBE: the 16-byte stores are left out (not Bob's outputs)")
    if stagger is not None:
        notes.append(f"warps with bit {stagger} of w first spin ~10 loop iterations (store bursts out of phase)")
    variant = ""
    if notes:
        words = ("Also: " + "; ".join(notes) + ".").split()
        line = "//"
        for word in words:
            if len(line) + 1 + len(word) > 96:
                variant += line + "\n"
                line = "//"
            line += " " + word
        variant += line + "\n"
    rows = "".join(fixed_row(i, hoist, stores, own, first_after, early_touch, ilv, lag, late_touch)
                   for i in range(16))
    text = FIXED_HEADER.format(variant=variant) + prologue + rows
    return text + "    EXIT\ndone:\n    BRA done\n"


def tighten(text: str) -> str:
    """The source with every instruction's control code explicit: bobc's scheduler with a
    minimum stall of 1 after a scoreboard setter, raised to 2 where the next instruction
    waits on the scoreboard it sets (ptxas's rule)."""
    saved = scheduler.BARRIER_SETTER_MIN_STALL
    scheduler.BARRIER_SETTER_MIN_STALL = 1
    try:
        per_arch = {arch: assemble(text, TARGETS[arch], "<tighten>") for arch in ("sm_86", "sm_90")}
    finally:
        scheduler.BARRIER_SETTER_MIN_STALL = saved
    controls = [i.control for i in per_arch["sm_90"].instructions]
    assert controls == [i.control for i in per_arch["sm_86"].instructions], "targets scheduled differently"
    for k, c in enumerate(controls[:-1]):
        waits = controls[k + 1].wait_mask
        sets = [b for b in (c.write_barrier, c.read_barrier) if b != 7]
        if c.stall < 2 and any(waits >> b & 1 for b in sets):
            controls[k] = Control(stall=2, yield_bit=1, write_barrier=c.write_barrier,
                                  read_barrier=c.read_barrier, wait_mask=c.wait_mask)
    lines = text.splitlines(keepends=True)
    parsed = [l for l in parse_source(text, "<tighten>") if l.instruction is not None]
    assert len(parsed) == len(controls)
    for line, control in zip(parsed, controls):
        n = line.span.line - 1
        body = lines[n].strip()
        if body.startswith("["):
            body = body[body.index("]") + 1:].strip()
        lines[n] = f"    {control.text()} {body}\n"
    out = "".join(lines)
    check = assemble(out, TARGETS["sm_90"], "<tightened>")
    assert [i.control for i in check.instructions] == controls
    return out


def online_tight(unroll: int) -> str:
    """Bob's kernel (online-u2-presum-il) or its 16-row unrolled form, control codes tightened."""
    text = make_online_loss.kernel(unroll=unroll, presum=True, interleave=True)
    text = text.replace("[B------:R-:W1:-:S02]", "[B------:R-:W1:-:S01]") \
               .replace("[B------:R-:W2:-:S02]", "[B------:R-:W2:-:S01]") \
               .replace("[B------:R-:W3:-:S02]", "[B------:R-:W3:-:S01]")
    return tighten(text)


def fixed_plain() -> str:
    """The fixed-offset kernel with the scheduler's own stalls (explicit MUFU codes at S02)."""
    return fixed_kernel().replace(":S01] MUFU", ":S02] MUFU")


VARIANTS = {
    "tight-u2-s1": lambda: online_tight(2),
    "tight-u16-s1": lambda: online_tight(16),
    "tight-fx": fixed_plain,
    "tight-fx-s1": lambda: tighten(fixed_kernel()),
    "tight-fx2-s1": lambda: tighten(fixed_kernel(hoist=True)),
    "tight-fx3-s1": lambda: tighten(fixed_kernel(hoist=True, own=True)),
    "tight-fx4-s1": lambda: tighten(fixed_kernel(hoist=True, own=True, first_after=True)),
    "tight-fx5-s1": lambda: tighten(fixed_kernel(hoist=True, own=True, first_after=True, early_touch=True)),
    "tight-fx5-ilv-s1": lambda: tighten(fixed_kernel(hoist=True, own=True, first_after=True, early_touch=True,
                                                    ilv=True)),
    "tight-fx5-sa-s1": lambda: tighten(fixed_kernel(hoist=True, own=True, first_after=True, early_touch=True,
                                                   stagger=1)),
    "tight-fx5-sb-s1": lambda: tighten(fixed_kernel(hoist=True, own=True, first_after=True, early_touch=True,
                                                   stagger=2)),
    "tight-fx3-ilv-s1": lambda: tighten(fixed_kernel(hoist=True, own=True, ilv=True)),
    "tight-fx4-ilv-s1": lambda: tighten(fixed_kernel(hoist=True, own=True, first_after=True, ilv=True)),
    "tight-fx4-ilv0-s1": lambda: tighten(fixed_kernel(hoist=True, own=True, first_after=True, ilv=True, lag=0)),
    "tight-fx4-ilv-sa-s1": lambda: tighten(fixed_kernel(hoist=True, own=True, first_after=True, ilv=True,
                                                       stagger=1)),
    "tight-fx4-ilv-lt-s1": lambda: tighten(fixed_kernel(hoist=True, own=True, first_after=True, ilv=True,
                                                       late_touch=True)),
    "tight-fx2-s1-nostores": lambda: tighten(fixed_kernel(hoist=True, stores=False)),
}

# Bob's kernel (specs/Realization/Nvidia/SM86/bob-loss-gradient.sass) is this variant's output
# (tests/golden/test_loss_kernel_controls.py checks it): the fastest in the final H200 run
# (bench/results/loss-kernel-h200.md, session 4).
BOB = "tight-fx4-ilv-s1"
BOB_SOURCE = REPO / "specs" / "Realization" / "Nvidia" / "SM86" / "bob-loss-gradient.sass"

if __name__ == "__main__":
    if sys.argv[1:] == ["--bob"]:
        BOB_SOURCE.write_text(VARIANTS[BOB]())
        sys.exit(0)
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent)
    for label, make in VARIANTS.items():
        (out / f"bob-loss-gradient@{label}.sass").write_text(make())
