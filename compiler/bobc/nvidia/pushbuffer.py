"""Pushbuffer methods: headers, the method tables we use, a writer and a decoder.

A pushbuffer is a stream of 32-bit little-endian dwords: a method header
then its data.  Header fields (SDK class/clc56f.h, facts doc section 4):
ADDRESS 11:0 = method offset >> 2, SUBCHANNEL 15:13, COUNT 28:16 (or the
immediate data for IMMD), SEC_OP 31:29.

Methods below 0x100 are the host's (the channel class, clc56f.h/clc86f.h),
whatever subchannel carries them; methods from 0x100 up go to the class bound
to the subchannel by SET_OBJECT.  The compute offsets we use are the same in
AMPERE_COMPUTE_B (clc7c0.h) and HOPPER_COMPUTE_A (clcbc0.h); one field's width is
not (UPPER_FIELD_BITS).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ..errors import BobcError
from ..targets import TARGETS
from .classes import CLASS_IDS, class_name


class SecOp(IntEnum):
    """How the dwords after a header are consumed (header bits 31:29)."""

    GRP0_USE_TERT = 0
    INC_METHOD = 1        # data i goes to method + 4i
    GRP2_USE_TERT = 2
    NON_INC_METHOD = 3    # every data dword to the same method
    IMMD_DATA_METHOD = 4  # no data dwords: a 13-bit value in the COUNT field
    ONE_INC = 5           # first dword to method, the rest to method + 4
    RESERVED6 = 6
    END_PB_SEGMENT = 7


# Host (channel class) methods: offset -> name.  clc56f.h; Hopper (clc86f.h)
# keeps the offsets and widens SEM_ADDR_HI to 24:0.
HOST_METHODS: dict[int, str] = {
    0x0000: "SET_OBJECT",
    0x0020: "NON_STALL_INTERRUPT",
    0x005C: "SEM_ADDR_LO",
    0x0060: "SEM_ADDR_HI",
    0x0064: "SEM_PAYLOAD_LO",
    0x0068: "SEM_PAYLOAD_HI",
    0x006C: "SEM_EXECUTE",
}
HOST = {name: offset for offset, name in HOST_METHODS.items()}

# Method header fields (clc56f.h NVC56F_DMA_*): name -> (high, low); every bit of the header.
# Bit 12 belongs to no field of today's header (the old 12:2 method address): bobc writes 0.
HEADER_FIELDS: dict[str, tuple[int, int]] = {
    "ADDRESS": (11, 0),
    "BIT12": (12, 12),
    "SUBCHANNEL": (15, 13),
    "COUNT": (28, 16),          # the immediate data for IMMD_DATA_METHOD
    "SEC_OP": (31, 29),
}

# SEM_EXECUTE fields (clc56f.h): OPERATION 2:0, RELEASE_WFI 20,
# PAYLOAD_SIZE 24 (1 = 64-bit), RELEASE_TIMESTAMP 25, REDUCTION 30:27, REDUCTION_FORMAT 31.
SEM_EXECUTE_OPERATION = {0: "ACQUIRE", 1: "RELEASE", 2: "ACQ_STRICT_GEQ", 3: "ACQ_CIRC_GEQ",
                         4: "ACQ_AND", 5: "ACQ_NOR", 6: "REDUCTION"}
SEM_EXECUTE_RELEASE = 1
SEM_EXECUTE_RELEASE_WFI = 1 << 20
SEM_EXECUTE_PAYLOAD_SIZE_64BIT = 1 << 24
SEM_EXECUTE_RELEASE_TIMESTAMP = 1 << 25
# OPERATION REDUCTION (6) applies REDUCTION (bits 30:27) to the semaphore with the payload read as
# REDUCTION_FORMAT (bit 31): clc56f.h NVC56F_SEM_EXECUTE_REDUCTION_* (IMIN 0 .. DEC 7; SIGNED 0,
# UNSIGNED 1).  bobc's counting release is IADD UNSIGNED (encode.SEMAPHORE_COUNT).
SEM_EXECUTE_REDUCTION = 6
SEM_EXECUTE_REDUCTION_SHIFT = 27
SEM_EXECUTE_REDUCTIONS = {0: "IMIN", 1: "IMAX", 2: "IXOR", 3: "IAND", 4: "IOR", 5: "IADD", 6: "INC", 7: "DEC"}
SEM_EXECUTE_REDUCTION_FORMAT_BIT = 31
SEM_EXECUTE_REDUCTION_FORMATS = {0: "SIGNED", 1: "UNSIGNED"}
SEM_EXECUTE_REDUCTION_IADD = 5 << SEM_EXECUTE_REDUCTION_SHIFT
SEM_EXECUTE_REDUCTION_UNSIGNED = 1 << SEM_EXECUTE_REDUCTION_FORMAT_BIT

# Compute class methods: offset -> name (clc7c0.h, clcbc0.h).
COMPUTE_METHODS: dict[int, str] = {
    0x0100: "NO_OPERATION",
    0x0110: "WAIT_FOR_IDLE",
    0x021C: "INVALIDATE_SHADER_CACHES",
    0x02A0: "SET_SHADER_SHARED_MEMORY_WINDOW_A",   # BASE_ADDRESS_UPPER 16:0
    0x02A4: "SET_SHADER_SHARED_MEMORY_WINDOW_B",   # BASE_ADDRESS 31:0
    0x02B4: "SEND_PCAS_A",                         # QMD_ADDRESS_SHIFTED8 31:0
    0x02B8: "SEND_PCAS_B",
    0x02BC: "SEND_SIGNALING_PCAS_B",
    0x02C0: "SEND_SIGNALING_PCAS2_B",              # PCAS_ACTION 3:0
    0x02E4: "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A",  # SIZE_UPPER 7:0
    0x02E8: "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B",  # SIZE_LOWER 31:0
    0x02EC: "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C",  # MAX_SM_COUNT 8:0 ...
    0x0310: "SET_SPA_VERSION",
    0x0790: "SET_SHADER_LOCAL_MEMORY_A",           # ADDRESS_UPPER 16:0 (clc7c0.h), 24:0 (clcbc0.h)
    0x0794: "SET_SHADER_LOCAL_MEMORY_B",           # ADDRESS_LOWER 31:0
    0x07B0: "SET_SHADER_LOCAL_MEMORY_WINDOW_A",    # BASE_ADDRESS_UPPER 16:0
    0x07B4: "SET_SHADER_LOCAL_MEMORY_WINDOW_B",    # BASE_ADDRESS 31:0
    0x1698: "INVALIDATE_SHADER_CACHES_NO_WFI",
}
COMPUTE = {name: offset for offset, name in COMPUTE_METHODS.items()}
# Address fields whose width differs between the compute classes: (method, class) -> bits.
# SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER is 16:0 in AMPERE_COMPUTE_B (open-gpu-doc clc7c0.h)
# and 24:0 in HOPPER_COMPUTE_A (clcbc0.h).
UPPER_FIELD_BITS: dict[tuple[str, int], int] = {
    ("SET_SHADER_LOCAL_MEMORY_A", CLASS_IDS["AMPERE_COMPUTE_B"]): 17,
    ("SET_SHADER_LOCAL_MEMORY_A", CLASS_IDS["HOPPER_COMPUTE_A"]): 25,
}


def upper_field(method: str, compute_class: int, value: int, what: str) -> int:
    """`value` for `method`'s upper-address field in `compute_class`, refused where it does not
    fit that class's width (UPPER_FIELD_BITS; the hardware would drop its high bits)."""
    bits = UPPER_FIELD_BITS[(method, compute_class)]
    if not 0 <= value < 1 << bits:
        raise BobcError(f"{what}: {method}'s address bits 32 and up are {value:#x}, but {class_name(compute_class)} "
                        f"takes {bits} bits ({bits - 1}:0) there",
                        hint=f"place it below 2^{32 + bits}")
    return value

