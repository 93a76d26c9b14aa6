"""QMD field positions: every MW(high:low) define of NVIDIA's published QMD headers, as data.

The one declaration of where a QMD field sits.  Two readers, sharing this table and no code:
- the encoder, bobc.nvidia.qmd (its QMDLayout codec, which bobc.nvidia.encode's recipes fill);
- the simulator, bobc.sim.qmd_fields / qmd_reader (a launch read back from its QMD's bytes).
The simulator is the encoder's independent check (docs/simulator.md): it catches an encoder
that writes the wrong field, the wrong value or the wrong layout for the bound class, because it
reads the bytes through its own code and its own choice of fields.  What it cannot catch is a
slip in this table, which both read; that is held against NVIDIA's headers themselves instead
(tests/sim/test_qmd_fields.py: the defines this table renders hash, line for line, to the
headers' own MW lines, and positions restated from the headers by hand).

Source: NVIDIA/open-gpu-doc (c8607fe) classes/compute/clc7c0qmd.h, NVC7C0_QMDV03_00_*
(AMPERE_COMPUTE_B, GA10x; the same V03_00 section is repeated in clcbc0qmd.h; not clc6c0qmd.h,
AMPERE_COMPUTE_A's (GA100), whose V03_00 is an older layout: no OCCUPANCY_* fields, a narrower
HW_ONLY_DEPENDENCE_COUNTER) and classes/compute/clcbc0qmd.h, NVCBC0_QMDV04_00_* (HOPPER_COMPUTE_A);
shared/docs/nvidia-driver-facts.md section 3.  A QMD is a little-endian array of 32-bit words:
bit b is bit b % 32 of word b // 32; (high, low) are inclusive.

FIELDS[layout], in the header's order: "NAME": (high, low) for the header's `NAME MW(high:low)`,
and "NAME(i)": (high, low, stride, slots) for its `NAME(i) MW((high+(i)*stride):(low+(i)*stride))`,
slot i < slots.  The headers give no slot count; ours is the layout's own: 8 constant buffers;
on V04_00 3 releases (RELEASE_SEMAPHORE0..2), 2 dependent QMDs (DEPENDENT_QMD0/1_POINTER) and
18 TPC_DISABLE_MASK words (bits 2432..3007, up to OUTER_PUT).  RESERVED[layout]: the header's
ranges named reserved (no field: nothing writes or lists them).
"""
from __future__ import annotations

Field = tuple[int, int]          # (high bit, low bit), inclusive

SOURCES = {
    "V03_00": "open-gpu-doc clc7c0qmd.h QMDV03_00",
    "V04_00": "open-gpu-doc clcbc0qmd.h QMDV04_00",
}

