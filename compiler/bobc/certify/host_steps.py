"""The host's schedule: every host address a step reads or writes lies in one buffer the plan
maps, every checkpoint it publishes holds the contract's payload, and its reads of the input
checkpoint cover that payload; its reads of the input record lie inside the request layout's
record; the request's last publication states the contract's updates per invocation; each
published payload byte is written from the host byte the restore reads it into (where the restore
gives each payload byte a host byte of its own: _checkpoint_homes).

The addresses and extents of the host's file and memory steps are the plan's constants, so a
step that would copy an input into bytes no buffer holds (or publish a checkpoint from past
the arena's end, or of the wrong size) is refused here, naming the step, instead of failing
the invocation that reaches it (the reference runner and the host check the same rules as
they run).

The schedule is one list for both requests (docs/host-steps.md): a predict request runs it up
to its first Operation and hands its input checkpoint on unchanged, a train request runs all of
it.  So no CheckpointPublish comes before the first Operation (a predict would publish it and
move the step on), a checkpoint the schedule begins or writes is published after (a train would
otherwise drop it and hand the input state on), and submissions after the Operation, a train's
updates, end in a publication.
"""
from __future__ import annotations

from ..plan.model import Plan
from .findings import Finding, span

# step kind -> how many bytes it touches at its `host` address
_EXTENTS = {
    "read": lambda step: step.extent,
    "read_cyclic": lambda step: step.extent,
    "read_at_cursor": lambda step: step.extent,
    "write": lambda step: step.extent,
    "write_at": lambda step: step.extent,
    "record_stat": lambda step: step.extent,
    "fill": lambda step: len(step.payload),
    "assert_word": lambda step: 4,
}


def _every_step(steps, where: str = ""):
    """(name, step) of each step of the host's schedule but a Repeat, in the schedule's order, a
    repeat's body (each step once, whatever the repeat's count) where the Repeat stands; each
    named as the host-step findings name it: `step 3 (fill)`, `step 5 (repeat)'s body: step 0
    (read)`.  The one walk of check_host_steps's buffer check and check_host_writes."""
    for index, step in enumerate(steps):
        name = f"{where}step {index} ({step.kind.name})"
        if step.kind.name == "repeat":
            yield from _every_step(step.body, f"{name}'s body: ")
        else:
            yield name, step


def check_host_steps(plan: Plan, target=None, folders=(), contracts=None, images=None) -> list[Finding]:
    """Every fault of the host's schedule (the module's docstring).  With the build's `target`
    (and the kernel search `folders` the build encodes with), each Reissue's entry is held to
    the ring image's entry of its piece (check_reissues), and the buffers are the ones the host
    maps for `target`'s images (_mapped_spans; `contracts`: the program image's tensor maps).
    `images`: the build's images for `target`, encoded already (or the BobcError encoding them
    raised; certify.findings encodes them once for all its checks), else encoded here."""
    host = plan.host
    if host is None:
        return []
    if target is not None and images is None:
        from ..errors import BobcError
        from .footprints import shipped_images

        try:
            images = shipped_images(plan.program, target, folders) if contracts is None else \
                _images_of(plan, target, contracts)
        except BobcError as error:
            images = error
    buffers = _mapped_spans(plan, target, contracts, images)
    out: list[Finding] = check_host_writes(plan, target, contracts, images)
    if target is not None:
        out += check_reissues(plan, target, folders, images)
    seen: set = set()
    for name, step in _every_step(host.steps):
        extent = _EXTENTS.get(step.kind.name)
        if extent is None:
            continue
        address, size = step.host, extent(step)
        if (address, size) in seen:
            continue
        if not any(low <= address and address + size <= high for _, low, high in buffers):
            seen.add((address, size))
            near = min(buffers, key=lambda b: min(abs(address - b[1]), abs(address - b[2])), default=None)
            hint = (f"; the nearest buffer is {near[0]} {span(near[1], near[2] - near[1])}" if near
                    else "; the plan maps no buffers")
            out.append(Finding("host-step", f"the host's {name} touches {span(address, size)} "
                                            f"({size:,} bytes), which lies in no buffer the plan maps{hint}",
                               step.at))
    _ring_positions(host.steps, len(plan.program.submissions), out)
    _input_reads(host.steps, host.request.input_record_bytes, out)
    _failing_steps(host.steps, len(plan.program.submissions), out)
    _writes_after_close(host.steps, out)
    _assert_identities(host.steps, out)
    _checkpoint_tolerate(host.steps, out)
    if plan.checkpoint is not None:
        _checkpoint_bytes(host.steps, plan.checkpoint.payload_bytes, out)
        if _publishes(host.steps):       # a schedule that publishes checkpoints must resume from them
            _checkpoint_reads(host.steps, plan.checkpoint.payload_bytes, out)
        _publication_updates(host.steps, plan.checkpoint.updates_per_invocation, out)
        _checkpoint_homes(plan, host.steps, plan.checkpoint.payload_bytes, out, contracts=contracts)
        _request_split(host.steps, plan.checkpoint.updates_per_invocation, out)
    _arena_writes(plan, out)
    return out


def _arena_writes(plan: Plan, out: list[Finding]) -> None:
    """Each byte a host step writes into the device arena's window (a Read of the input record or
    checkpoint, a Fill) lies in one of the arena's residents (a step may span adjacent ones: one
    checkpoint read may fill parameters and optimizer state together): the kernels touch residents
    only (the certifier holds every pointer to one), so bytes placed in no resident are never a
    tensor a kernel reads -- an input record read at another resident's address, or 16 bytes on,
    trained on zeros and exited 0 (probe s43 newuser8)."""
    windows = plan.arena.windows
    residents = sorted(plan.arena.globals, key=lambda r: r.address)
    if not windows or not residents:
        return
    seen: set = set()
    # a step refused already (a read past the record, into a machine buffer...) is not named twice
    named = {f.message for f in out if f.kind == "host-step"}
    for name, step in _every_step(plan.host.steps):
        if any(message.startswith(f"the host's {name} ") for message in named):
            continue
        for what, address, size in _writes(step):
            if not size or (address, size) in seen:
                continue
            if not any(w.address < address + size and address < w.address + w.size for w in windows):
                continue                # not the arena's bytes: a staging buffer's, the host's own
            gap = _first_uncovered(address, address + size, residents)
            if gap is None:
                continue
            seen.add((address, size))
            low, high = gap
            before = [r for r in residents if r.address + r.size <= low]
            after = [r for r in residents if r.address >= high]
            near = (f"after resident {before[-1].name} {span(before[-1].address, before[-1].size)}" if before else
                    f"before resident {after[0].name} {span(after[0].address, after[0].size)}")
            out.append(Finding("host-step", f"the host's {name} {what}writes {span(address, size)} "
                                            f"({size:,} bytes) into the arena, and {span(low, high - low)} "
                                            f"({high - low:,} bytes, {near}) of it lie in no resident: a "
                                            f"kernel reads its tensors from residents only",
                               step.at,
                               "give the step a resident's address and at most its size (or declare the "
                               "resident the bytes are for)"))