# SEND_SIGNALING_PCAS2_B PCAS_ACTION values (clc7c0.h / clcbc0.h).
PCAS_ACTIONS = {0: "NOP", 1: "INVALIDATE", 2: "SCHEDULE", 3: "INVALIDATE_COPY_SCHEDULE",
                6: "INCREMENT_PUT", 7: "DECREMENT_DEPENDENCE", 8: "PREFETCH",
                9: "PREFETCH_SCHEDULE", 10: "INVALIDATE_PREFETCH_COPY_SCHEDULE",
                11: "INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING",
                12: "INCREMENT_DEPENDENCE", 13: "INCREMENT_CWD_REF_COUNTER"}
PCAS_ACTION = {name: value for value, name in PCAS_ACTIONS.items()}

# INVALIDATE_SHADER_CACHES_NO_WFI bits.
INVALIDATE_INSTRUCTION = 1 << 0
INVALIDATE_GLOBAL_DATA = 1 << 4
INVALIDATE_CONSTANT = 1 << 12

CLASS_TABLES = {"compute": COMPUTE_METHODS}
# every target's compute class (bobc.targets), and GA100's, which no target of ours has but a
# pushbuffer may name
COMPUTE_CLASSES = frozenset({t.compute_class for t in TARGETS.values()} | {CLASS_IDS["AMPERE_COMPUTE_A"]})


