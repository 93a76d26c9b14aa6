"""The control-code checker: every register read is covered by a stall or a scoreboard.

Run along the instruction stream the executor issues (one timeline per
launch: its threads issue each instruction together).  Issue cycles advance
by each instruction's stall count (at least 1); time spent waiting on a
scoreboard is not counted, so a fixed-latency dependency must be covered by
stalls alone.  A stall count of 0 is the interlocked encoding: the next
instruction issues once every result outstanding is written (ptxas -O0 code
relies on it), so it completes everything in flight.  A read is a hazard when:
- its producer was coupled and fewer than latencies.RAW cycles have passed;
- its producer was decoupled and the instruction has not waited (wait mask)
  on the write scoreboard the producer set since it issued, or the producer
  set none;
and a write is a hazard when it overwrites a decoupled result still in flight
or a register a decoupled instruction has not yet read (its read scoreboard
not waited, or, where it set none, sooner than latencies.WAR_UNSCORED cycles
after it issued).  LDGDEPBAR must set the scoreboard DEPBAR waits on.
Two instructions guarded by complementary predicates -- @Pn and @!Pn, Pn not
written between them in the issued stream -- never both execute for a thread,
so a variable-latency read or write of one is not ordered against the other's
(ptxas sets no scoreboard and no wait between them, and does set them for the
same pair under one predicate: tests/sim/test_complementary_guards_s41.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ..bounded import BoundedCache
from ..targets import target_of_nvdisasm
from . import latencies as L
from .faults import Hazard, Unmodeled
from .sass_frontend import NO_SCOREBOARD, Instruction

RZ, PT, URZ = 255, 7, 63

# (arch, id(code)) -> (code, plans by address, FP64 addresses): the plans of the code lists launched
# most recently (the list is held, so its id names it while it is kept)
_SHARED_PLANS: BoundedCache = BoundedCache(256)


@dataclass
class Effects:
    dst_regs: list = field(default_factory=list)     # (reg, writer class: alu/fma/wide_lo/wide_hi/decoupled)
    src_regs: list = field(default_factory=list)     # (reg, reader class)
    dst_preds: list = field(default_factory=list)
    src_preds: list = field(default_factory=list)    # (pred, reader class)
    dst_uregs: list = field(default_factory=list)
    src_uregs: list = field(default_factory=list)


def _width(modifiers: tuple[str, ...]) -> int:
    for m, n in (("128", 4), ("64", 2)):
        if m in modifiers:
            return n
    return 1


def _hmma_widths(mods) -> tuple[int, int, int, int]:
    """(D, A, B, C) register counts of HMMA.16816 / .1688 with .F32 or .F16 accumulation."""
    acc = 4 if "F32" in mods else 2
    return (acc, 4, 2, acc) if "16816" in mods else (acc, 2, 1, acc)


# Opcodes whose destination is its first operand and whose sources are the rest, with
# per-operand widths (registers) where an operand is a 64-bit or wider register group.
def _widths(op: str, mods: tuple[str, ...], count: int) -> list[int]:
    """The register width of each operand of `op` (1 for a 32-bit register; 2 for a pair...)."""
    w = [1] * count
    if op in ("LDG", "LDC", "ULDC", "LDS", "LDL", "LD"):
        w[0] = _width(mods)
    elif op == "LDSM":
        w[0] = int(mods[-1]) if mods and mods[-1].isdigit() else 1
    elif op == "HMMA" and count >= 4:
        w[:4] = _hmma_widths(mods)
    elif op in ("DADD", "DMUL", "DFMA"):
        w = [2] * count
    elif op == "DSETP":
        w = [1, 1] + [2] * (count - 2)
    elif op in ("F2F", "I2F", "F2I"):
        types = [m for m in mods if m in ("F16", "F32", "F64", "S64", "U64", "S32", "U32", "BF16")]
        if op == "F2F" and len(types) == 2:
            w[0], w[1] = (2 if types[0] == "F64" else 1), (2 if types[1] == "F64" else 1)
        elif op == "I2F":
            w[0] = 2 if "F64" in mods else 1
            w[1] = 2 if ("S64" in mods or "U64" in mods) else 1
        elif op == "F2I":
            w[0] = 2 if ("S64" in mods or "U64" in mods) else 1
            w[1] = 2 if "F64" in mods else 1
    elif op == "CS2R":
        w[0] = 1 if "32" in mods else 2
    return w


def effects(ins: Instruction) -> Effects:
    """Which registers, predicates and uniform registers `ins` reads and writes."""
    e = Effects()
    op, mods, ops = ins.opcode, ins.modifiers, list(ins.operands)
    if op.startswith("U") and op not in ("UMOV",) and op[1:] in L.KNOWN_BASES:
        base = op[1:]
    else:
        base = op
    wclass = L.writer_class(op, mods)
    rclass = L.reader_class(op, mods)
    if ins.guard != PT and ins.guard != 15:
        e.src_preds.append((ins.guard, "decoupled" if op in ("BRA", "EXIT") else "guard"))

    def src(o, cls=rclass, width=1):
        if o.kind == "reg" and o.index != RZ:
            e.src_regs.extend((o.index + k, cls) for k in range(width))
        elif o.kind == "ureg" and o.index != URZ:
            e.src_uregs.extend(o.index + k for k in range(width))
        elif o.kind in ("pred", "upred") and o.index != PT:
            e.src_preds.append((o.index + (8 if o.kind == "upred" else 0), L.predicate_reader_class(op)))
        elif o.kind == "mem":
            if o.index != RZ:
                # LD.E's address is a register pair even where sm_90's text writes [Ra] (no descriptor)
                pair = o.wide or (op == "LD" and "E" in mods)
                e.src_regs.extend((o.index + k, cls) for k in range(2 if pair else 1))
            if o.ureg != URZ:
                e.src_uregs.append(o.ureg)
            if o.desc >= 0:
                e.src_uregs.extend((o.desc, o.desc + 1))
        elif o.kind == "const" and o.const_reg != RZ:
            e.src_regs.append((o.const_reg, cls))

    def dst(o, width=1, cls=wclass):
        if o.kind == "reg" and o.index != RZ:
            e.dst_regs.extend((o.index + k, cls) for k in range(width))
        elif o.kind == "ureg" and o.index != URZ:
            e.dst_uregs.extend(o.index + k for k in range(width))
        elif o.kind in ("pred", "upred") and o.index != PT:
            e.dst_preds.append(o.index + (8 if o.kind == "upred" else 0))

    if op in ("BRA", "BREAK") and ops and ops[0].kind == "pred":
        src(ops[0])                 # `BRA Pp, target`, `BREAK Pp, Bx`: Pp read as the guard is
        return e
    if op == "BRA" and ops and ops[0].kind == "ureg":
        # sm_86's `BRA.CONV URn, target` / `BRA.DIV URn, target` read URn (the member mask) as a decoupled
        # reader: ptxas 13 waits on the REDUX's write scoreboard before every one (user_forms.ptx shfl_loaded_mask,
        # tile_ballot: `REDUX.OR UR6, R7` on W1, `@!P0 BRA.CONV UR6` waiting on SB1); before s45 it was no read
        src(ops[0])
        return e
    if op == "RET" and ops and ops[0].kind == "reg":
        src(ops[0], width=2)        # RET.REL.NODEC Ra: the return address, the pair Ra+1:Ra
        return e
    if op == "BAR":
        for o in ops:
            if o.kind in ("pred", "upred"):
                src(o)              # BAR.RED's predicate operand, read at dispatch (latencies.predicate_reader_class)
        return e
    if op in ("BRA", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "NOP", "DEPBAR", "LDGDEPBAR", "MEMBAR",
              "ACQBULK", "PREEXIT", "CALL", "BREAK"):
        return e
    if not ops:
        return e
    if base == "B2R":                                          # B2R.RESULT Rd[, Pd]: both written
        for o in ops:
            dst(o)
        return e
    if base in ("P2R", "R2P") and ops:
        # PR, the predicate file: P2R reads, R2P writes, the predicates its mask (the last operand)
        # selects -- bit i is Pi; a mask in a register may select any of P0..P6
        mask = ops[-1]
        selected = mask.value & 0x7F if mask.kind == "imm" else 0x7F
        for p in range(7):
            if selected >> p & 1:
                if base == "P2R":
                    e.src_preds.append((p, L.predicate_reader_class(op)))
                else:
                    e.dst_preds.append(p)
    widths = _widths(base, mods, len(ops))
    if base in ("STG", "STS", "STL", "ST", "RED", "REDG", "LDGSTS"):
        src(ops[0])
        for o in ops[1:]:
            src(o, width=_width(mods) if base in ("STG", "STS", "STL", "ST") else 1)
        return e
    if base in ("ISETP", "FSETP", "DSETP", "SHFL", "PLOP3"):
        dst(ops[0]), dst(ops[1])
        for o, width in zip(ops[2:], widths[2:]):
            src(o, width=width)
        return e
    if base in ("ATOMG", "ATOM", "LOP3", "VOTE") and ops and ops[0].kind in ("pred", "upred"):
        dst(ops[0])
        ops, widths = ops[1:], widths[1:]
        if base == "VOTE":
            if len(ops) > 1:                # VOTE.ANY Rd-less forms: Pd, then the source (VOTE.ANY P0, P1
                dst(ops[0])                 # writes P0 and reads P1, as nvdisasm's life ranges have it)
                ops = ops[1:]
            for o in ops:
                src(o)
            return e
    if base == "IMAD" and ops and ops[0].kind in ("reg", "ureg") and len(ops) > 1 and ops[1].kind in ("pred", "upred"):
        dst(ops.pop(1))                                          # IMAD.WIDE.U32 R10, P0, ...: a carry out
    if base == "IMAD" and "WIDE" in mods:
        if len(ops) == 5 and "X" in mods:
            src(ops.pop())                                       # .X: the carry in
        if len(ops) != 4:
            raise Unmodeled(f"instruction at {ins.pc:#06x} ({ins.text}): {ins.text.split()[0]} with "
                            f"{len(ins.operands)} operands is not modeled")
        d, a, b, c = ops
        if d.kind == "ureg":
            # UIMAD.WIDE[.U32] URd, ...: the uniform pair URd+1:URd (not Rd+1:Rd, which an uniform instruction
            # never writes: ptxas's sm_90 mad.wide.u32 of parameters, UIMAD.WIDE.U32 UR4, UR4, UR5, URZ after
            # LDC R5 on a scoreboard was read as a write of R5 racing the load)
            dst(d, width=2)
            for o in (a, b):
                src(o)
            src(c, width=2)
            return e
        e.dst_regs += [(d.index, "wide_lo"), (d.index + 1, "wide_hi")] if d.index != RZ else []
        src(a, "wide_ab"), src(b, "wide_ab")
        if c.kind == "reg" and c.index != RZ:
            e.src_regs += [(c.index, "fma"), (c.index + 1, "wide_ch")]
        else:
            src(c, "fma", 2)
        return e
    if base == "IMAD" and "HI" in mods and len(ops) >= 4 and ops[3].kind == "reg" and ops[3].index != RZ:
        # the addend is the pair Rc+1:Rc (nvdisasm's life ranges), its high word read late as IMAD.WIDE's is
        # (wide_ch): ptxas's sm_90 mad.hi.cc.u32 then madc issues `MOV R5, R6` and 3 cycles on `IMAD.HI.U32
        # R4, P0, R0, UR4, R4` (user_forms_s46.ptx carry_hi_madc), where a low word or A / B needs the ALU's 5
        d, a, b, c, *more = ops
        dst(d, widths[0])
        for o, width in zip((a, b, *more), widths[1:3] + widths[4:]):
            src(o, width=width)
        e.src_regs += [(c.index, rclass), (c.index + 1, "wide_ch")]
        return e
    if base == "IMAD" and "HI" in mods and len(ops) >= 4:
        widths = widths[:3] + [2] + widths[4:]                   # the addend is the pair Rc+1:Rc
    dst(ops[0], widths[0])
    rest, widths = ops[1:], widths[1:]
    while rest and rest[0].kind in ("pred", "upred") and base in ("IADD3", "LEA") and len(rest) > 3:
        dst(rest[0])                                             # carry outputs
        rest, widths = rest[1:], widths[1:]
    for o, width in zip(rest, widths):
        src(o, width=width)
    return e


class Checker:
    """One launch's timeline of issue cycles, fixed-latency results and scoreboards."""

    def __init__(self, launch: str, arch: str, code: list | None = None):
        self.launch = launch
        self.arch = arch                                          # nvdisasm's spelling: SM86 / SM90
        self.latencies = L.arch_latencies(arch)                   # refuses an arch without a row
        self.target_name = target_of_nvdisasm(arch, "a name for the hazard checker's messages").name
        self.raw = self.latencies.raw
        self.cycle = 0
        # (file, n) -> [(issue cycle, writer class, the writer's address, its threads)]: the latest fixed-latency
        # write of each set of threads (a read by other threads only is not timed against it: ptxas's sqrt.rn.f32
        # path writes R6 by FFMA on one side of a branch, its called slow path reads R6 on the other's threads)
        self.ready: dict[tuple[str, int], list[tuple[int, str, int, object]]] = {}
        # Outstanding variable-latency writes and late reads, each held to the threads that issued it (lanes: a
        # boolean array over the launch's threads, or True for all) and to its guard (_guard), as a list a
        # register: threads of divergent paths write and read their own registers, so a path's write or read
        # is ordered only against the others' that share a thread with it (ptxas's sm_86 rcp.rn.f64: `DFMA
        # R6, ...` on SB1 on one side of a branch, `MUFU.RCP64H R7, R5` on the other side's threads, waiting on
        # nothing).  A wait completes an entry for the threads that issued the wait only: divergent paths of a
        # warp run in an order the hardware does not publish (docs/simulator.md, the control-code checker).
        # (file, n) -> [Pending]: a variable-latency write not yet known to have landed
        self.pending: dict[tuple[str, int], list[Pending]] = {}
        self.last_scored: dict[int, dict[str, int]] = {}           # scoreboard -> {queue: last issue cycle}
        # reg -> [Unread]: a late read on a read scoreboard (or done with its write scoreboard: its result lands
        # after its operands are read -- ptxas: ATOMS R15, [R15+UR6] on W3 and read scoreboard 2, then R15
        # overwritten after waiting SB3 alone; corpus3.ptx atomics, sm_90)
        self.unread: dict[int, list[Unread]] = {}
        # reg -> [Recent]: a late read with no read scoreboard, done WAR_UNSCORED cycles on or once its write
        # scoreboard is waited
        self.recent: dict[int, list[Recent]] = {}
        self.fp64_pcs: set[int] = set()          # FP64 instructions that are variable latency here (sm_86)
        # predicate (UPn: 8 + n) -> how many instructions naming it (or writing it) issued so far
        self.pred_writes: dict[int, int] = {}
        self.previous: Instruction | None = None      # the instruction issued last (_more_stall names its stall)
        self._effects: dict[int, tuple] = {}
        if code is not None:
            # the launches of one decoded code list (a channel runs its kernels' lists again and again)
            # share the plans: a plan is the instruction's and the arch's alone (_plan), and the FP64
            # addresses it notes are the code's (read only for a producer this launch issued)
            key = (arch, id(code))
            shared = _SHARED_PLANS.get(key)
            if shared is None or shared[0] is not code:
                shared = _SHARED_PLANS[key] = (code, {}, set())
            _, self._effects, self.fp64_pcs = shared

    def _fail(self, ins: Instruction, reason: str, fix: str | None = None, *places: int):
        raise Hazard(self.launch, ins.pc, ins.text, reason, fix, tuple(p for p in places if p != ins.pc))

    @staticmethod
    def _wait_on(ins: Instruction, sb: int, what: str = "scoreboard") -> str:
        """What to change for `ins` to wait on scoreboard `sb`: the wait mask with it, as a control code writes it."""
        mask = ins.control.wait_mask | 1 << sb
        written = "".join(str(i) if mask >> i & 1 else "-" for i in range(6))
        return f"wait on {what} {sb} here: put {sb} in this instruction's wait mask ([B{written}:...])"

    def _more_stall(self, deficit: int, since: int) -> str:
        """What to change for the instruction about to issue to issue `deficit` cycles later than it would after
        the instruction at `since` (the producer or earlier reader the message names)."""
        cycles = f"{deficit} cycle{'s' if deficit != 1 else ''}"
        before = self.previous
        if before is None:
            return f"issue it {cycles} later"
        stall = max(1, before.control.stall) + deficit
        if stall > 15:
            return (f"issue it {cycles} later: put instructions (or a NOP with a stall) before it, the instruction "
                    f"at {before.pc:#06x} before it has S{before.control.stall:02d} and a stall is at most S15")
        written = f"Y:S{stall:02d}" if stall > 11 else f"S{stall:02d}"
        spread = "" if before.pc == since else f", or spread the {cycles} over the instructions from {since:#06x} on"
        return (f"issue it {cycles} later: raise the stall of the instruction issued before it ({before.pc:#06x}) "
                f"from S{before.control.stall:02d} to {written}{spread}")

    def _plan(self, ins: Instruction):
        """Per instruction, once: its reads as (key, name, required cycles by writer class or a
        constant), its writes as (key, writer class), whether it is variable latency, its late-read
        registers, and the predicates that may differ after it (_guard's count)."""
        try:
            e = effects(ins)
        except Unmodeled as fault:
            raise Unmodeled(f"{self.launch}: {fault.message}") from None
        op = ins.opcode
        reads = [(("R", reg), f"R{reg}", self.raw[rclass]) for reg, rclass in e.src_regs]
        reads += [(("P", pred), _predicate_name(pred), L.PREDICATE_RAW[rclass]) for pred, rclass in e.src_preds]
        ureader = L.uniform_reader_class(op, ins.modifiers)
        reads += [(("UR", ureg), f"UR{ureg}", L.UNIFORM_RAW[ureader]) for ureg in e.src_uregs]
        writes = [(("R", reg), wclass) for reg, wclass in e.dst_regs]
        writes += [(("P", pred), L.predicate_writer_class(op)) for pred in e.dst_preds]
        writes += [(("UR", ureg), L.uniform_writer_class(op, self.arch)) for ureg in e.dst_uregs]
        wclass = L.writer_class(op, ins.modifiers)
        # the FP64 unit is redirected: decoupled when it sets a scoreboard, else timed -- but on a
        # target whose FP64 unit is variable latency (sm_86) always decoupled
        fp64_queued = op in L.FP64 and self.latencies.fp64_decoupled
        if fp64_queued:
            self.fp64_pcs.add(ins.pc)
        # A conversion to or from binary64 or a 64-bit integer (F2F / I2F / F2I .F64, .S64, .U64) is variable latency
        # on both targets, scoreboard or not: ptxas -O3 sets a write scoreboard on every one whose result it reads
        # before a later conversion's scoreboard is waited on (tests/sass/data corpus, both targets: every unscored
        # one is -O0's, under a stall of 0, or completed by the conversion queue's order -- param_shapes.ptx convs'
        # `I2F.U64 R11` read after the wait on the later `F2F.F64.F32`'s SB0).  It was timed as the FP64 unit's
        # (RAW fp64, 10 cycles) before probe s47 simgaps2, a timing no ptxas code relies on.
        wide_conversion = L.fp64_conversion(op, ins.modifiers) or L.wide_integer_conversion(op, ins.modifiers)
        decoupled = wclass == "decoupled" or (wclass == "fp64" and (
            fp64_queued or wide_conversion or ins.control.write_scoreboard != NO_SCOREBOARD)) or (
            # R2UR where it is not timed (sm_86): its uniform register and predicate are variable latency
            # (latencies.ARCHES r2ur_reads_at_issue's note)
            op == "R2UR" and not self.latencies.r2ur_reads_at_issue)
        # FRND.F16 likewise: timed as the FP16 unit's result where ptxas sets no scoreboard on it (math_forms2.ptx
        # half_forms2), decoupled where it sets one -- cvt.rni.f16.f16's `FRND.F16 R0, R2` with SB0 and its PRMT
        # waiting on SB0 2 cycles on, refused as a hazard before probe s44 simops (tests/sass/test_sim_roundings_s44.py)
        decoupled = decoupled or (op == "FRND" and "F16" in ins.modifiers
                                  and ins.control.write_scoreboard != NO_SCOREBOARD)
        # registers read after issue: a variable-latency instruction's, a memory access's (stores
        # and reductions included) and a conversion's or MUFU's
        late_reader = decoupled or op in L.AGU_READERS or (op in L.DECOUPLED_READERS and op not in ("BRA", "EXIT")
                                                           and not (op == "R2UR" and self.latencies.r2ur_reads_at_issue))
        late = [reg for reg, _ in e.src_regs] if late_reader else []
        # every predicate it names but as its guard, read or written, and those it writes unnamed
        # (R2P's mask): counted as rewritten, so complementary guards are proven only across
        # instructions that leave their predicate alone, whatever effects() makes of an operand
        # -- but for the compare family, whose operands past the two destinations are read only (the ISA's
        # `ISETP.cmp.bop Pu, Pv, Ra, Rb, Pp`: ptxas's `FSETP.GEU.OR P1, PT, R6, -126, !P0` between `@!P0 LDG R11,
        # [R2.64+0x4]` and `@P0 MOV R2, R6`)
        operands = ins.operands[:2] if op in _COMPARES else ins.operands
        named = {o.index + (8 if o.kind == "upred" else 0) for o in operands
                 if o.kind in ("pred", "upred") and o.index != PT}
        touched = tuple(sorted(named | set(e.dst_preds)))
        return reads, writes, decoupled, (late, decoupled), touched

    def _guard(self, ins: Instruction):
        """(predicate, negated, how many writes of it issued so far) of `ins`'s guard; None where it
        has none (@PT / @UPT): two guards with the same predicate and count and opposite negations
        are complementary (_complementary)."""
        if ins.guard in (PT, 15):
            return None
        return ins.guard, ins.guard_negated, self.pred_writes.get(ins.guard, 0)

    @staticmethod
    def _complementary(a, b) -> bool:
        """Whether no thread executes both of two instructions guarded by `a` and `b` (_guard)."""
        return a is not None and b is not None and a[0] == b[0] and a[2] == b[2] and a[1] != b[1]

    def issue(self, ins: Instruction, lanes=True) -> None:
        """`lanes`: the threads issuing it (a boolean array over the launch's threads, or True for all)."""
        planned = self._effects.get(ins.pc)
        if planned is None:
            planned = self._effects[ins.pc] = self._plan(ins)
        reads, writes, decoupled, (late, late_decoupled), touched = planned
        guard = self._guard(ins)
        c = ins.control
        if ins.opcode == "LDGDEPBAR" and c.write_scoreboard == NO_SCOREBOARD and c.stall != 0:
            self._fail(ins, "sets no write scoreboard: LDGDEPBAR counts the committed copy group on the "
                            "scoreboard it sets, and DEPBAR.LE SBn, N waits on that scoreboard (set W0 for "
                            "DEPBAR.LE SB0; or a stall of 0, which waits for the copies itself, as ptxas -O0)")
        wait = c.wait_mask
        o = ins.operands
        if (ins.opcode == "DEPBAR" and "LE" in ins.modifiers and len(o) == 2 and o[0].kind == "sb"
                and o[1].kind == "imm" and o[1].value == 0):
            # DEPBAR.LE SBn, 0 holds the warp until scoreboard n counts nothing outstanding: every
            # producer on it is done, as a wait on it (ptxas: `S2UR UR4, SR_CLOCKLO` on SB0, then
            # `DEPBAR.LE SB0, 0x0`, then UR4 read with an empty wait mask; corpus.ptx control_flow)
            wait |= 1 << o[0].index
        if wait:
            self._complete(wait, lanes)
        now = self.cycle
        for key, name, required in reads:
            self._read(ins, key, now, required, name, lanes, guard)
        queue = self._ordered_queue(ins.opcode) if decoupled else None
        for key, wclass in writes:
            self._write(ins, key, _predicate_name(key[1]) if key[0] == "P" else f"{key[0]}{key[1]}", decoupled,
                        lanes, guard, queue, wclass)
            if decoupled:
                self.ready.pop(key, None)
                entry = Pending(c.write_scoreboard, ins.pc, lanes, guard, queue, L.queue_of(ins.opcode), now)
                self.pending[key] = _superseded(self.pending.get(key), entry) + [entry]
            else:
                self.ready[key] = [r for r in self.ready.get(key, ()) if not _covers(lanes, r[3])] + [
                    (now, wclass, ins.pc, lanes)]
        for pred in touched:
            self.pred_writes[pred] = self.pred_writes.get(pred, 0) + 1
        if decoupled and c.write_scoreboard != NO_SCOREBOARD:
            self.last_scored.setdefault(c.write_scoreboard, {})[L.queue_of(ins.opcode)] = now
        if late:
            rqueue = self._ordered_queue(ins.opcode)
        for reg in late:
            if c.read_scoreboard != NO_SCOREBOARD:
                # a store's or reduction's operands (no result of its own) are held against
                # fixed-latency writers only: a later variable-latency write of the same memory
                # queue lands after them (ptxas's corpus3 barriers: STS R2 with read scoreboard 3,
                # then an LDS of R2 around the loop without waiting on it)
                entry = Unread(c.read_scoreboard, ins.pc, late_decoupled, c.write_scoreboard, lanes, guard, rqueue)
                self.unread[reg] = [e for e in self.unread.get(reg, ()) if not _repeats(entry, e)] + [entry]
            else:
                # an earlier read WAR_UNSCORED or more cycles back no longer limits a write
                self.recent[reg] = [e for e in self.recent.get(reg, ())
                                    if now - e.issued < L.WAR_UNSCORED] + [Recent(now, ins.pc, c.write_scoreboard,
                                                                                   lanes, guard)]
        if ins.opcode == "MEMBAR" and ("GPU" in ins.modifiers or "SYS" in ins.modifiers):
            # a GPU- or system-scope fence holds the warp far longer than any fixed latency: ptxas's
            # sm_86 code (corpus3 barriers) has VOTE read an ISETP's predicate 9 stall cycles on,
            # across MEMBAR.SC.GPU; VOTE needs 13 (latencies.predicate_reader_class)
            self.ready.clear()
        if c.stall == 0:
            # the interlocked encoding: the warp issues nothing more until every result outstanding
            # (this instruction's included) is written and every operand read.  ptxas -O0 writes
            # S00 on every instruction and sets no scoreboard at all (tests/sass/data corpus, -O0:
            # LDG, MUFU, S2R results read by the next instruction); measured on sm_120 by basalt
            # (github.com/sunnypatell/basalt, finding 1: a stall of 0 waits for outstanding results)
            self.ready.clear()
            self.pending.clear()
            self.last_scored.clear()
            self.unread.clear()
            self.recent.clear()
        self.cycle = now + max(1, c.stall)
        self.previous = ins

    def _complete(self, wait: int, lanes) -> None:
        """A wait on the scoreboards of mask `wait` by the threads `lanes`: the writes and reads outstanding on them
        are done for those threads.  Scoreboards count a warp's instructions, but a wait orders only what its own
        threads issued before it: the divergent paths of a warp run in an order the hardware does not publish,
        so another path's producer may issue after the wait (ptxas waits on each path, or after the paths join)."""
        if self.pending:
            # an unscored result of an in-order queue is complete once a later producer of the queue that set a
            # waited scoreboard is
            done: dict[str, int] = {}
            for sb, queues in self.last_scored.items():
                if wait >> sb & 1:
                    for queue, cycle in queues.items():
                        done[queue] = max(cycle, done.get(queue, -1))
            for key in list(self.pending):
                self._keep(self.pending, key, lanes, lambda e: wait >> e.sb & 1 if e.sb != NO_SCOREBOARD
                           else e.issued < done.get(e.unit, -1))
        for reg in list(self.unread):
            self._keep(self.unread, reg, lanes,
                       lambda e: wait >> e.sb & 1 or (e.wsb != NO_SCOREBOARD and wait >> e.wsb & 1))
        for reg in list(self.recent):
            self._keep(self.recent, reg, lanes, lambda e: e.wsb != NO_SCOREBOARD and wait >> e.wsb & 1)

    @staticmethod
    def _keep(table: dict, key, lanes, completed) -> None:
        """Drop from table[key] the threads `lanes` of each entry `completed` says is done (the entry itself where
        no thread of it is left)."""
        entries = table[key]
        if not any(completed(e) for e in entries):
            return
        kept = []
        for e in entries:
            if completed(e):
                rest = _without(e.lanes, lanes)
                if rest is None:
                    continue
                e = e._replace(lanes=rest)
            kept.append(e)
        if kept:
            table[key] = kept
        else:
            del table[key]

    def _read(self, ins, key, now, required, name, lanes=True, guard=None):
        # a read under the complement of the pending writer's guard reads the threads it does not write
        # (ptxas: `@!P0 LDG R9` on no scoreboard, then `@P0 STG [...], R9`)
        for e in self.pending.get(key, ()):
            if not _meet(e.lanes, lanes) or self._complementary(e.guard, guard):
                continue
            if e.sb == NO_SCOREBOARD:
                fp64 = (f" (on {self.target_name} the FP64 unit is variable latency: DADD, DMUL, "
                        "DFMA and DSETP need a write scoreboard the reader waits on)") if e.pc in self.fp64_pcs else ""
                self._fail(ins, f"reads {name}, written at {e.pc:#06x} by a variable-latency instruction "
                                f"that sets no scoreboard{fp64}",
                           f"set a write scoreboard on the instruction at {e.pc:#06x} (W0..W5 in its control code) "
                           f"and wait on it here (that number in this instruction's wait mask, [B......])", e.pc)
            self._fail(ins, f"reads {name} before waiting on scoreboard {e.sb}, which the variable-latency "
                            f"instruction at {e.pc:#06x} that writes it set (wait mask "
                            f"{ins.control.wait_mask:#04x})", self._wait_on(ins, e.sb), e.pc)
        for issued, wclass, producer, writers in self.ready.get(key, ()):
            needed = required.get(wclass) if isinstance(required, dict) else required
            if needed is None:            # a writer the tables give no latency for (uldc, ...)
                continue
            if now - issued < needed and _meet(writers, lanes):
                self._fail(ins, f"reads {name} {now - issued} cycles after its producer at {producer:#06x} issued; "
                                f"{_result_class(wclass)} result needs {needed}",
                           self._more_stall(needed - (now - issued), producer), producer)

    def _ordered_queue(self, opcode: str) -> str | None:
        """The in-order queue whose variable-latency instructions complete in issue order (latencies.QUEUES; the
        FP64 unit's only where it is variable latency, sm_86), else None."""
        queue = L.QUEUES.get(opcode)
        return None if queue == "fp64" and not self.latencies.fp64_decoupled else queue

    def _write(self, ins, key, name, decoupled=False, lanes=True, guard=None, queue=None, wclass=None):
        # Threads write their own registers: a write by threads no outstanding write or read of the register
        # shares (another path's, or the complement of its guard) is not ordered against it (ptxas's fns.b32,
        # sm_90: `@!P0 LDG R7` on SB2, then `@P0 IMAD R7` waiting on nothing; sm_86's rcp.rn.f64: `DFMA R6` on
        # SB1 on one path, `MUFU.RCP64H R7` on the other).  A variable-latency write of the same in-order queue
        # (`queue`) lands after an earlier one's result and after its operand reads.
        for e in self.pending.get(key, ()):
            if (_meet(e.lanes, lanes) and not self._complementary(e.guard, guard)
                    and not (queue is not None and e.queue == queue)):
                self._fail(ins, f"overwrites {name} while the variable-latency write from {e.pc:#06x} "
                                f"(scoreboard {e.sb}) may still land",
                           self._wait_on(ins, e.sb) if e.sb != NO_SCOREBOARD else
                           f"set a write scoreboard on the instruction at {e.pc:#06x} (W0..W5 in its control code) "
                           f"and wait on it here (that number in this instruction's wait mask, [B......])", e.pc)
        if key[0] != "R":
            return
        # A fixed-latency write over a slower fixed-latency result still landing (HMMA, HFMA2.MMA, sm_90's FP64 unit):
        # its result must land after the earlier one, or the earlier lands last and the register keeps it.  A result
        # lands when the table lets an ALU reader read it (RAW["alu"]); the later write is held to land no earlier than
        # it (probe s45 hazards4: `HMMA.16816.F32 R12, ...` then `MOV R12, 0x7` a cycle on was accepted, and the
        # simulator kept the MOV's 7).  Not a cycle after it: ptxas's sm_90 f64 division (user_forms_s45.ptx
        # f64_div_rn, -O3) overwrites an FP64 result with an IADD3 exactly 10 - 4 = 6 cycles on
        if not decoupled and wclass in self.raw["alu"]:
            for issued, earlier, producer, writers in self.ready.get(key, ()):
                if earlier not in L.SLOW_RESULTS or not _meet(writers, lanes):
                    continue
                needed = self.raw["alu"][earlier] - self.raw["alu"][wclass]
                if self.cycle - issued < needed:
                    gap = self.cycle - issued
                    self._fail(ins, f"overwrites {name} {gap} cycle{'s' if gap != 1 else ''} after {_result_class(earlier)} "
                                    f"instruction at {producer:#06x} wrote it: that result lands "
                                    f"{self.raw['alu'][earlier]} cycles after its issue, this one "
                                    f"{self.raw['alu'][wclass]} after its own, so the earlier would land last (a later "
                                    f"write needs {needed} cycles)",
                               self._more_stall(needed - gap, producer), producer)
        for e in self.unread.get(key[1], ()):
            if ((e.decoupled or not decoupled) and not (queue is not None and e.queue == queue)
                    and _meet(e.lanes, lanes) and not self._complementary(e.guard, guard)):
                self._fail(ins, f"overwrites R{key[1]} before the instruction at {e.pc:#06x} has read it "
                                f"(read scoreboard {e.sb} not waited)", self._wait_on(ins, e.sb, "read scoreboard"),
                           e.pc)
        # a variable-latency writer's result lands after its own operand reads, in order behind the
        # earlier reads (NAK's write_after_read: 1 cycle for a decoupled writer after any reader)
        # (ptxas: `@P0 STG [...], R7` with no read scoreboard, `@!P0 IADD3 R7` 2 cycles on)
        if decoupled:
            return
        for e in self.recent.get(key[1], ()):
            if (self.cycle - e.issued < L.WAR_UNSCORED and _meet(e.lanes, lanes)
                    and not self._complementary(e.guard, guard)):
                self._fail(ins, f"overwrites R{key[1]} {self.cycle - e.issued} cycles after the variable-latency "
                                f"instruction at {e.pc:#06x} that reads it issued, and that instruction sets no "
                                f"read scoreboard: set one there and wait on it here (or issue this "
                                f"{L.WAR_UNSCORED} or more cycles later)",
                           f"set a read scoreboard on the instruction at {e.pc:#06x} (R0..R5 in its control code) "
                           f"and wait on it here, or {self._more_stall(L.WAR_UNSCORED - (self.cycle - e.issued), e.pc)}",
                           e.pc)


