"""Device images for the native program GPU test (tests/gpu/test_native_program.py):
tests/native/kernels/native-mask.sass assembled for the target, its program and QMD
images through bobc's encoder (a one-launch WholeProgramPlan), and a pushbuffer of two
segments -- the channel set-up, the launch and a semaphore release of 1; then the
launch again and a release of 2 -- so the program's n-th Submit completes when the
semaphore reaches n (docs/native-host.md, "The device session").  No lark needed."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KERNEL = REPO / "tests" / "native" / "kernels" / "native-mask.sass"

# tests/native/plans/Native/Device.bob's addresses
CODE, QMD, PUSH, DATA, OUT, SEMAPHORE = 0x200000000, 0x200100000, 0x200200000, 0x200300000, 0x200301000, 0x200400000
PLAN_PARAMETER_WORD = 0x160 // 8     # the sm_86 plan's first parameter word (bobc.targets)


def images(target):
    """(program image, QMD image, pushbuffer image, [entry 0, entry 1]) for `target`."""
    from bobc.nvidia import encode
    from bobc.nvidia import pushbuffer as pb
    from bobc.nvidia.gpfifo import Entry
    from bobc.plan.model import Launch, ParameterPatch, Region, Submission, WholeProgramPlan
    from bobc.sass import assemble_kernel

    kernel = assemble_kernel(KERNEL, target)
    region = Region("native-mask", bytes(kernel.code), 24, 64, 0, 0)
    launch = Launch("native-mask", 0, CODE, (1, 1, 1), (64, 1, 1), 0x200,
                    (ParameterPatch(PLAN_PARAMETER_WORD, OUT), ParameterPatch(PLAN_PARAMETER_WORD + 1, DATA)))
    plan = WholeProgramPlan("program", 0x86, 0xC7C0, 0x806, CODE, QMD, PUSH, SEMAPHORE, 128, 0x1000,
                            (region,), (launch,), 1, 0x200, (Submission("mask", (0,), 0),), 1, 1)
    built = encode.encode_images(plan, target)
    qmd_address = built.manifest["launches"][0]["qmd_address"]

    def segment(payload: int, prologue: bool) -> bytes:
        push = encode.prologue(target) if prologue else pb.Pushbuffer()
        push.inc(encode.COMPUTE_SUBCHANNEL, pb.COMPUTE["SEND_PCAS_A"], qmd_address >> 8)
        push.immd(encode.COMPUTE_SUBCHANNEL, pb.COMPUTE["SEND_SIGNALING_PCAS2_B"], pb.PCAS_ACTION[encode.PCAS_ACTION])
        push.inc(encode.HOST_SUBCHANNEL, pb.HOST["SEM_ADDR_LO"], SEMAPHORE & 0xFFFFFFFF, SEMAPHORE >> 32,
                 payload, 0, encode.SEMAPHORE_EXECUTE)
        return push.to_bytes()

    first, second = segment(1, True), segment(2, False)
    entries = [Entry(PUSH, len(first) // 4).to_bytes(), Entry(PUSH + len(first), len(second) // 4).to_bytes()]
    return (built.program, built.qmd, first + second,
            [int.from_bytes(entry, "little") for entry in entries])