def header(sec_op: SecOp, subchannel: int, method: int, count: int) -> int:
    """One method header dword; `count` is the immediate data for IMMD."""
    if method & 3 or not 0 <= method >> 2 < 1 << 12:
        raise BobcError(f"method offset {method:#x} is not a dword offset below 0x4000")
    if not 0 <= subchannel < 8:
        raise BobcError(f"subchannel {subchannel} is not 0..7")
    if not 0 <= count < 1 << 13:
        raise BobcError(f"method {method:#x}: count/immediate {count:#x} does not fit 13 bits")
    return (int(sec_op) << 29) | (count << 16) | (subchannel << 13) | (method >> 2)


class Pushbuffer:
    """A pushbuffer being written, as dwords."""

    def __init__(self) -> None:
        self.dwords: list[int] = []

    def __len__(self) -> int:
        return len(self.dwords)

    def _data(self, values) -> None:
        for value in values:
            value = int(value)
            if not 0 <= value < 1 << 32:
                raise BobcError(f"pushbuffer data {value:#x} is not a 32-bit value")
            self.dwords.append(value)

    def inc(self, subchannel: int, method: int, *data: int) -> "Pushbuffer":
        self.dwords.append(header(SecOp.INC_METHOD, subchannel, method, len(data)))
        self._data(data)
        return self

    def non_inc(self, subchannel: int, method: int, *data: int) -> "Pushbuffer":
        self.dwords.append(header(SecOp.NON_INC_METHOD, subchannel, method, len(data)))
        self._data(data)
        return self

    def one_inc(self, subchannel: int, method: int, *data: int) -> "Pushbuffer":
        self.dwords.append(header(SecOp.ONE_INC, subchannel, method, len(data)))
        self._data(data)
        return self

    def immd(self, subchannel: int, method: int, value: int) -> "Pushbuffer":
        self.dwords.append(header(SecOp.IMMD_DATA_METHOD, subchannel, method, value))
        return self

    def to_bytes(self) -> bytes:
        return b"".join(d.to_bytes(4, "little") for d in self.dwords)


@dataclass(frozen=True)
class Method:
    """One method write as the hardware sees it: where, to what, which data."""

    offset: int          # byte offset of the header in the decoded stream
    subchannel: int
    sec_op: str
    method: int          # byte offset of the method
    name: str
    data: int
    meaning: str         # the data's fields spelled out, or ''

    def describe(self) -> str:
        text = f"subch {self.subchannel} {self.name} = {self.data:#010x}"
        return f"{text} ({self.meaning})" if self.meaning else text