def _first_uncovered(low: int, high: int, residents) -> tuple[int, int] | None:
    """The first run of [low, high) that no resident (sorted by address) covers, or None."""
    at = low
    for r in residents:
        if r.address + r.size <= at:
            continue
        if r.address > at:
            return at, min(r.address, high)
        at = r.address + r.size
        if at >= high:
            return None
    return (at, high) if at < high else None


# the buffers that hold the machine's own images and channel (certify/buffers.py's command
# buffers), by the name a plan's layout gives them: what each holds
MACHINE_BUFFERS = {
    "program": "the kernels' machine code and the launches' parameter blocks (the program table the "
               "certifier checked)",
    "qmd": "the launches' QMDs",
    "pushbuffer": "the submissions' GPU commands",
    "semaphores": "the submissions' completion semaphores",
    "gpfifo": "the GPFIFO ring and its USERD page",
}


def _writes(step) -> list[tuple[str, int, int]]:
    """(what, address, bytes) of each write `step` makes into device-visible memory: the bytes
    a Fill, Read, ReadCyclic or ReadAtCursor places at its `host` address, and each mapped
    write of a Commands step's native commands (CopyStateToMapped, WriteMapped, LoadImage; their
    addresses are the commands' constants).  The other kinds write the host's own files, state
    and stat block, or (RecordStat, AssertWord, Write, WriteAt) only read the buffers."""
    kind = step.kind.name
    if kind in ("read", "read_cyclic", "read_at_cursor"):
        return [("", step.host, step.extent)] if step.extent else []
    if kind == "fill":
        return [("", step.host, len(step.payload))] if step.payload else []
    out = []
    for index, command in enumerate(_native_commands(step)):
        where = f"command {index} ({command.name}) "
        if command.name == "CopyStateToMapped":
            out.append((where, command.n[1], command.n[2]))
        elif command.name == "WriteMapped":
            out.append((where, command.n[0], command.n[1]))
        elif command.name == "LoadImage":
            out.append((where, command.n[0], len(command.data)))
    return [w for w in out if w[2]]


def _native_commands(step) -> list:
    """A Commands step's decoded native commands ([] for another step, or for commands that do
    not decode: those are refused where the plan is read, plan.commands)."""
    if step.kind.name != "commands":
        return []
    from ..native import program as native

    try:
        return list(native.decode(step.commands).commands)
    except native.ProgramError:
        return []


# a mapped operand (bobc/native/program.py: an operand's kind 0 is a constant, 1 a slot, 2 a state
# word, 3 the 8-byte mapped word at its value)
_MAPPED_OPERAND = 3


def _mapped_reads(step) -> list[tuple[str, int, int]]:
    """(what, address, bytes) of each mapped read of a Commands step's native commands: a
    CopyMappedToState's range, a WaitMapped's word, every operand read from a mapped word (their
    addresses are the commands' constants, as the writes' are)."""
    out = []
    for index, command in enumerate(_native_commands(step)):
        where = f"command {index} ({command.name}) "
        if command.name == "CopyMappedToState":
            out.append((where, command.n[0], command.n[2]))
        elif command.name == "WaitMapped":
            out.append((where, command.n[0], 8))
        out.extend((where, value, 8) for kind, value in command.v if kind == _MAPPED_OPERAND)
    return [r for r in out if r[2]]


# what to do about a Commands step's mapped range outside every buffer (a plan host refuses Map by
# name: docs/host-steps.md, "Commands inside a plan host")
def _unmapped_hint() -> str:
    from ..resources import doc
    return ("a plan host's commands reach only the plan's buffers, each at its GPU address (Map is the plan "
            "host's own): give an address inside one of the layout's buffers, or add a buffer there to the "
            f"plan's layout ({doc('host-steps.md')}, \"Commands inside a plan host\")")


def _images_of(plan: Plan, target, contracts):
    """The images of `plan` for `target` with the tensor maps of `contracts`, its launches
    ordered by their footprints (nvidia/encode.py host_buffer_ranges's)."""
    from ..nvidia.encode import encode_images
    from .footprints import contract_conflicts

    return encode_images(plan.program, target, contract_conflicts(plan.program, contracts))


def _mapped_spans(plan: Plan, target=None, contracts=None, images=None) -> list[tuple[str, int, int]]:
    """(name, low, high) of each host buffer as the host maps it for `target`: a command buffer
    grown to its image where the target's image is larger (certify/buffers.py
    host_buffer_extents: sm_90's parameter blocks and QMD slots are larger than the sm_86 extents
    a plan declares), an alias its own declared bytes.  Without a target, or where the images
    cannot be laid out (check_host_buffers says why), the declared extents."""
    declared = [(b.name, b.gpu, b.gpu + b.extent) for b in plan.host.buffers]
    if target is None:
        return declared
    from ..errors import BobcError
    from .buffers import host_buffer_extents

    try:
        sized = host_buffer_extents(plan, target, contracts, images)
    except BobcError:
        return declared
    out = []
    for name, low, high in declared:
        address, size = sized.get(name, (low, high - low))
        out.append((name, low, max(high, low + size) if address == low else high))
    return out


def check_host_writes(plan: Plan, target=None, contracts=None, images=None) -> list[Finding]:
    """No host step writes the machine's own buffers (docs/host-steps.md, "What a step may
    write"): the program table (code and parameter blocks), the QMDs, the pushbuffer, the
    semaphores and the GPFIFO ring, nor an alias of their bytes, hold what the certifier checked
    (or what the host itself keeps), and a step that rewrote them would have the GPU run words
    nobody checked.  A step writes only into the plan's data buffers (the arena's, a staging
    buffer's); a Commands step's mapped write that lies in no buffer is refused too (the hosts
    would stop it with status 10 on every invocation).  With the build's `target`, a machine
    buffer is its whole extent as the host maps it for that target's images (_mapped_spans),
    and an alias inside that extent is its bytes."""
    host = plan.host
    if host is None:
        return []
    spans = _mapped_spans(plan, target, contracts, images)
    machine = [(name, low, high) for name, low, high in spans if name in MACHINE_BUFFERS]
    # an alias (a second view of bytes, docs: certify/buffers.py) inside a machine buffer is that buffer
    held = {name: what for name, _, _ in machine for what in (MACHINE_BUFFERS[name],)}
    for name, low, high in spans:
        if name not in MACHINE_BUFFERS:
            home = next((m for m in machine if m[1] <= low and high <= m[2]), None)
            if home is not None and low < high:
                machine.append((name, low, high))
                held[name] = f"bytes of {home[0]} ({MACHINE_BUFFERS[home[0]]})"
    out: list[Finding] = []
    for name, step in _every_step(host.steps):
        for what, address, size in _writes(step):
            hit = next(((n, low, high) for n, low, high in machine if address < high and low < address + size),
                       None)
            if hit is not None:
                n, low, high = hit
                out.append(Finding("host-step", f"the host's {name} {what}writes {span(address, size)} "
                                                f"({size:,} bytes) into host buffer {n} "
                                                f"{span(low, high - low)}, which holds {held[n]}: the GPU "
                                                f"would run words the certifier never checked",
                                   step.at, hint="a host step writes only the plan's data (the arena's "
                                                 "residents, a staging buffer); give the kernels their "
                                                 "values through the arena, or a launch's scalar through "
                                                 "an NvidiaPlanHostFill"))
            elif what and not any(low <= address and address + size <= high for _, low, high in spans):
                out.append(Finding("host-step", f"the host's {name} {what}writes {span(address, size)} "
                                                f"({size:,} bytes), which lies in no buffer the plan maps: "
                                                f"every invocation would stop there (status 10)", step.at,
                                   hint=_unmapped_hint()))
        # a mapped read may read any buffer (machine buffers too), but one outside them all stops the
        # host as a write there does (runtime_c/native_machine.c np_mapped, status 10)
        for what, address, size in _mapped_reads(step):
            if not any(low <= address and address + size <= high for _, low, high in spans):
                out.append(Finding("host-step", f"the host's {name} {what}reads {span(address, size)} "
                                                f"({size:,} bytes), which lies in no buffer the plan maps: "
                                                f"every invocation would stop there (status 10)", step.at,
                                   hint=_unmapped_hint()))
    return out


