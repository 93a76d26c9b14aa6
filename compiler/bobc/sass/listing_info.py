"""The launch facts an nvdisasm listing prints in a kernel's `.nv.info` records, read back for
`bobc asm --cubin` so that its cubin keeps them: each parameter (KPARAM_INFO, or KPARAM_INFO_V2
for a block of more than 4352 bytes: ordinal, offset, size of any number of bytes, 1 for a .u8),
the parameter block (CBANK_PARAM_SIZE) and where bank 0 holds it (PARAM_CBANK: the simulator
places a launch's parameters there), the launch bounds (MAX_THREADS, REQNTID), the cluster shape
(CTA_PER_CLUSTER), whether it runs only in clusters (EXPLICIT_CLUSTER) and how many blocks a cluster
of it may hold (MAX_CLUSTER_RANK), and the register count (.nv.info's REGCOUNT for the kernel).  The
certifier holds a plan's launches of a listing to its bounds and cluster records
(bobc.certify._listing_launch_findings).

nvdisasm prints a section's bytes as `.byte` / `.short` / `.word` / `.dword` / `.zero` / `.align`
lines, a record's length as `(.L_b - .L_a)` between two labels of the section, and a symbol's
index as `index@(name)`; a record is (format byte, attribute byte, then a half word value for
format 3 or a half word length and that many bytes for format 4; formats 1 and 2 carry a zero
half word or a byte value), as cubin.py writes them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import BobcError
from .cubin import (EIATTR_CBANK_PARAM_SIZE, EIATTR_CTA_PER_CLUSTER, EIATTR_PARAM_CBANK, EIATTR_KPARAM_INFO, EIATTR_KPARAM_INFO_V2,
                    EIATTR_EXPLICIT_CLUSTER, EIATTR_MAX_CLUSTER_RANK, EIATTR_MAX_THREADS, EIATTR_REGCOUNT, EIATTR_REQNTID, FMT_BVAL, FMT_HVAL, FMT_SVAL, KPARAM_SIZE_SHIFT)

SIZES = {".byte": 1, ".short": 2, ".word": 4, ".dword": 8}
FMT_FLAG = 1


@dataclass
class ListingInfo:
    """What a listing's records say of one kernel (None / empty: no such record)."""
    parameters: list[tuple[int, int]] | None = None     # (offset, size) by ordinal
    parameter_bytes: int | None = None
    max_block: tuple[int, int, int] | None = None
    required_block: tuple[int, int, int] | None = None
    cluster: tuple[int, int, int] | None = None
    explicit_cluster: bool = False                      # PTX .explicitcluster
    max_cluster_rank: int | None = None                 # PTX .maxclusterrank
    registers: int | None = None
    # PARAM_CBANK's offset in constant bank 0: where the driver places the block, the code reads it
    parameter_base: int | None = None
    spans: dict = field(default_factory=dict)


def _section_units(lines, section: str):
    """The section's bytes as a list of (offset, size, value: int, or str for a symbolic value or
    an unresolved expression) and its labels' offsets."""
    units, labels, offset, inside = [], {}, 0, False
    for line in lines:
        if line.directive is not None and line.directive[0] == ".section":
            inside = line.directive[1].split(",")[0].strip().strip('"') == section
            offset = 0
            continue
        if not inside:
            continue
        if line.label is not None and line.directive is None and line.instruction is None:
            labels[line.label] = offset
            continue
        if line.directive is None:
            continue
        key, value = line.directive
        if key == ".align":
            step = int(value.split()[0], 0)
            offset += -offset % step
        elif key == ".zero":
            count = int(value.split()[0], 0)
            units.extend((offset + i, 1, 0, line.span) for i in range(count))
            offset += count
        elif key in SIZES:
            for item in value.split(","):
                item = item.strip()
                try:
                    number: int | str = int(item, 0)
                except ValueError:
                    number = item
                units.append((offset, SIZES[key], number, line.span))
                offset += SIZES[key]
    return units, labels


def _value(unit, labels) -> int | str:
    _, _, value, _ = unit
    if isinstance(value, str) and value.startswith("(") and value.endswith(")") and " - " in value:
        end, start = (part.strip() for part in value[1:-1].split(" - "))
        if end in labels and start in labels:
            return labels[end] - labels[start]
    return value


def _bytes_of(units, labels, at: int, size: int, span) -> list:
    """The values laid out from `at` to `at + size`, as printed (each unit whole)."""
    out, end = [], at + size
    for unit in units:
        if at <= unit[0] < end:
            out.append(unit)
    if sum(u[1] for u in out) != size:
        raise BobcError(f"the .nv.info record here does not print its {size} bytes", span)
    return [(_value(u, labels), u[1]) for u in out]


