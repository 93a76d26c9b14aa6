"""QMD (queue meta data) layouts as tables of named bit fields, and a codec.

A QMD is a little-endian array of 32-bit words; every field is a bit range
(high, low) counted from bit 0 of word 0, the way NVIDIA's headers write
MW(high:low).  One table per layout version; the Target's `qmd_layout` picks
one, so nothing here knows which GPU it is for.

Sources (positions are facts, written out here by hand):
- V03_00 (Ampere GA10x, AMPERE_COMPUTE_B): open-gpu-doc classes/compute/
  clc7c0qmd.h (the same V03_00 section is repeated in clcbc0qmd.h; not
  clc6c0qmd.h, AMPERE_COMPUTE_A's (GA100), whose V03_00 is an older layout:
  no OCCUPANCY_* fields, a narrower HW_ONLY_DEPENDENCE_COUNTER);
  shared/docs/nvidia-driver-facts.md section 3.
- V04_00 (Hopper, HOPPER_COMPUTE_A): open-gpu-doc classes/compute/
  clcbc0qmd.h; facts doc section 3 and its H200 measurements.
Indexed fields (a constant buffer slot, a release slot) are named NAME(i).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import BobcError

Field = tuple[int, int]          # (high bit, low bit), inclusive


def _indexed(name: str, high: int, low: int, stride: int, count: int) -> dict[str, Field]:
    """NAME(0)..NAME(count-1), slot i at (high + i*stride, low + i*stride)."""
    return {f"{name}({i})": (high + i * stride, low + i * stride) for i in range(count)}


def _release_v03(slot: int, base: int) -> dict[str, Field]:
    """One V03_00 RELEASEn block; RELEASE0 starts at bit 768, RELEASE1 at 896, RELEASE2 at 1664."""
    p = f"RELEASE{slot}_"
    return {
        p + "ADDRESS_LOWER": (base + 31, base),
        p + "ADDRESS_UPPER": (base + 39, base + 32),
        p + "MEMBAR_TYPE": (base + 51, base + 51),
        p + "REDUCTION_OP": (base + 54, base + 52),
        p + "ENABLE": (base + 55, base + 55),
        p + "REDUCTION_FORMAT": (base + 57, base + 56),
        p + "REDUCTION_ENABLE": (base + 58, base + 58),
        p + "TRAP_TYPE": (base + 60, base + 59),
        p + "PAYLOAD64B": (base + 61, base + 61),
        p + "STRUCTURE_SIZE": (base + 63, base + 62),
        p + "PAYLOAD_LOWER": (base + 95, base + 64),
        p + "PAYLOAD_UPPER": (base + 127, base + 96),
    }


V03_00: dict[str, Field] = {
    "OUTER_PUT": (30, 0),
    "OUTER_OVERFLOW": (31, 31),
    "OUTER_GET": (62, 32),
    "OUTER_STICKY_OVERFLOW": (63, 63),
    "INNER_GET": (94, 64),
    "INNER_OVERFLOW": (95, 95),
    "INNER_PUT": (126, 96),
    "INNER_STICKY_OVERFLOW": (127, 127),
    "QMD_GROUP_ID": (133, 128),
    "SM_GLOBAL_CACHING_ENABLE": (134, 134),
    "RUN_CTA_IN_ONE_SM_PARTITION": (135, 135),
    "IS_QUEUE": (136, 136),
    "ADD_TO_HEAD_OF_QMD_GROUP_LINKED_LIST": (137, 137),
    "REQUIRE_SCHEDULING_PCAS": (140, 140),
    "DEPENDENCE_COUNTER": (157, 142),
    "SELF_COPY_ON_COMPLETION": (158, 158),
    "CIRCULAR_QUEUE_SIZE": (184, 160),
    "DEMOTE_L2_EVICT_LAST": (185, 185),
    "INVALIDATE_TEXTURE_HEADER_CACHE": (186, 186),
    "INVALIDATE_TEXTURE_SAMPLER_CACHE": (187, 187),
    "INVALIDATE_TEXTURE_DATA_CACHE": (188, 188),
    "INVALIDATE_SHADER_DATA_CACHE": (189, 189),
    "INVALIDATE_INSTRUCTION_CACHE": (190, 190),
    "INVALIDATE_SHADER_CONSTANT_CACHE": (191, 191),
    "CTA_RASTER_WIDTH_RESUME": (223, 192),
    "CTA_RASTER_HEIGHT_RESUME": (239, 224),
    "CTA_RASTER_DEPTH_RESUME": (255, 240),
    "PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED": (287, 256),
    "CIRCULAR_QUEUE_ADDR_LOWER": (319, 288),
    "CIRCULAR_QUEUE_ADDR_UPPER": (327, 320),
    "CIRCULAR_QUEUE_ENTRY_SIZE": (351, 336),
    "CWD_REFERENCE_COUNT_ID": (357, 352),
    "CWD_REFERENCE_COUNT_DELTA_MINUS_ONE": (365, 358),
    "CWD_REFERENCE_COUNT_INCR_ENABLE": (367, 367),
    "CWD_MEMBAR_TYPE": (369, 368),
    "SEQUENTIALLY_RUN_CTAS": (370, 370),
    "CWD_REFERENCE_COUNT_DECR_ENABLE": (371, 371),
    "API_VISIBLE_CALL_LIMIT": (378, 378),
    "SAMPLER_INDEX": (382, 382),
    "DISABLE_AUTO_INVALIDATE": (383, 383),
    "CTA_RASTER_WIDTH": (415, 384),
    "CTA_RASTER_HEIGHT": (431, 416),
    "CTA_RASTER_DEPTH": (463, 448),
    "DEPENDENT_QMD0_POINTER": (511, 480),
    "DEPENDENT_QMD0_ENABLE": (512, 512),
    "DEPENDENT_QMD0_ACTION": (515, 513),
    "DEPENDENT_QMD0_PREFETCH": (516, 516),
    "DEPENDENT_QMD1_ENABLE": (517, 517),
    "DEPENDENT_QMD1_ACTION": (520, 518),
    "DEPENDENT_QMD1_PREFETCH": (521, 521),
    "COALESCE_WAITING_PERIOD": (529, 522),
    "QUEUE_ENTRIES_PER_CTA_LOG2": (534, 530),
    "OCCUPANCY_THRESHOLD_SHARED_MEM": (542, 535),
    "CTA_LAUNCH_QUEUE": (543, 543),
    "SHARED_MEMORY_SIZE": (561, 544),
    "MIN_SM_CONFIG_SHARED_MEM_SIZE": (567, 562),
    "MAX_SM_CONFIG_SHARED_MEM_SIZE": (574, 569),
    "QMD_VERSION": (579, 576),
    "QMD_MAJOR_VERSION": (583, 580),
    "OCCUPANCY_MAX_SHARED_MEM": (591, 584),
    "CTA_THREAD_DIMENSION0": (607, 592),
    "CTA_THREAD_DIMENSION1": (623, 608),
    "CTA_THREAD_DIMENSION2": (639, 624),
    **_indexed("CONSTANT_BUFFER_VALID", 640, 640, 1, 8),
    "REGISTER_COUNT_V": (656, 648),
    "TARGET_SM_CONFIG_SHARED_MEM_SIZE": (662, 657),
    "SHARED_ALLOCATION_ENABLE": (663, 663),
    "FREE_CTA_SLOTS_EMPTY_SM": (671, 664),
    "SM_DISABLE_MASK_LOWER": (703, 672),
    "SM_DISABLE_MASK_UPPER": (735, 704),
    "SHADER_LOCAL_MEMORY_LOW_SIZE": (759, 736),
    "BARRIER_COUNT": (767, 763),
    **_release_v03(0, 768),
    **_release_v03(1, 896),
    **_indexed("CONSTANT_BUFFER_ADDR_LOWER", 1055, 1024, 64, 8),
    **_indexed("CONSTANT_BUFFER_ADDR_UPPER", 1072, 1056, 64, 8),
    **_indexed("CONSTANT_BUFFER_PREFETCH_POST", 1073, 1073, 64, 8),
    **_indexed("CONSTANT_BUFFER_INVALIDATE", 1074, 1074, 64, 8),
    **_indexed("CONSTANT_BUFFER_SIZE_SHIFTED4", 1087, 1075, 64, 8),
    "PROGRAM_ADDRESS_LOWER": (1567, 1536),
    "PROGRAM_ADDRESS_UPPER": (1584, 1568),
    "SHADER_LOCAL_MEMORY_HIGH_SIZE": (1623, 1600),
    "PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED": (1640, 1632),
    "PROGRAM_PREFETCH_SIZE": (1649, 1641),
    "PROGRAM_PREFETCH_TYPE": (1651, 1650),
    "SASS_VERSION": (1663, 1656),
    **_release_v03(2, 1664),
    "OCCUPANCY_THRESHOLD_WARP": (1799, 1792),
    "OCCUPANCY_MAX_WARP": (1807, 1800),
    "OCCUPANCY_THRESHOLD_REGISTER": (1815, 1808),
    "OCCUPANCY_MAX_REGISTER": (1823, 1816),
    "HW_ONLY_INNER_GET": (1854, 1824),
    "HW_ONLY_REQUIRE_SCHEDULING_PCAS": (1855, 1855),
    "HW_ONLY_INNER_PUT": (1886, 1856),
    "HW_ONLY_SPAN_LIST_HEAD_INDEX": (1917, 1888),
    "HW_ONLY_SPAN_LIST_HEAD_INDEX_VALID": (1919, 1919),
    "HW_ONLY_SKED_NEXT_QMD_POINTER": (1951, 1920),
    "HW_ONLY_DEPENDENCE_COUNTER": (1967, 1952),
    "DEBUG_ID_UPPER": (2015, 1984),
    "DEBUG_ID_LOWER": (2047, 2016),
}


def _release_v04(slot: int) -> dict[str, Field]:
    """V04_00 release control slot i: 16 bits from 320 + 16i."""
    b = 320 + 16 * slot
    return {
        f"RELEASE_ENABLE({slot})": (b, b),
        f"RELEASE_STRUCTURE_SIZE({slot})": (b + 2, b + 1),
        f"RELEASE_MEMBAR_TYPE({slot})": (b + 3, b + 3),
        f"RELEASE_REDUCTION_ENABLE({slot})": (b + 4, b + 4),
        f"RELEASE_REDUCTION_OP({slot})": (b + 7, b + 5),
        f"RELEASE_REDUCTION_FORMAT({slot})": (b + 9, b + 8),
        f"RELEASE_TRAP_TYPE({slot})": (b + 11, b + 10),
        f"RELEASE_PAYLOAD64B({slot})": (b + 12, b + 12),
        f"RELEASE_RESERVED_INFO({slot})": (b + 15, b + 13),
    }


def _dependent_v04(slot: int) -> dict[str, Field]:
    b = 368 + 5 * slot
    return {
        f"DEPENDENT_QMD_ENABLE({slot})": (b, b),
        f"DEPENDENT_QMD_ACTION({slot})": (b + 3, b + 1),
        f"DEPENDENT_QMD_PREFETCH({slot})": (b + 4, b + 4),
    }


def _semaphore_v04(slot: int) -> dict[str, Field]:
    b = 640 + 128 * slot
    p = f"RELEASE_SEMAPHORE{slot}_"
    return {
        p + "ADDR_LOWER": (b + 31, b),
        p + "ADDR_UPPER": (b + 56, b + 32),
        p + "PAYLOAD_LOWER": (b + 95, b + 64),
        p + "PAYLOAD_UPPER": (b + 127, b + 96),
    }


def _constant_buffers_v04() -> dict[str, Field]:
    out: dict[str, Field] = {}
    for i in range(8):
        out.update({
            f"CONSTANT_BUFFER_VALID({i})": (416 + 4 * i, 416 + 4 * i),
            f"CONSTANT_BUFFER_PREFETCH({i})": (418 + 4 * i, 417 + 4 * i),
            f"CONSTANT_BUFFER_INVALIDATE({i})": (419 + 4 * i, 419 + 4 * i),
        })
    return out


V04_00: dict[str, Field] = {
    "DEPENDENCE_COUNTER": (15, 0),
    "QMD_GROUP_ID": (21, 16),
    "ADD_TO_HEAD_OF_QMD_GROUP_LINKED_LIST": (22, 22),
    "QMD_TYPE": (25, 23),
    "ARRIVE_AT_LATCH_VALID": (28, 28),
    "WAIT_ON_LATCH_VALID": (29, 29),
    "REQUIRE_SCHEDULING_PCAS": (30, 30),
    "TPC_DISABLE_MASK_VALID": (31, 31),
    "CIRCULAR_QUEUE_SIZE": (56, 32),
    "INNER_GET": (94, 64),
    "INNER_OVERFLOW": (95, 95),
    "INNER_PUT": (126, 96),
    "INNER_STICKY_OVERFLOW": (127, 127),
    "HW_ONLY_INNER_GET": (190, 160),
    "HW_ONLY_INNER_PUT": (222, 192),
    "HW_ONLY_SPAN_LIST_HEAD_INDEX": (253, 224),
    "HW_ONLY_SPAN_LIST_HEAD_INDEX_VALID": (254, 254),
    "HW_ONLY_SKED_NEXT_QMD_POINTER": (287, 256),
    "HW_ONLY_DEPENDENCE_COUNTER": (303, 288),
    "HW_ONLY_REQUIRE_SCHEDULING_PCAS": (304, 304),
    **_release_v04(0), **_release_v04(1), **_release_v04(2),
    **_dependent_v04(0), **_dependent_v04(1),
    "SELF_COPY_ON_COMPLETION": (378, 378),
    "DEMOTE_L2_EVICT_LAST": (379, 379),
    "DISABLE_AUTO_INVALIDATE": (380, 380),
    "CORRELATION_ID_INTERNAL": (381, 381),
    "CWD_MEMBAR_TASK_CHASING_ENABLE": (382, 382),
    "CORRELATION_ID": (415, 384),
    **_constant_buffers_v04(),
    "DEPENDENT_QMD0_POINTER": (479, 448),
    "DEPENDENT_QMD1_POINTER": (511, 480),
    "SHADER_LOCAL_MEMORY_LOW_SIZE": (535, 512),
    "SASS_VERSION": (543, 536),
    "SHADER_LOCAL_MEMORY_HIGH_SIZE": (567, 544),
    "API_VISIBLE_CALL_LIMIT": (568, 568),
    "SAMPLER_INDEX": (569, 569),
    "CONSTANT_BUFFER_PREFETCH_PRE_MAX_SIZE_SHIFTED8": (575, 570),
    "QMD_MINOR_VERSION": (579, 576),
    "QMD_MAJOR_VERSION": (583, 580),
    "SHARED_MEMORY_SIZE": (601, 584),
    "INVALIDATE_TEXTURE_HEADER_CACHE": (602, 602),
    "INVALIDATE_TEXTURE_SAMPLER_CACHE": (603, 603),
    "INVALIDATE_TEXTURE_DATA_CACHE": (604, 604),
    "INVALIDATE_SHADER_DATA_CACHE": (605, 605),
    "INVALIDATE_INSTRUCTION_CACHE": (606, 606),
    "INVALIDATE_SHADER_CONSTANT_CACHE": (607, 607),
    "MIN_SM_CONFIG_SHARED_MEM_SIZE": (613, 608),
    "MAX_SM_CONFIG_SHARED_MEM_SIZE": (619, 614),
    "TARGET_SM_CONFIG_SHARED_MEM_SIZE": (625, 620),
    "SHARED_ALLOCATION_ENABLE": (626, 626),
    **_semaphore_v04(0), **_semaphore_v04(1), **_semaphore_v04(2),
    "GRID_WIDTH": (1055, 1024),
    "GRID_HEIGHT": (1071, 1056),
    "GRID_DEPTH": (1103, 1088),
    "CWD_REFERENCE_COUNT_DELTA_MINUS_ONE": (1127, 1120),
    "CWD_REFERENCE_COUNT_ID": (1133, 1128),
    "CWD_REFERENCE_COUNT_INCR_ENABLE": (1134, 1134),
    "CWD_REFERENCE_COUNT_DECR_ENABLE": (1135, 1135),
    "CWD_MEMBAR_TYPE": (1137, 1136),
    "SEQUENTIALLY_RUN_CTAS": (1138, 1138),
    "CTA_LAUNCH_QUEUE": (1139, 1139),
    "FREE_CTA_SLOTS_EMPTY_SM": (1147, 1140),
    "SYNC_DOMAIN_ID": (1149, 1148),
    "PRE_EXIT_AT_LAST_CTA_LAUNCH": (1150, 1150),
    "ENABLE_PROGRAM_PRE_EXIT": (1151, 1151),
    "CTA_THREAD_DIMENSION0": (1167, 1152),
    "CTA_THREAD_DIMENSION1": (1183, 1168),
    "CTA_THREAD_DIMENSION2": (1199, 1184),
    "REGISTER_COUNT": (1208, 1200),
    "BARRIER_COUNT": (1215, 1211),
    "PROGRAM_ADDRESS_LOWER": (1247, 1216),
    "PROGRAM_ADDRESS_UPPER": (1272, 1248),
    "OCCUPANCY_THRESHOLD_WARP": (1287, 1280),
    "OCCUPANCY_MAX_WARP": (1295, 1288),
    "OCCUPANCY_THRESHOLD_REGISTER": (1303, 1296),
    "OCCUPANCY_MAX_REGISTER": (1311, 1304),
    "OCCUPANCY_THRESHOLD_SHARED_MEM": (1319, 1312),
    "OCCUPANCY_MAX_SHARED_MEM": (1327, 1320),
    "PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED": (1375, 1344),
    "PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED": (1392, 1376),
    "PROGRAM_PREFETCH_SIZE": (1401, 1393),
    "PROGRAM_PREFETCH_TYPE": (1403, 1402),
    "LATCH_ACQUIRE_INVALIDATE_SHADER_DATA_CACHE": (1406, 1406),
    "LATCH_ACQUIRE_INVALIDATE_TEXTURE_DATA_CACHE": (1407, 1407),
    "GRID_WIDTH_RESUME": (1439, 1408),
    "GRID_HEIGHT_RESUME": (1455, 1440),
    "GRID_DEPTH_RESUME": (1471, 1456),
    "ARRIVE_AT_LATCH_ID": (1503, 1472),
    "WAIT_ON_LATCH_ID": (1535, 1504),
    **_indexed("CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6", 1567, 1536, 64, 8),
    **_indexed("CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6", 1586, 1568, 64, 8),
    **_indexed("CONSTANT_BUFFER_SIZE_SHIFTED4", 1599, 1587, 64, 8),
    "CIRCULAR_QUEUE_ADDR_LOWER": (2079, 2048),
    "CIRCULAR_QUEUE_ADDR_UPPER": (2087, 2080),
    "CIRCULAR_QUEUE_ENTRY_SIZE": (2127, 2112),
    "COALESCE_WAITING_PERIOD": (2135, 2128),
    "QUEUE_ENTRIES_PER_CTA_LOG2": (2140, 2136),
    "GPC_CGA_WIDTH": (2149, 2144),
    "GPC_CGA_HEIGHT": (2157, 2152),
    "GPC_CGA_DEPTH": (2165, 2160),
    "CGA_CTA_DISTRIBUTION_MODE": (2207, 2207),
    "GPU_CGA_WIDTH": (2223, 2208),
    "GPU_CGA_HEIGHT": (2239, 2224),
    "GPU_CGA_DEPTH": (2255, 2240),
    "DEBUG_ID_LOWER": (2399, 2368),
    "DEBUG_ID_UPPER": (2431, 2400),
    **_indexed("TPC_DISABLE_MASK", 2463, 2432, 32, 18),
    "OUTER_PUT": (3038, 3008),
    "OUTER_OVERFLOW": (3039, 3039),
    "OUTER_GET": (3070, 3040),
    "OUTER_STICKY_OVERFLOW": (3071, 3071),
}


@dataclass(frozen=True)
class QMDLayout:
    """One QMD version: its size and its fields, sorted by their low bit."""

    name: str
    size: int                      # bytes the hardware reads
    fields: dict[str, Field]
    source: str

    def field(self, name: str) -> Field:
        try:
            return self.fields[name]
        except KeyError:
            raise BobcError(f"QMD {self.name} has no field named {name}") from None


LAYOUTS: dict[str, QMDLayout] = {
    "V03_00": QMDLayout("V03_00", 256, V03_00, "open-gpu-doc clc7c0qmd.h QMDV03_00"),
    "V04_00": QMDLayout("V04_00", 384, V04_00, "open-gpu-doc clcbc0qmd.h QMDV04_00"),
}


def layout_named(name: str) -> QMDLayout:
    try:
        return LAYOUTS[name]
    except KeyError:
        raise BobcError(f"unknown QMD layout {name!r}", hint=f"known: {', '.join(sorted(LAYOUTS))}") from None


class QMD:
    """A QMD being written: `QMD("V04_00").set("GRID_WIDTH", 1).to_bytes()`.

    Values are checked against the field's width; a value that does not fit
    is an error naming the field (and `context`, e.g. the launch) rather than
    a silently truncated launch.
    """

    def __init__(self, layout: str | QMDLayout, raw: bytes | None = None, context: str = ""):
        self.layout = layout if isinstance(layout, QMDLayout) else layout_named(layout)
        self.context = context
        if raw is None:
            self.bits = 0
        else:
            if len(raw) < self.layout.size:
                raise BobcError(f"QMD {self.layout.name} needs {self.layout.size} bytes, got {len(raw)}")
            self.bits = int.from_bytes(raw[: self.layout.size], "little")

    def set(self, name: str, value: int) -> "QMD":
        high, low = self.layout.field(name)
        width = high - low + 1
        value = int(value)
        if value < 0 or value >> width:
            where = f"{self.context}: " if self.context else ""
            raise BobcError(f"{where}QMD field {name} is {width} bits wide; {value:#x} does not fit")
        mask = ((1 << width) - 1) << low
        self.bits = (self.bits & ~mask) | (value << low)
        return self

    def get(self, name: str) -> int:
        high, low = self.layout.field(name)
        return (self.bits >> low) & ((1 << (high - low + 1)) - 1)

    def to_bytes(self, record_bytes: int | None = None) -> bytes:
        """The QMD, zero-padded to `record_bytes` (its table slot) when given."""
        raw = self.bits.to_bytes(self.layout.size, "little")
        if record_bytes is not None:
            if record_bytes < len(raw):
                raise BobcError(f"a {self.layout.name} QMD ({len(raw)} bytes) does not fit a {record_bytes}-byte slot")
            raw += bytes(record_bytes - len(raw))
        return raw


def decode(layout: str | QMDLayout, raw: bytes) -> list[tuple[str, int]]:
    """Every field of the layout, by name and value, in bit order."""
    qmd = QMD(layout, raw)
    ordered = sorted(qmd.layout.fields.items(), key=lambda item: item[1][1])
    return [(name, qmd.get(name)) for name, _ in ordered]


def decode_dict(layout: str | QMDLayout, raw: bytes) -> dict[str, int]:
    return dict(decode(layout, raw))
