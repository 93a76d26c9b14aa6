"""Edges of the standard library that the probe of session 31 found (probe s31 stdlib
findings 3-6): each test states the behaviour the module's comment promises."""
from __future__ import annotations



def values(program, *names):
    return [program.value(name).value for name in names]


# ---- finding 4: Std.Numeric.Profile's identity is injective in the version ----

VERSIONS = [0, 1, 9, 10, 99, 100, 10 ** 39 - 1, 10 ** 39, 10 ** 40 - 1, 10 ** 40, 10 ** 40 + 1,
            10 ** 45, 2 * 10 ** 45, 2 ** 64 - 1, 2 ** 64, 2 ** 200, 10 ** 100]


def test_profile_identity_prints_every_digit_of_the_version(probe):
    text = "import Std.Numeric.Profile\n\n"
    for i, version in enumerate(VERSIONS):
        text += (f"def id{i} : Bytes = (stdNumericProfileIdentity (constructor StdNumericProfile StdNumericProfileValue "
                 f"(constructor StdNumericFormat StdNumericBinary16) (constructor StdNumericFormat StdNumericBinary16) {version}))\n"
                 f"def digits{i} : Nat = (stdNumericDecimalDigits {version})\n")
    program = probe(text)
    identities = values(program, *(f"id{i}" for i in range(len(VERSIONS))))
    assert identities == [b"f16-products-f16-accumulation-v%d" % version for version in VERSIONS]
    assert len(set(identities)) == len(VERSIONS)
    assert values(program, *(f"digits{i}" for i in range(len(VERSIONS)))) == [len(str(v)) for v in VERSIONS]


# ---- finding 5: an empty range shares no byte; the arena certificates refuse empty residents ----

def python_overlap(a, a_bytes, b, b_bytes):
    """bobc's certifier's overlap (compiler/bobc/certify/residents.py)."""
    return max(a, b) < min(a + a_bytes, b + b_bytes)


RANGES = [(5, 0, 0, 10), (0, 0, 0, 10), (10, 0, 0, 10), (11, 0, 0, 10), (0, 10, 5, 0), (3, 0, 3, 0),
          (0, 10, 10, 5), (0, 10, 9, 5), (9, 5, 0, 10), (0, 10, 0, 10), (2, 3, 0, 10), (0, 1, 1, 1), (1, 1, 0, 1)]


def test_va_disjoint_is_the_certifiers_complement_of_overlap(probe):
    text = "import Compiler.Planning.VA\n\n" + "".join(
        f"def d{i} : Nat = (vaDisjoint {a} {ab} {b} {bb})\n" for i, (a, ab, b, bb) in enumerate(RANGES))
    program = probe(text)
    got = values(program, *(f"d{i}" for i in range(len(RANGES))))
    assert got == [0 if python_overlap(*r) else 1 for r in RANGES]
    assert got[0] == 1          # the probe's case: an empty range inside another shares no byte


def arena_text(residents):
    """ArenaResidents literal of (address, bytes) pairs, alignment 1."""
    text = "(constructor ArenaResidents ArenaResidentsEnd)"
    for i, (address, size) in reversed(list(enumerate(residents))):
        text = (f"(constructor ArenaResidents ArenaResidentsNext (constructor ArenaResident ArenaResidentValue "
                f"b\"r{i}\" {address} {size} 1) {text})")
    return text


ARENAS = [[(0, 8), (8, 8)], [(0, 8), (4, 8)], [(0, 16), (4, 0)], [(0, 8), (8, 0)], [(0, 8), (16, 0)],
          [(4, 0)], [(0, 8), (8, 8), (12, 0)], [(0, 32), (40, 8)], [(0, 8), (0, 8)]]


