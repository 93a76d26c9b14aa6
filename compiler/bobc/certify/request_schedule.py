"""A request program's schedule, held to the plan host's host-step rules.

A plan host lowered to one native program (PlanHost.bob `nvidiaPlanHostRequestCommands`, seed 004's
host: docs/host-steps.md, "The request's native program") is written by the `compiler-native-encode
(family NativePhysicalProgram)` handler (bobc.native.writer) as one program value: its schedule is
lowered (repeats unrolled, each step a few native commands) and no longer a schedule.  The handler
receives that value unevaluated (call by need), as the expression the plan wrote and the values its
variables stand for; when the expression is (through definitions, lets and applied lambdas) an
application of `nvidiaPlanHostRequestCommands` or `nvidiaPlanHostRequestCommandsFresh` to all its
arguments, the arguments are the plan host's own: its layout, checkpoint contract, submissions and
schedule (`request_call`).  The schedule is then extracted as a plan host's (bobc.plan.extract) and
the host-step rules about the schedule's meaning, which the lowered program shares, run on it
(`request_findings`): a write of the predictions or the result after its Close (the lowered Close
is a no-op, so the write went through), a checkpoint publication of another size than the
contract's payload, a restore that does not cover the payload, a publication's updates, the split
between a predict and a train request, and a save from another place than the restore fills (a
restore read straight into its homes).

Not run here: the rules about what stops the plan host's own interpreter (`_failing_steps`,
`_ring_positions`, `_assert_identities`: its 4,096 stamp slots, a stamp of a submission the plan
lacks, its 384-byte identity buffer), which the lowered program does not share (its 64 stamp slots,
a stamp read as the semaphore's word; tests/native/plans/Native/Request.bob stamps with no
submissions); a restore staged through one host area and moved on by launches (the launches'
declared copies are the whole-program plan's and its kernels' contracts, which the request program
does not carry: seed 004's) -- held once the build knows the images the host embeds
(`request_staged_findings`, called by bobc.native.build.refuse_staged_request); a Reissue's entry against the ring image (the plan's own
`nvidiaPlanHostReissuesAdmitted`); and a request program written any other way than as an
application of those two definitions (a value built by other means, or one evaluated before the
writer saw it).  `bobc build --entry`, `bobc check --entry` (which evaluates the artifact as the build
does: bobc.native.build.checked_artifact) and what writes the host through the same handler run these.
"""
from __future__ import annotations

from ..language.core import App, Con, Global, Lam, Let, Local, The
from ..language.values import GlobalThunk, Thunk, VLam

LIBRARY = "Platform.Linux.Nvidia.PlanHost"
# the definition -> its arguments' names, in order
CALLS = {
    f"{LIBRARY}.nvidiaPlanHostRequestCommands": (
        "layout", "product", "programIdentity", "qmdIdentity", "pushIdentity", "gpfifoIdentity",
        "programLength", "qmdLength", "pushLength", "gpfifoLength", "submissions", "input", "checkpoint",
        "fills", "learner", "steps"),
}
CALLS[f"{LIBRARY}.nvidiaPlanHostRequestCommandsFresh"] = ("fresh",) + CALLS[f"{LIBRARY}.nvidiaPlanHostRequestCommands"]
# the same program, its arena residents named for the staged-restore findings (request_staged_findings)
CALLS[f"{LIBRARY}.nvidiaPlanHostRequestCommandsNamed"] = ("residents",) + CALLS[f"{LIBRARY}.nvidiaPlanHostRequestCommands"]
PROGRAM_FAMILY = "NativePhysicalProgram"
_MOST = 100_000          # terms walked looking for the call (the walk evaluates nothing but heads)


def request_call(value) -> dict | None:
    """The arguments (by name, unevaluated) of the nvidiaPlanHostRequestCommands[Fresh] application
    the NativePhysicalProgram `value` (unevaluated, as the writer's handler receives it) is the program
    of, else None.  Nothing is evaluated but definitions' and variables' own (shared) values."""
    if not isinstance(value, Thunk) or value.term is None:
        return None
    if value.env is None and not isinstance(value, GlobalThunk) and value.value is not None:
        return None                     # evaluated before: its variables' values are gone
    term, env, pending = value.term, value.env, []
    for _ in range(_MOST):
        kind = type(term)
        if kind is The:
            term = term.expression
        elif kind is Let:
            env, term = (term.value.lazy(env), env), term.body
        elif kind is App:
            pending = [argument.lazy(env) for argument in term.arguments] + pending
            term = term.function
        elif kind is Lam:
            if not pending:
                return None
            env, term = (pending.pop(0), env), term.body
        elif kind is Global:
            names = CALLS.get(term.definition.key)
            if names is not None:
                return dict(zip(names, pending)) if len(pending) == len(names) else None
            if term.definition.body is None:
                return None
            term, env = term.definition.body, None
        elif kind is Local:
            bound = term.lazy(env)
            if isinstance(bound, VLam):
                term, env = bound.term, bound.env
            elif isinstance(bound, Thunk) and bound.term is not None and \
                    (bound.env is not None or isinstance(bound, GlobalThunk) or bound.value is None):
                term, env = bound.term, bound.env
            else:
                return None
        elif issubclass(kind, Con) and not pending and term.declaration.name == PROGRAM_FAMILY and term.fields:
            term = term.fields[-1]      # NativePhysicalProgramValue's commands
        else:
            return None
    return None


class _Arena:
    globals = ()


