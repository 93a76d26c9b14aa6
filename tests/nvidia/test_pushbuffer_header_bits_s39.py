"""Pushbuffer method headers and the counting semaphore (compiler/bobc/nvidia/pushbuffer.py,
encode.py) against clc56f.h, worked by hand: cases that session 39's mutation testing
(notes/s39/probe-mutants.md) found no test held.

clc56f.h: NVC56F_DMA_METHOD_ADDRESS 11:0 (the method's byte offset / 4, so offsets below 0x4000),
NVC56F_DMA_METHOD_SUBCHANNEL 15:13 (0..7), NVC56F_DMA_METHOD_COUNT 28:16, NVC56F_DMA_SEC_OP 31:29;
SEM_EXECUTE OPERATION 2:0 (REDUCTION 6), RELEASE_WFI 20:20, PAYLOAD_SIZE 24:24 (64BIT 1),
REDUCTION 30:27 (IADD 5), REDUCTION_FORMAT 31:31 (UNSIGNED 1).  Methods below 0x100 are the
channel's; from 0x100 up the bound class's (clc7c0.h NVC7C0_NO_OPERATION is 0x0100)."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.nvidia import encode
from bobc.nvidia import pushbuffer as pb
from bobc.nvidia.classes import CLASS_IDS


def test_an_inc_header_by_hand():
    # INC_METHOD (1) on subchannel 1 to SEND_PCAS_A (0x2B4 -> ADDRESS 0xAD) with 2 data dwords
    assert pb.header(pb.SecOp.INC_METHOD, 1, 0x2B4, 2) == (1 << 29) | (2 << 16) | (1 << 13) | 0xAD
    # the highest of each field: ADDRESS 0xFFF, SUBCHANNEL 7, COUNT 0x1FFF
    assert pb.header(pb.SecOp.NON_INC_METHOD, 7, 0x3FFC, 0x1FFF) == (3 << 29) | (0x1FFF << 16) | (7 << 13) | 0xFFF


@pytest.mark.parametrize("method, subchannel", [
    (0x2B6, 0),          # not a dword offset: ADDRESS holds offset / 4
    (0x4000, 0),         # ADDRESS is 12 bits: 0x4000 / 4 would spill into bit 12
    (0x100, 8),          # SUBCHANNEL is 3 bits: 8 would spill into COUNT
    (0x100, -1),
])
def test_a_header_its_fields_cannot_hold_is_refused(method, subchannel):
    with pytest.raises(BobcError):
        pb.header(pb.SecOp.INC_METHOD, subchannel, method, 1)


@pytest.mark.parametrize("value", [1 << 32, -1])
def test_a_data_dword_that_is_no_32_bit_value_is_refused_by_name(value):
    with pytest.raises(BobcError, match="is not a 32-bit value"):
        pb.Pushbuffer().inc(0, 0x100, value)


def test_a_stream_of_part_of_a_dword_is_refused():
    raw = pb.Pushbuffer().inc(0, 0x100, 7).to_bytes() + b"\x01"
    with pytest.raises(BobcError, match="whole dwords; this one has 9 bytes"):
        pb.decode(raw)


def test_method_0x100_is_the_bound_classs_not_the_channels():
    raw = (pb.Pushbuffer().inc(1, pb.HOST["SET_OBJECT"], CLASS_IDS["AMPERE_COMPUTE_B"])
           .inc(1, 0x100, 0).inc(1, 0xFC, 0).to_bytes())
    names = [m.name for m in pb.decode(raw)]
    assert names == ["SET_OBJECT", "NO_OPERATION", "HOST_0x0fc"]


def test_the_counting_semaphore_is_a_64_bit_unsigned_iadd_reduction_after_idle():
    assert encode.SEMAPHORE_COUNT == 6 | (1 << 20) | (1 << 24) | (5 << 27) | (1 << 31) == 0xA9100006
