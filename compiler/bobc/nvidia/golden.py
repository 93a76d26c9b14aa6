"""Comparing two image folders field by field, for golden tests that say what changed.

A byte diff of qmd.bin says "byte 0x8a2 differs"; this says "launch 3
(bob-row-gather) QMD CTA_THREAD_DIMENSION0: 0x40 -> 0x80".  Each difference
is one line naming the launch/submission/region and the field, method or
word; an empty list means the folders hold the same images.
"""
from __future__ import annotations

import struct
from pathlib import Path

from . import decode

INSTRUCTION_BYTES = 16


def _flat(value, prefix: str = "") -> dict[str, object]:
    """A JSON value as path -> leaf (lists of launches etc. are compared elsewhere)."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            out.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _fmt(value) -> str:
    return f"{value:#x}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)


def _diff_mapping(label: str, a: dict, b: dict) -> list[str]:
    out = []
    for key in sorted(set(a) | set(b)):
        if key not in a:
            out.append(f"{label} {key}: only in b ({_fmt(b[key])})")
        elif key not in b:
            out.append(f"{label} {key}: only in a ({_fmt(a[key])})")
        elif a[key] != b[key]:
            out.append(f"{label} {key}: {_fmt(a[key])} -> {_fmt(b[key])}")
    return out


def _manifest_differences(ma: dict, mb: dict) -> list[str]:
    skip = {"regions", "launches", "submissions"}
    flat_a = _flat({k: v for k, v in ma.items() if k not in skip})
    flat_b = _flat({k: v for k, v in mb.items() if k not in skip})
    out = _diff_mapping("manifest", flat_a, flat_b)
    for key, label in (("regions", "region"), ("launches", "launch"), ("submissions", "submission")):
        la, lb = ma.get(key, []), mb.get(key, [])
        if len(la) != len(lb):
            out.append(f"manifest {key}: {len(la)} -> {len(lb)}")
        for ea, eb in zip(la, lb):
            name = f"{label} {ea.get('index')} ({ea.get('identity')})"
            out += _diff_mapping(f"{name} manifest", _flat(ea), _flat(eb))
    return out


def _launch_name(entry: dict) -> str:
    return f"launch {entry['index']} ({entry['identity']})"


def compare(folder_a: str | Path, folder_b: str | Path) -> list[str]:
    """Field-level differences between two image folders (a -> b)."""
    a, b = decode.read_images(folder_a), decode.read_images(folder_b)
    ma, mb = a.manifest, b.manifest
    out = _manifest_differences(ma, mb)

    # QMDs and parameter words, launch by launch.
    same_layout = ma.get("qmd_layout") == mb.get("qmd_layout")
    for index in range(min(len(ma["launches"]), len(mb["launches"]))):
        name = _launch_name(ma["launches"][index])
        if same_layout:
            fa, fb = dict(decode.qmd_fields(a, index)), dict(decode.qmd_fields(b, index))
            for field in fa:
                if fa[field] != fb[field]:
                    out.append(f"{name} QMD {field}: {fa[field]:#x} -> {fb[field]:#x}")
        ba, bb = decode.parameter_block(a, index), decode.parameter_block(b, index)
        wa = struct.unpack(f"<{len(ba) // 8}Q", ba)
        wb = struct.unpack(f"<{len(bb) // 8}Q", bb)
        for word in range(max(len(wa), len(wb))):
            va = wa[word] if word < len(wa) else None
            vb = wb[word] if word < len(wb) else None
            if va != vb:
                out.append(f"{name} parameter word {word} (c[0x0][{8 * word:#x}]): "
                           f"{_fmt(va) if va is not None else 'absent'} -> {_fmt(vb) if vb is not None else 'absent'}")

    # Pushbuffer methods, segment by segment.
    sa, sb = decode.push_segments(a), decode.push_segments(b)
    for (label, methods_a), (_, methods_b) in zip(sa, sb):
        for k in range(max(len(methods_a), len(methods_b))):
            ta = methods_a[k] if k < len(methods_a) else None
            tb = methods_b[k] if k < len(methods_b) else None
            if ta is None or tb is None:
                present = ta or tb
                side = "a" if ta else "b"
                out.append(f"{label} method {k}: only in {side}: {present.describe()}")
            elif (ta.subchannel, ta.method, ta.data) != (tb.subchannel, tb.method, tb.data):
                out.append(f"{label} method {k}: {ta.describe()} -> {tb.describe()}")
    if len(sa) != len(sb):
        out.append(f"pushbuffer segments: {len(sa)} -> {len(sb)}")

    # Ring entries.
    ra, rb = decode.ring_entries(a), decode.ring_entries(b)
    for index in range(max(len(ra), len(rb))):
        ea = ra[index] if index < len(ra) else None
        eb = rb[index] if index < len(rb) else None
        if ea != eb:
            out.append(f"GPFIFO entry {index}: {ea.describe() if ea else 'absent'} -> "
                       f"{eb.describe() if eb else 'absent'}")

    # Code, region by region, to the instruction.
    regions_b = {r["identity"]: r for r in mb["regions"]}
    for region in ma["regions"]:
        other = regions_b.get(region["identity"])
        if other is None:
            continue
        ca, cb = decode.region_code(a, region), decode.region_code(b, other)
        if ca != cb:
            first = next((i for i in range(0, min(len(ca), len(cb)), INSTRUCTION_BYTES)
                          if ca[i:i + INSTRUCTION_BYTES] != cb[i:i + INSTRUCTION_BYTES]), min(len(ca), len(cb)))
            changed = sum(1 for i in range(0, min(len(ca), len(cb)), INSTRUCTION_BYTES)
                          if ca[i:i + INSTRUCTION_BYTES] != cb[i:i + INSTRUCTION_BYTES])
            out.append(f"region {region['index']} ({region['identity']}) code: {changed} instruction(s) differ, "
                       f"first at +{first:#x}; {len(ca)} -> {len(cb)} bytes")
    return out