def _meaning(name: str, data: int) -> str:
    if name == "SET_OBJECT":
        return class_name(data & 0xFFFF)
    if name == "SEM_EXECUTE":
        parts = [SEM_EXECUTE_OPERATION.get(data & 7, f"OPERATION_{data & 7}")]
        if data & 7 == SEM_EXECUTE_REDUCTION:       # which reduction, on which format: IADD is not IMIN
            reduction = data >> SEM_EXECUTE_REDUCTION_SHIFT & 0xF
            parts.append("REDUCTION_" + SEM_EXECUTE_REDUCTIONS.get(reduction, str(reduction)))
            parts.append("REDUCTION_FORMAT_" + SEM_EXECUTE_REDUCTION_FORMATS[data >> SEM_EXECUTE_REDUCTION_FORMAT_BIT & 1])
        if data & SEM_EXECUTE_RELEASE_WFI:
            parts.append("RELEASE_WFI")
        parts.append("PAYLOAD_SIZE_64BIT" if data & SEM_EXECUTE_PAYLOAD_SIZE_64BIT else "PAYLOAD_SIZE_32BIT")
        if data & SEM_EXECUTE_RELEASE_TIMESTAMP:
            parts.append("RELEASE_TIMESTAMP")
        return "|".join(parts)
    if name == "SEND_SIGNALING_PCAS2_B":
        return PCAS_ACTIONS.get(data & 0xF, f"ACTION_{data & 0xF}")
    if name == "SEND_PCAS_A":
        return f"QMD at {data << 8:#x}"
    if name in ("INVALIDATE_SHADER_CACHES_NO_WFI", "INVALIDATE_SHADER_CACHES"):
        bits = [n for n, b in (("INSTRUCTION", INVALIDATE_INSTRUCTION), ("GLOBAL_DATA", INVALIDATE_GLOBAL_DATA),
                               ("CONSTANT", INVALIDATE_CONSTANT)) if data & b]
        return "|".join(bits)
    return ""


def method_name(method: int, subchannel: int, bindings: dict[int, str]) -> str:
    if method < 0x100:
        return HOST_METHODS.get(method, f"HOST_{method:#05x}")
    table = CLASS_TABLES.get(bindings.get(subchannel, ""), {})
    return table.get(method, f"METHOD_{method:#06x}")


def decode(raw: bytes, bindings: dict[int, str] | None = None, compute_classes: frozenset[int] = COMPUTE_CLASSES,
           base: int = 0) -> list[Method]:
    """Every method write in `raw`, named.

    `bindings` maps a subchannel to a class table name ("compute") and is
    updated by SET_OBJECT writes (pass the dict along when decoding a stream
    in segments); a SET_OBJECT whose class is in `compute_classes` binds the
    compute table.  `base` is added to the reported offsets.
    """
    if len(raw) % 4:
        raise BobcError(f"a pushbuffer is whole dwords; this one has {len(raw)} bytes")
    bindings = {} if bindings is None else bindings
    dwords = [int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw), 4)]
    out: list[Method] = []
    i = 0
    while i < len(dwords):
        head = dwords[i]
        sec_op = head >> 29
        count = (head >> 16) & 0x1FFF
        subchannel = (head >> 13) & 7
        method = (head & 0xFFF) << 2
        at = base + 4 * i
        if sec_op == SecOp.IMMD_DATA_METHOD:
            writes = [(method, count)]
            i += 1
        elif sec_op in (SecOp.INC_METHOD, SecOp.NON_INC_METHOD, SecOp.ONE_INC):
            data = dwords[i + 1:i + 1 + count]
            if len(data) < count:
                raise BobcError(f"pushbuffer header at byte {at:#x} wants {count} data dwords; only {len(data)} follow")
            if sec_op == SecOp.INC_METHOD:
                writes = [(method + 4 * k, d) for k, d in enumerate(data)]
            elif sec_op == SecOp.NON_INC_METHOD:
                writes = [(method, d) for d in data]
            else:
                writes = [(method + (4 if k else 0), d) for k, d in enumerate(data)]
            i += 1 + count
        else:
            raise BobcError(f"pushbuffer header {head:#010x} at byte {at:#x} uses SEC_OP {SecOp(sec_op).name}, "
                            "which bobc does not write")
        for target, data in writes:
            name = method_name(target, subchannel, bindings)
            if name == "SET_OBJECT":
                bindings[subchannel] = "compute" if (data & 0xFFFF) in compute_classes else class_name(data & 0xFFFF)
            out.append(Method(at, subchannel, SecOp(sec_op).name, target, name, data, _meaning(name, data)))
    return out
