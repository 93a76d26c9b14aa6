"""The request program and the learner's commands (Platform.Linux.Nvidia.PlanHost,
PlanHostAdamW), run: their canonical bytes executed by the independent
interpreter tests/specs/native_program.py (written from docs/platform.md's
command table).  The expected values come from the documentation alone:

- nvidiaPlanHostAdamWCommands / StepCommands: alpha_t = (lr sqrt(1 -
  beta2^t)) / (1 - beta1^t), epsilon_t = eps sqrt(1 - beta2^t), the powers
  running products, computed here with Python's binary64 arithmetic and
  rounded to binary32 by NumPy;
- nvidiaPlanHostAdamWHostSites / SitesAdmitted: GPU addresses translated by
  hand through the layout's buffers;
- nvidiaPlanHostRequestCommands: the ring entries a synthetic schedule
  issues, the bytes its steps place, and each refusal's status and message.
"""
from __future__ import annotations

import math
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from native_program import Failed, Machine  # noqa: E402

IMPORTS = ("import Platform.Linux.Nvidia.PlanHost\nimport Platform.Linux.Nvidia.PlanHostAdamW\n"
           "import Platform.Linux.Nvidia.PlanHostRequest\nimport Runtime.NativePhysicalProgram\n"
           "import Runtime.NativePhysicalEmbeddedArtifact\nimport Checkpoint.Envelope\nimport Std.List\n\n")

# the request state's words (docs/host-steps.md, "The request's native program")
INPUT_STEP, CURSOR, LEARNER, STAMPS, STAT = 264, 272, 384, 512, 4096

# A layout with host-mapped buffers at distinct GPU and host addresses, and one
# video buffer that is never host-mapped.
LAYOUT = """
def system = (constructor NvidiaPlanHostMemory NvidiaPlanHostSystemMemory)
def video = (constructor NvidiaPlanHostMemory NvidiaPlanHostVideoMemory)
def buffer = (lambda unrestricted name : Bytes . (lambda unrestricted gpu : Nat . (lambda unrestricted host : Nat .
  (lambda unrestricted extent : Nat . (lambda unrestricted memory : (family NvidiaPlanHostMemory) .
    (constructor NvidiaPlanHostBuffer NvidiaPlanHostBufferValue name gpu host extent memory))))))
def layout : (family NvidiaPlanHostLayout) = (constructor NvidiaPlanHostLayout NvidiaPlanHostLayoutValue
  (buffer b"ring" 0x100000000 0x7f0000000000 8704 system)
  (buffer b"push" 0x100100000 0x7f0000100000 65536 system)
  (buffer b"semaphores" 0x100200000 0x7f0000200000 4096 system)
  (buffer b"program" 0x100300000 0x7f0000300000 65536 system)
  (buffer b"qmd" 0x100400000 0x7f0000400000 8192 system)
  (buffer b"userd" 0x100002000 0x7f0000002000 512 system)
  (constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersNext (buffer b"arena" 0x200000000 0 0x1000000 video)
    (constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersNext (buffer b"staging" 0x100500000 0x7f0000500000 131072 system)
      (constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersEnd)))
  nvidiaPlanHostAmpere580 (constructor NvidiaPlanHostLifecycle NvidiaPlanHostResourceManager) b"card" 0x7f0000600000)
"""
RING, USERD, SEMAPHORE = 0x7f0000000000, 0x7f0000002000, 0x7f0000200000
RING_ENTRIES = 0x2000 // 8
GPPUT = USERD + 0x8C


def table(*words):
    return "b\"" + "".join(f"\\x{b:02x}" for w in words for b in w.to_bytes(8, "little")) + "\""


def f32_bits(value: float) -> int:
    return int(np.float32(value).view(np.uint32))


def u32(machine: Machine, address: int) -> int:
    return int.from_bytes(machine.mapped_read(address, 4), "little")


# ---- the learner ----