def check_reissues(plan: Plan, target, folders=(), images=None) -> list[Finding]:
    """Each Reissue hands the GPU the ring image's entry of the submission it waits for
    (docs/host-steps.md, Reissue): entry == word `piece` of the GPFIFO image the build encodes for
    `target` (its launches ordered by the contracts in `folders`, as pipeline.encode orders them),
    at every iteration of its repeat (piece and entry moved by their strides).  Any other word
    would have the GPU fetch and run bytes no submission of the plan produced.  `images`: that
    image, encoded already (or the BobcError encoding it raised)."""
    host = plan.host
    if host is None:
        return []
    reissues: list[tuple[str, object, int]] = []

    def walk(steps, count: int, where: str) -> None:
        for index, step in enumerate(steps):
            name = f"{where}step {index} ({step.kind.name})"
            if step.kind.name == "repeat":
                if step.count:
                    walk(step.body, step.count, f"{name}'s body: ")
            elif step.kind.name == "reissue":
                reissues.append((name, step, count))

    walk(host.steps, 1, "")
    if not reissues:
        return []
    from ..errors import BobcError
    from ..nvidia.encode import encode_images
    from ..nvidia.gpfifo import ENTRY_BYTES, decode_entry
    from .footprints import program_conflicts

    if isinstance(images, BobcError):
        return []                       # the images cannot be laid out: said by the buffer check
    try:
        if images is None:
            images = encode_images(plan.program, target, program_conflicts(plan.program, target, folders))
    except BobcError:
        return []                       # the images cannot be laid out: said by the buffer check
    ring = images.gpfifo
    submissions = len(ring) // ENTRY_BYTES

    def shown(word: int) -> str:
        entry = decode_entry(word.to_bytes(ENTRY_BYTES, "little"))
        return f"{word:#018x} (segment at {entry.address:#x}, {entry.length:,} dwords)"

    out: list[Finding] = []
    for name, step, count in reissues:
        for i in range(count):
            piece, entry = step.piece + i * step.piece_stride, step.entry + i * step.entry_stride
            when = f" at its repeat's iteration {i}" if i else ""
            if piece >= submissions:
                out.append(Finding("host-step", f"the host's {name} reissues submission {piece}{when}, but the "
                                                f"plan has {submissions} submissions", step.at))
                break
            want = int.from_bytes(ring[ENTRY_BYTES * piece:ENTRY_BYTES * (piece + 1)], "little")
            if entry != want:
                given = shown(entry) if entry < 1 << 64 else f"{entry:#x}"
                out.append(Finding("host-step", f"the host's {name} hands the GPU GPFIFO entry {given}{when}, "
                                                f"but submission {piece}'s ring entry, which it waits for, is "
                                                f"{shown(want)} on {target.name}: a Reissue issues again an "
                                                f"entry the plan's own submissions produced",
                                   step.at, hint="give the Reissue the ring image's word for its piece "
                                                 "(nvidiaPlanHostTableWord of the images' GPFIFO table at the "
                                                 "piece, as nvidiaPlanHostReissuesAdmitted checks)"))
                break
            if not (step.piece_stride or step.entry_stride):
                break                   # every iteration the same
    return out



def _ring_positions(steps, submissions: int, out: list) -> None:
    """Each Submit issues the ring image's entries from where the Submits before it ended up to
    its gpPut (docs/host-steps.md), so its gpPut is at most the plan's submissions (the image has
    one entry each) and not below an earlier Submit's (the hosts cannot issue backwards: the C host
    and the simulator stop there, the reference runner issued nothing and ran on); a Stamp's
    submission and slot are _failing_steps'.  Every
    iteration of a repeat, strides moved (bobc.plan.schedule.unroll); each step said once.

    A Submit that issues an entry (gpPut past where the Submits before it ended) after a Reissue
    is refused too: the typed hosts issue it the image's entries from there, but a request
    program (PlanHost.bob nvidiaPlanHostRequestCommands) keeps the ring image in the ring it
    issues through, each issue writing its entry into the next slot, so the Reissue overwrote
    the slot the Submit would read (and the request program goes on from the Reissue's gpPut):
    the hosts would disagree on what it issues."""
    reached = 0
    reissue = None          # the schedule's first Reissue carried out so far
    said: set[int] = set()

    def fault(step, message: str, hint: str) -> None:
        if id(step) not in said:
            said.add(id(step))
            out.append(Finding("host-step", message, step.at, hint=hint))

    def walk(steps, iteration: int, where: str) -> None:
        nonlocal reached, reissue
        for index, step in enumerate(steps):
            name = f"{where}step {index} ({step.kind.name})"
            kind = step.kind.name
            if kind == "repeat":
                for i in range(step.count):
                    walk(step.body, i, f"{name}'s body: ")
                continue
            if kind == "reissue" and reissue is None:
                reissue = (name, step)
            if kind != "submit":        # a Stamp's submission and slot: _failing_steps
                continue
            gp_put = step.gp_put + iteration * step.stride
            when = f" at its repeat's iteration {iteration}" if iteration else ""
            if gp_put > submissions:
                fault(step, f"the host's {name} submits the ring up to entry {gp_put}{when}, but the plan "
                            f"has {submissions} submissions (its ring image {submissions} entries)",
                      f"submit at most up to {submissions}, the plan's submission count")
            elif gp_put < reached:
                fault(step, f"the host's {name} submits the ring up to entry {gp_put}{when}, but the "
                            f"Submits before it already issued it up to {reached}: a Submit issues "
                            "from where the last one ended, never back",
                      "give each Submit a gpPut at least the one before it (a submission issued again "
                      "is a Reissue)")
            elif gp_put > reached and reissue is not None:
                fault(step, f"the host's {name} submits the ring's "
                            f"{f'entry {reached}' if gp_put - reached == 1 else f'entries {reached} to {gp_put - 1}'}"
                            f"{when} after "
                            f"the host's {reissue[0]}{f' at {reissue[1].at}' if reissue[1].at else ''}: a request program's ring no longer "
                            "holds those image entries (each issue writes its entry into the ring's next slot, "
                            "and the ring image lives in that ring), so the hosts would disagree on what this "
                            "Submit issues",
                      "issue every Submit before the Reissues, or re-issue those submissions with Reissue")
                reached = gp_put
            else:
                reached = gp_put

    walk(steps, 0, "")