# Opcodes whose predicate operands past the first two (Pu, Pv) are sources only (effects reads them so)
_COMPARES = frozenset({"ISETP", "FSETP", "DSETP"})


class Pending(NamedTuple):
    """A variable-latency write outstanding: its write scoreboard, address, threads, guard (Checker._guard), in-order
    queue for the same-queue rule (Checker._ordered_queue; None: none), unit queue (latencies.queue_of, for an
    unscored result completed by a later scored one) and issue cycle."""
    sb: int
    pc: int
    lanes: object
    guard: tuple | None
    queue: str | None
    unit: str | None
    issued: int


class Unread(NamedTuple):
    """A late read on a read scoreboard: the scoreboard, the reader's address, whether a variable-latency writer is
    held to it too, the reader's write scoreboard, its threads, guard and in-order queue."""
    sb: int
    pc: int
    decoupled: bool
    wsb: int
    lanes: object
    guard: tuple | None
    queue: str | None


class Recent(NamedTuple):
    """A late read with no read scoreboard: its issue cycle, address, write scoreboard, threads and guard."""
    issued: int
    pc: int
    wsb: int
    lanes: object
    guard: tuple | None


def _predicate_name(pred: int) -> str:
    """A predicate as SASS names it: P0..P6, or UP0..UP6 for the uniform ones (rows 8..14 of the predicate file)."""
    return f"UP{pred - 8}" if pred >= 8 else f"P{pred}"