def test_arena_certificates_agree_with_bobcs_certifier(probe):
    from types import SimpleNamespace

    from bobc.certify.residents import check_residents
    from bobc.plan.model import DeviceArena, Resident

    window = (0, 32)
    schedule = "(constructor NvidiaLaunchSchedule NvidiaLaunchScheduleEmpty)"
    submissions = ("(constructor NvidiaSubmissionSchedule NvidiaSubmissionScheduleOne (constructor NvidiaSubmissionBatch "
                   "NvidiaSubmissionBatchValue b\"s\" 0 (constructor NvidiaLaunchReferences NvidiaLaunchReferencesRange 0 0)))")
    text = "import Runtime.ArenaCertificate\nimport Runtime.DeviceArenaCertificate\nimport Hardware.Nvidia.SM86.Command.WholeProgramPlan\n\n"
    for i, residents in enumerate(ARENAS):
        text += (f"def native{i} : Nat = (arenaCertificate 32 {arena_text(residents)})\n"
                 f"def device{i} : Nat = (deviceArenaHazard {arena_text([window])} {arena_text(residents)} "
                 f"(constructor DeviceArenaPhases DeviceArenaPhasesEnd) {schedule} {submissions})\n"
                 f"def pairs{i} : Nat = (arenaResidentsDisjoint {arena_text(residents)})\n")
    program = probe(text)
    for i, residents in enumerate(ARENAS):
        def resident(k, address, size):
            return Resident(f"r{k}", address, size, 1)
        arena = DeviceArena(windows=(resident(99, *window),),
                            globals=tuple(resident(k, *r) for k, r in enumerate(residents)), phases=())
        findings = check_residents(SimpleNamespace(arena=arena))
        native, device = program.value(f"native{i}").value, program.value(f"device{i}").value
        assert (native == 1) == (device == 0) == (not findings), (residents, native, device, findings)
        if any(size == 0 for _, size in residents):
            assert device == 1 and any(f.kind == "empty" for f in findings), residents
        overlapping = any(python_overlap(*a, *b) for k, a in enumerate(residents) for b in residents[k + 1:])
        assert program.value(f"pairs{i}").value == (0 if overlapping else 1), residents


# ---- finding 3: any nonzero flag reads as true, at the cost of one comparison ----

def test_a_flag_of_any_size_reads_as_true(probe):
    from bobc.language import limits

    big = 2 ** 64
    assert big > limits.ELIMINATION_COUNT
    program = probe("import Std.Natural\n\n"
                    f"def select : Nat = (naturalSelect {big} 7 9)\n"
                    f"def selectZero : Nat = (naturalSelect 0 7 9)\n"
                    f"def both : Nat = (naturalAnd {big} {2 ** 200})\n"
                    f"def bothFail : Nat = (naturalAnd {big} 0)\n"
                    f"def either : Nat = (naturalOr {big} 0)\n"
                    f"def eitherLate : Nat = (naturalOr 0 {big})\n"
                    f"def neither : Nat = (naturalOr 0 0)\n"
                    f"def proved : (equal Nat (naturalSelect 0x100000000 1 0) 1) = (refl Nat 1)\n")
    program.check()
    assert values(program, "select", "selectZero", "both", "bothFail", "either", "eitherLate", "neither") \
        == [7, 9, 1, 0, 1, 1, 0]


# ---- finding 6: what BinaryFloatModel's helpers and dataFloat32DecodeLE compute, as their comments now say ----

def test_round_quotient_rounds_the_quotient_and_scale_shift_is_one_number(probe):
    from fractions import Fraction

    cases = [(7, 2), (5, 2), (3, 2), (10, 4), (11, 4), (1, 3), (2, 3), (0, 5), (2 ** 70 + 1, 2), (99, 10)]
    text = "import BinaryFloatModel\n\n" + "".join(
        f"def q{i} : Nat = (binaryFloatRoundQuotient {a} {b})\n" for i, (a, b) in enumerate(cases))
    patterns = [0x00000000, 0x00000001, 0x007FFFFF, 0x00800000, 0x3F800000, 0x7F7FFFFF]
    text += "".join(f"def s{i} : Nat = (binaryFloatScaleShift 24 8 {p})\n" for i, p in enumerate(patterns))
    program = probe(text)
    # Python's round() of a Fraction rounds to nearest, ties to even
    assert values(program, *(f"q{i}" for i in range(len(cases)))) == [round(Fraction(a, b)) for a, b in cases]
    assert values(program, *(f"s{i}" for i in range(len(patterns)))) == [max(1, (p >> 23) & 0xFF) for p in patterns]


def test_float32_decode_reads_missing_bytes_as_zero(probe):
    import struct

    program = probe("import Data.Float32Bits\n\n"
                    "def empty : Nat = (dataFloat32DecodeLE b\"\")\n"
                    "def short : Nat = (dataFloat32DecodeLE b\"\\x00\\x00\")\n"
                    "def half : Nat = (dataFloat32DecodeLE b\"\\x80\\x3f\")\n"
                    "def one : Nat = (dataFloat32DecodeLE b\"\\x00\\x00\\x80\\x3f\\xff\")\n"
                    "def wide : Bytes = (dataFloat32EncodeLE 0x13f800000)\n")
    assert values(program, "empty", "short", "half", "one") == [0, 0, 0x3F80, struct.unpack("<I", struct.pack("<f", 1.0))[0]]
    assert program.value("wide").value == struct.pack("<f", 1.0)