FIELDS: dict[str, dict[str, tuple[int, ...]]] = {
    "V03_00": {
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
        "CONSTANT_BUFFER_VALID(i)": (640, 640, 1, 8),
        "REGISTER_COUNT_V": (656, 648),
        "TARGET_SM_CONFIG_SHARED_MEM_SIZE": (662, 657),
        "SHARED_ALLOCATION_ENABLE": (663, 663),
        "FREE_CTA_SLOTS_EMPTY_SM": (671, 664),
        "SM_DISABLE_MASK_LOWER": (703, 672),
        "SM_DISABLE_MASK_UPPER": (735, 704),
        "SHADER_LOCAL_MEMORY_LOW_SIZE": (759, 736),
        "BARRIER_COUNT": (767, 763),
        "RELEASE0_ADDRESS_LOWER": (799, 768),
        "RELEASE0_ADDRESS_UPPER": (807, 800),
        "RELEASE0_MEMBAR_TYPE": (819, 819),
        "RELEASE0_REDUCTION_OP": (822, 820),
        "RELEASE0_ENABLE": (823, 823),
        "RELEASE0_REDUCTION_FORMAT": (825, 824),
        "RELEASE0_REDUCTION_ENABLE": (826, 826),
        "RELEASE0_TRAP_TYPE": (828, 827),
        "RELEASE0_PAYLOAD64B": (829, 829),
        "RELEASE0_STRUCTURE_SIZE": (831, 830),
        "RELEASE0_PAYLOAD_LOWER": (863, 832),
        "RELEASE0_PAYLOAD_UPPER": (895, 864),
        "RELEASE1_ADDRESS_LOWER": (927, 896),
        "RELEASE1_ADDRESS_UPPER": (935, 928),
        "RELEASE1_MEMBAR_TYPE": (947, 947),
        "RELEASE1_REDUCTION_OP": (950, 948),
        "RELEASE1_ENABLE": (951, 951),
        "RELEASE1_REDUCTION_FORMAT": (953, 952),
        "RELEASE1_REDUCTION_ENABLE": (954, 954),
        "RELEASE1_TRAP_TYPE": (956, 955),
        "RELEASE1_PAYLOAD64B": (957, 957),
        "RELEASE1_STRUCTURE_SIZE": (959, 958),
        "RELEASE1_PAYLOAD_LOWER": (991, 960),
        "RELEASE1_PAYLOAD_UPPER": (1023, 992),
        "CONSTANT_BUFFER_ADDR_LOWER(i)": (1055, 1024, 64, 8),
        "CONSTANT_BUFFER_ADDR_UPPER(i)": (1072, 1056, 64, 8),
        "CONSTANT_BUFFER_PREFETCH_POST(i)": (1073, 1073, 64, 8),
        "CONSTANT_BUFFER_INVALIDATE(i)": (1074, 1074, 64, 8),
        "CONSTANT_BUFFER_SIZE_SHIFTED4(i)": (1087, 1075, 64, 8),
        "PROGRAM_ADDRESS_LOWER": (1567, 1536),
        "PROGRAM_ADDRESS_UPPER": (1584, 1568),
        "SHADER_LOCAL_MEMORY_HIGH_SIZE": (1623, 1600),
        "PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED": (1640, 1632),
        "PROGRAM_PREFETCH_SIZE": (1649, 1641),
        "PROGRAM_PREFETCH_TYPE": (1651, 1650),
        "SASS_VERSION": (1663, 1656),
        "RELEASE2_ADDRESS_LOWER": (1695, 1664),
        "RELEASE2_ADDRESS_UPPER": (1703, 1696),
        "RELEASE2_MEMBAR_TYPE": (1715, 1715),
        "RELEASE2_REDUCTION_OP": (1718, 1716),
        "RELEASE2_ENABLE": (1719, 1719),
        "RELEASE2_REDUCTION_FORMAT": (1721, 1720),
        "RELEASE2_REDUCTION_ENABLE": (1722, 1722),
        "RELEASE2_TRAP_TYPE": (1724, 1723),
        "RELEASE2_PAYLOAD64B": (1725, 1725),
        "RELEASE2_STRUCTURE_SIZE": (1727, 1726),
        "RELEASE2_PAYLOAD_LOWER": (1759, 1728),
        "RELEASE2_PAYLOAD_UPPER": (1791, 1760),
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
    },
    "V04_00": {
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
        "RELEASE_ENABLE(i)": (320, 320, 16, 3),
        "RELEASE_STRUCTURE_SIZE(i)": (322, 321, 16, 3),
        "RELEASE_MEMBAR_TYPE(i)": (323, 323, 16, 3),
        "RELEASE_REDUCTION_ENABLE(i)": (324, 324, 16, 3),
        "RELEASE_REDUCTION_OP(i)": (327, 325, 16, 3),
        "RELEASE_REDUCTION_FORMAT(i)": (329, 328, 16, 3),
        "RELEASE_TRAP_TYPE(i)": (331, 330, 16, 3),
        "RELEASE_PAYLOAD64B(i)": (332, 332, 16, 3),
        "RELEASE_RESERVED_INFO(i)": (335, 333, 16, 3),
        "DEPENDENT_QMD_ENABLE(i)": (368, 368, 5, 2),
        "DEPENDENT_QMD_ACTION(i)": (371, 369, 5, 2),
        "DEPENDENT_QMD_PREFETCH(i)": (372, 372, 5, 2),
        "SELF_COPY_ON_COMPLETION": (378, 378),
        "DEMOTE_L2_EVICT_LAST": (379, 379),
        "DISABLE_AUTO_INVALIDATE": (380, 380),
        "CORRELATION_ID_INTERNAL": (381, 381),
        "CWD_MEMBAR_TASK_CHASING_ENABLE": (382, 382),
        "CORRELATION_ID": (415, 384),
        "CONSTANT_BUFFER_VALID(i)": (416, 416, 4, 8),
        "CONSTANT_BUFFER_PREFETCH(i)": (418, 417, 4, 8),
        "CONSTANT_BUFFER_INVALIDATE(i)": (419, 419, 4, 8),
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
        "RELEASE_SEMAPHORE0_ADDR_LOWER": (671, 640),
        "RELEASE_SEMAPHORE0_ADDR_UPPER": (696, 672),
        "RELEASE_SEMAPHORE0_PAYLOAD_LOWER": (735, 704),
        "RELEASE_SEMAPHORE0_PAYLOAD_UPPER": (767, 736),
        "RELEASE_SEMAPHORE1_ADDR_LOWER": (799, 768),
        "RELEASE_SEMAPHORE1_ADDR_UPPER": (824, 800),
        "RELEASE_SEMAPHORE1_PAYLOAD_LOWER": (863, 832),
        "RELEASE_SEMAPHORE1_PAYLOAD_UPPER": (895, 864),
        "RELEASE_SEMAPHORE2_ADDR_LOWER": (927, 896),
        "RELEASE_SEMAPHORE2_ADDR_UPPER": (952, 928),
        "RELEASE_SEMAPHORE2_PAYLOAD_LOWER": (991, 960),
        "RELEASE_SEMAPHORE2_PAYLOAD_UPPER": (1023, 992),
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
        "CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(i)": (1567, 1536, 64, 8),
        "CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(i)": (1586, 1568, 64, 8),
        "CONSTANT_BUFFER_SIZE_SHIFTED4(i)": (1599, 1587, 64, 8),
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
        "TPC_DISABLE_MASK(i)": (2463, 2432, 32, 18),
        "OUTER_PUT": (3038, 3008),
        "OUTER_OVERFLOW": (3039, 3039),
        "OUTER_GET": (3070, 3040),
        "OUTER_STICKY_OVERFLOW": (3071, 3071),
    },
}