def _meet(a, b) -> bool:
    """Whether two sets of threads (boolean arrays, or True: all) share a thread."""
    if a is True or b is True:
        return True
    return bool((a & b).any())


def _without(a, b):
    """The threads of `a` not in `b` (True: all), or None where none is left."""
    if b is True:
        return None
    rest = ~b if a is True else a & ~b
    return rest if rest.any() else None


def _covers(a, b) -> bool:
    """Whether the threads `a` include every one of `b`."""
    if a is True:
        return True
    if b is True:
        return bool(a.all())
    return not (b & ~a).any()


def _superseded(entries, new: Pending) -> list:
    """The pending writes of a register still outstanding beside `new`, a write of it _write accepted: one of the
    same in-order queue lands before it, so for the threads `new` writes (all of them its guard selects: an
    unguarded write, or one under the same guard) the later result is the one a reader waits for."""
    if not entries:
        return []
    kept = []
    for e in entries:
        if new.queue is not None and e.queue == new.queue and (new.guard is None or new.guard == e.guard):
            rest = _without(e.lanes, new.lanes)
            if rest is None:
                continue
            e = e._replace(lanes=rest)
        kept.append(e)
    return kept


def _repeats(new: Unread, old: Unread) -> bool:
    """Whether `old` is done whenever `new` is: the same scoreboards, queue, guard and writer rule, on no thread
    `new` leaves out (a loop's read of a register again, kept once)."""
    return (old.sb == new.sb and old.wsb == new.wsb and old.decoupled == new.decoupled and old.queue == new.queue
            and old.guard == new.guard and _covers(new.lanes, old.lanes))



# A writer class (bobc.sim.latencies) as a message names it, with its article
_CLASS_NAMES = {"alu": "an ALU", "fma": "an FMA", "fp16": "an FP16", "fp64": "an FP64", "mma": "an MMA",
                "mma1x": "an MMA (1x)", "mma2x": "an MMA (2x)", "hfma2_mma": "an HFMA2.MMA", "agu": "an AGU",
                "wide_lo": "an IMAD.WIDE low-word", "wide_hi": "an IMAD.WIDE high-word",
                "decoupled": "a decoupled-unit", "coupled": "a coupled-unit", "guard": "a guard",
                "udp": "a uniform-datapath", "umov": "a UMOV", "uldc": "a ULDC", "voteu": "a VOTEU",
                "r2ur": "an R2UR"}


def _result_class(wclass: str) -> str:
    return _CLASS_NAMES.get(wclass, f"a {wclass}")
