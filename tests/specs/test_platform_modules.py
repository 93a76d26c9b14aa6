"""The platform modules compute what docs/platform.md says.

Expectations are computed independently: sockaddr_in with struct and
socket.inet_aton, UUID text with Python's uuid, floating point with NumPy's
float32/float64, program and manifest bytes with struct from the documented
layouts.
"""
from __future__ import annotations

import random
import socket
import struct
import uuid
from fractions import Fraction

import numpy as np
import pytest

from .conftest import REPOSITORY  # noqa: F401


def f64_bits(value: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def bits_f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


# ---- Runtime.SocketAddress ----

def test_socket_address_is_linux_sockaddr_in(probe):
    program = probe("import Runtime.SocketAddress\nimport Std.Foundation\n\n"
                    "def ok = (linuxIPv4SocketAddress (constructor IPv4Address IPv4AddressValue 10 1 2 254) 51234)\n"
                    "def loop = (linuxIPv4SocketAddress ipv4Loopback 5000)\n"
                    "def badOctet = (linuxIPv4SocketAddress (constructor IPv4Address IPv4AddressValue 1 256 3 4) 80)\n"
                    "def badPort = (linuxIPv4SocketAddress ipv4Loopback 65536)\n"
                    "def zeroPort = (linuxIPv4SocketAddress ipv4Loopback 0)\n")
    program.check()

    def success(name):
        value = program.value(name)
        assert value.constructor == "StdSuccess"
        return program.field(value, "stdSuccessValue").value

    # struct sockaddr_in: sa_family (host order), sin_port (network order), sin_addr, 8 zero bytes
    assert success("ok") == struct.pack("<H", socket.AF_INET) + struct.pack(">H", 51234) \
        + socket.inet_aton("10.1.2.254") + bytes(8)
    assert success("loop") == struct.pack("<H", 2) + struct.pack(">H", 5000) + socket.inet_aton("127.0.0.1") + bytes(8)
    failure = program.value("badOctet")
    assert failure.constructor == "StdFailure"
    reason = program.field(failure, "stdFailureError")
    assert reason.constructor == "SocketAddressOctetTooLarge"
    assert program.field(reason, "socketAddressOctetIndex").value == 1
    for name, port in (("badPort", 65536), ("zeroPort", 0)):
        reason = program.field(program.value(name), "stdFailureError")
        assert reason.constructor == "SocketAddressPortOutOfRange"
        assert program.field(reason, "socketAddressPort").value == port


# ---- Platform.Linux.Nvidia.DeviceBinding ----

def test_device_binding_uuid_text_and_admission(probe):
    raw = bytes(range(0x10, 0x20))
    literal = 'b"' + "".join(f"\\x{b:02x}" for b in raw) + '"'
    program = probe("import Platform.Linux.Nvidia.DeviceBinding\n\n"
                    f"def text : Bytes = (nvidiaDeviceUUIDText {literal})\n"
                    f"def good : Nat = (nvidiaDeviceBindingAdmitted (constructor NvidiaDeviceBinding NvidiaDeviceBindingValue {literal} 0 b\"NVIDIA H200\"))\n"
                    "def zeroUUID : Nat = (nvidiaDeviceBindingAdmitted (constructor NvidiaDeviceBinding NvidiaDeviceBindingValue (bytes-from-nat-le 0 16) 0 b\"\"))\n"
                    f"def ctlMinor : Nat = (nvidiaDeviceBindingAdmitted (constructor NvidiaDeviceBinding NvidiaDeviceBindingValue {literal} 255 b\"\"))\n")
    program.check()
    assert program.value("text").value == b"GPU-" + str(uuid.UUID(bytes=raw)).encode()
    assert [program.value(n).value for n in ("good", "zeroUUID", "ctlMinor")] == [1, 0, 0]


# ---- Std.Numeric.Profile, Learning.Numerics, Runtime.NativeFloatPlan ----

def test_numeric_profile_identity_is_seed_003s(probe):
    program = probe("import Std.Numeric.Profile\n\n"
                    "def mixed : Bytes = (stdNumericProfileIdentity stdNumericMixedProducts)\n"
                    "def half : Bytes = (stdNumericProfileIdentity (constructor StdNumericProfile StdNumericProfileValue "
                    "(constructor StdNumericFormat StdNumericBinary16) (constructor StdNumericFormat StdNumericBinary32) 12))\n")
    assert program.value("mixed").value == b"f32-products-f64-accumulation-v1"
    assert program.value("half").value == b"f16-products-f32-accumulation-v12"


def test_mixed_products_and_binary64_sums_match_numpy(probe):
    generator = random.Random(3)
    pairs = [(generator.uniform(-4, 4), generator.uniform(-4, 4)) for _ in range(6)] + [(0.1, -3.0), (1e-3, 0.0)]
    text = "import Learning.Numerics\n\n"
    for i, (a, b) in enumerate(pairs):
        text += f"def product{i} : Nat = (learningMixedProduct {f64_bits(a)} {f64_bits(b)})\n"
        text += f"def sum{i} : Nat = (learningSum {f64_bits(a)} {f64_bits(b)})\n"
    program = probe(text)
    for i, (a, b) in enumerate(pairs):
        # binary32 operands, binary32 product (one rounding), widened
        expected = float(np.float32(a) * np.float32(b))
        assert bits_f64(program.value(f"product{i}").value) == expected, (a, b)
        assert program.value(f"sum{i}").value == f64_bits(a + b), (a, b)


def test_native_float_constants_are_the_nearest_binary64(probe):
    cases = [(1, 3), (9, 10), (999, 1000), (3, 10000000), (2 ** 60 + 1, 1)]
    text = "import Runtime.NativeFloatPlan\n\n" + "".join(
        f"def ratio{i} : Nat = (nativeFloatOfRatio {n} {d})\n" for i, (n, d) in enumerate(cases))
    program = probe(text)
    for i, (n, d) in enumerate(cases):
        # Fraction -> float rounds correctly (to nearest, ties to even)
        assert program.value(f"ratio{i}").value == f64_bits(float(Fraction(n, d)))


# ---- Runtime.NativePhysicalProgram ----

def encode_natural(n):
    return struct.pack("<Q", n)


def encode_bytes(b):
    return struct.pack("<Q", len(b)) + b


def encode_operand(kind, n):
    return bytes([kind]) + encode_natural(n)


def test_program_bytes_follow_the_documented_encoding(probe):
    program = probe("import Runtime.NativePhysicalProgram\n\n"
                    "def p : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue b\"id\" 9 512\n"
                    "  (phStore 256 (phImm 7)\n"
                    "    (phFloat (constructor NativePhysicalFloatOperation NativePhysicalFloatMultiply) 264 (phWord 256) (phSlot 2)\n"
                    "      (phCopyStateToMapped 256 4096 16 (phTelemetry 3 b\"done\" (phRelease phHalt))))))\n"
                    "def bytes : Bytes = (nativePhysicalProgramBytes p)\n"
                    "def count : Nat = (nativePhysicalCommandCount (nativePhysicalProgramCommandsOf p))\n")
    program.check()
    expected = (b"NPHY" + struct.pack("<I", 1) + encode_natural(9) + encode_natural(512) + encode_bytes(b"id")
                + bytes([4]) + encode_natural(256) + encode_operand(0, 7)
                + bytes([6, 2]) + encode_natural(264) + encode_operand(2, 256) + encode_operand(1, 2)
                + bytes([8]) + encode_natural(256) + encode_natural(4096) + encode_natural(16)
                + bytes([22]) + encode_natural(3) + encode_bytes(b"done")
                + bytes([23]) + bytes([1]))
    assert program.value("bytes").value == expected
    assert program.value("count").value == 6


def test_splice_replaces_a_fragments_ends_and_shift_moves_slots(probe):
    program = probe("import Runtime.NativePhysicalProgram\n\n"
                    "def fragment : (family NativePhysicalCommands) =\n"
                    "  (constructor NativePhysicalCommands NativePhysicalBranchZero (phSlot 1)\n"
                    "    (phTelemetry 1 b\"zero\" phEnd)\n"
                    "    (constructor NativePhysicalCommands NativePhysicalRepeat (phImm 3) (phStore 8 (phSlot 0) phEnd) phEnd))\n"
                    "def spliced : Bytes = (nativePhysicalCommandsBytes (nativePhysicalSplice fragment phHalt))\n"
                    "def shifted : Bytes = (nativePhysicalCommandsBytes (nativePhysicalShiftSlots 5 fragment))\n")
    halt, end = bytes([1]), bytes([0])

    def encoded(slot_offset, tail):
        store = bytes([4]) + encode_natural(8) + encode_operand(1, 0 + slot_offset) + end   # a repeat body keeps its end
        repeat = bytes([12]) + encode_operand(0, 3) + store + tail
        zero = bytes([22]) + encode_natural(1) + encode_bytes(b"zero") + tail
        return bytes([13]) + encode_operand(1, 1 + slot_offset) + zero + repeat
    assert program.value("spliced").value == encoded(0, halt)
    assert program.value("shifted").value == encoded(5, end)


# ---- Runtime.NativePhysicalEmbeddedArtifact ----

def test_embedded_artifact_layout(probe):
    program = probe("import Runtime.NativePhysicalEmbeddedArtifact\n\n"
                    "def names = (lambda unrestricted kind : (family NativePhysicalEmbeddedComponentKind) .\n"
                    "  (bytes-from-nat-le (nat-add 65 (nativePhysicalEmbeddedKindCode kind)) 1))\n"
                    "def artifact : Bytes = (nativePhysicalEmbeddedArtifact names b\"\\x7fELF..\" b\"PP\" b\"QQQ\" b\"\" b\"RRRRRRRR\")\n")
    host = b"\x7fELF.."

    def component(code, payload):
        return struct.pack("<I", code) + bytes([65 + code]) + bytes(63) + encode_natural(len(payload)) + payload
    expected = (host + component(1, b"PP") + component(2, b"QQQ") + component(3, b"") + component(4, b"RRRRRRRR")
                + struct.pack("<I", 0) + b"A" + bytes(63) + encode_natural(len(host))
                + b"NPEMBED1" + encode_natural(len(host)))
    assert program.value("artifact").value == expected


# ---- Checkpoint.NativeRegions, region frames ----

REGIONS = ("(constructor NativeRegions NativeRegionsNext (constructor NativeRegion NativeRegionValue b\"weight\" 256 8)\n"
           "  (constructor NativeRegions NativeRegionsNext (constructor NativeRegion NativeRegionValue b\"accumulator\" 264 8)\n"
           "    (constructor NativeRegions NativeRegionsEnd)))")


def test_native_regions_manifest_and_certificate(probe):
    overlapping = REGIONS.replace("b\"accumulator\" 264", "b\"accumulator\" 260")
    program = probe("import Checkpoint.NativeRegions\nimport Compiler.Planning.RegionFrame\nimport Runtime.RegionFrame\n\n"
                    f"def regions : (family NativeRegions) = {REGIONS}\n"
                    "def manifest : Bytes = (nativeRegionManifest b\"f32-products-f64-accumulation-v1\" 7 regions)\n"
                    "def payload : Nat = (nativeRegionsPayloadBytes regions)\n"
                    "def fits : Nat = (nativeRegionsAdmitted 272 regions)\n"
                    "def tooSmall : Nat = (nativeRegionsAdmitted 271 regions)\n"
                    f"def overlapping : Nat = (nativeRegionsAdmitted 4096 {overlapping})\n"
                    "def aligned : Nat = (frameAlign 257)\n"
                    "def header : Bytes = (regionFrameHeader 2 30 16)\n"
                    "def fitsWord : Nat = (regionFrameWordFits 4294967296)\n")
    program.check()
    numerics = b"f32-products-f64-accumulation-v1"
    expected = (b"NREG" + encode_natural(7) + encode_bytes(numerics) + encode_natural(2)
                + b"weight".ljust(32, b"\0") + encode_natural(256) + encode_natural(8)
                + b"accumulator".ljust(32, b"\0") + encode_natural(264) + encode_natural(8))
    assert program.value("manifest").value == expected
    assert program.value("payload").value == 16
    assert [program.value(n).value for n in ("fits", "tooSmall", "overlapping")] == [1, 0, 0]
    assert program.value("aligned").value == 264
    assert program.value("header").value == b"FRAM" + struct.pack("<QQQ", 2, 30, 16)
    assert program.value("fitsWord").value == 0


# ---- participants, ordered combine, the peer endpoint ----

def test_participants_and_the_ordered_combine(probe):
    program = probe("import Representation.ParticipantGroup\nimport Runtime.OrderedCombine\nimport Runtime.NativePhysicalProgram\n\n"
                    "def identity : Bytes = (participantIdentity (participantPair b\"coordinates\") 1)\n"
                    "def next : Nat = (participantGroupNext (participantPair b\"coordinates\") 1)\n"
                    "def admits : Nat = (participantGroupAdmits (participantPair b\"coordinates\") 2)\n"
                    "def worker0 : Bytes = (nativePhysicalCommandsBytes (orderedCombineCommands 0 256 264 272 phEnd))\n"
                    "def worker1 : Bytes = (nativePhysicalCommandsBytes (orderedCombineCommands 1 256 264 272 phEnd))\n")
    assert program.value("identity").value == b"coordinates/001-of-002"
    assert program.value("next").value == 0 and program.value("admits").value == 0

    def send(state):
        return bytes([20]) + encode_natural(0) + encode_natural(state) + encode_natural(8)

    def receive(state):
        return bytes([21]) + encode_natural(0) + encode_natural(state) + encode_natural(8)

    def add(first, second):
        return bytes([6, 0]) + encode_natural(272) + encode_operand(2, first) + encode_operand(2, second) + bytes([0])
    # worker 0 sends first; both add worker 0's partial + worker 1's
    assert program.value("worker0").value == send(256) + receive(264) + add(256, 264)
    assert program.value("worker1").value == receive(264) + send(256) + add(264, 256)


# ---- Platform.Linux.Nvidia.Compatibility, Platform.RunPod.Nvidia.SM86 ----

def test_card_admission(probe):
    kernels = ("(constructor NvidiaDeviceRegions NvidiaDeviceRegionsNext "
               "(constructor NvidiaDeviceRegion NvidiaDeviceRegionValue b\"k\" b\"\" {registers} 256 {shared}) "
               "(constructor NvidiaDeviceRegions NvidiaDeviceRegionsEnd))")
    layout = ("(constructor NvidiaPlanHostLayout NvidiaPlanHostLayoutValue b b b b b b (constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersEnd) "
              "{abi} (constructor NvidiaPlanHostLifecycle NvidiaPlanHostUVM 0 4096) b\"\" 0)")
    text = ("import Platform.Linux.Nvidia.Compatibility\nimport Platform.Linux.Nvidia.PlanHost\n"
            "import Hardware.Nvidia.SM86.Command.WholeProgramPlan\nimport Platform.RunPod.Nvidia.SM86\n\n"
            "def b : (family NvidiaPlanHostBuffer) = (constructor NvidiaPlanHostBuffer NvidiaPlanHostBufferValue b\"\" 0 0 0 "
            "(constructor NvidiaPlanHostMemory NvidiaPlanHostSystemMemory))\n"
            "def demands = (lambda unrestricted code : Nat . (lambda unrestricted registers : Nat . (lambda unrestricted video : Nat .\n"
            "  (lambda unrestricted layout : (family NvidiaPlanHostLayout) .\n"
            "  (nvidiaCardAdmits nvidiaCardRTXA5000 (nvidiaPlanDemands (nvidiaInstructionSetOf code) "
            + kernels.format(registers="registers", shared=49152)
            + " video (nvidiaHostDemands layout nvidiaNoDemands)))))))\n"
            f"def ampere : (family NvidiaPlanHostLayout) = {layout.format(abi='nvidiaPlanHostAmpere580')}\n"
            f"def blackwell : (family NvidiaPlanHostLayout) = {layout.format(abi='nvidiaPlanHostBlackwell580')}\n"
            "def fits : Nat = (demands 0x86 128 1000 ampere)\n"
            "def hopperCode : Nat = (demands 0x90 128 1000 ampere)\n"
            "def tooManyRegisters : Nat = (demands 0x86 256 1000 ampere)\n"
            "def tooMuchVideo : Nat = (demands 0x86 128 25769803777 ampere)\n"
            "def otherABI : Nat = (demands 0x86 128 1000 blackwell)\n"
            "def other : Nat = (nvidiaInstructionSetCode (nvidiaInstructionSetOf 0x75))\n"
            "def a5000 : Nat = (runPodSM86Admits runPodRTXA5000 (nat-multiply 24 runPodGiB))\n"
            "def a4000 : Nat = (runPodSM86Admits runPodRTXA4000 (nat-multiply 24 runPodGiB))\n")
    program = probe(text)
    program.check()
    got = {n: program.value(n).value for n in ("fits", "hopperCode", "tooManyRegisters", "tooMuchVideo", "otherABI",
                                               "other", "a5000", "a4000")}
    assert got == {"fits": 1, "hopperCode": 0, "tooManyRegisters": 0, "tooMuchVideo": 0, "otherABI": 0,
                   "other": 0x75, "a5000": 1, "a4000": 0}


# ---- the Linux program plan: issue, readback, linear step ----

LAYOUT = """
def buffer = (lambda unrestricted host : Nat . (constructor NvidiaPlanHostBuffer NvidiaPlanHostBufferValue b"x" 0 host 4096
  (constructor NvidiaPlanHostMemory NvidiaPlanHostVideoMemory)))
def layout : (family NvidiaPlanHostLayout) = (constructor NvidiaPlanHostLayout NvidiaPlanHostLayoutValue
  (buffer 0x10000) (buffer 0x20000) (buffer 0x30000) (buffer 0x40000) (buffer 0x50000) (buffer 0x60000)
  (constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersEnd) nvidiaPlanHostAmpere580
  (constructor NvidiaPlanHostLifecycle NvidiaPlanHostResourceManager) b"" 0)
def images = (lambda unrestricted kind : (family NvidiaWholeProgramComponent) .
  (eliminate NvidiaWholeProgramComponent (lambda unrestricted current : (family NvidiaWholeProgramComponent) . Bytes) kind
    (branch NvidiaWholeProgramProgramTable . b"P") (branch NvidiaWholeProgramQMDTable . b"Q")
    (branch NvidiaWholeProgramPushbuffer . b"U")
    (branch NvidiaWholeProgramGPFIFO . (bytes-append (bytes-from-nat-le 0x1111 8) (bytes-from-nat-le 0x2222 8)))))
"""


def test_issue_and_readback_commands(probe):
    program = probe("import Platform.Linux.Nvidia.PlanHost\nimport Platform.Linux.Nvidia.ProgramPlan\n"
                    "import Platform.Linux.Nvidia.ProgramReadback\nimport Runtime.NativePhysicalProgram\n"
                    "import Hardware.Nvidia.SM86.Command.WholeProgramPlan\n" + LAYOUT +
                    "def issue : Bytes = (nativePhysicalCommandsBytes (nvidiaProgramIssue layout images 512 1 phEnd))\n"
                    "def readback : Bytes = (nativePhysicalCommandsBytes (nvidiaProgramReadback 4 (prSemaphoreHost layout) 0x70000 64 3 512 phEnd))\n"
                    "def ringEntries : Nat = nvidiaLayoutRingEntries\n"
                    "def put : Nat = nvidiaPlanHostUSERDGPPutOffset\n"
                    "def wait : Nat = phWaitMilliseconds\n"
                    "def submissions : Nat = (nvidiaProgramSubmissions images)\n")
    program.check()
    ring_entries, put, wait = (program.value(n).value for n in ("ringEntries", "put", "wait"))
    # submission 1's ring entry (the GPFIFO image's second word) into the ring at the channel
    # buffer, GPPut in the USERD alias (6th buffer), the semaphores (3rd buffer), counter 512
    assert program.value("issue").value == (bytes([24]) + encode_natural(0x10000) + encode_natural(ring_entries)
                                            + encode_natural(0x60000 + put) + encode_operand(0, 0x2222)
                                            + encode_natural(0x30000) + encode_natural(512) + bytes([0]))
    assert program.value("readback").value == (bytes([11]) + encode_natural(0x30000) + encode_operand(2, 512)
                                               + encode_natural(3 * wait)
                                               + bytes([25]) + encode_natural(4) + encode_natural(0x70000)
                                               + encode_natural(64) + bytes([0]))
    assert program.value("submissions").value == 2


def test_linear_step_evaluation_commands(probe):
    program = probe("import Platform.Linux.Nvidia.PlanHost\nimport Platform.Linux.Nvidia.ProgramPlan\n"
                    "import Platform.Linux.Nvidia.LinearStep\nimport Runtime.NativePhysicalProgram\n"
                    "import Hardware.Nvidia.SM86.Command.WholeProgramPlan\n" + LAYOUT +
                    "def evaluate : Bytes = (nativePhysicalCommandsBytes (nlsEvaluateScalar b\"eval\" layout 0x2222 0x70000 8 16 32 512 520\n"
                    "  (constructor NvidiaLinearScalarInput NvidiaLinearScalarBinary64 (phWord 600))\n"
                    "  (constructor NvidiaLinearScalarInput NvidiaLinearScalarNatural 2)\n"
                    "  (constructor NvidiaLinearScalarInput NvidiaLinearScalarNatural 0)\n"
                    "  (constructor NvidiaLinearScalarResult NvidiaLinearScalarGradient) 608 phEnd))\n"
                    "def ringEntries : Nat = nvidiaLayoutRingEntries\n"
                    "def put : Nat = nvidiaPlanHostUSERDGPPutOffset\n"
                    "def recipes : Bytes = (nlsWithProgramRecipes images (lambda unrestricted p : Bytes . (lambda unrestricted q : Bytes .\n"
                    "  (lambda unrestricted u : Bytes . (lambda unrestricted r : Bytes . (bytes-append p (bytes-append q (bytes-append u r))))))))\n")
    program.check()
    ring_entries, put = program.value("ringEntries").value, program.value("put").value

    def copy_to_mapped(address):
        return bytes([8]) + encode_natural(520) + encode_natural(address) + encode_natural(8)

    def natural(n, address):
        return bytes([7, 0]) + encode_natural(520) + encode_operand(0, n) + copy_to_mapped(address)
    expected = (bytes([22]) + encode_natural(3) + encode_bytes(b"eval")
                + bytes([4]) + encode_natural(520) + encode_operand(2, 600) + copy_to_mapped(0x70000)   # the weight at +0
                + natural(2, 0x70000 + 8) + natural(0, 0x70000 + 16)                                   # input, target
                + bytes([24]) + encode_natural(0x10000) + encode_natural(ring_entries) + encode_natural(0x60000 + put)
                + encode_operand(0, 0x2222) + encode_natural(0x30000) + encode_natural(512)
                + bytes([9]) + encode_natural(0x70000 + 32 + 16) + encode_natural(608) + encode_natural(8)  # the gradient
                + bytes([0]))
    assert program.value("evaluate").value == expected
    assert program.value("recipes").value == b"PQU" + struct.pack("<QQ", 0x1111, 0x2222)


def test_session_prelude_maps_and_loads(probe):
    program = probe("import Platform.Linux.Nvidia.PlanHost\nimport Platform.Linux.Nvidia.LinearStep\n"
                    "import Platform.Linux.Nvidia.DeviceBinding\nimport Platform.Linux.Nvidia.ResourcePlan\n"
                    "import Runtime.NativeLaunchRecipeLoad\nimport Runtime.NativePhysicalEmbeddedArtifact\n"
                    "import Runtime.NativePhysicalProgram\nimport Hardware.Nvidia.SM86.Command.WholeProgramPlan\n" + LAYOUT +
                    "def recipes : (family NativeLaunchRecipes) = (constructor NativeLaunchRecipes NativeLaunchRecipeLoadNext 0x40000\n"
                    "  (constructor NativePhysicalEmbeddedComponentKind NativePhysicalEmbeddedProgramTable)\n"
                    "  (constructor NativeLaunchRecipes NativeLaunchRecipeLoadNext 0x10000\n"
                    "    (constructor NativePhysicalEmbeddedComponentKind NativePhysicalEmbeddedGPFIFO)\n"
                    "    (constructor NativeLaunchRecipes NativeLaunchRecipeLoadNext 0x20000\n"
                    "      (constructor NativePhysicalEmbeddedComponentKind NativePhysicalEmbeddedHostELF)\n"
                    "      (constructor NativeLaunchRecipes NativeLaunchRecipeLoadEnd))))\n"
                    "def prelude : (family NativePhysicalCommands) = (nlsSessionPrelude (lambda unrestricted kind : (family NativePhysicalEmbeddedComponentKind) . b\"host\")\n"
                    "  b\"session\" (constructor NvidiaDeviceBinding NvidiaDeviceBindingValue b\"0123456789abcdef\" 0 b\"\") layout recipes\n"
                    "  b\"PROGRAM\" b\"QMD\" b\"PUSH\" b\"RING\" phHalt)\n"
                    "def bytes : Bytes = (nativePhysicalCommandsBytes prelude)\n"
                    "def count : Nat = (nativePhysicalCommandCount prelude)\n"
                    "def admitted : Nat = (nvidiaResourceAdmitsLayout nvidiaResourceAmpere layout)\n")
    program.check()
    maps = b"".join(bytes([17]) + encode_bytes(b"x") + encode_natural(0) + encode_natural(host) + encode_natural(4096)
                    + encode_natural(1) for host in (0x10000, 0x20000, 0x30000, 0x40000, 0x50000, 0x60000))
    expected = (bytes([22]) + encode_natural(1) + encode_bytes(b"host") + bytes([22]) + encode_natural(1) + encode_bytes(b"session")
                + bytes([16]) + encode_bytes(b"0123456789abcdef") + maps
                + bytes([18]) + encode_natural(0x40000) + encode_bytes(b"PROGRAM")
                + bytes([18]) + encode_natural(0x10000) + encode_bytes(b"RING") + bytes([1]))
    assert program.value("bytes").value == expected
    assert program.value("count").value == 2 + 1 + 6 + 2 + 1
    assert program.value("admitted").value == 1


def test_the_elf_writers_fail_loudly_without_a_backend(probe):
    from bobc.errors import BobcError
    program = probe("import Runtime.NativePhysicalNativeELF\nimport Runtime.NativePhysicalProgram\n\n"
                    "def elf : Bytes = (nativePhysicalNativeELF (constructor NativePhysicalProgram NativePhysicalProgramValue b\"\" 0 0 phHalt))\n")
    program.check()
    with pytest.raises(BobcError) as caught:
        program.value("elf")
    assert "NativePhysicalProgram" in caught.value.render()
    layout_program = probe("import Platform.Linux.Nvidia.PlanHost\nimport Platform.Linux.Nvidia.ResourcePlan\n"
                           "import Runtime.NativePhysicalProgram\nimport Hardware.Nvidia.SM86.Command.WholeProgramPlan\n" + LAYOUT +
                           "def elf : Bytes = (nvidiaResourceELF nvidiaResourceAmpere layout "
                           "(constructor NativePhysicalProgram NativePhysicalProgramValue b\"\" 0 0 phHalt))\n")
    layout_program.check()
    with pytest.raises(BobcError) as caught:
        layout_program.value("elf")
    assert "NvidiaResourceHost" in caught.value.render()


def test_region_frames_place_regions_on_word_boundaries(probe):
    program = probe("import Compiler.Planning.RegionFrame\n\n"
                    "def a : Nat = (regionFrameAfter 0 5)\ndef b : Nat = (regionFrameAfter 5 8)\n"
                    "def c : Nat = (regionFramePlace 16)\ndef d : Nat = (frameAlign 0)\n")
    # 0 + 5 -> 8; 5 -> 8, + 8 -> 16; boundaries stay put
    assert [program.value(n).value for n in "abcd"] == [8, 16, 16, 0]