RESERVED: dict[str, dict[str, Field]] = {
    "V03_00": {
        "QMD_RESERVED04A": (139, 138),
        "QMD_RESERVED04B": (141, 141),
        "QMD_RESERVED04C": (159, 159),
        "QMD_RESERVED11A": (366, 366),
        "QMD_RESERVED11B": (377, 372),
        "QMD_RESERVED11C": (381, 379),
        "QMD_RESERVED17A": (568, 568),
        "QMD_RESERVED17B": (575, 575),
        "SEMAPHORE_RESERVED25A": (818, 808),
        "SEMAPHORE_RESERVED29A": (946, 936),
        "SEMAPHORE_RESERVED53A": (1714, 1704),
    },
    "V04_00": {
    },
}


def _indexed(name: str) -> tuple[str, int] | None:
    """("NAME(i)", i) of a slot's name "NAME(3)", else None."""
    if not name.endswith(")") or "(" not in name:
        return None
    stem, index = name[:-1].split("(", 1)
    return (f"{stem}(i)", int(index)) if index.isdigit() else None


def position(layout: str, name: str, reserved: bool = True) -> Field:
    """(high, low) of `name` (NAME, or NAME(i) for a slot i the layout has) in `layout`;
    KeyError for a layout, field or slot the header does not define (a reserved range is
    one when `reserved`)."""
    table = FIELDS[layout]
    slot = _indexed(name)
    if slot is not None and slot[0] in table:
        high, low, stride, slots = table[slot[0]]
        if slot[1] >= slots:
            raise KeyError(f"{name}: {layout} has {slots} slots of {slot[0][:-3]}")
        return high + slot[1] * stride, low + slot[1] * stride
    if name in table and len(table[name]) == 2:
        return table[name]            # type: ignore[return-value]
    if reserved and name in RESERVED[layout]:
        return RESERVED[layout][name]
    raise KeyError(name)


def fields(layout: str, reserved: bool = False) -> dict[str, Field]:
    """Every field of `layout` by name, in the header's order, each slot of an indexed field
    (NAME(0), NAME(1), ...) in its place; the reserved ranges after them when `reserved`."""
    out: dict[str, Field] = {}
    for name, bits in FIELDS[layout].items():
        if len(bits) == 2:
            out[name] = bits          # type: ignore[assignment]
        else:
            high, low, stride, slots = bits
            out.update({f"{name[:-3]}({i})": (high + i * stride, low + i * stride) for i in range(slots)})
    if reserved:
        out.update(RESERVED[layout])
    return out