def _checkpoint_tolerate(steps, out: list) -> None:
    """A Read of the input checkpoint says tolerateEmpty 0 or 1: the field is a flag
    (specs/Platform/Linux/Nvidia/PlanHost.bob, NvidiaPlanHostStepRead).  1: a request without
    `--checkpoint` starts from the plan's fresh state (its initializers); 0: every host refuses
    such a request, exit 2, before anything is read or written (runtime_c/plan_host.c
    checkpoint_required, bobc.plan.schedule.checkpoint_refusal).  Any other value says neither,
    and was once taken as 1 by every host (probe s44 newuser9), so it is refused here, at the step."""
    for name, step in _every_step(steps):
        if step.kind.name == "read" and step.file == "checkpoint-in" and step.tolerate_empty not in (0, 1):
            out.append(Finding("host-step", f"the host's {name} reads its input checkpoint with tolerateEmpty "
                                            f"{step.tolerate_empty:,}, but the field is a flag: 1 starts a request "
                                            f"without --checkpoint from the plan's fresh state (its initializers), "
                                            f"0 refuses such a request; write 0 or 1",
                               step.at))


def _input_reads(steps, record: int, out: list, most: int = 1 << 16) -> None:
    """Every read of the input lies inside the request layout's input record: the host accepts
    only a record of exactly that size (its record checks), so a Read past it fails every
    invocation.  A read inside a repeat reads at its offset moved by its stride each iteration
    of the innermost repeat; a cyclic read reads the records its index visits; a read at the
    cursor, whose place is the input step's, is held to the record's size."""
    said: set = set()

    def refuse(name: str, start: int, extent: int, what: str, at) -> None:
        if name in said:
            return
        said.add(name)
        out.append(Finding("host-step", f"the host's {name} reads {what}bytes [{start:,}, {start + extent:,}) of "
                                        f"its input, but the request layout's input record is {record:,} bytes: no "
                                        f"record the host accepts holds them, so every invocation would fail; "
                                        f"read inside the record (offset + extent <= {record:,})", at))

    def walk(steps, count: int, where: str) -> None:
        for index, step in enumerate(steps):
            kind, name = step.kind.name, f"{where}step {index} ({step.kind.name})"
            if kind == "repeat":
                walk(step.body, step.count, f"{where}step {index}'s body: ")
            elif kind == "read" and step.file == "input" and step.extent:
                last = step.offset + step.stride * max(0, min(count, most) - 1)
                start = max(step.offset, last)
                if start + step.extent > record:
                    refuse(name, start, step.extent, "" if start == step.offset else "(at its last iteration) ",
                           step.at)
            elif kind == "read_cyclic" and step.extent and step.count:
                visited = {(step.index + i * step.index_stride) % step.count
                           for i in range(min(count, step.count, most))}
                start = step.offset + max(visited) * step.record_bytes
                if start + step.extent > record:
                    refuse(name, start, step.extent, f"(record {max(visited)} of {step.count}) ", step.at)
            elif kind == "read_at_cursor" and step.file == "input" and step.extent > record:
                refuse(name, step.delta, step.extent, "(wherever its cursor is) ", step.at)
            elif kind == "bind_input_identity" and step.offset + step.extent > record:
                refuse(name, step.offset, step.extent, "(as its identity) ", step.at)

    walk(steps, 1, "")


def _failing_steps(steps, submissions: int, out: list) -> None:
    """A step whose operands alone make the host stop (exit 1) whenever it is reached: a file
    step of the wrong direction (a read of an output, a write of an input, a read at the cursor of
    anything but the input, a Close of anything but the predictions or the result), a cyclic
    read over zero records, a stat past the stat block, a stamp past the stamp table or of no
    submission (runtime_c/plan_host.c, whose checks `bobc sim` repeats).  Refused here, at the
    step, so the host, `bobc run --reference` and `bobc sim` never get a plan that fails at it."""
    from ..plan.host import CLOSABLE_FILES, INPUT_FILES, STAMP_SLOTS, STAT_BYTES

    def refuse(name: str, what: str, at) -> None:
        out.append(Finding("host-step", f"the host's {name} {what}", at))

    def walk(steps, count: int, where: str) -> None:
        for index, step in enumerate(steps):
            kind, name = step.kind.name, f"{where}step {index} ({step.kind.name})"
            if kind == "repeat":
                walk(step.body, step.count, f"{where}step {index}'s body: ")
            elif kind in ("read", "read_at_cursor") and step.file not in (INPUT_FILES if kind == "read"
                                                                          else ("input",)):
                refuse(name, f"reads {step.file}, {'an output' if step.file not in INPUT_FILES else 'not the input'}"
                             f": the host stops there (exit 1) on every invocation; "
                             f"{'read input or checkpoint-in' if kind == 'read' else 'a read at the cursor reads input'}",
                       step.at)
            elif kind in ("write", "write_at", "write_stat", "write_status", "write_timestamps") and \
                    step.file in INPUT_FILES:
                refuse(name, f"writes {step.file}, an input: the host stops there (exit 1) on every invocation; "
                             "write an output (predictions, result or checkpoint-out)", step.at)
            elif kind == "close" and step.file not in CLOSABLE_FILES:
                refuse(name, f"closes {step.file}: only the predictions and the result are closed (the checkpoint "
                             "is finished by its CheckpointPublish), so the host stops there (exit 1) on every "
                             "invocation; remove the Close", step.at)
            elif kind == "read_cyclic" and not step.count:
                refuse(name, "reads record (index mod 0): a cyclic read over zero records stops the host (exit 1) "
                             "on every invocation; give it a count of 1 or more", step.at)
            elif kind == "record_stat" and step.stat_offset + step.extent > STAT_BYTES:
                refuse(name, f"places bytes [{step.stat_offset:,}, {step.stat_offset + step.extent:,}) of the stat "
                             f"block, which holds {STAT_BYTES:,}: the host stops there (exit 1) on every "
                             f"invocation; keep statOffset + extent <= {STAT_BYTES:,}", step.at)
            elif kind == "stamp":
                last = step.gp_put + step.stride * max(0, count - 1)
                if step.which >= STAMP_SLOTS:
                    refuse(name, f"stamps slot {step.which:,}, but the host's stamp table holds {STAMP_SLOTS:,} "
                                 f"(0 .. {STAMP_SLOTS - 1:,}): the host stops there (exit 1) on every invocation",
                           step.at)
                elif count and last >= submissions:
                    refuse(name, f"reads the timestamp of submission {last:,}"
                                 f"{'' if last == step.gp_put else ' (at its last iteration)'}, but the plan has "
                                 f"{submissions:,} (0 .. {submissions - 1:,}): the host stops there (exit 1) on "
                                 "every invocation", step.at)

    walk(steps, 1, "")


