"""Tensor maps: the 128-byte descriptors sm_90's Tensor Memory Accelerator reads.

Why: a tiled copy between global and shared memory on sm_90 (UTMALDG / UTMASTG,
PTX cp.async.bulk.tensor) names its tensor by the address of such a descriptor.
CUDA encodes it on the host (cuTensorMapEncodeTiled) and calls it opaque; bobc
places every region at build time and has no libcuda in the loop, so it writes
the descriptors itself, into the images, next to the parameter blocks.

Source of every fact here: the CUDA driver itself.  tools/tensor_map/capture.py
asked driver 580.159.04 (CUDA 13.0, on the H200) for 4102 parameter sets, one
parameter varied at a time from a base and 4000 random ones; the layout below
reproduces all 1059 descriptors it wrote bit for bit and refuses exactly the
3043 sets it refused (tests/nvidia/test_tensor_map.py, against the captured
bytes in tests/nvidia/data/).  docs/tensor-maps.md explains the fields.

Fields are bit ranges (high, low) counted from bit 0 of byte 0, little-endian,
as qmd.py writes QMD fields.  Only the tiled form is known (not im2col).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import BobcError
from ..targets import TARGETS

Field = tuple[int, int]          # (high bit, low bit), inclusive

SIZE = 128                       # bytes; CUDA's CUtensorMap (64-byte aligned where it lives)
ALIGNMENT = 64

MAX_RANK = 5

# name -> (hardware code in DATA_TYPE, bytes an element, TF32 rounding bit).  The driver's enum
# order differs from the hardware's (float64 is 9 here, float32_ftz 8); tfloat32 is float32 with
# bit 80 set.
DATA_TYPES: dict[str, tuple[int, int, int]] = {
    "uint8": (0, 1, 0), "uint16": (1, 2, 0), "uint32": (2, 4, 0), "int32": (3, 4, 0),
    "uint64": (4, 8, 0), "int64": (5, 8, 0), "float16": (6, 2, 0), "float32": (7, 4, 0),
    "float32_ftz": (8, 4, 0), "float64": (9, 8, 0), "bfloat16": (10, 2, 0),
    "tfloat32": (7, 4, 1), "tfloat32_ftz": (8, 4, 1),
}
FLOAT_TYPES = frozenset({"float16", "float32", "float32_ftz", "float64", "bfloat16", "tfloat32",
                         "tfloat32_ftz"})

INTERLEAVES = {"none": 0, "16b": 1, "32b": 2}
SWIZZLES = {"none": 0, "32b": 1, "64b": 2, "128b": 3}
SWIZZLE_BYTES = {"none": None, "32b": 32, "64b": 64, "128b": 128}
L2_PROMOTIONS = {"none": 0, "64b": 1, "128b": 2, "256b": 3}
OOB_FILLS = {"zero": 0, "nan": 1}          # nan: CUDA's NAN_REQUEST_ZERO_FMA

# Word 18 (bits 576..607) as the driver writes it, by swizzle: the only values observed.
SWIZZLE_SPAN_WORD = {"none": 0x10, "32b": 0x100, "64b": 0x200, "128b": 0x400}

FIELDS: dict[str, Field] = {
    "GLOBAL_ADDRESS": (63, 0),
    "RANK_MINUS_ONE": (70, 68),
    "DATA_TYPE": (74, 71),
    "INTERLEAVE": (76, 75),
    "SWIZZLE": (78, 77),
    "OOB_NAN_FILL": (79, 79),
    "TF32_ROUNDING": (80, 80),
    "L2_PROMOTION": (82, 81),
    # strides of dimensions 1..4 in 16-byte units: low 32 bits in words 3..6, high 4 bits in word 7
    **{f"STRIDE_LOW({i})": (96 + 32 * i + 31, 96 + 32 * i) for i in range(4)},
    **{f"STRIDE_HIGH({i})": (224 + 4 * i + 3, 224 + 4 * i) for i in range(4)},
    **{f"DIM_MINUS_ONE({i})": (256 + 32 * i + 31, 256 + 32 * i) for i in range(5)},
    **{f"ELEMENT_STRIDE_MINUS_ONE({i})": (416 + 3 * i + 2, 416 + 3 * i) for i in range(5)},
    "BOX_MINUS_ONE(0)": (447, 440),
    **{f"BOX_MINUS_ONE({i})": (448 + 8 * (i - 1) + 7, 448 + 8 * (i - 1)) for i in range(1, 5)},
    "BOX_BYTES": (543, 512),
    "SWIZZLE_SPAN": (607, 576),
}

# Refusal limits, each one the driver's (same capture): addresses up to 2^48 were accepted and
# 2^64 - 16 refused, so bobc refuses at 2^49 and above (nothing between was asked).
MAX_ADDRESS = 1 << 49
MAX_DIM = 1 << 32
STRIDE_LIMIT = 1 << 40
MAX_BOX = 256
MAX_ELEMENT_STRIDE = 8
# a block's largest shared memory of its own on a target with TMA (bobc.targets
# SMResources.block_own_shared_bytes: 227 KiB on sm_90, the declaration's 0x400 system bytes not counted);
# the driver accepted 232320 bytes and refused 233640
MAX_BOX_BYTES = max(t.sm_resources.block_own_shared_bytes for t in TARGETS.values() if t.tensor_maps)


@dataclass(frozen=True)
class TiledTensor:
    """What cuTensorMapEncodeTiled takes, dimension 0 innermost.

    dims: elements along each dimension; strides: bytes between consecutive indices of
    dimensions 1..rank-1 (dimension 0 is contiguous); box: the elements a copy moves along each
    dimension; element_strides: every n-th element along each dimension (1 = all)."""

    data_type: str
    address: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    box: tuple[int, ...]
    element_strides: tuple[int, ...] | None = None
    interleave: str = "none"
    swizzle: str = "none"
    l2_promotion: str = "none"
    oob_fill: str = "zero"

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def element_bytes(self) -> int:
        return DATA_TYPES[self.data_type][1]

    def steps(self) -> tuple[int, ...]:
        return self.element_strides if self.element_strides is not None else (1,) * self.rank

    def box_bytes(self) -> int:
        """Bytes one copy writes to shared memory: the driver counts box // element stride."""
        n = self.element_bytes
        for box, step in zip(self.box, self.steps()):
            n *= box // step
        return n


