"""Library definitions (Std.Natural, Compiler.Planning.VA, Data.Bytes) on hand-derived cases."""
import pytest

from plan_support import call


@pytest.mark.parametrize("width, value, expected", [
    (24, 786432, b"000000000000000000786432"),
    (3, 7, b"007"),
    (3, 12345, b"345"),              # only the low `width` digits
    (1, 0, b"0"),
    (0, 5, b""),
])
def test_decimal_bytes_within(physical, width, value, expected):
    assert call(physical, "Std.Natural.naturalDecimalBytesWithin", width, value) == expected


@pytest.mark.parametrize("address, size, alignment, expected", [
    (0x1100000000, 262144, 4096, 0x1100040000),   # a 256 KiB plane ends on a page
    (0x1100100000, 1564, 4096, 0x1100101000),     # the input record rounds up to the next page
    (4095, 1, 4096, 4096),
    (4096, 1, 4096, 8192),
    (0, 0, 4096, 0),
    (5, 3, 0, 8),                                   # alignment 0: no rounding
    (100, 56, 256, 256),
])
def test_va_place_after(physical, address, size, alignment, expected):
    assert call(physical, "Compiler.Planning.VA.vaPlaceAfter", address, size, alignment) == expected


def test_fnv1a64(physical):
    # FNV-1a 64 of "" is the offset basis; of "a" the published test vector
    assert call(physical, "Data.Bytes.dataBytesFNV1a64", b"") == 0xcbf29ce484222325
    assert call(physical, "Data.Bytes.dataBytesFNV1a64", b"a") == 0xaf63dc4c8601ec8c
    assert call(physical, "Data.Bytes.dataBytesFNV1a64", b"foobar") == 0x85944171f73967e8


def test_read_word64(physical):
    from bobc.language import VBytes
    read = physical.value("Data.Bytes.dataBytesReadWord64LE")
    decoded = physical.apply(read, VBytes(bytes(range(1, 11))))
    assert decoded.constructor == "DataBytesWord64Decoded"
    word = physical.force(decoded.fields[0])
    assert physical.force(word.fields[0]).value == 0x0807060504030201
    assert physical.force(decoded.fields[1]).value == b"\x09\x0a"
    failed = physical.apply(read, VBytes(b"1234567"))
    assert failed.constructor == "DataBytesWord64DecodeFailed"


def test_std_list(host_fake):
    from bobc.language import VNat
    from bobc.language.values import NAT_TYPE
    launches = host_fake.value("bobAdamWLaunches")
    p = host_fake
    assert p.apply(p.value("Std.List.stdListLength"), NAT_TYPE, launches).value == 10
    assert p.apply(p.value("Std.List.stdListAt"), NAT_TYPE, VNat(999), launches, VNat(3)).value == 13
    assert p.apply(p.value("Std.List.stdListAt"), NAT_TYPE, VNat(999), launches, VNat(10)).value == 999
    reversed_ = p.apply(p.value("Std.List.stdListReverse"), NAT_TYPE, launches)
    assert p.apply(p.value("Std.List.stdListAt"), NAT_TYPE, VNat(999), reversed_, VNat(0)).value == 25
    both = p.apply(p.value("Std.List.stdListAppend"), NAT_TYPE, launches, reversed_)
    assert p.apply(p.value("Std.List.stdListLength"), NAT_TYPE, both).value == 20
    assert p.apply(p.value("Std.List.stdListAt"), NAT_TYPE, VNat(999), both, VNat(10)).value == 25


def test_step_submissions_with_repeats(tmp_path):
    """nvidiaPlanHostStepSubmissions: a submit at gpPut 3, stride 2, in a 4-fold repeat reaches 3 + 3*2 = 9."""
    from bobc.language import load_program
    from bobc.targets import SM86
    folder = tmp_path / "Scratch"
    folder.mkdir()
    (folder / "Steps.bob").write_text("""module Scratch.Steps

import Platform.Linux.Nvidia.PlanHost

def end : (family NvidiaPlanHostSteps) = (constructor NvidiaPlanHostSteps NvidiaPlanHostStepsEnd)
def submit = (lambda unrestricted gpPut : Nat . (lambda unrestricted stride : Nat . (lambda unrestricted tail : (family NvidiaPlanHostSteps) .
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit gpPut stride tail))))
def repeated : Nat = (nvidiaPlanHostStepSubmissions
  (submit 2 0 (constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat 4 (submit 3 2 end) (submit 5 0 end))))
def empty : Nat = (nvidiaPlanHostStepSubmissions
  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat 0 (submit 30 2 end) (submit 5 0 end)))
""")
    program = load_program(folder / "Steps.bob", target=SM86)
    assert program.value("repeated").value == 9
    assert program.value("empty").value == 5
