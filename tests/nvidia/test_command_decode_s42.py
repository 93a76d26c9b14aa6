"""The pushbuffer and GPFIFO decoders (compiler/bobc/nvidia/pushbuffer.py decode, gpfifo.py
decode_entry: what `bobc dump` and `bobc diff` show) on hand-made bytes, at the cases session 42's mutation testing
(notes/s42/probe-mutants7.md) found no test held: the images bobc writes use subchannels 0 and 1
only and SET_OBJECT without ENGINE bits, and no test read a decoded SEND_PCAS_A's or a reduction
SEM_EXECUTE's meaning.

From open-gpu-doc classes/host/clc56f.h: NVC56F_DMA_METHOD_SUBCHANNEL 15:13 (0..7);
NVC56F_SET_OBJECT_NVCLASS 15:0 and ENGINE 20:16 (the class is the low 16 bits);
SEM_EXECUTE OPERATION 2:0 (REDUCTION 6, RELEASE 1).  From clc7c0.h / clcbc0.h: SEND_PCAS_A
QMD_ADDRESS_SHIFTED8 31:0 (the QMD's address >> 8)."""
from __future__ import annotations

import pytest

from bobc.nvidia import pushbuffer as pb
from bobc.nvidia.classes import CLASS_IDS


@pytest.mark.parametrize("subchannel", range(8))
def test_every_subchannel_is_read_from_bits_15_to_13(subchannel):
    raw = pb.Pushbuffer().inc(subchannel, 0x5C, 0x1234).to_bytes()
    (method,) = pb.decode(raw)
    assert (method.subchannel, method.name, method.data) == (subchannel, "SEM_ADDR_LO", 0x1234)


def test_set_object_binds_the_class_in_its_low_16_bits_whatever_the_engine_field():
    # ENGINE 20:16 = 1 beside AMPERE_COMPUTE_B: subchannel 5 is then the compute class's
    data = (1 << 16) | CLASS_IDS["AMPERE_COMPUTE_B"]
    raw = pb.Pushbuffer().inc(5, 0x0, data).inc(5, 0x2B4, 0x10_1000).to_bytes()
    methods = pb.decode(raw)
    assert [(m.subchannel, m.name) for m in methods] == [(5, "SET_OBJECT"), (5, "SEND_PCAS_A")]


def test_send_pcas_a_shows_the_qmd_address():
    raw = pb.Pushbuffer().inc(1, 0x0, CLASS_IDS["HOPPER_COMPUTE_A"]).inc(1, 0x2B4, 0x10_1000_02).to_bytes()
    assert pb.decode(raw)[1].meaning == "QMD at 0x1010000200"


@pytest.mark.parametrize("data, operation", [
    (0xA9100006, "REDUCTION"),           # encode.SEMAPHORE_COUNT's dword, by hand: 6 | WFI | 64BIT | IADD | UNSIGNED
    (0x03100001, "RELEASE"),             # encode.SEMAPHORE_EXECUTE's: 1 | WFI | 64BIT | TIMESTAMP
    (0x00000005, "ACQ_NOR"),
    (0x00000007, "OPERATION_7"),         # no operation 7 in clc56f.h
])
def test_sem_execute_names_its_operation_from_bits_2_to_0(data, operation):
    (method,) = pb.decode(pb.Pushbuffer().inc(0, 0x6C, data).to_bytes())
    assert method.meaning.split("|")[0] == operation


@pytest.mark.parametrize("size", [0, 4, 7, 9])
def test_a_gpfifo_entry_is_exactly_8_bytes(size):
    # NV_GP_ENTRY is two dwords (clc56f.h NVC56F_GP_ENTRY0 / ENTRY1): a shorter slice is no entry
    # with a zero second dword, a longer one no entry with bytes ignored
    from bobc.errors import BobcError
    from bobc.nvidia import gpfifo

    with pytest.raises(BobcError, match=f"a GPFIFO entry is 8 bytes, not {size}"):
        gpfifo.decode_entry(bytes(size))