class _RequestPlan:
    """What the host-step rules read of a plan, for a request program: no arena residents (the
    request program names none), its layout's host-mapped buffers (named in a finding by the buffer
    an address lies in)."""

    def __init__(self, buffers):
        from ..plan.model import HostBuffer

        self.arena = _Arena()
        self.host_buffers = tuple(HostBuffer(name, host, extent) for name, host, extent in buffers)


def _layout_buffers(program, layout, mapped: bool = True) -> list:
    """(name, host, extent) of every host-mapped buffer of the NvidiaPlanHostLayout `layout`;
    `mapped` False: (name, gpu, host, extent) of every buffer (host 0: not host-mapped)."""
    from ..language.values import VBytes, VCon, VNat

    force = program.force
    out, pending = [], [layout]
    while pending:
        value = force(pending.pop())
        if not isinstance(value, VCon):
            continue
        if value.family == "NvidiaPlanHostBuffer":
            name, gpu, host, extent = (force(field) for field in value.fields[:4])
            if not (isinstance(host, VNat) and isinstance(extent, VNat) and isinstance(name, VBytes)):
                continue
            shown = bytes(name.value).decode("utf-8", "replace")
            if not mapped and isinstance(gpu, VNat):
                out.append((shown, gpu.value, host.value, extent.value))
            elif mapped and host.value:
                out.append((shown, host.value, extent.value))
        elif value.family in ("NvidiaPlanHostLayout", "NvidiaPlanHostBuffers"):
            pending.extend(reversed(value.fields))
    return out


def request_findings(program, call: dict) -> list:
    """The host-step findings (bobc.certify.findings.Finding) of the request program whose
    nvidiaPlanHostRequestCommands[Fresh] arguments are `call` (request_call): the plan host's rules
    that read its schedule, its submissions and its checkpoint contract (the module's docstring)."""
    from ..plan.extract import extract_steps
    from . import host_steps as rules

    steps = extract_steps(program, call["steps"], "the request's schedule")
    # the contract's sizes (a request's payload may end in a shorter chunk: no extract_contract)
    contract = program.force(call["checkpoint"])
    payload = program.force(program.field(contract, "checkpointEnvelopePayloadBytes")).value
    updates = program.force(program.field(contract, "checkpointEnvelopeUpdatesPerInvocation")).value
    plan = _RequestPlan(_layout_buffers(program, call["layout"]))
    out: list = []
    rules._writes_after_close(steps, out)
    rules._checkpoint_bytes(steps, payload, out)
    if rules._publishes(steps):
        rules._checkpoint_reads(steps, payload, out)
    rules._publication_updates(steps, updates, out)
    rules._checkpoint_homes(plan, steps, payload, out)
    rules._request_split(steps, updates, out)
    return out


def request_staged_findings(program, call: dict, whole_program, contracts: dict) -> list:
    """The staged-restore findings (host_steps._staged_homes) of the request program whose
    nvidiaPlanHostRequestCommands[Fresh] arguments are `call`, given the whole-program plan
    (bobc.plan.model.WholeProgramPlan) whose four images its host embeds and the kernels' contracts
    that plan was encoded with (identity -> KernelContract): the launches' declared copies
    (`//@ copy`) followed from the restore's staging area to the places each payload byte ends in,
    and each publication's save held to them (docs/host-steps.md, "A request program's schedule").

    A payload byte's home is the layout's buffer it ends in (outside the staging areas).  A finding
    names the buffer and the offset in it -- or, where the program is nvidiaPlanHostRequestCommandsNamed's,
    the arena resident holding the address by its plan name (`resident parameters at offset 64`;
    probe s46 leftovers8 finding 1).  The residents name places and nothing else: the walk, the
    launches' footprints and the homes are the same with and without them.  The
    layout maps a buffer at a host address of its own (NvidiaPlanHostBuffer's host and gpu), so a
    step's host address is held at its buffer's GPU address, where the launches' copies read and
    write.  Nothing is found (the rule does not apply) where the restore is not staged."""
    from ..plan.extract import extract_steps
    from ..plan.model import DeviceArena, HostBuffer, Plan, Resident
    from . import host_steps as rules

    steps = extract_steps(program, call["steps"], "the request's schedule")
    contract = program.force(call["checkpoint"])
    payload = program.force(program.field(contract, "checkpointEnvelopePayloadBytes")).value
    restore = [step for _, step, _ in rules._unrolled(steps)
               if step.kind.name == "read" and step.file == "checkpoint-in" and step.extent]
    homes = sorted((step.host, step.host + step.extent) for step in restore)
    if not any(later[0] < earlier[1] for earlier, later in zip(homes, homes[1:])):
        return []                       # unstaged: request_findings holds it (_checkpoint_homes)
    buffers = _layout_buffers(program, call["layout"], mapped=False)
    mapped = [(gpu, host, extent) for _, gpu, host, extent in buffers if host]

    def device(address: int) -> int:
        for gpu, host, extent in mapped:
            if host <= address < host + extent:
                return gpu + (address - host)
        return address

    plan = Plan(program=whole_program, arena=DeviceArena((), (), ()),
                host_buffers=tuple(HostBuffer(name, gpu, extent) for name, gpu, _, extent in buffers))
    places = tuple(Resident(name, gpu, extent, 1) for name, gpu, _, extent in buffers)
    named = ()
    if "residents" in call:
        from ..plan.extract import extract_residents

        named = extract_residents(program, call["residents"], "the request's residents")
    out: list = []
    rules._staged_homes(plan, steps, payload, contracts, out, device=device, homes_in=places, named=named)
    return out