ADAMW = """
def adamW : (family NvidiaPlanHostAdamW) = (constructor NvidiaPlanHostAdamW NvidiaPlanHostAdamWValue
  (constructor NvidiaPlanHostArithmetic NvidiaPlanHostBinary64)
  (constructor NvidiaPlanHostConstant NvidiaPlanHostRatio 3 10000)
  (constructor NvidiaPlanHostConstant NvidiaPlanHostRatio 9 10)
  (constructor NvidiaPlanHostConstant NvidiaPlanHostRatio 999 1000)
  (constructor NvidiaPlanHostConstant NvidiaPlanHostFloat32 EPS_BITS))
def sites : (family StdList Nat) = (constructor StdList StdListCons Nat 0x7f0000300130
  (constructor StdList StdListCons Nat 0x7f0000308030 (constructor StdList StdListEmpty Nat)))
def siteFunction = (lambda unrestricted k : Nat . sites)
"""
EPSILON = float(np.float32(1e-8 * 1024))


def learner_program(probe, first: int, updates: int):
    step = "(nvidiaPlanHostAdamWStepCommands adamW sites)"
    body = "phEnd"
    for _ in range(updates):
        body = f"(nativePhysicalSplice {step} {body})"
    text = (IMPORTS + ADAMW.replace("EPS_BITS", str(f32_bits(EPSILON)))
            + f"def code : Bytes = (nativePhysicalCommandsBytes (nativePhysicalSplice "
              f"(nvidiaPlanHostAdamWCommands adamW {first} siteFunction) {body}))\n"
            + "def prelude : Bytes = (nativePhysicalCommandsBytes (nvidiaPlanHostAdamWCommands adamW 0 siteFunction))\n")
    program = probe(text)
    program.check()
    return program


def expected_scalars(t: int):
    """The documented arithmetic: running products, each operation binary64, rounded once."""
    lr, beta1, beta2 = 3 / 10000, 9 / 10, 999 / 1000
    power1 = power2 = 1.0
    for _ in range(t):
        power1 *= beta1
        power2 *= beta2
    root = math.sqrt(1.0 - power2)
    return f32_bits((lr * root) / (1.0 - power1)), f32_bits(EPSILON * root)


@pytest.mark.parametrize("input_step, first, updates", [(0, 0, 1), (0, 0, 3), (7, 2, 2)])
def test_adamw_step_commands_write_each_updates_scalars_at_every_site(probe, input_step, first, updates):
    program = learner_program(probe, first, updates)
    machine = Machine(state_bytes=8192, host_buffers=[(0x7f0000300000, 0x7f0000310000)])   # the two sites' blocks
    machine.set_word(INPUT_STEP, input_step)
    machine.run(program.value("code").value)
    t = input_step + first + updates
    alpha, epsilon = expected_scalars(t)
    for site in (0x7f0000300130, 0x7f0000308030):
        assert (u32(machine, site), u32(machine, site + 4), u32(machine, site + 32)) == (alpha, epsilon, t)
    # the scalars of t and t + 1 differ, so the count of updates is seen
    assert expected_scalars(t + 1)[0] != alpha


def test_adamw_prelude_writes_no_site(probe):
    program = learner_program(probe, 0, 0)
    machine = Machine(state_bytes=8192)
    machine.set_word(INPUT_STEP, 12)
    machine.run(program.value("prelude").value)
    assert machine.mapped == {}
    assert machine.word(LEARNER + 56) == 12      # t
    power1 = power2 = 1.0
    for _ in range(12):
        power1, power2 = power1 * 0.9, power2 * 0.999
    assert machine.word(LEARNER + 40) == struct.unpack("<Q", struct.pack("<d", power1))[0]
    assert machine.word(LEARNER + 48) == struct.unpack("<Q", struct.pack("<d", power2))[0]


SITES = """
def addresses : Bytes = ADDRESSES
def words : Bytes = WORDS
def launches = (lambda unrestricted k : Nat . (nat-eliminate (lambda unrestricted c : Nat . (family StdList Nat))
  (constructor StdList StdListCons Nat 0 (constructor StdList StdListCons Nat 1 (constructor StdList StdListEmpty Nat)))
  (lambda unrestricted p : Nat . (lambda unrestricted r : (family StdList Nat) .
    (constructor StdList StdListCons Nat 2 (constructor StdList StdListEmpty Nat))))
  k))
def baked = (lambda unrestricted k : Nat . (nat-add 1000 k))
def site = (lambda unrestricted pieces : Nat . (lambda unrestricted k : Nat . (lambda unrestricted i : Nat .
  (stdListAt Nat 999 (nvidiaPlanHostAdamWHostSites layout addresses 48 pieces launches k) i))))
def count = (lambda unrestricted pieces : Nat . (lambda unrestricted k : Nat .
  (stdListLength Nat (nvidiaPlanHostAdamWHostSites layout addresses 48 pieces launches k))))
def admitted = (lambda unrestricted pieces : Nat . (nvidiaPlanHostAdamWSitesAdmitted layout addresses words 48 pieces launches baked))
"""


