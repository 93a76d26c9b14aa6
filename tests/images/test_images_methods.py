"""Method headers and GPFIFO entries, bit by bit against the facts doc (section 4)."""
import pytest

from bobc.errors import BobcError
from bobc.nvidia import gpfifo, pushbuffer as pb


def dwords(raw: bytes) -> list[int]:
    return [int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw), 4)]


def test_each_sec_op_by_hand():
    push = pb.Pushbuffer()
    push.inc(1, 0x2A0, 0x0, 0xFE000000)          # SEC_OP 1, count 2, subch 1, 0x2a0 >> 2 = 0xa8
    push.non_inc(2, 0x1698, 7, 8)                 # SEC_OP 3
    push.immd(1, 0x2C0, 3)                        # SEC_OP 4, data in 28:16
    push.one_inc(0, 0x5C, 1, 2, 3)                # SEC_OP 5
    words = dwords(push.to_bytes())
    assert words == [
        0x2002_20A8, 0x0, 0xFE000000,
        0x6002_45A6, 7, 8,
        0x8003_20B0,
        0xA003_0017, 1, 2, 3,
    ]


def test_decoder_names_methods_per_subchannel_binding():
    push = pb.Pushbuffer()
    push.inc(1, 0x0, 0xCBC0)                      # binds HOPPER_COMPUTE_A to subchannel 1
    push.non_inc(1, 0x2B4, 0x100, 0x101)
    push.one_inc(0, 0x5C, 0x10, 0x2, 0x1)
    push.immd(1, 0x2C0, 9)
    methods = pb.decode(push.to_bytes())
    assert [(m.name, m.data) for m in methods] == [
        ("SET_OBJECT", 0xCBC0), ("SEND_PCAS_A", 0x100), ("SEND_PCAS_A", 0x101),
        ("SEM_ADDR_LO", 0x10), ("SEM_ADDR_HI", 0x2), ("SEM_ADDR_HI", 0x1), ("SEND_SIGNALING_PCAS2_B", 9)]
    assert methods[0].meaning == "HOPPER_COMPUTE_A"
    assert methods[-1].meaning == "PREFETCH_SCHEDULE"
    # unbound subchannel: the offset is still shown
    assert pb.decode(pb.Pushbuffer().inc(3, 0x2B4, 1).to_bytes())[0].name == "METHOD_0x02b4"


def test_a_truncated_method_is_an_error():
    raw = pb.Pushbuffer().inc(1, 0x2B4, 1, 2).to_bytes()[:-4]
    with pytest.raises(BobcError, match="wants 2 data dwords"):
        pb.decode(raw)


def test_immediate_data_is_thirteen_bits():
    with pytest.raises(BobcError, match="13 bits"):
        pb.Pushbuffer().immd(1, 0x2C0, 1 << 13)


def test_gpfifo_entry_bits_by_hand():
    entry = gpfifo.Entry(address=0xAB_1234_5678, length=0x1_2345, sync=True, level=1)
    d0, d1 = dwords(entry.to_bytes())
    assert d0 == 0x1234_5678                       # GET 31:2 keeps the address's low bits
    assert d1 == 0xAB | (1 << 9) | (0x1_2345 << 10) | (1 << 31)
    assert gpfifo.decode_entry(entry.to_bytes()) == entry


def test_gpfifo_refuses_unaligned_or_wide_addresses():
    with pytest.raises(BobcError):
        gpfifo.Entry(0x1002, 4).to_bytes()
    with pytest.raises(BobcError):
        gpfifo.Entry(1 << 40, 4).to_bytes()