def _assert_identities(steps, out: list) -> None:
    """An AssertWord's identity fits the C host's message (plan.host.ASSERT_IDENTITY_BYTES): a
    longer one the host would cut where `bobc run --reference` and `bobc sim` print it whole, so the
    three would say different things about the same failed word."""
    from ..errors import shown_plan_text
    from ..plan.host import ASSERT_IDENTITY_BYTES

    for name, step in _every_step(steps):
        if step.kind.name == "assert_word" and len(step.identity) > ASSERT_IDENTITY_BYTES:
            out.append(Finding("host-step", f"the host's {name} has an identity of {len(step.identity):,} bytes "
                                            f"({shown_plan_text(step.identity)}), but the host names a failed "
                                            f"AssertWord in one message line, with at most {ASSERT_IDENTITY_BYTES:,} "
                                            f"bytes of its identity; shorten the identity to {ASSERT_IDENTITY_BYTES:,} "
                                            "bytes or fewer", step.at))


def _writes_after_close(steps, out: list) -> None:
    """No step writes the predictions or the result after a Close of it (docs/host-steps.md:
    the file is finished, no step writes it again).  In the order a request carries the steps out:
    a repeat's body once, twice when it runs twice or more (a write before a Close in the body
    writes after it in the next iteration), not at all for a count of 0."""
    closed: dict = {}
    said: set = set()

    def walk(steps, where: str) -> None:
        for index, step in enumerate(steps):
            kind, name = step.kind.name, f"{where}step {index} ({step.kind.name})"
            if kind == "repeat":
                for _ in range(min(step.count, 2)):
                    walk(step.body, f"{where}step {index}'s body: ")
            elif kind == "close":
                closed.setdefault(step.file, name)
            else:
                file = "result" if kind == "write_input_identity" else getattr(step, "file", None)
                if kind.startswith("write") and file in closed and name not in said:
                    said.add(name)
                    out.append(Finding("host-step", f"the host's {name} writes {file} after {closed[file]} "
                                                    f"closed it: a closed output is finished and no step writes it "
                                                    f"again; move the Close after the file's last write", step.at))

    walk(steps, "")


def _publication_updates(steps, updates: int, out: list) -> None:
    """A publication's envelope holds the input's step + the updates it states
    (docs/host-steps.md, CheckpointPublish), and a resume is admitted by the contract's updates
    per invocation (the next invocation's room): the request's last publication states the
    contract's updates per invocation, and no publication states more, nor fewer than one
    before it."""
    found: list[tuple[str, int, object]] = []

    def walk(steps, where: str) -> None:
        for index, step in enumerate(steps):
            kind, name = step.kind.name, f"{where}step {index}"
            if kind == "repeat" and step.count and _publishes(step.body):
                walk(step.body, f"{name}'s body: ")
            elif kind == "checkpoint_publish":
                found.append((f"{name} (checkpoint_publish)", step.updates, step.at))

    walk(steps, "")
    if not found:
        return
    name, last, at = found[-1]
    if last != updates:
        out.append(Finding("host-step", f"the host's {name}, the request's last publication, publishes the "
                                        f"checkpoint at the input's step + {last:,}, but the checkpoint contract "
                                        f"makes {updates:,} updates per invocation: its step would not count the "
                                        f"updates made; state {updates:,} (or make the contract's updates per "
                                        f"invocation the schedule's)", at))
    for (name, stated, at), (_, before, _) in zip(found[1:], found):
        if stated < before:
            out.append(Finding("host-step", f"the host's {name} publishes the checkpoint at the input's step + "
                                            f"{stated:,}, fewer updates than the publication before it states "
                                            f"({before:,}): a later publication holds later state", at))
    for name, stated, at in found[:-1]:
        if stated > updates:
            out.append(Finding("host-step", f"the host's {name} publishes the checkpoint at the input's step + "
                                            f"{stated:,}, more than the contract's {updates:,} updates per "
                                            f"invocation", at))


_SUBMITS = ("submit", "reissue")


def _in_order(steps, where: str = ""):
    """(name, step) of each step in the order a request carries them out, a repeat's body once
    (its first iteration runs first and its last last, so what comes first and what comes last is
    the unrolled schedule's) and a repeat of count 0 not at all."""
    for index, step in enumerate(steps):
        name = f"{where}step {index}"
        if step.kind.name == "repeat":
            if step.count:
                yield from _in_order(step.body, f"{name}'s body: ")
        else:
            yield f"{name} ({step.kind.name})", step


def _writes_checkpoint(step) -> bool:
    return step.kind.name in _RESETS or (step.kind.name in ("write", "write_at") and step.file == "checkpoint-out")


def _request_split(steps, updates: int, out: list) -> None:
    """What each request runs of the one schedule: a predict request stops at the first
    Operation (outputs published, its input checkpoint handed on), a train request runs it all.
    No CheckpointPublish comes before that Operation (a predict would publish it, a step on);
    nothing begins or writes the output checkpoint after the last CheckpointPublish (a train would
    drop it and hand its input state on: the checkpoint is published by a CheckpointPublish, never
    by the request's end); and submissions after the Operation (the training) end in one."""
    order = list(_in_order(steps))
    operation = next((i for i, (_, s) in enumerate(order) if s.kind.name == "operation"), None)
    publishes = [i for i, (_, s) in enumerate(order) if s.kind.name == "checkpoint_publish"]
    publish = (f"NvidiaPlanHostStepCheckpointPublish {updates} 1 (the contract's {updates:,} updates per "
               f"invocation)")
    early = [i for i in publishes if operation is None or i < operation]
    if early:
        name, step = order[early[0]]
        if operation is None:
            out.append(Finding("host-step", f"the host's {name} publishes a checkpoint, but the schedule has no "
                                            f"Operation step: a predict request runs the schedule up to its first "
                                            f"Operation, so it would run all of it, its training included, and "
                                            f"publish a checkpoint {order[publishes[-1]][1].updates:,} update(s) "
                                            f"on; add "
                                            f"NvidiaPlanHostStepOperation where a predict ends (after its "
                                            f"predictions and result are written, before the training submissions "
                                            f"and the checkpoint)", step.at))
        else:
            out.append(Finding("host-step", f"the host's {name} publishes a checkpoint before the schedule's first "
                                            f"Operation ({order[operation][0]}): a predict request runs the "
                                            f"schedule up to there, so it would publish it and move the step on; "
                                            f"put the Operation before the training submissions and the "
                                            f"checkpoint", step.at))
    last = publishes[-1] if publishes else -1
    unpublished = [i for i, (_, s) in enumerate(order) if i > last and _writes_checkpoint(s)]
    if unpublished:
        name, step = order[unpublished[0]]
        what = ("begins the output checkpoint" if step.kind.name in _RESETS
                else f"writes {step.extent:,} bytes of the output checkpoint")
        after = "after the last CheckpointPublish" if publishes else "and the schedule has no CheckpointPublish"
        out.append(Finding("host-step", f"the host's {name} {what} {after}: a checkpoint written but never "
                                        f"published is dropped, and a train request hands its input checkpoint on "
                                        f"unchanged (the training lost); end it with {publish} after its writes",
                           step.at))
    elif operation is not None and not any(i > operation for i in publishes):
        trained = next((order[i] for i in range(operation + 1, len(order)) if order[i][1].kind.name in _SUBMITS),
                       None)
        if trained is not None:
            out.append(Finding("host-step", f"the host's {trained[0]} comes after the schedule's first Operation "
                                            f"({order[operation][0]}), where a train request's updates are, but no "
                                            f"checkpoint is published after it: a train request would hand its "
                                            f"input checkpoint on unchanged (the training lost); write the "
                                            f"checkpoint after the training (CheckpointBegin, Write of "
                                            f"checkpoint-out, {publish})", trained[1].at))