def _integer(parts, span) -> int:
    """Little-endian integer of printed values (each a number)."""
    result, shift = 0, 0
    for value, size in parts:
        if not isinstance(value, int):
            raise BobcError(f"the .nv.info record here holds {value!r} where a number is expected", span)
        result |= value << shift
        shift += 8 * size
    return result


def _records(lines, section: str):
    """(attribute, payload parts, span) of every record of `section`; parts as _bytes_of."""
    units, labels = _section_units(lines, section)
    by_offset = {u[0]: u for u in units}
    end = max((u[0] + u[1] for u in units), default=0)
    at = 0
    while at < end:
        if at not in by_offset:
            at += 1
            continue
        head = _bytes_of(units, labels, at, 2, by_offset[at][3])
        span = by_offset[at][3]
        fmt, attr = _integer(head[:1], span), _integer(head[1:], span)
        if fmt == FMT_SVAL:
            length = _value(by_offset[at + 2], labels)
            if not isinstance(length, int):
                raise BobcError(f"the length of this .nv.info record ({length!r}) is not readable", span)
            yield attr, _bytes_of(units, labels, at + 4, length, span), span
            at += 4 + length
        elif fmt in (FMT_FLAG, FMT_BVAL, FMT_HVAL):
            yield attr, _bytes_of(units, labels, at + 2, 2, span), span
            at += 4
        else:
            raise BobcError(f"a .nv.info record of format {fmt} is not one nvdisasm prints", span)


def listing_info(lines, kernel: str) -> ListingInfo:
    """The launch facts of `kernel` printed in a listing's `.nv.info.<kernel>` and `.nv.info`."""
    info = ListingInfo()
    kparams = {}
    for attr, parts, span in _records(lines, f".nv.info.{kernel}"):
        if attr in (EIATTR_KPARAM_INFO, EIATTR_KPARAM_INFO_V2):
            # u32 index, u16 ordinal, u16 offset, then KPARAM_INFO's u32 flags with the size from
            # bit 18, or KPARAM_INFO_V2's u32 size (sass/cubin.py, above KPARAM_INFO_BLOCK_MAX)
            ordinal = _integer(_cut(parts, 4, 2, span), span)
            offset = _integer(_cut(parts, 6, 2, span), span)
            last = _integer(_cut(parts, 8, 4, span), span)
            kparams[ordinal] = (offset, last >> KPARAM_SIZE_SHIFT if attr == EIATTR_KPARAM_INFO else last)
            info.spans.setdefault("parameters", span)
        elif attr == EIATTR_CBANK_PARAM_SIZE:
            info.parameter_bytes = _integer(parts, span)
        elif attr == EIATTR_PARAM_CBANK:
            # u32 index@(.nv.constant0.<k>), u16 the offset in bank 0, u16 the block's size
            info.parameter_base = _integer(_cut(parts, 4, 2, span), span)
        elif attr in (EIATTR_MAX_THREADS, EIATTR_REQNTID, EIATTR_CTA_PER_CLUSTER):
            dims = tuple(_integer(_cut(parts, 4 * i, 4, span), span) for i in range(3))
            name = {EIATTR_MAX_THREADS: "max_block", EIATTR_REQNTID: "required_block",
                    EIATTR_CTA_PER_CLUSTER: "cluster"}[attr]
            setattr(info, name, dims)
        elif attr == EIATTR_EXPLICIT_CLUSTER:
            info.explicit_cluster = True
        elif attr == EIATTR_MAX_CLUSTER_RANK:
            info.max_cluster_rank = _integer(_cut(parts, 0, 4, span), span)
    if kparams:
        if sorted(kparams) != list(range(len(kparams))):
            raise BobcError(f"kernel '{kernel}': the listing's KPARAM_INFO records number its parameters "
                            f"{sorted(kparams)}, not 0 to {len(kparams) - 1}", info.spans["parameters"])
        info.parameters = [kparams[i] for i in range(len(kparams))]
    for attr, parts, span in _records(lines, ".nv.info"):
        if attr == EIATTR_REGCOUNT and parts and parts[0][0] == f"index@({kernel})":
            info.registers = _integer(_cut(parts, 4, 4, span), span)
    return info


def _cut(parts, at: int, size: int, span):
    out, offset = [], 0
    for value, width in parts:
        if at <= offset and offset + width <= at + size:
            out.append((value, width))
        offset += width
    if sum(w for _, w in out) != size:
        raise BobcError("a field of this .nv.info record is split across printed values", span)
    return out
