"""Host buffers: disjoint in the GPU address space, at the images' bases, mapping every window."""
from __future__ import annotations

from ..errors import BobcError
from ..plan.model import Plan, place
from ..targets import Target
from .findings import Finding, describe, end, span


COMMAND_BUFFERS = ("program", "qmd", "pushbuffer", "semaphores", "gpfifo")


def host_buffer_extents(plan: Plan, target: Target, contracts=None) -> dict[str, tuple[int, int]]:
    """name -> (GPU address, bytes) the host must map for `target`'s images.

    A declared buffer keeps its address; a command buffer (program, QMD
    table, pushbuffer, semaphores) grows to its image when the image is
    larger (the plan sizes them for sm_86: sm_90's parameter blocks and QMD
    slots are twice as large).  Without declared buffers, the command buffers
    are the images at the plan's bases.  The program image holds the tensor
    maps of `contracts` (bobc.nvidia.encode).  Raises BobcError when the images
    cannot be laid out.
    """
    from ..nvidia.encode import host_buffer_ranges

    needed = host_buffer_ranges(plan.program, target, contracts)
    if not plan.host_buffers:
        return dict(needed)
    out = {}
    for b in plan.host_buffers:
        size = b.size
        if b.name in needed:
            size = max(size, needed[b.name][1])
        out[b.name] = (b.gpu_address, size)
    return out


def check_host_buffers(plan: Plan, target: Target, contracts=None) -> list[Finding]:
    """Host buffers pairwise disjoint, the command buffers at the images' bases, windows mapped and apart.

    A buffer whose name ends in "-alias" declares that it maps bytes of another
    on purpose (a plan's view of the USERD page after its GPFIFO ring, say):
    it must lie wholly inside one other buffer, and overlaps nothing else.
    """
    from ..nvidia.encode import host_buffer_ranges

    out: list[Finding] = []
    try:
        needed = host_buffer_ranges(plan.program, target, contracts)
        spans = host_buffer_extents(plan, target, contracts)
    except BobcError as error:
        return [Finding("layout", f"the images cannot be laid out: {error.message}")]
    declared = {b.name: b for b in plan.host_buffers}
    typed = {b.name: b for b in (plan.host.buffers if plan.host is not None else ())}

    def at(name: str, *fields: str):
        """Where buffer `name` (its `fields`) was written."""
        return place(typed.get(name), *fields)
    for name, (address, size) in needed.items():
        if declared and name not in declared:
            out.append(Finding("host-buffer", f"the host maps no {name} buffer; the images need "
                                              f"{span(address, size)}"))
        elif name in declared and declared[name].gpu_address != address:
            out.append(Finding("host-buffer", f"host buffer {name} is mapped at {declared[name].gpu_address:#x} "
                                              f"but the images place it at {address:#x}", at(name, "gpu")))

    def label(name: str) -> str:
        address, size = spans[name]
        grown = f" (grown to the {target.name} image)" if name in declared and size > declared[name].size else ""
        return f"{name} {span(address, size)}{grown}"

    names = list(spans)
    for alias in (n for n in names if n.endswith("-alias")):
        address, size = spans[alias]
        homes = [n for n in names if n != alias and not n.endswith("-alias")
                 and spans[n][0] <= address and address + size <= spans[n][0] + spans[n][1]]
        if len(homes) != 1:
            out.append(Finding("host-overlap", f"alias {label(alias)} lies inside {len(homes)} other buffers; "
                                               f"an alias maps bytes of exactly one", at(alias, "gpu")))
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if a.endswith("-alias") or b.endswith("-alias"):
                continue
            (aa, sa), (ab, sb) = spans[a], spans[b]
            low, high = max(aa, ab), min(aa + sa, ab + sb)
            if low < high:
                out.append(Finding("host-overlap", f"{label(a)} and {label(b)} overlap in the GPU address space "
                                                   f"at {span(low, high - low)}", at(b if ab >= aa else a, "gpu")))
    for w in plan.arena.windows:
        for name in names:
            address, size = spans[name]
            if name in COMMAND_BUFFERS or name in needed:
                low, high = max(w.address, address), min(end(w), address + size)
                if low < high:
                    out.append(Finding("host-overlap", f"{label(name)} and window {describe(w)} overlap in the "
                                                       f"GPU address space at {span(low, high - low)}",
                                           place(w, "address") or at(name, "gpu")))
        if declared and not any(address <= w.address and end(w) <= address + size
                                for address, size in spans.values()):
            out.append(Finding("host-buffer", f"window {describe(w)} lies in no host buffer: "
                                              "the kernels would touch unmapped memory", place(w, "address")))
    from ..nvidia.encode import RESERVED_GPU_RANGES

    for name in names:
        address, size = spans[name]
        for what, low, high in RESERVED_GPU_RANGES:
            if address < high and low < address + size:
                out.append(Finding("host-reserved", f"{label(name)} overlaps {what} {span(low, high - low)}, "
                                                    f"which the host and the GPU use for themselves", at(name, "gpu")))
    return out