def _checkpoint_reads(steps, payload: int, out: list, most: int = 1 << 16) -> None:
    """The host's reads of its input checkpoint cover the contract's payload, and read nothing
    past it: a resume restores every byte the checkpoint holds (a schedule reading one chunk of
    three resumed with the rest fresh).  A read inside a repeat reads at its offset moved by its
    stride each iteration of the innermost repeat."""
    spans: list[tuple[int, int]] = []
    places: list = []           # where the reads were written

    def walk(steps, count: int) -> None:
        for step in steps:
            if step.kind.name == "repeat":
                walk(step.body, step.count)
            elif step.kind.name == "read" and step.file == "checkpoint-in" and len(spans) < most:
                places.append(step.at)
                spans.extend((step.offset + i * step.stride, step.extent)
                             for i in range(min(count, most - len(spans))) if step.extent)

    walk(steps, 1)
    covered, gaps, past = 0, [], []
    for start, extent in sorted(spans):
        if start > covered:
            gaps.append((covered, start))
        covered = max(covered, start + extent)
        if start + extent > payload:
            past.append((start, start + extent))
    if covered < payload:
        gaps.append((max(covered, 0), payload))
    gaps = [(a, min(b, payload)) for a, b in gaps if a < payload]
    if not spans:
        out.append(Finding("host-step", f"the host's schedule never reads its input checkpoint, whose payload is "
                                        f"{payload:,} bytes: a resume would start fresh; read the payload from "
                                        f"the checkpoint (file checkpoint-in) into the arena"))
    elif gaps:
        shown = ", ".join(f"[{a:,}, {b:,})" for a, b in gaps[:3]) + (" ..." if len(gaps) > 3 else "")
        out.append(Finding("host-step", f"the host's reads of its input checkpoint leave bytes {shown} of its "
                                        f"{payload:,}-byte payload unread: a resume would keep the fresh values "
                                        f"there; read every chunk", next(filter(None, places), None)))
    if past:
        out.append(Finding("host-step", f"the host reads bytes [{past[0][0]:,}, {past[0][1]:,}) of its input "
                                        f"checkpoint, past its {payload:,}-byte payload",
                           next(filter(None, places), None)))


_RESETS = ("checkpoint_begin", "begin_checkpoint")


def _checkpoint_bytes(steps, payload: int, out: list) -> None:
    """The bytes written to the output checkpoint since its last begin, at each publish, are
    the contract's payload (appends count their extent; a write at an offset reaches its end).
    A repeat whose body neither begins nor publishes adds its body's bytes count times; one
    that does is walked twice (every later iteration starts as the second)."""
    wrong: list[tuple[str, int, object]] = []

    def walk(steps, written: int, where: str) -> int:
        for index, step in enumerate(steps):
            kind, name = step.kind.name, f"{where}step {index}"
            if kind == "repeat":
                if not _publishes(step.body):
                    once = walk(step.body, 0, f"{name}'s body: ")
                    written += step.count * once
                else:
                    for _ in range(min(step.count, 2)):
                        written = walk(step.body, written, f"{name}'s body: ")
            elif kind in _RESETS:
                written = 0
            elif kind == "write" and step.file == "checkpoint-out":
                written += step.extent
            elif kind == "write_at" and step.file == "checkpoint-out":
                written = max(written, step.offset + step.extent)
            elif kind == "checkpoint_publish" and written != payload:
                wrong.append((f"{name} (checkpoint_publish)", written, step.at))
        return written

    walk(steps, 0, "")
    for name, (written, at) in {name: (written, at) for name, written, at in wrong}.items():
        out.append(Finding("host-step", f"the host's {name} publishes a checkpoint of {written:,} bytes, but the "
                                        f"contract's payload is {payload:,} bytes: write the whole payload (every "
                                        f"chunk) between the checkpoint's begin and its publish", at))


# _publishes's answers by the steps' identity (each entry keeps its steps, so no other tuple takes
# that id while it is here): the walks ask it at every nesting level, so without them a schedule of
# repeats nested N deep cost N^2 (96 s of CPU at 5,000; probe s43 scale)
_PUBLISHES: dict[int, tuple[object, bool]] = {}


def _publishes(steps) -> bool:
    known = _PUBLISHES.get(id(steps))
    if known is not None and known[0] is steps:
        return known[1]
    answer = any(s.kind.name in _RESETS + ("checkpoint_publish",)
                 or (s.kind.name == "repeat" and _publishes(s.body)) for s in steps)
    if len(_PUBLISHES) >= 1 << 16:
        _PUBLISHES.clear()
    _PUBLISHES[id(steps)] = (steps, answer)
    return answer


def _checkpoint_homes(plan: Plan, steps, payload: int, out: list, most: int = 1 << 16, contracts=None) -> None:
    """Every payload byte of each published checkpoint is written from the host bytes its resume
    reads it into: a save from one place and a restore into another would resume from whatever
    the restored place held (a model saving its gradient and restoring its parameters resumes
    from the gradient as weights, and certifies every other rule).

    Checked where the restore gives every payload byte a home of its own (no two payload bytes
    read into the same host byte: the checkpoint read straight into the residents that hold the
    state).  A restore that reads chunk after chunk into one staging area moves the state on with
    launches: given the kernels' `contracts`, their declared copies (`//@ copy`) are followed
    (_staged_homes); without them such a schedule is not held to this rule: docs/host-steps.md,
    "Where a checkpoint is saved from"."""
    restore: list[tuple[int, int, int]] = []            # (payload start, extent, host)

    def reads(steps, count: int) -> None:
        for step in steps:
            if step.kind.name == "repeat":
                reads(step.body, step.count)
            elif step.kind.name == "read" and step.file == "checkpoint-in" and step.extent:
                restore.extend((step.offset + i * step.stride, step.extent, step.host)
                               for i in range(min(count, most - len(restore))))

    reads(steps, 1)
    if not restore:
        return                          # _checkpoint_reads refuses a schedule that never restores
    homes = sorted((host, host + extent) for _, extent, host in restore)
    if any(later[0] < earlier[1] for earlier, later in zip(homes, homes[1:])):
        # staged: one host area restores several payload bytes, moved on by launches whose declared
        # copies (`//@ copy`) the walk follows (without the kernels' contracts, not checked)
        if contracts is not None:
            _staged_homes(plan, steps, payload, contracts, out, most)
        return
    compared: set = set()                               # the publications' saves compared so far
    segments: list[tuple[int, int, int, str, object]] = []  # (payload start, extent, host, name, at)
    position = 0

    def writes(steps, where: str) -> None:
        nonlocal position, segments
        for index, step in enumerate(steps):
            kind, name = step.kind.name, f"{where}step {index}"
            if kind == "repeat":
                for _ in range(min(step.count, 2 if _publishes(step.body) else most)):
                    writes(step.body, f"{name}'s body: ")
            elif kind in _RESETS:
                position, segments = 0, []
            elif kind in ("write", "write_at") and step.file == "checkpoint-out" and step.extent:
                start = position if kind == "write" else step.offset
                if len(segments) < most:
                    segments.append((start, step.extent, step.host, f"{name} ({kind})", step.at))
                position = start + step.extent if kind == "write" else max(position, start + step.extent)
            elif kind == "checkpoint_publish":
                if tuple(segments) not in compared:
                    compared.add(tuple(segments))
                    _compare_homes(plan, segments, restore, payload, out)

    writes(steps, "")


