"""Platform fragments, run: their canonical bytes executed by an independent
interpreter (native_program.py, written from docs/platform.md's command
table) give what the modules promise.

- Runtime.OrderedCombine: two peers exchanging binary64 partials over a
  channel end with the same bits, worker 0's + worker 1's, whichever order
  their own values are in.
- Platform.Linux.Nvidia.LinearStep: with a simulated kernel that computes as
  docs/platform.md says (binary32 operands, widened product), the host's
  evaluation reads back exactly Learning.Numerics' learningMixedProduct.
- Runtime.NativeFloatPlan / NativeMemoryPlan: ratio commands and word copies.
"""
from __future__ import annotations

import struct
import sys
import threading
from pathlib import Path
from queue import Queue

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from native_program import Machine, bits64, f64  # noqa: E402


def channel_pair():
    a_to_b, b_to_a = Queue(), Queue()

    def ends(outgoing, incoming):
        return (lambda data: outgoing.put(data)), (lambda count: incoming.get(timeout=10))
    return ends(a_to_b, b_to_a), ends(b_to_a, a_to_b)


def test_ordered_combine_gives_both_peers_the_same_bits(probe):
    program = probe("import Runtime.OrderedCombine\nimport Runtime.NativePhysicalProgram\n\n"
                    "def worker0 : Bytes = (nativePhysicalCommandsBytes (orderedCombineCommands 0 256 264 272 phEnd))\n"
                    "def worker1 : Bytes = (nativePhysicalCommandsBytes (orderedCombineCommands 1 256 264 272 phEnd))\n")
    partial0, partial1 = 0.1, 1e16
    (send0, receive0), (send1, receive1) = channel_pair()
    peers = [Machine(send=send0, receive=receive0), Machine(send=send1, receive=receive1)]
    peers[0].set_word(256, bits64(partial0))
    peers[1].set_word(256, bits64(partial1))
    codes = [program.value("worker0").value, program.value("worker1").value]
    threads = [threading.Thread(target=peer.run, args=(code,)) for peer, code in zip(peers, codes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert peers[0].word(272) == peers[1].word(272) == bits64(partial0 + partial1)
    assert peers[0].word(264) == bits64(partial1) and peers[1].word(264) == bits64(partial0)


LAYOUT = """
def buffer = (lambda unrestricted host : Nat . (constructor NvidiaPlanHostBuffer NvidiaPlanHostBufferValue b"x" 0 host 4096
  (constructor NvidiaPlanHostMemory NvidiaPlanHostVideoMemory)))
def layout : (family NvidiaPlanHostLayout) = (constructor NvidiaPlanHostLayout NvidiaPlanHostLayoutValue
  (buffer 0x10000) (buffer 0x20000) (buffer 0x30000) (buffer 0x40000) (buffer 0x50000) (buffer 0x60000)
  (constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersEnd) nvidiaPlanHostAmpere580
  (constructor NvidiaPlanHostLifecycle NvidiaPlanHostResourceManager) b"" 0)
"""


def linear_kernel(data, input_offset, target_offset, output_offset):
    """The kernel docs/platform.md describes: binary32 operands, widened results."""
    def gpu(machine, entry):
        def load(offset):
            return np.float32(f64(int.from_bytes(machine.mapped_read(data + offset, 8), "little")))
        w, x, t = load(0), load(input_offset), load(target_offset)
        prediction = np.float32(w * x)
        residual = float(prediction) - float(t)
        gradient = float(np.float32(np.float32(residual) * x))
        for k, value in enumerate((float(prediction), residual, gradient)):
            machine.mapped_write(data + output_offset + 8 * k, struct.pack("<d", value))
    return gpu


def test_linear_step_reads_back_the_mixed_product(probe):
    weight, feature = -0.7301, 3.1415926
    program = probe("import Platform.Linux.Nvidia.PlanHost\nimport Platform.Linux.Nvidia.LinearStep\n"
                    "import Runtime.NativePhysicalProgram\nimport Runtime.NativeMemoryPlan\nimport Learning.Numerics\n" + LAYOUT +
                    "def host : Bytes = (nativePhysicalCommandsBytes\n"
                    "  (nlsEvaluateScalar b\"eval\" layout 0x2222 0x70000 8 16 32 512 520\n"
                    "    (constructor NvidiaLinearScalarInput NvidiaLinearScalarBinary64 (nativeMemoryLoad 600))\n"
                    "    (constructor NvidiaLinearScalarInput NvidiaLinearScalarBinary64 (nativeMemoryLoad 608))\n"
                    "    (constructor NvidiaLinearScalarInput NvidiaLinearScalarNatural 0)\n"
                    "    (constructor NvidiaLinearScalarResult NvidiaLinearScalarPrediction) 616\n"
                    "  (nlsEvaluateScalar b\"again\" layout 0x2222 0x70000 8 16 32 512 520\n"
                    "    (constructor NvidiaLinearScalarInput NvidiaLinearScalarBinary64 (nativeMemoryLoad 600))\n"
                    "    (constructor NvidiaLinearScalarInput NvidiaLinearScalarNatural 2)\n"
                    "    (constructor NvidiaLinearScalarInput NvidiaLinearScalarNatural 1)\n"
                    "    (constructor NvidiaLinearScalarResult NvidiaLinearScalarResidual) 624 phEnd)))\n"
                    f"def expected : Nat = (learningMixedProduct {bits64(weight)} {bits64(feature)})\n")
    machine = Machine(gpu=linear_kernel(0x70000, 8, 16, 32), host_buffers=[(0x10000, 0x80000)])   # LAYOUT's buffers and the data block
    machine.set_word(600, bits64(weight))
    machine.set_word(608, bits64(feature))
    machine.run(program.value("host").value)
    assert machine.word(616) == program.value("expected").value
    assert machine.word(616) == bits64(float(np.float32(weight) * np.float32(feature)))
    # the second evaluation: input 2, target 1, the residual w*2 - 1
    assert f64(machine.word(624)) == float(np.float32(weight) * np.float32(2.0)) - 1.0
    assert machine.word(512) == 2 and machine.submitted == [0x2222, 0x2222]
    assert machine.telemetry == [b"eval", b"again"]


def test_float_ratio_and_word_copies(probe):
    program = probe("import Runtime.NativeFloatPlan\nimport Runtime.NativeMemoryPlan\nimport Runtime.NativePhysicalProgram\n\n"
                    "def host : Bytes = (nativePhysicalCommandsBytes (nativeFloatRatioCommands 256 264 1 3\n"
                    "  (nativeMemoryCopyWords 512 256 2 phEnd)))\n"
                    "def third : Nat = (nativeFloatOfRatio 1 3)\n")
    machine = Machine()
    machine.run(program.value("host").value)
    assert machine.word(256) == program.value("third").value == bits64(1 / 3)
    assert machine.word(512) == bits64(1 / 3) and machine.word(520) == bits64(3.0)
