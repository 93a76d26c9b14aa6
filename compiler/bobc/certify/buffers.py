"""Host buffers: disjoint in the GPU address space, at the images' bases, mapping every window."""
from __future__ import annotations

from ..errors import BobcError, shown_plan_text
from ..plan.model import Plan, place
from ..targets import Target
from .findings import Finding, describe, end, span


COMMAND_BUFFERS = ("program", "qmd", "pushbuffer", "semaphores", "gpfifo")


def host_buffer_extents(plan: Plan, target: Target, contracts=None, images=None) -> dict[str, tuple[int, int]]:
    """name -> (GPU address, bytes) the host must map for `target`'s images.

    A declared buffer keeps its address; a command buffer (program, QMD
    table, pushbuffer, semaphores) grows to its image when the image is
    larger (the plan sizes them for sm_86: sm_90's parameter blocks and QMD
    slots are twice as large).  Without declared buffers, the command buffers
    are the images at the plan's bases.  The program image holds the tensor
    maps of `contracts` (bobc.nvidia.encode; `images`: those images, encoded already, as
    host_buffer_ranges takes them).  Raises BobcError when the images cannot be laid out.
    """
    from ..nvidia.encode import host_buffer_ranges

    needed = host_buffer_ranges(plan.program, target, contracts, images)
    if not plan.host_buffers:
        return dict(needed)
    out = {}
    for b in plan.host_buffers:
        if b.name in out:
            # keyed by name: a second buffer of one name would hide the first (check_host_buffers
            # refuses the plan by that name)
            raise BobcError(f"the host maps two buffers named {shown_plan_text(b.name)}",
                            hint="rename or remove one: a buffer is found by its name")
        size = b.size
        if b.name in needed:
            size = max(size, needed[b.name][1])
        out[b.name] = (b.gpu_address, size)
    return out


def check_host_buffers(plan: Plan, target: Target, contracts=None, images=None) -> list[Finding]:
    """Host buffers named once each, pairwise disjoint, the command buffers at the images' bases,
    windows mapped and apart.

    A buffer whose name ends in "-alias" declares that it maps bytes of another
    on purpose (a plan's view of the USERD page after its GPFIFO ring, say):
    it must lie wholly inside one other buffer, and overlaps nothing else.

    Every test below goes through the buffers as the plan lists them (by position), never
    through a mapping keyed by name: two buffers with one name are refused by that name, and
    each is still tested against the others (probe s33 soundness finding 6).
    """
    from ..nvidia.encode import host_buffer_ranges

    out: list[Finding] = []
    try:
        needed = host_buffer_ranges(plan.program, target, contracts, images)
    except BobcError as error:
        return [Finding("layout", f"the images cannot be laid out: {error.message}", error.span, error.hint)]
    typed_list = list(plan.host.buffers) if plan.host is not None else []
    if plan.host_buffers:
        # plan.host_buffers is extracted from plan.host.buffers, one for one (plan/extract.py)
        typed = typed_list if len(typed_list) == len(plan.host_buffers) else [None] * len(plan.host_buffers)
        buffers = [(b.name, b.gpu_address, max(b.size, needed[b.name][1]) if b.name in needed else b.size,
                    b.size, t) for b, t in zip(plan.host_buffers, typed)]
    else:
        buffers = [(name, address, size, None, None) for name, (address, size) in needed.items()]
    declared = bool(plan.host_buffers)
    out += _same_names(buffers)

    def at(index: int, *fields: str):
        """Where buffer `index` (its `fields`) was written."""
        return place(buffers[index][4], *fields)

    def label(index: int) -> str:
        name, address, size, written, _ = buffers[index]
        grown = f" (grown to the {target.name} image)" if written is not None and size > written else ""
        return f"{shown_plan_text(name)} {span(address, size)}{grown}"

    names = {b[0] for b in buffers}
    for name, (address, size) in needed.items():
        if declared and name not in names:
            out.append(Finding("host-buffer", f"the host maps no {shown_plan_text(name)} buffer; the images need "
                                              f"{span(address, size)}"))
            continue
        for index, (named, mapped, *_rest) in enumerate(buffers):
            if declared and named == name and mapped != address:
                out.append(Finding("host-buffer", f"host buffer {shown_plan_text(name)} is mapped at {mapped:#x} "
                                                  f"but the images place it at {address:#x}", at(index, "gpu")))

    indices = range(len(buffers))
    for alias in (i for i in indices if buffers[i][0].endswith("-alias")):
        _, address, size, *_rest = buffers[alias]
        homes = [i for i in indices if i != alias and not buffers[i][0].endswith("-alias")
                 and buffers[i][1] <= address and address + size <= buffers[i][1] + buffers[i][2]]
        if len(homes) != 1:
            out.append(Finding("host-overlap", f"alias {label(alias)} lies inside {len(homes)} other buffers; "
                                               f"an alias maps bytes of exactly one", at(alias, "gpu")))
    for a in indices:
        for b in indices[a + 1:]:
            if buffers[a][0].endswith("-alias") or buffers[b][0].endswith("-alias"):
                continue
            (aa, sa), (ab, sb) = buffers[a][1:3], buffers[b][1:3]
            low, high = max(aa, ab), min(aa + sa, ab + sb)
            if low < high:
                out.append(Finding("host-overlap", f"{label(a)} and {label(b)} overlap in the GPU address space "
                                                   f"at {span(low, high - low)}", at(b if ab >= aa else a, "gpu")))
    for w in plan.arena.windows:
        for index in indices:
            name, address, size, *_rest = buffers[index]
            if name in COMMAND_BUFFERS or name in needed:
                low, high = max(w.address, address), min(end(w), address + size)
                if low < high:
                    out.append(Finding("host-overlap", f"{label(index)} and window {describe(w)} overlap in the "
                                                       f"GPU address space at {span(low, high - low)}",
                                           place(w, "address") or at(index, "gpu")))
        if declared and not any(address <= w.address and end(w) <= address + size
                                for _, address, size, *_rest in buffers):
            out.append(Finding("host-buffer", f"window {describe(w)} lies in no host buffer: "
                                              "the kernels would touch unmapped memory", place(w, "address")))
    from ..nvidia.encode import RESERVED_GPU_RANGES

    for index in indices:
        _, address, size, *_rest = buffers[index]
        for what, low, high in RESERVED_GPU_RANGES:
            if address < high and low < address + size:
                out.append(Finding("host-reserved", f"{label(index)} overlaps {what} {span(low, high - low)}, "
                                                    f"which the host and the GPU use for themselves", at(index, "gpu")))
    return out


def _same_names(buffers) -> list[Finding]:
    """Two buffers the host maps with one name: the host, its steps and the images find a buffer
    by its name (the program, the QMD table, ...), so the second would stand for the first."""
    out, first = [], {}
    for index, (name, address, size, _, typed) in enumerate(buffers):
        if name not in first:
            first[name] = index
            continue
        earlier = buffers[first[name]]
        where = place(earlier[4])
        out.append(Finding("host-buffer",
                           f"the host maps two buffers named {shown_plan_text(name)}: {span(earlier[1], earlier[2])}"
                           f"{f' (the first, at {where})' if where else ''} and {span(address, size)}; a buffer "
                           f"is found by its name, so each must have its own: rename or remove one",
                           place(typed)))
    return out
