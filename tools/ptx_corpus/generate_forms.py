"""Generate forms.ptx: PTX whose ptxas output covers modifier combinations of the listed opcodes
(comparisons, rounding, widths, operand kinds).  Inputs come from volatile loads so that
ptxas cannot fold them; every result is folded into a checksum that is stored.

    python tools/ptx_corpus/generate_forms.py      (then build_corpus.py, then bobc.sass.learn)
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
INT_CMP = ["eq", "ne", "lt", "le", "gt", "ge"]
FLOAT_CMP = INT_CMP + ["equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


class Kernel:
    def __init__(self, name: str):
        self.name = name
        self.body: list[str] = []
        self.r = 10
        self.f = 10
        self.p = 1

    def reg(self) -> str:
        self.r += 1
        return f"%r{self.r}"

    def freg(self) -> str:
        self.f += 1
        return f"%f{self.f}"

    def pred(self) -> str:
        self.p += 1
        return f"%p{self.p}"

    def emit(self, line: str) -> None:
        self.body.append("    " + line)

    def fold(self, r: str) -> None:
        self.emit(f"xor.b32 %r1, %r1, {r};")

    def foldf(self, f: str) -> None:
        t = self.reg()
        self.emit(f"mov.b32 {t}, {f};")
        self.fold(t)

    def foldp(self, p: str) -> None:
        t = self.reg()
        self.emit(f"selp.b32 {t}, {self.r * 7 % 97 + 1}, 0, {p};")
        self.fold(t)

    def text(self) -> str:
        head = [f".visible .entry {self.name}(.param .u64 out, .param .u64 in)", "{",
                f"    .reg .b64 %rd<16>;", f"    .reg .b32 %r<{self.r + 1}>;",
                f"    .reg .f32 %f<{self.f + 1}>;", f"    .reg .pred %p<{self.p + 1}>;",
                "    ld.param.u64 %rd1, [out];", "    ld.param.u64 %rd2, [in];",
                "    cvta.to.global.u64 %rd3, %rd1;", "    cvta.to.global.u64 %rd4, %rd2;",
                "    mov.u32 %r2, %tid.x;", "    mul.wide.u32 %rd5, %r2, 4;", "    add.s64 %rd6, %rd4, %rd5;",
                "    ld.volatile.global.u32 %r3, [%rd6];", "    ld.volatile.global.u32 %r4, [%rd6+1024];",
                "    ld.volatile.global.f32 %f1, [%rd6+2048];", "    ld.volatile.global.f32 %f2, [%rd6+3072];",
                "    ld.volatile.global.u32 %r5, [%rd6+4096];", "    mov.u32 %r1, 0;",
                "    setp.ne.s32 %p1, %r5, 0;"]
        tail = ["    add.s64 %rd7, %rd3, %rd5;", "    st.global.u32 [%rd7], %r1;", "    ret;", "}"]
        return "\n".join(head + self.body + tail)


def integer_compares() -> Kernel:
    k = Kernel("integer_compares")
    for cmp in INT_CMP:
        for ty in ("s32", "u32"):
            for b in ("%r4", "77"):
                p = k.pred()
                k.emit(f"setp.{cmp}.{ty} {p}, %r3, {b};")
                k.foldp(p)
            for combine in ("and", "or", "xor"):
                p = k.pred()
                k.emit(f"setp.{cmp}.{combine}.{ty} {p}, %r3, %r4, %p1;")
                k.foldp(p)
    return k


def float_compares() -> Kernel:
    k = Kernel("float_compares")
    for cmp in FLOAT_CMP:
        for ftz in ("", ".ftz"):
            for b in ("%f2", "0f40490FDB"):
                p = k.pred()
                k.emit(f"setp.{cmp}{ftz}.f32 {p}, %f1, {b};")
                k.foldp(p)
            p = k.pred()
            k.emit(f"setp.{cmp}.or{ftz}.f32 {p}, %f1, %f2, %p1;")
            k.foldp(p)
    return k


def float_arithmetic() -> Kernel:
    k = Kernel("float_arithmetic")
    for op in ("add", "sub", "mul"):
        for rnd in ("rn", "rz", "rm", "rp"):
            for ftz in ("", ".ftz"):
                for sat in ("", ".sat"):
                    for b in ("%f2", "0f3FC00000"):
                        f = k.freg()
                        k.emit(f"{op}.{rnd}{ftz}{sat}.f32 {f}, %f1, {b};")
                        k.foldf(f)
    for rnd in ("rn", "rz", "rm", "rp"):
        for ftz in ("", ".ftz"):
            f = k.freg()
            k.emit(f"fma.{rnd}{ftz}.f32 {f}, %f1, %f2, 0f3F000000;")
            k.foldf(f)
    for op in ("min", "max"):
        for ftz in ("", ".ftz"):
            for b in ("%f2", "0f3F000000"):
                f = k.freg()
                k.emit(f"{op}{ftz}.f32 {f}, %f1, {b};")
                k.foldf(f)
        for ty in ("s32", "u32"):
            for b in ("%r4", "99"):
                r = k.reg()
                k.emit(f"{op}.{ty} {r}, %r3, {b};")
                k.fold(r)
    for fn in ("ex2.approx", "lg2.approx", "rcp.approx", "rsqrt.approx", "sqrt.approx"):
        for ftz in (".ftz", ""):
            for neg in (False, True):
                src = "%f1"
                if neg:
                    n = k.freg()
                    k.emit(f"abs{ftz}.f32 {n}, %f1;")
                    src = n
                f = k.freg()
                k.emit(f"{fn}{ftz}.f32 {f}, {src};")
                k.foldf(f)
    for b in ("%f2", "0f3F000000"):
        f = k.freg()
        k.emit(f"selp.f32 {f}, %f1, {b}, %p1;")
        k.foldf(f)
        r = k.reg()
        k.emit(f"selp.b32 {r}, %r3, {'%r4' if b == '%f2' else '5'}, %p1;")
        k.fold(r)
    return k


def conversions() -> Kernel:
    k = Kernel("conversions")
    for ty in ("s32", "u32"):
        for rnd in ("rni", "rzi", "rmi", "rpi"):
            for ftz in ("", ".ftz"):
                r = k.reg()
                k.emit(f"cvt.{rnd}{ftz}.{ty}.f32 {r}, %f1;")
                k.fold(r)
        for rnd in ("rn", "rz", "rm", "rp"):
            f = k.freg()
            k.emit(f"cvt.{rnd}.f32.{ty} {f}, %r3;")
            k.foldf(f)
    return k


def memory() -> Kernel:
    k = Kernel("memory")
    for ty in ("u8", "s8", "u16", "s16", "u32"):
        for space in ("global", "global.nc"):
            r = k.reg()
            k.emit(f"ld.{space}.{ty} {r}, [%rd6+{8 * (k.r % 50)}];")
            k.fold(r)
            k.emit(f"st.global.{ty if ty != 's8' and ty != 's16' else 'b' + ty[1:]} [%rd6+{8 * (k.r % 50) + 4}], {r};")
    for space in ("global", "global.nc"):
        a, b = k.reg(), k.reg()
        k.emit(f"ld.{space}.v2.u32 {{{a}, {b}}}, [%rd6+512];")
        k.fold(a); k.fold(b)
        k.emit(f"st.global.v2.u32 [%rd6+520], {{{b}, {a}}};")
        regs = [k.reg() for _ in range(4)]
        k.emit(f"ld.{space}.v4.u32 {{{', '.join(regs)}}}, [%rd6+1024];")
        for r in regs:
            k.fold(r)
        k.emit(f"st.global.v4.u32 [%rd6+1040], {{{', '.join(reversed(regs))}}};")
    return k


def main() -> int:
    kernels = [integer_compares(), float_compares(), float_arithmetic(), conversions(), memory()]
    text = ["// Generated by generate_forms.py: modifier combinations for the encoding tables.",
            ".version 8.0", ".target sm_86", ".address_size 64", ""]
    text += [k.text() + "\n" for k in kernels]
    (HERE / "forms.ptx").write_text("\n".join(text))
    print(f"forms.ptx: {len(kernels)} kernels")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