def sites_program(probe, addresses, words, queries):
    text = IMPORTS + LAYOUT + SITES.replace("ADDRESSES", table(*addresses)).replace("WORDS", table(*words))
    text += "".join(f"def q{i} : Nat = {query}\n" for i, query in enumerate(queries))
    program = probe(text)
    program.check()
    return [program.value(f"q{i}").value for i in range(len(queries))]


def test_adamw_host_sites_translate_each_launch_block_through_the_layout(probe):
    # launch 0 and 1 in the program buffer, launch 2 in the staging buffer
    addresses = (0x100300100, 0x100308000, 0x100500040)
    values = sites_program(probe, addresses, (1000, 1000, 1001),
                           ["(site 2 0 0)", "(site 2 0 1)", "(site 2 1 0)", "(count 2 0)", "(count 2 1)",
                            "(count 1 1)", "(count 2 2)"])
    assert values == [0x7f0000300130, 0x7f0000308030, 0x7f0000500070, 2, 1, 0, 0]


def test_adamw_sites_admitted_and_each_refusal(probe):
    good = (0x100300100, 0x100308000, 0x100500040)
    assert sites_program(probe, good, (1000, 1000, 1001), ["(admitted 2)", "(admitted 1)"]) == [1, 1]
    # a baked word that is not the plan's value for its piece
    assert sites_program(probe, good, (1000, 1001, 1001), ["(admitted 2)"]) == [0]
    # a block in the video arena (never host-mapped)
    assert sites_program(probe, (0x100300100, 0x200000000, 0x100500040), (1000, 1000, 1001), ["(admitted 2)"]) == [0]
    # a site whose 36 bytes run past the program buffer's end (0x100310000)
    assert sites_program(probe, (0x100300100, 0x10030FFE0, 0x100500040), (1000, 1000, 1001),
                         ["(admitted 1)", "(site 1 0 1)"]) == [0, 0]
    # no update piece: no site at all
    assert sites_program(probe, good, (1000, 1000, 1001), ["(admitted 0)"]) == [0]


# ---- the request ----

REQUEST = """
def fills : (family NvidiaPlanHostRecipeFills) =
  (constructor NvidiaPlanHostRecipeFills NvidiaPlanHostRecipeFillsNext 0x7f0000300000 65536
    (constructor NativePhysicalEmbeddedComponentKind NativePhysicalEmbeddedProgramTable)
    (constructor NvidiaPlanHostRecipeFills NvidiaPlanHostRecipeFillsNext 0x7f0000000000 8192
      (constructor NativePhysicalEmbeddedComponentKind NativePhysicalEmbeddedGPFIFO)
      (constructor NvidiaPlanHostRecipeFills NvidiaPlanHostRecipeFillsEnd)))
def contract : (family CheckpointEnvelopeContract) =
  (constructor CheckpointEnvelopeContract CheckpointEnvelopeContractValue b"m" b"l" b"d" b"" 16 16 1)
def input : (family NvidiaPlanHostInputContract) = (constructor NvidiaPlanHostInputContract NvidiaPlanHostInputStream)
def learner : (family NativePhysicalCommands) = (phStore 4000 (phImm 77) phEnd)
def end : (family NvidiaPlanHostSteps) = (constructor NvidiaPlanHostSteps NvidiaPlanHostStepsEnd)
def steps : (family NvidiaPlanHostSteps) =
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepCursorFromCheckpoint 100 64
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit 2 0
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat 2
    (constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit 3 1
      (constructor NvidiaPlanHostSteps NvidiaPlanHostStepCursorAdvance 64 end))
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepStamp 3 0 5
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepFill 0x7f0000500010 b"plan-bytes"
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepAssertWord b"card-word" 0x7f0000500010 WORD
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepRecordStat 0x7f000000208c 8 4
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepCommands (phStore 4008 (phWord 4000) phEnd)
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepSync (constructor NvidiaPlanHostFile NvidiaPlanHostResult)
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepReissue 5 0 1 0 0xABCDEF 0
  TAIL))))))))))
def code = (lambda unrestricted submissions : Nat . (lambda unrestricted programLength : Nat .
  (nativePhysicalProgramBytes (nvidiaPlanHostProgram b"product"
    (nvidiaPlanHostRequestCommands layout b"product" b"program-id" b"qmd-id" b"push-id" b"ring-id"
      programLength 4096 4096 64 submissions input contract fills learner steps)))))
"""
RING_IMAGE = [0x1111, 0x2222, 0x3333, 0x4444, 0x5555]


