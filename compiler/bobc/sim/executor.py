"""One launch's threads executed side by side in NumPy.

Every thread of the grid is a column: registers are a [count, threads]
uint32 array (count = the QMD's REGISTER_COUNT: a register past it is
refused), predicates a [7, threads] bool array, uniform registers one row
shared by the launch (Bob's kernels fill them from constant bank 0 only, the
same in every warp).  Blocks run together, which is exact for kernels without
shared memory or barriers (the only kind this simulator accepts: it refuses
BAR and shared-memory instructions by name).  Divergence: each step runs the
lowest program counter among live threads, for the threads at it, guarded by
their predicate; threads that EXIT leave.

Arithmetic: IEEE binary32 with round-to-nearest-even as the FP32 pipe does
(FFMA rounded once: the binary64 product of two binary32 values is exact);
MUFU.EX2/LG2/RCP/SQRT are computed correctly rounded from binary64.  NVIDIA
documents the hardware's approximations as within 2 ulp (ex2.approx,
lg2.approx) and 1 ulp (rcp.approx, sqrt.approx) of that (PTX ISA, "Floating
Point Instructions"), so the simulator and the GPU differ by at most those
ulps per MUFU, far inside the kernels' tolerances (tests/sim); EX2 flushes a
subnormal result to zero as the MUFU unit does (ex2.approx.ftz).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .faults import SimulationFault, Unmodeled
from .hazards import Checker
from .memory import Memory
from .sass_frontend import Instruction, Operand

RZ, PT, URZ = 255, 7, 63
WARP = 32
# Where ptxas's code reads the global memory descriptor in constant bank 0
# (ULDC.64 URn, c[0x0][...]): sm_80/86 0x118, sm_90 0x208 (public ptxas output,
# e.g. any cuobjdump -sass of an sm_86 / sm_90 cubin).
MEMORY_DESCRIPTOR = {"SM86": 0x118, "SM90": 0x208}
MAX_STEPS = 5_000_000

IMPLEMENTED = frozenset({
    "S2R", "ULDC", "LDC", "MOV", "SHF", "IADD3", "IMAD", "ISETP", "LOP3", "LEA", "FADD", "FMUL", "FFMA",
    "FMNMX", "FSETP", "FSEL", "SEL", "MUFU", "LDG", "STG", "SHFL", "BRA", "EXIT", "NOP"})


@dataclass
class LaunchGeometry:
    name: str                       # "launch 3 (row-gather)"
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    registers: int
    bank0: bytes
    arch: str                       # nvdisasm arch: SM86 / SM90


def _f(u: np.ndarray) -> np.ndarray:
    return np.asarray(u, dtype=np.uint32).view(np.float32)


def _u(f) -> np.ndarray:
    return np.asarray(f, dtype=np.float32).view(np.uint32)


class Launch:
    def __init__(self, geometry: LaunchGeometry, code: list[Instruction], memory: Memory,
                 check_hazards: bool = True):
        self.g = geometry
        self.code = {ins.pc: ins for ins in code}
        self.memory = memory
        self.checker = Checker(geometry.name) if check_hazards else None
        bx, by, bz = geometry.block
        gx, gy, gz = geometry.grid
        per_block = bx * by * bz
        self.threads = n = per_block * gx * gy * gz
        t = np.arange(n, dtype=np.int64)
        local, block = t % per_block, t // per_block
        self.sregs = {
            "SR_TID.X": local % bx, "SR_TID.Y": (local // bx) % by, "SR_TID.Z": local // (bx * by),
            "SR_CTAID.X": block % gx, "SR_CTAID.Y": (block // gx) % gy, "SR_CTAID.Z": block // (gx * gy),
            "SR_LANEID": local % WARP,
        }
        self.lane = (local % WARP).astype(np.int64)
        self.warp_base = t - self.lane
        self.block_end = (block + 1) * per_block
        self.regs = np.zeros((geometry.registers, n), dtype=np.uint32)
        self.preds = np.zeros((7, n), dtype=bool)
        self.uregs = np.zeros(64, dtype=np.uint32)
        self.descriptor_loaded: set[int] = set()
        self.touched: dict[int, int] = {}      # pc -> the resident its accesses stay in
        self.pc = np.zeros(n, dtype=np.int64)
        self.live = np.ones(n, dtype=bool)
        self.bank0 = np.frombuffer(geometry.bank0 + bytes(-len(geometry.bank0) % 4), dtype="<u4")

    # ------------------------------------------------------------ operands
    def _fail(self, ins: Instruction, message: str, cls=SimulationFault):
        raise cls(f"{self.g.name}: instruction at {ins.pc:#06x} ({ins.text}): {message}")

    def _reg(self, ins, index: int) -> np.ndarray:
        if index == RZ:
            return np.zeros(self.threads, dtype=np.uint32)
        if index >= self.g.registers:
            self._fail(ins, f"uses R{index}, but the QMD allocates {self.g.registers} registers per thread")
        return self.regs[index]

    def _const(self, ins, o: Operand, extra: int = 0):
        if o.bank != 0:
            self._fail(ins, f"reads constant bank {o.bank}; the launch binds only bank 0", Unmodeled)
        base = o.value + extra
        if o.const_reg != RZ:
            offsets = self._reg(ins, o.const_reg).astype(np.int64) + base
            if (offsets < 0).any() or (offsets + 4 > 4 * self.bank0.size).any() or (offsets % 4).any():
                self._fail(ins, f"reads constant bank 0 outside its {4 * self.bank0.size} bytes")
            return self.bank0[offsets // 4]
        if base % 4 or base + 4 > 4 * self.bank0.size:
            self._fail(ins, f"reads c[0x0][{base:#x}], outside the {4 * self.bank0.size}-byte bank 0 the QMD binds")
        return np.uint32(self.bank0[base // 4])

    def u32(self, ins, o: Operand):
        """An operand's 32 bits (broadcastable), integer negation applied."""
        if o.kind == "reg":
            v = self._reg(ins, o.index)
        elif o.kind == "ureg":
            v = np.uint32(0) if o.index == URZ else self.uregs[o.index]
        elif o.kind in ("imm", "fimm"):
            v = np.uint32(o.value)
        elif o.kind == "const":
            v = self._const(ins, o)
        else:
            self._fail(ins, f"operand kind {o.kind} is not a value", Unmodeled)
        if o.negate:
            v = (np.uint32(0) - np.asarray(v, dtype=np.uint32)).astype(np.uint32)
        return v

    def f32(self, ins, o: Operand):
        if o.kind == "reg" and o.index != RZ:
            v = self._reg(ins, o.index).view(np.float32)
        else:
            v = _f(np.asarray(self.u32(ins, dataclasses.replace(o, negate=False) if o.negate else o),
                              dtype=np.uint32))
        if o.absolute:
            v = np.abs(v)
        if o.negate:
            v = -v
        return v

    def pred(self, ins, o: Operand):
        v = True if o.index == PT else self.preds[o.index]
        return np.logical_not(v) if o.negate else v

    # ------------------------------------------------------------ results
    def _set(self, ins, index: int, value, mask) -> None:
        if index == RZ:
            return
        if index >= self.g.registers:
            self._fail(ins, f"writes R{index}, but the QMD allocates {self.g.registers} registers per thread")
        if mask is True:
            self.regs[index] = value            # numpy broadcasts a scalar and casts to uint32
        else:
            np.copyto(self.regs[index], value, where=mask, casting="unsafe")

    def _set_pred(self, index: int, value, mask) -> None:
        if index == PT:
            return
        value = np.broadcast_to(np.asarray(value, dtype=bool), (self.threads,))
        if mask is True:
            self.preds[index] = value
        else:
            np.copyto(self.preds[index], value, where=mask)

    # ------------------------------------------------------------ run
    def run(self) -> None:
        """Issue instructions until every thread has exited."""
        converged, uniform_pc, steps = True, 0, 0
        while True:
            if converged:
                pc, at = uniform_pc, True
            else:
                if not self.live.any():
                    return
                pc = int(self.pc[self.live].min())
                at = self.live & (self.pc == pc)
                if at.all():
                    converged, uniform_pc, at = True, pc, True
            ins = self.code.get(pc)
            if ins is None:
                raise SimulationFault(f"{self.g.name}: execution reached {pc:#06x}, past the launch's code")
            steps += 1
            if steps > MAX_STEPS:
                raise SimulationFault(f"{self.g.name}: more than {MAX_STEPS} instructions issued; stopping "
                                      f"at {pc:#06x} ({ins.text})")
            if self.checker is not None:
                self.checker.issue(ins)
            if ins.guard == PT:
                mask = at
            else:
                g = self.preds[ins.guard]
                g = ~g if ins.guard_negated else g
                mask = g if at is True else (at & g)
            outcome = self.execute(ins, mask)
            if converged:
                uniform_pc = pc + 16
                if outcome is None:
                    continue
                everyone = mask is True or bool(mask.all())
                if not everyone and not mask.any():
                    continue
                kind, target = outcome
                if everyone:
                    if kind == "exit":
                        self.live[:] = False
                        return
                    uniform_pc = target
                    continue
                converged = False
                self.pc[:] = uniform_pc
                if kind == "exit":
                    self.live &= ~mask
                else:
                    self.pc[mask] = target
            else:
                self.pc[at] += 16
                if outcome is not None:
                    kind, target = outcome
                    if kind == "exit":
                        self.live &= ~mask
                    else:
                        self.pc[mask] = target

    def execute(self, ins: Instruction, mask):
        op, mods, o = ins.opcode, ins.modifiers, ins.operands
        if op not in IMPLEMENTED:
            self._fail(ins, f"the simulator does not model {ins.full_opcode} (it implements exactly "
                            "the opcodes Bob's kernels use)", Unmodeled)
        if mask is not True and not mask.any():
            return None
        handler = getattr(self, "op_" + op)
        return handler(ins, mods, o, mask)

    # ------------------------------------------------------------ opcodes
    def op_NOP(self, ins, mods, o, mask):
        return None

    def op_EXIT(self, ins, mods, o, mask):
        return ("exit", 0)

    def op_BRA(self, ins, mods, o, mask):
        if len(o) != 1 or o[0].kind != "imm":
            self._fail(ins, "only a direct branch is modeled", Unmodeled)
        return ("jump", o[0].value)

    def op_S2R(self, ins, mods, o, mask):
        name = o[1].name
        if name not in self.sregs:
            self._fail(ins, f"special register {name} is not modeled", Unmodeled)
        self._set(ins, o[0].index, self.sregs[name].astype(np.uint32), mask)

    def op_ULDC(self, ins, mods, o, mask):
        width = 2 if "64" in mods else 1
        for k in range(width):
            if o[0].index + k != URZ:
                self.uregs[o[0].index + k] = self._const(ins, o[1], 4 * k)
        if width == 2 and o[1].value == MEMORY_DESCRIPTOR.get(self.g.arch):
            self.descriptor_loaded.add(o[0].index)
        else:
            self.descriptor_loaded.discard(o[0].index)

    def op_LDC(self, ins, mods, o, mask):
        width = 2 if "64" in mods else 1
        for k in range(width):
            self._set(ins, o[0].index + k if o[0].index != RZ else RZ, self._const(ins, o[1], 4 * k), mask)

    def op_MOV(self, ins, mods, o, mask):
        self._set(ins, o[0].index, self.u32(ins, o[1]), mask)

    def op_SHF(self, ins, mods, o, mask):
        if "U32" not in mods:
            self._fail(ins, f"{ins.full_opcode} is not modeled", Unmodeled)
        low = self.u32(ins, o[1]).astype(np.uint64)
        high = self.u32(ins, o[3]).astype(np.uint64)
        shift = np.minimum(np.asarray(self.u32(ins, o[2])).astype(np.uint64), np.uint64(32))
        both = (high << np.uint64(32)) | low
        shifted = both << shift if "L" in mods else both >> shift
        out = shifted >> np.uint64(32) if "HI" in mods else shifted
        self._set(ins, o[0].index, (out & np.uint64(0xFFFFFFFF)).astype(np.uint32), mask)

    def op_IADD3(self, ins, mods, o, mask):
        d, rest = o[0], list(o[1:])
        carries = []
        while rest and rest[0].kind == "pred" and len(rest) > 3:
            carries.append(rest.pop(0))
        a, b, c = rest[:3]
        total = sum(np.asarray(self.u32(ins, x)).astype(np.int64) for x in (a, b, c))
        if "X" in mods:
            for p in rest[3:]:
                total = total + np.asarray(self.pred(ins, p)).astype(np.int64)
        total = np.broadcast_to(total, (self.threads,))
        self._set(ins, d.index, (total & 0xFFFFFFFF).astype(np.uint32), mask)
        if carries:
            if any(x.negate for x in (a, b, c)):
                self._fail(ins, "a carry out of a subtraction is not modeled", Unmodeled)
            self._set_pred(carries[0].index, (total >> 32) & 1 == 1, mask)
            if len(carries) > 1:
                self._set_pred(carries[1].index, (total >> 33) & 1 == 1, mask)

    def op_LEA(self, ins, mods, o, mask):
        if mods:
            self._fail(ins, f"{ins.full_opcode} is not modeled", Unmodeled)
        rest = list(o[1:])
        carry = rest.pop(0) if rest[0].kind == "pred" else None
        a, b, s = rest
        shifted = (np.asarray(self.u32(ins, a)).astype(np.int64) << int(s.value)) & 0xFFFFFFFF
        total = np.broadcast_to(shifted + np.asarray(self.u32(ins, b)).astype(np.int64), (self.threads,))
        self._set(ins, o[0].index, (total & 0xFFFFFFFF).astype(np.uint32), mask)
        if carry is not None:
            self._set_pred(carry.index, total >> 32 == 1, mask)

    def op_IMAD(self, ins, mods, o, mask):
        if mods != ("WIDE", "U32"):
            self._fail(ins, f"{ins.full_opcode} is not modeled", Unmodeled)
        d, a, b, c = o
        product = np.asarray(self.u32(ins, a)).astype(np.uint64) * np.asarray(self.u32(ins, b)).astype(np.uint64)
        if c.kind == "reg":
            addend = self._reg(ins, c.index).astype(np.uint64) | (
                self._reg(ins, c.index + 1 if c.index != RZ else RZ).astype(np.uint64) << np.uint64(32))
        else:
            addend = np.asarray(self.u32(ins, c)).astype(np.uint64)
        total = np.broadcast_to(product + addend, (self.threads,))
        self._set(ins, d.index, (total & np.uint64(0xFFFFFFFF)).astype(np.uint32), mask)
        if d.index != RZ:
            self._set(ins, d.index + 1, (total >> np.uint64(32)).astype(np.uint32), mask)

    _COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
                "GT": np.greater, "GE": np.greater_equal}

    def op_ISETP(self, ins, mods, o, mask):
        cmp, combine = mods[0], mods[-1]
        if combine != "AND" or cmp not in self._COMPARE:
            self._fail(ins, f"{ins.full_opcode} is not modeled", Unmodeled)
        dtype = np.uint32 if "U32" in mods else np.int32
        a = np.asarray(self.u32(ins, o[2])).astype(np.uint32).view(dtype) if np.ndim(self.u32(ins, o[2])) else \
            np.uint32(self.u32(ins, o[2])).view(dtype)
        bv = self.u32(ins, o[3])
        b = np.asarray(bv).astype(np.uint32).view(dtype) if np.ndim(bv) else np.uint32(bv).view(dtype)
        result = self._COMPARE[cmp](a, b)
        c = self.pred(ins, o[4])
        self._set_pred(o[0].index, result & c, mask)
        self._set_pred(o[1].index, ~result & c, mask)

    def op_FSETP(self, ins, mods, o, mask):
        cmp, combine = mods[0], mods[-1]
        if combine != "AND" or cmp not in self._COMPARE:
            self._fail(ins, f"{ins.full_opcode} is not modeled (ordered comparisons with AND only)", Unmodeled)
        with np.errstate(invalid="ignore"):
            result = self._COMPARE[cmp](self.f32(ins, o[2]), self.f32(ins, o[3]))   # NaN: false (ordered)
        c = self.pred(ins, o[4])
        self._set_pred(o[0].index, result & c, mask)
        self._set_pred(o[1].index, ~result & c, mask)

    def op_LOP3(self, ins, mods, o, mask):
        if mods != ("LUT",) or len(o) != 6 or not (o[5].index == PT and o[5].negate):
            self._fail(ins, f"{ins.full_opcode} with a predicate is not modeled", Unmodeled)
        a, b, c = (np.asarray(self.u32(ins, x), dtype=np.uint32) for x in o[1:4])
        lut = o[4].value
        result = np.zeros(np.broadcast(a, b, c).shape, dtype=np.uint32)
        for i in range(8):
            if lut >> i & 1:
                term = (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
                result = result | term
        self._set(ins, o[0].index, result, mask)

    def _fset(self, ins, d, value, mask):
        self._set(ins, d.index, _u(value), mask)

    def op_FADD(self, ins, mods, o, mask):
        self._plain_fp(ins, mods)
        self._fset(ins, o[0], self.f32(ins, o[1]) + self.f32(ins, o[2]), mask)

    def op_FMUL(self, ins, mods, o, mask):
        self._plain_fp(ins, mods)
        self._fset(ins, o[0], self.f32(ins, o[1]) * self.f32(ins, o[2]), mask)

    def op_FFMA(self, ins, mods, o, mask):
        self._plain_fp(ins, mods)
        a, b, c = (self.f32(ins, x).astype(np.float64) for x in o[1:4])
        self._fset(ins, o[0], (a * b + c).astype(np.float32), mask)

    def _plain_fp(self, ins, mods):
        if mods:
            self._fail(ins, f"{ins.full_opcode} (a rounding or flush modifier) is not modeled", Unmodeled)

    def op_FMNMX(self, ins, mods, o, mask):
        a, b = self.f32(ins, o[1]), self.f32(ins, o[2])
        p = o[3]
        if p.index != PT:
            self._fail(ins, "FMNMX with a predicate register is not modeled", Unmodeled)
        take_min = not p.negate
        self._fset(ins, o[0], np.fmin(a, b) if take_min else np.fmax(a, b), mask)

    def op_FSEL(self, ins, mods, o, mask):
        self._set(ins, o[0].index, np.where(self.pred(ins, o[3]), self.u32(ins, o[1]), self.u32(ins, o[2])), mask)

    op_SEL = op_FSEL

    def op_MUFU(self, ins, mods, o, mask):
        x = self.f32(ins, o[1]).astype(np.float64)
        with np.errstate(all="ignore"):
            if mods == ("EX2",):
                y = np.exp2(x).astype(np.float32)
                y = np.where(np.abs(y) < np.finfo(np.float32).tiny, np.float32(0), y)
            elif mods == ("LG2",):
                y = np.log2(x).astype(np.float32)
            elif mods == ("RCP",):
                y = (1.0 / x).astype(np.float32)
            elif mods == ("SQRT",):
                y = np.sqrt(x).astype(np.float32)
            else:
                self._fail(ins, f"{ins.full_opcode} is not modeled", Unmodeled)
        self._fset(ins, o[0], y, mask)

    def _addresses(self, ins, m: Operand, mask):
        if not m.wide:
            self._fail(ins, "a 32-bit global address is not modeled", Unmodeled)
        desc = m.desc if m.desc >= 0 else 4
        if desc not in self.descriptor_loaded:
            self._fail(ins, f"accesses global memory through UR{desc}, which holds no memory descriptor "
                            f"(ULDC.64 from c[0x0][{MEMORY_DESCRIPTOR.get(self.g.arch, 0):#x}])")
        low = self._reg(ins, m.index).astype(np.uint64)
        high = self._reg(ins, m.index + 1 if m.index != RZ else RZ).astype(np.uint64)
        addresses = (high << np.uint64(32)) + low + np.uint64(m.value)
        return addresses if mask is True else addresses[mask]

    def _access_width(self, ins, mods) -> int:
        for m, n in (("128", 16), ("64", 8)):
            if m in mods:
                return n
        if any(m in mods for m in ("U8", "S8", "U16", "S16")):
            self._fail(ins, f"{ins.full_opcode} (a sub-word access) is not modeled", Unmodeled)
        return 4

    def op_LDG(self, ins, mods, o, mask):
        if "E" not in mods:
            self._fail(ins, f"{ins.full_opcode} without .E is not modeled", Unmodeled)
        size = self._access_width(ins, mods)
        addresses = self._addresses(ins, o[1], mask)
        words = self.memory.load(addresses, size, self.g.name, ins.pc, ins.text, self.touched)
        if o[0].index == RZ:
            return None
        for k in range(size // 4):
            if mask is True:
                self._set(ins, o[0].index + k, words[:, k], True)
            else:
                full = self._reg(ins, o[0].index + k).copy()
                full[mask] = words[:, k]
                self._set(ins, o[0].index + k, full, True)

    def op_STG(self, ins, mods, o, mask):
        size = self._access_width(ins, mods)
        addresses = self._addresses(ins, o[0], mask)
        columns = [self._reg(ins, o[1].index + k if o[1].index != RZ else RZ) for k in range(size // 4)]
        words = np.stack(columns, axis=1)
        if mask is not True:
            words = words[mask]
        self.memory.store(addresses, words, self.g.name, ins.pc, ins.text, self.touched)

    def op_SHFL(self, ins, mods, o, mask):
        value = self._reg(ins, o[2].index)
        b = np.asarray(self.u32(ins, o[3])).astype(np.int64)
        c = int(self.u32(ins, o[4]))
        clamp, segmask = c & 0x1F, (c >> 8) & 0x1F
        if clamp != 0x1F or segmask:
            self._fail(ins, "SHFL over a sub-warp segment is not modeled", Unmodeled)
        if mods == ("BFLY",):
            source = self.lane ^ (b & 0x1F)
        elif mods == ("IDX",):
            source = np.broadcast_to(b & 0x1F, self.lane.shape)
        else:
            self._fail(ins, f"{ins.full_opcode} is not modeled", Unmodeled)
        index = self.warp_base + source
        valid = index < self.block_end
        index = np.where(valid, index, np.arange(self.threads))
        self._set(ins, o[1].index, value[index], mask)
        self._set_pred(o[0].index, valid, mask)