def _resident_of(plan: Plan, address: int, named=()) -> str:
    """`parameters` (the global resident holding `address`, at its offset; `named`: residents a
    request program names, tried first), else the buffer."""
    for resident in (*named, *plan.arena.globals):
        if resident.address <= address < resident.address + resident.size:
            offset = address - resident.address
            return f"resident {resident.name}" + (f" at offset {offset:,}" if offset else "")
    for buffer in plan.host_buffers:
        if buffer.gpu_address <= address < buffer.gpu_address + buffer.size:
            return f"buffer {buffer.name} at offset {address - buffer.gpu_address:,}"
    return f"host address {address:#x}"


def _compare_homes(plan: Plan, segments, restore, payload: int, out: list) -> None:
    """One publication's save against the restore: the first payload range each save step
    writes from another place than the restore reads it into (one finding per step)."""
    for start, extent, host, name, at in segments:
        for r_start, r_extent, r_host in sorted(restore):
            low, high = max(start, r_start), min(start + extent, r_start + r_extent, payload)
            if low >= high or host - start == r_host - r_start:
                continue
            saved, restored = host + (low - start), r_host + (low - r_start)
            finding = Finding(
                "host-step",
                f"the host's {name} writes checkpoint payload bytes [{low:,}, {high:,}) from "
                f"{span(saved, high - low)} ({_resident_of(plan, saved)}), but a resume reads those bytes "
                f"into {span(restored, high - low)} ({_resident_of(plan, restored)}): a resume would load "
                f"what {_resident_of(plan, saved)} held there as {_resident_of(plan, restored)} and train "
                f"from it; write the "
                f"checkpoint from the address its checkpoint-in Read fills ({restored:#x}), or read it back "
                f"into the one this Write saves ({saved:#x})", at)
            if all(f.message != finding.message for f in out):
                out.append(finding)
            break


# ---- staged checkpoints: payload bytes followed through declared copies (`//@ copy`) ----

class _Origins:
    """Where the bytes of device-visible memory came from, by address range: sorted, disjoint
    (low, high, tag, base, via) pieces, byte x of one holding (tag, base + x - low); `via` says how
    the bytes got there (a launch's declared copy).  Tags: "payload" (checkpoint payload byte
    base + ...), "address" (the bytes another address held), "unknown" (written by something the
    certifier cannot follow).  A byte in no piece holds what its own address holds."""

    __slots__ = ("pieces",)

    def __init__(self):
        self.pieces: list[tuple[int, int, str, int, str]] = []

    def get(self, low: int, high: int, tag: str = "address") -> list[tuple[int, int, str, int, str]]:
        """The pieces covering [low, high), cut to it; a gap a piece of `tag` (its own address)."""
        out, at = [], low
        for p_low, p_high, p_tag, base, via in self.pieces:
            if p_high <= low or p_low >= high:
                continue
            start, stop = max(p_low, low), min(p_high, high)
            if start > at:
                out.append((at, start, tag, at, ""))
            out.append((start, stop, p_tag, base + (start - p_low), via))
            at = stop
        if at < high:
            out.append((at, high, tag, at, ""))
        return out

    def put(self, low: int, high: int, pieces) -> None:
        """[low, high) now holds `pieces` ((low, high, tag, base, via), inside it; a gap: its own)."""
        kept = []
        for p_low, p_high, tag, base, via in self.pieces:
            if p_high <= low or p_low >= high:
                kept.append((p_low, p_high, tag, base, via))
                continue
            if p_low < low:
                kept.append((p_low, low, tag, base, via))
            if p_high > high:
                kept.append((high, p_high, tag, base + (high - p_low), via))
        kept.extend(p for p in pieces if p[0] < p[1])
        kept.sort()
        self.pieces = kept

    def taint(self, low: int, high: int) -> None:
        """A write the certifier cannot follow: bytes that held copies hold unknown bytes now (a
        byte holding its own address's bytes stays its own: a kernel updating a resident in place)."""
        hit = [(max(a, low), min(b, high)) for a, b, tag, _, _ in self.pieces
               if a < high and low < b and tag != "unknown"]
        for a, b in hit:
            self.put(a, b, [(a, b, "unknown", 0, "")])


def _unrolled(steps, where: str = "", iteration: int = 0):
    """(name, step, values) of every step but a Repeat, repeats unrolled, each strided field
    moved by the innermost repeat's iteration (bobc.plan.schedule.unroll's order and values)."""
    for index, step in enumerate(steps):
        name = f"{where}step {index} ({step.kind.name})"
        if step.kind.name == "repeat":
            for i in range(step.count):
                yield from _unrolled(step.body, f"{where}step {index} (repeat)'s body: ", i)
            continue
        values = {f.name: getattr(step, f.name) for f in step.kind.fields}
        for f in step.kind.fields:
            if f.stride_of:
                values[f.stride_of] += iteration * values[f.name]
        yield name, step, values


def _launch_moves(plan: Plan, contracts: dict, index: int, argument_word: int, residents):
    """What launch `index` does to memory, as the walk follows it: ("copies", [(source,
    destination, bytes, via)], other writes [(low, high)]) -- its declared copies evaluated on its
    patched words, and the rest of its footprint's writes -- or ("unknown", why) where its contract,
    footprint or a copy's size is not known."""
    from ..errors import shown_path
    from .footprints import launch_footprint
    from .pointers import launch_words

    program = plan.program
    if not 0 <= index < len(program.launches):
        return "unknown", f"launch {index} is not one of the plan's"
    launch = program.launches[index]
    identity = program.regions[launch.region].identity if 0 <= launch.region < len(program.regions) else "?"
    contract = contracts.get(identity)
    footprint = launch_footprint(plan, index, contract, argument_word, residents)
    if footprint is None:
        return "unknown", f"launch {index} ({identity}) has no footprint the certifier knows"
    words = launch_words(launch, argument_word)
    copies = []
    for copy in contract.copies:
        size, why = copy.bytes_for(words)
        if size is None or copy.source not in words or copy.destination not in words:
            return "unknown", (f"launch {index} ({identity})'s //@ copy ({shown_path(contract.source)}:{copy.line}) "
                               f"cannot be evaluated on its patched words{': ' + why if why else ''}")
        if size:
            # where the plan wrote the launch too: the gather or scatter to mend is there, not at
            # the step (a launch's index alone sends the reader counting the schedule)
            written = f"; the launch: {launch.at}" if launch.at is not None else ""
            copies.append((words[copy.source], words[copy.destination], size,
                           f"launch {index} ({identity})'s //@ copy {copy.source} to {copy.destination} "
                           f"({shown_path(contract.source)}:{copy.line}{written})"))
    copied = [(d, d + n) for _, d, n, _ in copies]
    others = []
    for low, high in footprint.writes:
        pieces = [(low, high)]
        for c_low, c_high in copied:
            pieces = [q for a, b in pieces for q in ((a, min(b, c_low)), (max(a, c_high), b)) if q[0] < q[1]]
        others.extend(pieces)
    return "copies", copies, others


