"""Probe (GPU machine, lark needed): which pushbuffer ending makes a kernel's system-memory writes
visible to the CPU once the semaphore a native Submit waits for has moved?

One small native program (built here, the runtime's own host) maps buffers as
tests/native/plans/Native/Device.bob does, loads a kernel's images, and submits twice: input
1, then input 2 (a changed input: does the GPU read the CPU's new words?), the output cleared
by the CPU in between.  Each variant ends its two segments differently:

  release      prologue + launch + RELEASE 1 (WFI); launch + RELEASE 2   (NATIVE's GPU test)
  count        prologue + launch + REDUCTION IADD 1 (WFI), twice          (PR's counting segments)
  count-flush  prologue + launch + RELEASE 0 (WFI) at +8 + REDUCTION IADD 1, twice

for the mask kernel (out = in & 0xff) and seed 003's coordinate-linear-step (binary64 via
binary32 products), each checked against NumPy.  Prints one line a variant.  On the H200
(2026-12-01) all three endings counted and made the mask kernel's writes visible; the
linear step's gradient was t x instead of (w x - t) x under all three: its F2F read the
register the DADD had not yet written (bobc.sass.tables.arch SchedulingFacts.fixed_latency).

    PYTHONPATH=compiler:<lark> python3 tests/gpu/probe_counting_semaphore.py
"""
from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
for folder in (REPO / "compiler", REPO / "tests/gpu", REPO / "tests/native", REPO / "examples/partitioned_regression"):
    sys.path.insert(0, str(folder))

from test_native_program import build_host, machine_uuids, uuid_bytes  # noqa: E402

CODE, QMD, PUSH, DATA, OUT, SEMAPHORE = 0x200000000, 0x200100000, 0x200200000, 0x200300000, 0x200301000, 0x200400000
RING, PUT = 0x200500000, 0x200500800
WORD = 0x160 // 8
KERNELS = {"mask": REPO / "tests/native/kernels/native-mask.sass",
           "linear": REPO / "examples/partitioned_regression/PartitionedRegression/Realization/coordinate-linear-step.sass"}

PROGRAM = """module ProbeRun

import Runtime.NativePhysicalProgram
import Native.Short

def probe = (program b"probe-v1" 1 4096
    (openDevice {uuid}
    (map b"code" {CODE} {CODE} 0x10000 1
    (map b"qmd" {QMD} {QMD} 0x1000 1
    (map b"push" {PUSH} {PUSH} 0x1000 0
    (map b"data" {DATA} {DATA} 0x2000 0
    (map b"semaphore" {SEMAPHORE} {SEMAPHORE} 0x1000 0
    (map b"ring" {RING} {RING} 0x1000 0
    (loadImage {CODE} {code} (loadImage {QMD} {qmd} (loadImage {PUSH} {push}
    (readFile 0 256 256
    (readFile 1 1280 256
    (phCopyStateToMapped 256 {DATA} 256
    (submit {RING} 4 {PUT} (phImm {entry0}) {SEMAPHORE} 2048
    (phCopyMappedToState {OUT} 512 256
    (writeFile 2 512 256
    (phCopyStateToMapped 1280 {DATA} 256
    (phCopyStateToMapped 1024 {OUT} 256
    (submit {RING} 4 {PUT} (phImm {entry1}) {SEMAPHORE} 2048
    (writeMappedFile 3 {OUT} 256
    (phStore 2056 (mappedWord {SEMAPHORE})
    (phStore 2064 (mappedWord {PUT})
    (phStore 2072 (mappedWord {flush})
    (writeFile 4 2048 32
    (phRelease phEnd))))))))))))))))))))))))))
"""


def literal(data: bytes) -> str:
    return 'b"' + "".join(f"\\x{b:02x}" for b in data) + '"'


