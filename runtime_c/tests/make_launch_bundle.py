"""Make a launch bundle for gpu_smoke: one ptxas-compiled sm_90 kernel run
through a V04_00 QMD built with bobc.nvidia (qmd.QMD, encode.RECIPES,
encode.prologue), with no CUDA driver involved.

    python runtime_c/tests/make_launch_bundle.py OUT.bin [--ptxas PATH] [--prologue VARIANT]

The kernel writes out[i] = 2 i + 1 for i in 0..255 (one block of 256
threads); the bundle carries the expected 1 KiB so gpu_smoke can check it.

Bundle format (little-endian), read by gpu_smoke.c:
    "BOBLNCH1", u32 segments, u32 submissions, u32 checks, u32 0
    segments    x {u64 va, u64 alloc_bytes, u64 data_bytes} then data, padded to 8
    submissions x {u64 push_va, u32 dwords, u32 0, u64 semaphore_va, u64 value}
    checks      x {u64 va, u64 bytes} then the expected bytes, padded to 8
"""
from __future__ import annotations

import argparse
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "compiler"))

from bobc.nvidia import encode  # noqa: E402
from bobc.nvidia import pushbuffer as pb  # noqa: E402
from bobc.nvidia.qmd import QMD  # noqa: E402
from bobc.targets import SM90  # noqa: E402

BASE = 0x30_0000_0000          # outside the shim's reserved range, below 2^40
PROGRAM_VA = BASE              # code at 0, bank 0 at 0x1000
CB0_VA = BASE + 0x1000
QMD_VA = BASE + 0x10000
PUSH_VA = BASE + 0x20000
SEM_VA = BASE + 0x30000
OUT_VA = BASE + 0x40000
THREADS = 256

PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry launch_smoke(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mad.lo.s32 %r2, %r1, 2, 1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r2;
    ret;
}
"""


def elf_sections(blob: bytes) -> dict[str, tuple[bytes, int]]:
    """name -> (bytes, sh_info) of a 64-bit little-endian ELF."""
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]
    names = blob[strtab[4]:strtab[4] + strtab[5]]
    out = {}
    for h in headers:
        name = names[h[0]:names.index(b"\0", h[0])].decode()
        out[name] = (blob[h[4]:h[4] + h[5]], h[7])
    return out


def compile_kernel(ptxas: str) -> tuple[bytes, int]:
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(PTX)
        subprocess.run([ptxas, "-arch", SM90.ptxas_arch, "-o", str(cubin), str(src)], check=True)
        sections = elf_sections(cubin.read_bytes())
    code, info = sections[".text.launch_smoke"]
    registers = info >> 24
    return code, max(registers, 8)


# Prologue variants (the first submission): which channel-setup methods go
# before the launch, and the windows bank 0 repeats at 0x18 / 0x20.
#   encoder    bobc.nvidia.encode.prologue as is, with its windows (encode.SHARED_MEMORY_WINDOW /
#              LOCAL_MEMORY_WINDOW, now window4g's); data/launch_sm90_encoder.bin is still run
#              3's bundle, made when the encoder used 0xfe000000 / 0xff000000 (refused, Xid 69)
#   min        SET_OBJECT + INVALIDATE_SHADER_CACHES_NO_WFI only
#   nowindow   the encoder's prologue without the two window methods
#   localonly  the encoder's prologue without the shared-memory window
#   window4g   windows at 0xfe00000000 / 0xff00000000 (4 GiB aligned)
#   windowbw   windows at 0x729400000000 / 0x729300000000 (tinygrad's Blackwell values)
WINDOWS = {"encoder": (encode.SHARED_MEMORY_WINDOW, encode.LOCAL_MEMORY_WINDOW), "min": (0xFE000000, 0xFF000000),
           "nowindow": (0xFE000000, 0xFF000000), "localonly": (0xFE000000, 0xFF000000),
           "window4g": (0xFE00000000, 0xFF00000000), "windowbw": (0x729400000000, 0x729300000000)}


def prologue(variant: str) -> pb.Pushbuffer:
    target = SM90
    if variant == "encoder":
        return encode.prologue(target)
    shared, local = WINDOWS[variant]
    push = pb.Pushbuffer()
    c, sub = pb.COMPUTE, encode.COMPUTE_SUBCHANNEL
    push.inc(sub, pb.HOST["SET_OBJECT"], target.compute_class)
    if variant in ("window4g", "windowbw"):
        push.inc(sub, c["SET_SHADER_SHARED_MEMORY_WINDOW_A"], shared >> 32, shared & 0xFFFFFFFF)
    if variant in ("window4g", "windowbw", "localonly"):
        push.inc(sub, c["SET_SHADER_LOCAL_MEMORY_WINDOW_A"], local >> 32, local & 0xFFFFFFFF)
    if variant != "min":
        push.inc(sub, c["SET_SHADER_LOCAL_MEMORY_A"], encode.LOCAL_MEMORY_BASE >> 32,
                 encode.LOCAL_MEMORY_BASE & 0xFFFFFFFF)
        push.inc(sub, c["SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A"], encode.LOCAL_MEMORY_SIZE >> 32,
                 encode.LOCAL_MEMORY_SIZE & 0xFFFFFFFF, encode.LOCAL_MEMORY_MAX_SM_COUNT)
    push.immd(sub, c["INVALIDATE_SHADER_CACHES_NO_WFI"],
              pb.INVALIDATE_INSTRUCTION | pb.INVALIDATE_GLOBAL_DATA | pb.INVALIDATE_CONSTANT)
    return push


def build(ptxas: str, variant: str = "window4g") -> bytes:
    target = SM90
    shared_window, local_window = WINDOWS[variant]
    code, registers = compile_kernel(ptxas)
    recipe = encode.RECIPES[target.qmd_layout]

    cb0 = bytearray(target.parameter_block_bytes)
    struct.pack_into("<III", cb0, 0x00, THREADS, 1, 1)
    struct.pack_into("<III", cb0, 0x0C, 1, 1, 1)
    struct.pack_into("<Q", cb0, 0x18, shared_window)
    struct.pack_into("<Q", cb0, 0x20, local_window)
    struct.pack_into("<Q", cb0, 0x28, encode.STACK_POINTER)
    struct.pack_into("<Q", cb0, target.parameter_base, OUT_VA)

    qmd = QMD(target.qmd_layout, context="smoke")
    for name, value in recipe.constants.items():
        qmd.set(name, value)
    qmd.set("SASS_VERSION", target.sm)
    for name, value in zip(recipe.grid, (1, 1, 1)):
        qmd.set(name, value)
    for name, value in zip(recipe.block, (THREADS, 1, 1)):
        qmd.set(name, value)
    qmd.set(recipe.registers, encode.qmd_registers(registers))
    shared = encode.shared_memory_bytes(0)
    qmd.set(recipe.shared_memory_size, shared)
    low, high, size = recipe.sm_config
    qmd.set(low, encode.sm_config(shared)).set(high, encode.MAX_SM_CONFIG).set(size, encode.sm_config(shared))
    qmd.set(recipe.program_address[0], PROGRAM_VA & 0xFFFFFFFF).set(recipe.program_address[1], PROGRAM_VA >> 32)
    qmd.set(recipe.prefetch[0], (PROGRAM_VA >> 8) & 0xFFFFFFFF).set(recipe.prefetch[1], PROGRAM_VA >> 40)
    qmd.set(recipe.prefetch[2], min(-(-len(code) // 256), 0x1FF))
    shifted = CB0_VA >> recipe.cb0_address_shift
    qmd.set(recipe.cb0_address[0], shifted & 0xFFFFFFFF).set(recipe.cb0_address[1], shifted >> 32)
    qmd.set(recipe.cb0_size_shifted4, target.parameter_block_bytes >> 4)
    qmd_bytes = qmd.to_bytes(target.qmd_record_bytes)

    def release(push: pb.Pushbuffer, value: int) -> None:
        push.inc(encode.HOST_SUBCHANNEL, pb.HOST["SEM_ADDR_LO"], SEM_VA & 0xFFFFFFFF, SEM_VA >> 32,
                 value & 0xFFFFFFFF, value >> 32, encode.SEMAPHORE_EXECUTE)

    first = prologue(variant)
    release(first, 1)
    second = pb.Pushbuffer()
    second.inc(encode.COMPUTE_SUBCHANNEL, pb.COMPUTE["SEND_PCAS_A"], QMD_VA >> 8)
    second.immd(encode.COMPUTE_SUBCHANNEL, pb.COMPUTE["SEND_SIGNALING_PCAS2_B"], pb.PCAS_ACTION[encode.PCAS_ACTION])
    release(second, 2)
    first_bytes, second_bytes = first.to_bytes(), second.to_bytes()
    push = first_bytes + b"\0" * (-len(first_bytes) % 256) + second_bytes
    second_va = PUSH_VA + len(first_bytes) + (-len(first_bytes) % 256)

    program = bytearray(0x1000 + len(cb0))
    program[:len(code)] = code
    program[0x1000:] = cb0
    segments = [(PROGRAM_VA, 0x10000, bytes(program)), (QMD_VA, 0x10000, qmd_bytes),
                (PUSH_VA, 0x10000, push), (SEM_VA, 0x10000, b""), (OUT_VA, 0x10000, b"")]
    submissions = [(PUSH_VA, len(first_bytes) // 4, SEM_VA, 1), (second_va, len(second_bytes) // 4, SEM_VA, 2)]
    expected = struct.pack(f"<{THREADS}I", *[2 * i + 1 for i in range(THREADS)])
    checks = [(OUT_VA, expected)]

    def pad(b: bytes) -> bytes:
        return b + b"\0" * (-len(b) % 8)

    out = bytearray(b"BOBLNCH1" + struct.pack("<IIII", len(segments), len(submissions), len(checks), 0))
    for va, alloc, data in segments:
        out += struct.pack("<QQQ", va, alloc, len(data)) + pad(data)
    for va, dwords, sem, value in submissions:
        out += struct.pack("<QIIQQ", va, dwords, 0, sem, value)
    for va, data in checks:
        out += struct.pack("<QQ", va, len(data)) + pad(data)
    print(f"kernel: {len(code)} bytes of sm_90 code, {registers} registers; QMD {len(qmd_bytes)} bytes; "
          f"push {len(first_bytes)} + {len(second_bytes)} bytes", file=sys.stderr)
    return bytes(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--ptxas", default="ptxas")
    parser.add_argument("--prologue", default="window4g", choices=sorted(WINDOWS))
    args = parser.parse_args()
    Path(args.out).write_bytes(build(args.ptxas, args.prologue))
    return 0


if __name__ == "__main__":
    sys.exit(main())