def _choice(what: str, value: str, table: dict, context: str) -> None:
    if value not in table:
        raise BobcError(f"{context}tensor map {what} {value!r} is not one of {', '.join(table)}")


def check(t: TiledTensor, context: str = "") -> None:
    """Refuse what the driver refuses, naming the parameter and the rule."""
    where = f"{context}: " if context else ""
    _choice("data type", t.data_type, DATA_TYPES, where)
    _choice("interleave", t.interleave, INTERLEAVES, where)
    _choice("swizzle", t.swizzle, SWIZZLES, where)
    _choice("L2 promotion", t.l2_promotion, L2_PROMOTIONS, where)
    _choice("out-of-bounds fill", t.oob_fill, OOB_FILLS, where)
    rank = t.rank
    if not 1 <= rank <= MAX_RANK:
        raise BobcError(f"{where}a tensor map has 1 to {MAX_RANK} dimensions, not {rank}")
    for name, values, count in (("strides", t.strides, rank - 1), ("box", t.box, rank),
                                ("element strides", t.steps(), rank)):
        if len(values) != count:
            raise BobcError(f"{where}a rank-{rank} tensor map takes {count} {name}, not {len(values)}",
                            hint="strides are given for dimensions 1.. only (dimension 0 is contiguous)"
                            if name == "strides" else None)
    if t.interleave != "none" and rank < 3:
        raise BobcError(f"{where}an interleaved tensor map needs at least 3 dimensions, not {rank}")
    alignment = 32 if t.interleave == "32b" else 16
    if not 0 <= t.address < MAX_ADDRESS or t.address % alignment:
        raise BobcError(f"{where}tensor map address {t.address:#x} must be {alignment}-byte aligned "
                        f"and below {MAX_ADDRESS:#x}")
    for i, dim in enumerate(t.dims):
        if not 1 <= dim <= MAX_DIM:
            raise BobcError(f"{where}tensor map dimension {i} has {dim} elements; 1 to 2^32 are allowed")
    for i, stride in enumerate(t.strides, start=1):
        if stride % alignment or not 0 <= stride < STRIDE_LIMIT:
            raise BobcError(f"{where}tensor map stride of dimension {i} is {stride} bytes; it must be a "
                            f"multiple of {alignment} below 2^40")
    for i, box in enumerate(t.box):
        if not 1 <= box <= MAX_BOX:
            raise BobcError(f"{where}tensor map box dimension {i} is {box}; 1 to {MAX_BOX} are allowed")
    inner = t.box[0] * t.element_bytes
    if inner % 16:
        raise BobcError(f"{where}a tensor map box row is {inner} bytes ({t.box[0]} x {t.element_bytes}); "
                        f"it must be a multiple of 16")
    for i, step in enumerate(t.steps()):
        if not 1 <= step <= MAX_ELEMENT_STRIDE:
            raise BobcError(f"{where}tensor map element stride {i} is {step}; 1 to {MAX_ELEMENT_STRIDE} "
                            f"are allowed")
    span = SWIZZLE_BYTES[t.swizzle]
    if span is not None and inner > span:
        raise BobcError(f"{where}a tensor map box row of {inner} bytes does not fit the {span}-byte swizzle",
                        hint=f"make box dimension 0 at most {span // t.element_bytes} elements")
    if t.oob_fill != "zero" and t.data_type not in FLOAT_TYPES:
        raise BobcError(f"{where}a NaN out-of-bounds fill needs a floating-point data type, "
                        f"not {t.data_type}")
    if t.box_bytes() > MAX_BOX_BYTES:
        raise BobcError(f"{where}a tensor map box of {t.box_bytes()} bytes exceeds the "
                        f"{MAX_BOX_BYTES} bytes of shared memory a block can have")