def images(target, kernel: str, ending: str):
    from bobc.nvidia import encode
    from bobc.nvidia import pushbuffer as pb
    from bobc.nvidia.gpfifo import Entry
    from bobc.plan.model import Launch, ParameterPatch, Region, Submission, WholeProgramPlan
    from bobc.sass import assemble_kernel

    assembled = assemble_kernel(KERNELS[kernel], target)
    if kernel == "mask":
        block, patches = 64, (ParameterPatch(WORD, OUT), ParameterPatch(WORD + 1, DATA))
    else:
        block = 1
        patches = tuple(ParameterPatch(WORD + i, v) for i, v in enumerate((DATA, DATA + 8, DATA + 16, OUT)))
    region = Region(kernel, bytes(assembled.code), 24, block, 0, 0)
    launch = Launch(kernel, 0, CODE, (1, 1, 1), (block, 1, 1), 0x200, patches)
    plan = WholeProgramPlan("program", 0x86, 0xC7C0, 0x806, CODE, QMD, PUSH, SEMAPHORE, 128, 0x1000,
                            (region,), (launch,), 1, 0x200, (Submission("probe", (0,), 0),), 1, 1)
    built = encode.encode_images(plan, target)
    qmd_address = built.manifest["launches"][0]["qmd_address"]
    count = (pb.SEM_EXECUTE_REDUCTION | pb.SEM_EXECUTE_REDUCTION_IADD | pb.SEM_EXECUTE_REDUCTION_UNSIGNED
             | pb.SEM_EXECUTE_RELEASE_WFI | pb.SEM_EXECUTE_PAYLOAD_SIZE_64BIT)
    flush = pb.SEM_EXECUTE_RELEASE | pb.SEM_EXECUTE_RELEASE_WFI | pb.SEM_EXECUTE_PAYLOAD_SIZE_64BIT

    def semaphore(push, address, payload, execute):
        push.inc(encode.HOST_SUBCHANNEL, pb.HOST["SEM_ADDR_LO"], address & 0xFFFFFFFF, address >> 32,
                 payload & 0xFFFFFFFF, payload >> 32, execute)

    def segment(k: int) -> bytes:
        push = encode.prologue(target) if (k == 0 or ending != "release") else pb.Pushbuffer()
        push.inc(encode.COMPUTE_SUBCHANNEL, pb.COMPUTE["SEND_PCAS_A"], qmd_address >> 8)
        push.immd(encode.COMPUTE_SUBCHANNEL, pb.COMPUTE["SEND_SIGNALING_PCAS2_B"], pb.PCAS_ACTION[encode.PCAS_ACTION])
        if ending == "release":
            semaphore(push, SEMAPHORE, k + 1, encode.SEMAPHORE_EXECUTE)
        else:
            if ending == "count-flush":
                semaphore(push, SEMAPHORE + 8, 0x5A5A0000 + k, flush)
            semaphore(push, SEMAPHORE, 1, count)
        return push.to_bytes()

    first, second = segment(0), segment(1)
    entries = [Entry(PUSH, len(first) // 4).to_bytes(), Entry(PUSH + len(first), len(second) // 4).to_bytes()]
    return built.program, built.qmd, first + second, [int.from_bytes(e, "little") for e in entries]


def program_bytes(uuid: bytes, target, kernel: str, ending: str, folder: Path) -> bytes:
    from bobc.language import load_program
    from bobc.plan.intrinsics import default_intrinsics

    code, qmd, push, entries = images(target, kernel, ending)
    module = folder / "ProbeRun.bob"
    module.write_text(PROGRAM.format(uuid=literal(uuid), code=literal(code), qmd=literal(qmd), push=literal(push),
                                     entry0=entries[0], entry1=entries[1], flush=SEMAPHORE + 8, CODE=CODE, QMD=QMD,
                                     PUSH=PUSH, DATA=DATA, OUT=OUT, SEMAPHORE=SEMAPHORE, RING=RING, PUT=PUT),
                      encoding="utf-8")
    program = load_program(module, include=[str(REPO / "tests/native/plans")], intrinsics=default_intrinsics(), target=target)
    encoder = program.definition("Runtime.NativePhysicalProgram.nativePhysicalProgramBytes")
    return bytes(program.apply(encoder.thunk, program.definition("probe").thunk).value)


def inputs(kernel: str, seed: int) -> tuple[bytes, bytes]:
    """(input words, the output NumPy expects)."""
    rng = np.random.default_rng(seed)
    if kernel == "mask":
        words = rng.integers(0, 2 ** 32, size=64, dtype=np.uint32)
        return words.astype("<u4").tobytes(), (words & 0xFF).astype("<u4").tobytes()
    from partitioned_regression import reference as R
    w, x, t = rng.standard_normal(3)
    return (struct.pack("<3d", w, x, t) + bytes(232),
            struct.pack("<3d", *R.linear_step(w, x, t)) + bytes(232))


def main() -> int:
    from bobc.targets import SM90

    uuid = uuid_bytes(machine_uuids()[0])
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for kernel in ("mask", "linear"):
            for ending in ("release", "count", "count-flush"):
                folder = work / f"{kernel}-{ending}"
                folder.mkdir()
                host = build_host(program_bytes(uuid, SM90, kernel, ending, folder), folder / "host")
                (in1, want1), (in2, want2) = inputs(kernel, 1), inputs(kernel, 2)
                (folder / "in1").write_bytes(in1)
                (folder / "in2").write_bytes(in2)
                done = subprocess.run([str(host), "in1", "in2", "out1", "out2", "count"], cwd=folder,
                                      capture_output=True, text=True, timeout=60)
                if done.returncode != 0:
                    print(f"{kernel:6} {ending:11} exit {done.returncode}: {done.stderr.strip()[-400:]}")
                    failures += 1
                    continue
                out1, out2 = (folder / "out1").read_bytes(), (folder / "out2").read_bytes()
                counter, semaphore, put, flush = struct.unpack("<4Q", (folder / "count").read_bytes())

                def verdict(got, want, other):
                    if got == want:
                        return "ok"
                    if got == other:
                        return "STALE (the first input's result)"
                    return "zero" if not any(got) else f"WRONG {got[:24].hex()}"
                v1, v2 = verdict(out1, want1, None), verdict(out2, want2, want1)
                failures += (v1, v2) != ("ok", "ok")
                print(f"{kernel:6} {ending:11} run1 {v1}; run2 {v2}; counter {counter} semaphore {semaphore} "
                      f"put {put} word+8 {flush:#x}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