def request_code(probe, submissions=5, program_length=4096, word=None, tail="end"):
    word = int.from_bytes(b"plan", "little") if word is None else word
    text = IMPORTS + LAYOUT + REQUEST.replace("WORD", str(word)).replace("TAIL", tail)
    text += f"def result : Bytes = (code {submissions} {program_length})\n"
    program = probe(text)
    program.check()
    code = program.value("result").value
    assert code[:4] == b"NPHY"
    slots, extent = struct.unpack_from("<QQ", code, 8)
    identity_length = struct.unpack_from("<Q", code, 24)[0]
    assert (slots, extent, code[32:32 + identity_length]) == (8, 8192, b"product")
    return code[32 + identity_length:]


def run_request(code, input_step=0):
    def gpu(machine, entry):
        pass
    machine = Machine(state_bytes=8192, gpu=gpu)
    for index, entry in enumerate(RING_IMAGE):
        machine.mapped_write(RING + 8 * index, entry.to_bytes(8, "little"))
    machine.mapped_write(SEMAPHORE + 8, (0xC0FFEE).to_bytes(8, "little"))   # the release's timestamp
    machine.request_step = input_step          # what RequestOpen reads from the checkpoint
    machine.run(code)
    return machine


def test_request_commands_carry_out_a_synthetic_schedule(probe):
    machine = run_request(request_code(probe), input_step=3)
    # Submit to 2 issues entries 0, 1; the repeat's Submit reaches 3 then 4 (stride 1); the Reissue its own entry
    assert machine.submitted == [0x1111, 0x2222, 0x3333, 0x4444, 0xABCDEF]
    assert machine.word(256) == 5                                   # issued
    assert u32(machine, GPPUT) == 5 % RING_ENTRIES
    assert machine.word(CURSOR) == 100 + 3 * 64 + 2 * 64          # base + input step x scale, two advances
    assert machine.mapped_read(0x7f0000500010, 10) == b"plan-bytes"
    assert machine.word(STAMPS + 8 * 5) == 0xC0FFEE
    assert bytes(machine.state[STAT + 8:STAT + 12]) == (4).to_bytes(4, "little")  # GPPut recorded after 4 issues
    assert machine.word(4008) == 77                                 # the learner's prelude ran before the steps


def test_request_commands_refusals(probe):
    # one submission fewer issued than the run has
    with pytest.raises(Failed) as caught:
        run_request(request_code(probe, submissions=6))
    assert caught.value.status == 7 and "submissions" in caught.value.args[0]
    # an asserted word that is not there
    with pytest.raises(Failed) as caught:
        run_request(request_code(probe, word=1234))
    assert caught.value.status == 7 and "card-word" in caught.value.args[0]
    # an embedded image longer than its recipe fill, named
    with pytest.raises(Failed) as caught:
        run_request(request_code(probe, program_length=65537))
    assert caught.value.status == 9 and "program-id" in caught.value.args[0]



def test_request_commands_open_the_request_first_and_give_file_steps_native_forms(probe):
    # docs/host-steps.md: the request is opened (its checks) before the device session; each recipe
    # fill's embedded image is loaded at its host address (program table kind 1, GPFIFO kind 4); then
    # the file steps are the request's commands: WriteStatus appends the status with the issue counter
    machine = run_request(request_code(probe, tail="(constructor NvidiaPlanHostSteps NvidiaPlanHostStepWriteStatus "
                                                   "(constructor NvidiaPlanHostFile NvidiaPlanHostResult) end)"))
    assert machine.requests[0][0] == "open"
    assert machine.requests[1:] == [("load", 1, 0x7f0000300000), ("load", 4, 0x7f0000000000), ("status", 5, 256)]