def encode_tiled(t: TiledTensor, context: str = "") -> bytes:
    """The 128 bytes cuTensorMapEncodeTiled writes for `t` (refused as the driver refuses)."""
    check(t, context)
    code, _, tf32 = DATA_TYPES[t.data_type]
    values = {
        "GLOBAL_ADDRESS": t.address, "RANK_MINUS_ONE": t.rank - 1, "DATA_TYPE": code,
        "INTERLEAVE": INTERLEAVES[t.interleave], "SWIZZLE": SWIZZLES[t.swizzle],
        "OOB_NAN_FILL": OOB_FILLS[t.oob_fill], "TF32_ROUNDING": tf32,
        "L2_PROMOTION": L2_PROMOTIONS[t.l2_promotion], "BOX_BYTES": t.box_bytes(),
        "SWIZZLE_SPAN": SWIZZLE_SPAN_WORD[t.swizzle],
    }
    for i, stride in enumerate(t.strides):
        values[f"STRIDE_LOW({i})"] = (stride >> 4) & 0xFFFFFFFF
        values[f"STRIDE_HIGH({i})"] = stride >> 36
    for i, dim in enumerate(t.dims):
        values[f"DIM_MINUS_ONE({i})"] = dim - 1
    for i, (box, step) in enumerate(zip(t.box, t.steps())):
        values[f"BOX_MINUS_ONE({i})"] = box - 1
        values[f"ELEMENT_STRIDE_MINUS_ONE({i})"] = step - 1
    bits = 0
    for name, value in values.items():
        high, low = FIELDS[name]
        if value >> (high - low + 1):
            raise AssertionError(f"tensor map field {name} overflows: {value:#x}")  # check() prevents it
        bits |= value << low
    return bits.to_bytes(SIZE, "little")


def decode(raw: bytes) -> dict[str, int]:
    """Every field's value, for listings and tests."""
    if len(raw) != SIZE:
        raise BobcError(f"a tensor map is {SIZE} bytes, not {len(raw)}")
    bits = int.from_bytes(raw, "little")
    return {name: (bits >> low) & ((1 << (high - low + 1)) - 1) for name, (high, low) in FIELDS.items()}
