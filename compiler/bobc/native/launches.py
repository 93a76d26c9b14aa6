"""The launch table a native host carries for its fault lines (docs/native-host.md, "GPU faults").

A native host whose embedded images one whole-program plan of its build encoded (it carries their
manifest: native.build.carry_manifest) also carries, as a .bobc.launches section of its
interpreter, what a plan host's bobc_plan.launches and .submissions hold (bobc.host.generate
._launch_table): each launch's kernel (`bobc dump`'s launch[L].kernel), grid (launch[L].grid) and
where the plan wrote it (MODULE/PATH.bob:line:column, relative to its search folder:
host.generate.module_place), and each submission's GPFIFO entry -- the 64-bit value a Submit
issues, the GPFIFO image's entry submission[K].ring_entry -- and launch indices
(submission[K].launches).  runtime_c/launch_rows.c reads it when a Submit's or a WaitMapped's
GPU fault or timeout is said, to name the submission's launches in the plan host's words.  The
program, the trailer and the device images are untouched (the section is the interpreter's, as
.bobc.manifest is, and enters no identity).

Bytes, little-endian (runtime_c/launch_rows.h declares the same):

    "BOBCLNC1" | launch count u32 | submission count u32
    per launch:     grid x, y, z u32 | kernel length u32, bytes | place length u32, bytes (0: none)
    per submission: GPFIFO entry u64 | launch count u32 | launch indices u32...
"""
from __future__ import annotations

import struct

from ..errors import BobcError

SECTION = "launches"                 # .bobc.launches
MAGIC = b"BOBCLNC1"


def places(plan, search_path) -> list[tuple[str, list[int], str | None]]:
    """(kernel, grid, place) of each launch of a whole-program plan, in launch order: what the
    table takes from the plan (the manifest does not say where the plan wrote a launch)."""
    from ..host.generate import module_place

    return [(launch.identity, list(launch.grid), module_place(launch.at, search_path)) for launch in plan.launches]


def table(manifest: dict, gpfifo: bytes, plan_launches: list) -> bytes:
    """The section's bytes for images of `manifest` (their GPFIFO image `gpfifo`), each launch
    cross-checked against the plan's (`plan_launches`: places())."""
    rows = sorted(manifest["launches"], key=lambda row: row["index"])
    if [row["index"] for row in rows] != list(range(len(plan_launches))):
        raise BobcError(f"the images' manifest lists launches {[row['index'] for row in rows]}, the plan has "
                        f"{len(plan_launches)}")
    out = [MAGIC, struct.pack("<II", len(rows), len(manifest["submissions"]))]
    for row, (kernel, grid, place) in zip(rows, plan_launches):
        if row["identity"] != kernel or list(row["grid"]) != list(grid):
            raise BobcError(f"the images' launch {row['index']} runs {row['identity']} on grid {row['grid']}, the "
                            f"plan's {kernel} on {list(grid)}")
        name, at = kernel.encode("utf-8"), (place or "").encode("utf-8")
        out += [struct.pack("<IIII", *grid, len(name)), name, struct.pack("<I", len(at)), at]
    for submission in manifest["submissions"]:
        e = submission["ring_entry"]
        if not 0 <= 8 * e <= len(gpfifo) - 8:
            raise BobcError(f"the images' submission {submission['index']} names GPFIFO entry {e}, past the "
                            f"{len(gpfifo)}-byte GPFIFO image")
        entry = int.from_bytes(gpfifo[8 * e:8 * e + 8], "little")
        indices = list(submission["launches"])
        out += [struct.pack("<QI", entry, len(indices)), struct.pack(f"<{len(indices)}I", *indices)]
    return b"".join(out)


def decode(section: bytes, where) -> tuple[list[dict], list[dict]]:
    """(launches, submissions) of a .bobc.launches section; a damaged one refused naming `where`."""
    def damaged(what):
        return BobcError(f"{where}: damaged host file: its .bobc.launches section {what}",
                         hint="rebuild it with `bobc build PLAN --entry DEF`")

    if section[:8] != MAGIC:
        raise damaged(f"does not start {MAGIC.decode()}")
    at = 8

    def take(fmt):
        nonlocal at
        size = struct.calcsize(fmt)
        if at + size > len(section):
            raise damaged(f"ends at byte {len(section)}, inside a field at byte {at}")
        values = struct.unpack_from(fmt, section, at)
        at += size
        return values

    def text(length):
        nonlocal at
        if at + length > len(section):
            raise damaged(f"ends at byte {len(section)}, inside a {length}-byte name at byte {at}")
        value = section[at:at + length].decode("utf-8", "replace")
        at += length
        return value

    launch_count, submission_count = take("<II")
    launches, submissions = [], []
    for _ in range(launch_count):
        x, y, z, length = take("<IIII")
        kernel = text(length)
        place = text(take("<I")[0])
        launches.append({"kernel": kernel, "grid": [x, y, z], "place": place or None})
    for _ in range(submission_count):
        entry, count = take("<QI")
        submissions.append({"entry": entry, "launches": list(take(f"<{count}I"))})
    if at != len(section):
        raise damaged(f"holds {len(section) - at} bytes after its last submission")
    return launches, submissions


def lines(section: bytes | None, where) -> list:
    """The table as `bobc dump` lines (kind host): host.launches[L].kernel / .grid / .place, in
    launch[L]'s words, and host.submissions[K].entry / .launches."""
    from ..nvidia.decode import Line

    if section is None:
        return []
    launches, submissions = decode(section, where)
    out = [Line("host.launches.count", len(launches), "the launch table (.bobc.launches): GPU fault lines", "", "host")]
    for index, launch in enumerate(launches):
        key = f"host.launches[{index}]"
        out += [Line(f"{key}.kernel", launch["kernel"], "", "", "host"),
                Line(f"{key}.grid", list(launch["grid"]), "", "", "host"),
                Line(f"{key}.place", launch["place"] or "-", "", "", "host")]
    for index, submission in enumerate(submissions):
        key = f"host.submissions[{index}]"
        out += [Line(f"{key}.entry", submission["entry"], "the GPFIFO entry its Submit issues", "", "host"),
                Line(f"{key}.launches", list(submission["launches"]), "", "", "host")]
    return out