def _staged_homes(plan: Plan, steps, payload: int, contracts: dict, out: list, most: int = 1 << 16,
                  device=None, homes_in=None, named=()) -> None:
    """_checkpoint_homes for a restore staged through one host area (docs/host-steps.md, "Where a
    checkpoint is saved from", staged): the schedule walked in order, repeats unrolled (at most
    `most` steps), each Submit's and Reissue's submissions' launches followed through their
    contracts' declared copies (`//@ copy`).

    The restore (the steps before the first Operation) puts payload byte p into the staging area
    its checkpoint-in Read fills, and each declared copy moves it on: payload byte p's home is the
    resident byte (plan.arena.globals, outside the staging areas) it ends in.  From the Operation on
    each byte is its own address's bytes, moved by the declared copies; each publication's Write of
    checkpoint-out takes payload byte p from the place its host byte came from.  A save whose place
    is a known address that is not p's home is refused at the Write (its first wrong range, once a
    step).  Not checked (neither refused nor claimed): a byte a launch with no copy contract wrote
    after a copy put it there, or that a host step wrote (its origin unknown), a payload byte with no
    home (left in staging, or overwritten by a launch that declares no copy), and everything after a
    launch with no footprint or a copy whose size cannot be evaluated (the walk stops).

    `device`: the device address of a host step's host address (a request program's layout maps a
    buffer at another host address than its GPU one: certify.request_schedule), else the same;
    `homes_in`: the places a payload byte's home may be (plan.arena.globals unless given); `named`:
    residents (plan.model.Resident) a finding names a place by before the plan's own and its buffers
    -- a request program's, nvidiaPlanHostRequestCommandsNamed's -- and nothing else reads."""
    from ..nvidia.encode import plan_parameter_base
    from .pointers import ByAddress

    program = plan.program
    if program is None:
        return
    device = device or (lambda address: address)
    homes_in = plan.arena.globals if homes_in is None else homes_in
    argument_word = plan_parameter_base(program) // 8
    residents = ByAddress(plan.arena.globals)
    submissions = program.submissions
    moves: dict[int, tuple] = {}
    staging: list[tuple[int, int]] = []
    origins = _Origins()
    restoring = True
    homes: list[tuple[int, int, int]] = []          # (payload low, high, resident address of low)
    position, gp_put, refused = 0, 0, set()

    def launch(index: int) -> bool:
        if index not in moves:
            moves[index] = _launch_moves(plan, contracts, index, argument_word, residents)
        move = moves[index]
        if move[0] == "unknown":
            return False
        _, copies, others = move
        taken = [(d, n, origins.get(s, s + n), s, via) for s, d, n, via in copies]   # every source first
        for destination, size, pieces, source, via in taken:
            if restoring:
                pieces = [(a - source + destination, b - source + destination, tag, base, via)
                          for a, b, tag, base, _ in pieces if tag == "payload"]
                origins.put(destination, destination + size, pieces)
            else:
                origins.put(destination, destination + size,
                            [(a - source + destination, b - source + destination, tag, base, via)
                             for a, b, tag, base, _ in pieces])
        for low, high in others:
            if restoring:
                origins.put(low, high, [])
            else:
                origins.taint(low, high)
        return True

    def end_restore() -> None:
        nonlocal origins, restoring
        for low, high, tag, base, _ in origins.pieces:
            if tag != "payload":
                continue
            for resident in homes_in:
                a, b = max(low, resident.address), min(high, resident.address + resident.size)
                for s_low, s_high in staging:                   # a staging area is no home
                    if s_low <= a and b <= s_high:
                        a = b
                if a < b:
                    homes.append((base + (a - low), base + (b - low), a))
        homes.sort()
        origins, restoring = _Origins(), False

    def compare(name: str, at, start: int, host: int, extent: int) -> None:
        if name in refused:
            return
        for low, high, tag, base, via in origins.get(host, host + extent):
            if tag != "address":
                continue
            p_low = start + (low - host)
            for h_low, h_high, home in homes:
                a, b = max(p_low, h_low), min(p_low + (high - low), h_high, payload)
                if a >= b:
                    continue
                saved, restored = base + (a - p_low), home + (a - h_low)
                if saved == restored:
                    continue
                staged = (f" (staged: {span(host + (a - start), b - a)} holds them, put there by {via})"
                          if via else "")
                source, home = _resident_of(plan, saved, named), _resident_of(plan, restored, named)
                out.append(Finding(
                    "host-step",
                    f"the host's {name} writes checkpoint payload bytes [{a:,}, {b:,}) from "
                    f"{span(saved, b - a)} ({source}){staged}, but a resume puts those bytes "
                    f"into {span(restored, b - a)} ({home}) through its staged restore: "
                    f"a resume would load what {source} held there as "
                    f"{home} and train from it; gather the chunk from the address the "
                    f"restore scatters it to ({restored:#x}), or scatter it back to the one this save gathers "
                    f"({saved:#x})", at))
                refused.add(name)
                return

    count = 0
    for name, step, values in _unrolled(steps):
        count += 1
        if count > most:
            return
        kind = step.kind.name
        if kind == "operation" and restoring:
            end_restore()
        elif kind == "submit":
            end = min(values["gp_put"], len(submissions))
            for index in range(gp_put, end):
                if not all(launch(i) for i in submissions[index].launches):
                    return              # a launch the walk cannot follow: nothing past it is checked
            gp_put = max(gp_put, end)
        elif kind == "reissue":
            if values["piece"] < len(submissions):
                if not all(launch(i) for i in submissions[values["piece"]].launches):
                    return
        elif kind == "read" and step.file == "checkpoint-in" and step.extent:
            host = device(step.host)
            if restoring:
                staging.append((host, host + step.extent))
                origins.put(host, host + step.extent, [(host, host + step.extent, "payload", values["offset"], "")])
            else:
                origins.taint(host, host + step.extent)
                origins.put(host, host + step.extent, [(host, host + step.extent, "unknown", 0, "")])
        elif kind in _RESETS:
            if restoring:
                end_restore()
            position = 0
        elif kind in ("write", "write_at") and step.file == "checkpoint-out" and step.extent:
            if restoring:
                end_restore()
            start = position if kind == "write" else values["offset"]
            compare(name, step.at, start, device(step.host), step.extent)
            position = start + step.extent if kind == "write" else max(position, start + step.extent)
        else:
            for _, address, size in _writes(step):
                address = device(address)
                if restoring:
                    origins.put(address, address + size, [])
                else:
                    origins.put(address, address + size, [(address, address + size, "unknown", 0, "")])
