"""Extraction: evaluated plan values -> the Plan dataclasses (bobc.plan.model).

This is the one place that knows the specs' family, constructor and field
names (specs/Hardware/Nvidia/SM86/Command/WholeProgramPlan.bob,
Runtime/ArenaCertificate.bob, Runtime/DeviceArenaCertificate.bob,
Checkpoint/Envelope.bob, Platform/Linux/Nvidia/PlanHost*.bob).  Everything
downstream reads dataclasses and plain dicts, never language values.

Every refusal is a BobcError that names the definition being extracted and
the value that is wrong.
"""
from __future__ import annotations

import dataclasses
import os
from fractions import Fraction

from ..errors import BobcError, Span, shown_plan_text
from ..language.quote import show_natural
from ..language.values import origin
from .host import (ENCODINGS, FILE_NAMES, MEMORIES, RECORD_CHECK_READ_AS, RECORD_CHECKS, SCALAR_NESTING, SCALAR_OPS, SCALAR_STACK, SCALAR_TERMS,
                   STEP_BY_CONSTRUCTOR, STEP_CLASSES, WORD_FORMATS, word_value, Constant, Fill, HostPlan, Initializer, PlanBuffer, RecordCheck, RecordLayout, Scalar, Step)
from .model import place, regions_near
from .model import (CheckpointContract, DeviceArena, HostBuffer, Launch, ParameterPatch, Phase,
                    Plan, Region, Resident, Submission, WholeProgramPlan)

# NvidiaWholeProgramComponent constructor -> WholeProgramPlan.component
# (the attribute of bobc.nvidia.encode's images that holds that component)
COMPONENTS = {
    "NvidiaWholeProgramProgramTable": "program",
    "NvidiaWholeProgramQMDTable": "qmd",
    "NvidiaWholeProgramPushbuffer": "push",
    "NvidiaWholeProgramGPFIFO": "gpfifo",
}

# Runtime.DeviceArenaCertificate's hazard codes
HAZARDS = {
    1: "a global resident lies outside every window",
    2: "two global residents share bytes",
    3: "a launch's identity names no phase",
    4: "a launch passes a pointer into a window that no resident (its phase may touch) contains",
    5: "a submission issues a launch past the end of the launch schedule",
}

class ExtractError(BobcError):
    """A plan value does not have the shape the backend needs."""


def _argument_of(word: int) -> str:
    """`word`'s argument, where the word lies past the parameter base of the layout a plan is written in
    (sm_86's: argument i is word SM86.parameter_base / 8 + i; an sm_90 build moves them itself)."""
    from ..targets import SM86
    base = SM86.parameter_base // 8
    return f"argument {word - base}: " if word >= base else ""


def _blocks_too_big(needed: int) -> str:
    """What a parameter block of `needed` bytes (sm_86's layout) cannot be given by: the targets whose
    constant bank 0 image is smaller (bobc.targets; their argument words 0..N from their parameter base),
    and what to do.  A new user's launch of argument 20 on sm_86 was told to give a 520-byte block, which
    the sm_86 build then refused as outside 0..512 on every launch (probe s45 newuser10)."""
    from ..targets import TARGETS
    short = [t for t in TARGETS.values() if needed > t.parameter_block_bytes]
    if not short:
        return ""
    said = "; ".join(f"{t.name}'s constant bank 0 is {t.parameter_block_bytes} bytes, arguments 0.."
                     f"{(t.parameter_block_bytes - t.parameter_base) // 8 - 1} from {t.parameter_base:#x}"
                     for t in short)
    fits = [t for t in TARGETS.values() if needed <= t.parameter_block_bytes]
    other = (f", or build for {', '.join(t.name for t in fits)} only (at most "
             f"{', '.join(f'{t.parameter_block_bytes} bytes' for t in fits)})") if fits else ""
    return (f", which a build for {', '.join(t.name for t in short)} cannot give ({said}): pass fewer words "
            f"(two 32-bit scalars share one) or the rest in a resident the kernel reads{other}")

def _library_prefix() -> str:
    from ..language.modules import specs_folder

    return str(specs_folder()) + "/"


_LIBRARY: list = []      # [$BOBC_SPECS as it was read, the library's prefix then]


def written(*values) -> Span | None:
    """Where the first of `values` that says so was written, outside the specs' library (a value
    computed by a library helper, such as a ModelWord64's bits, was written where the helper
    was called, which only a value further out says): each value a raw (unforced) field, item
    or argument, or a Span already found.  The library is the one $BOBC_SPECS names now: a
    process that lives on and changes it sees the new folder (probe s36 inprocess2 finding 2)."""
    override = os.environ.get("BOBC_SPECS")
    if not _LIBRARY or _LIBRARY[0] != override:
        _LIBRARY[:] = [override, _library_prefix()]
    library = _LIBRARY[1]
    for value in values:
        found = value if type(value) is Span else origin(value)
        if found is not None and not found.path.startswith(library):
            return found
    return None


def is_library_family(declaration) -> bool:
    """Whether a family declaration (language core's FamilyDeclaration) is the library's: declared
    in a module the library (specs/) provides, whose file a plan root may shadow (the documented
    search order), and no two of whose modules declare one family name
    (tests/plan/test_library_families_by_declaration.py).  Kept on the declaration, which is its
    program's own: a module file added to or removed from the library while a process lives on
    is seen by its next program, as by a fresh process (probe s36 inprocess2 finding 1)."""
    known = getattr(declaration, "bobc_library_module", None)
    if known is None:
        from ..language.modules import module_relative_path, specs_folder

        known = declaration.bobc_library_module = \
            (specs_folder() / module_relative_path(declaration.module)).is_file()
    return known


def library_fields(declaration, constructor: str) -> tuple | None:
    """The field names of constructor `constructor` of the family `declaration` names, as the
    library's own module (its file in specs/) declares it: None where that file declares no such
    family or constructor.  A plan root may hold its own copy of a library module (the search
    order lets it shadow specs/), whose family the extractor must not read by the library's
    field names unless it has them.  Read from the module as its file is now (parse_cached
    reuses the tree while the file holds the same bytes), never kept for the process: an edit to
    the library is seen by a process's next compile (probe s36 inprocess2 finding 1); a caller
    asks once per constructor of its program (_Reader._library_fields)."""
    from ..language import syntax
    from ..language.modules import module_relative_path, parse_cached, specs_folder

    found = None
    try:
        module = parse_cached(specs_folder() / module_relative_path(declaration.module))
    except (BobcError, OSError):
        module = None
    for d in getattr(module, "declarations", ()):
        if isinstance(d, syntax.FamilyDeclaration) and d.name == declaration.name:
            for c in d.constructors:
                if c.name == constructor:
                    found = tuple(b.name for b in c.fields)
    return found


class _Fields(dict):
    """A constructor's fields by name; reading a field its family's declaration lacks is refused
    (never a KeyError), naming the family, where it is declared and the field."""

    def __init__(self, reader, vcon):
        super().__init__(zip(vcon.field_names, vcon.fields))
        self.reader, self.vcon = reader, vcon

    def __missing__(self, name):
        v = self.vcon
        self.reader.fail(f"family {v.family} (declared at {v.declaration.span}, module {v.declaration.module}) "
                         f"has no field {name} in its constructor {v.constructor} (its fields: "
                         f"{', '.join(v.field_names) or 'none'}), which the compiler reads: declare the family "
                         f"as the library does, or use the library's module")


def library_family_module(name: str) -> str | None:
    """The library module that declares family `name` (its modules parsed), or None: only for a
    refusal's words."""
    from ..errors import BobcError
    from ..language import syntax
    from ..language.modules import parse_cached, specs_folder

    for path in sorted(specs_folder().rglob("*.bob")):
        try:
            module = parse_cached(path)
        except BobcError:
            continue
        if any(isinstance(d, syntax.FamilyDeclaration) and d.name == name for d in module.declarations):
            return module.name
    return None


class _Reader:
    """Forces and checks values, naming `where` (the definition) in errors, located where the
    value at fault was written (`at`) when it says so."""

    def __init__(self, program, where: str, at: Span | None = None):
        self.program = program
        self.where = where
        self.at = at            # where a refusal is located when its value does not say

    def fail(self, message: str, at=None):
        raise ExtractError(f"{self.where}: {message}", written(at, self.at))

    def con(self, value, family: str, what: str, constructor: str | None = None):
        """`value` forced, a constructor of the library's family `family`: known by its declaration
        (declared in a module of the library), not its name alone (probe s33 soundness finding 7)."""
        v = self.program.force(value)
        if getattr(v, "family", None) != family or not hasattr(v, "ctor"):
            self.fail(f"{what} should be a value of family {family}, got {_describe(v)}", value)
        if not is_library_family(v.declaration):
            library = library_family_module(family)
            theirs = f"the library's family {family}" + (f" (module {library})" if library else "")
            self.fail(f"{what} should be a value of {theirs}, got one of {v.declaration.module}'s own family "
                      f"{family}, declared at {v.declaration.span}: a family is known by its declaration, "
                      f"not its name; rename {v.declaration.module}'s family, or "
                      f"{'import ' + library + ' and ' if library else ''}use the library's", value)
        if constructor is not None and v.constructor != constructor:
            self.fail(f"{what} should be {family}.{constructor}, got {family}.{v.constructor}", value)
        self._library_fields(v, what, value)
        return v

    def _library_fields(self, v, what: str, value) -> None:
        """Refuse a library family's constructor whose fields are not the library's: a plan root's
        copy of the library module (which shadows specs/) whose family lacks, renames or reorders a
        field the compiler reads (by name, or by position)."""
        if getattr(v.ctor, "_library_fields_checked", False):       # once per declaration: con is hot
            return
        library = library_fields(v.declaration, v.constructor)
        own = tuple(v.field_names)
        if library is None or library == own:
            v.ctor._library_fields_checked = True
            return
        missing = [name for name in library if name not in own]
        extra = [name for name in own if name not in library]
        differs = (f"lacks field{'s' if len(missing) > 1 else ''} {', '.join(missing)}" if missing
                   else "declares the library's fields in another order")
        if extra:
            differs += f" and has {', '.join(extra)}, which the library's has not"
        from ..language.modules import module_relative_path, specs_folder

        from ..errors import shown_path

        order = "" if missing else f" ({', '.join(library)})"
        self.fail(f"{what}: family {v.family}'s constructor {v.constructor}, declared at {v.declaration.span} "
                  f"(module {v.declaration.module}, shadowing the library's "
                  f"{shown_path(specs_folder() / module_relative_path(v.declaration.module))}), {differs}; "
                  f"the compiler reads the library's fields{order}: declare them as the library does, or "
                  f"remove the copy and use the library's module", value)

    def fields(self, vcon) -> dict:
        """The constructor's fields by name, unforced: reading one its declaration lacks is refused."""
        return _Fields(self, vcon)

    def nat(self, value, what: str) -> int:
        v = self.program.force(value)
        if type(v).__name__ != "VNat":
            self.fail(f"{what} should be a natural number, got {_describe(v)}", value)
        return v.value

    def bytes(self, value, what: str) -> bytes:
        v = self.program.force(value)
        if type(v).__name__ != "VBytes":
            self.fail(f"{what} should be a byte string, got {_describe(v)}", value)
        return v.value

    def text(self, value, what: str, at=None, todo: str = "") -> str:
        """`value`'s bytes as ASCII text; a byte past 0x7f is refused where the plan wrote it
        (`at`, else the value), saying what to do (`todo`, else: write it in ASCII)."""
        raw = self.bytes(value, what)
        try:
            return raw.decode("ascii")
        except UnicodeDecodeError:
            bad = next(i for i, b in enumerate(raw) if b > 0x7F)
            self.fail(f"{what} should be ASCII, got {shown_plan_text(raw)} (byte {bad} is {raw[bad]:#04x}): "
                      f"{todo or 'write it in ASCII (bytes 0x00-0x7f)'}", at or value)

    def c_bytes(self, value, what: str, at=None) -> bytes:
        """A byte string the host carries as a C string (bobc.host.generate.c_string; the native
        request's identities alike, runtime_c/native_request.c): any bytes but a zero byte, which
        would end it there -- refused here, where the plan wrote it, so that check, run and sim
        refuse what build cannot carry (probe s37 cinject finding 4)."""
        raw = self.bytes(value, what)
        self._no_zero(raw, what, at or value)
        return raw

    def c_text(self, value, what: str, at=None) -> str:
        """`text` that the host carries as a C string (c_bytes)."""
        text = self.text(value, what)
        self._no_zero(text.encode("ascii"), what, at or value)
        return text

    def _no_zero(self, raw: bytes, what: str, value) -> None:
        if b"\0" in raw:
            self.fail(f"{what} holds a zero byte (byte {raw.index(0)} of {len(raw)}), which the host's C "
                      f"strings cannot carry (one ends at its first zero byte): remove it", value)

    def word(self, value, family: str, what: str) -> int:
        """A ModelWord64 / ModelWord32 as its bits."""
        v = self.con(value, family, what)
        return self.nat(v.fields[0], what)

    def items(self, value, family: str, next_ctor: str, what: str) -> list:
        """The heads of a Next/End list family, in order (unforced)."""
        return [head for head, _ in self.placed_items(value, family, next_ctor, what)]

    def placed_items(self, value, family: str, next_ctor: str, what: str) -> list:
        """(head, where its cell was written) of a Next/End list family, in order (heads unforced).
        A cell is where an item is written: the list's own place for the first, the expression of
        the rest for the others (a list written out, or built by a helper called once an item)."""
        out = []
        cell = value
        v = self.con(value, family, what)
        while v.constructor == next_ctor:
            out.append((v.fields[0], written(cell)))
            cell = v.fields[1]
            v = self.con(cell, family, what)
        return out


# how a refusal names a native host's bytes given where a plan host's are expected (bobc run and
# sim reword it to point at `bobc run PLAN native`: commands.run.native_entry_hint)
NATIVE_HOST_SAID = " (a native host: build it with -o, not as a plan host)"


def _describe(v) -> str:
    if hasattr(v, "ctor"):
        return f"{v.family}.{v.constructor}"
    if type(v).__name__ == "VNat":
        return f"the natural {v.value}"
    if type(v).__name__ == "VBytes":
        if v.value.startswith(b"\x7fELF"):
            return f"an ELF file of {len(v.value)} bytes{NATIVE_HOST_SAID}"
        return f"the byte string {shown_plan_text(v.value)}"
    return type(v).__name__


def _places(itself, **fields) -> dict:
    """Field name ("" the thing itself, at `itself`) -> where it was written, for the fields whose
    raw values say (a field written as a literal where the thing is says nothing: the thing's
    place is its place)."""
    out = {}
    here = written(itself)
    if here is not None:
        out[""] = here
    for name, raw in fields.items():
        found = written(raw)
        if found is not None:
            out[name] = found
    return out


def _align(value: int, alignment: int) -> int:
    return value if alignment == 0 else -(-value // alignment) * alignment


# ---- the whole-program plan ----

def _regions(r: _Reader, value, alignment: int) -> tuple[Region, ...]:
    regions, place = [], 0
    for i, (item, cell) in enumerate(r.placed_items(value, "NvidiaDeviceRegions", "NvidiaDeviceRegionsNext",
                                                    "regions")):
        f = r.fields(r.con(item, "NvidiaDeviceRegion", f"region {i}"))
        identity = r.text(f["nvidiaDeviceRegionIdentity"], f"region {i}'s identity")
        code = r.bytes(f["nvidiaDeviceRegionMaterial"], f"region {shown_plan_text(identity)}'s machine code")
        at = _places(cell, identity=f["nvidiaDeviceRegionIdentity"], code=f["nvidiaDeviceRegionMaterial"],
                     registers=f["nvidiaDeviceRegionRegisters"], block_x=f["nvidiaDeviceRegionBlockX"],
                     shared_bytes=f["nvidiaDeviceRegionSharedBytes"])
        if not identity:
            # found by its identity (launches, phases, its kernel's contract): one of b"" was refused only
            # where a launch named it, and told to "give it the identity b\"\"" (probe s41 messages7)
            r.fail(f"region {i} has an empty identity (b\"\"): launches, phases and kernel contracts find a "
                   f"region by its identity; give it its kernel's identity (the name its SM86Program or SM90Program gives the kernel)",
                   at.get("identity", cell))
        if not code:
            r.fail(f"region {shown_plan_text(identity)} has no machine code (its encoding failed)", at.get("code", cell))
        regions.append(Region(
            identity=identity, code=code,
            registers=r.nat(f["nvidiaDeviceRegionRegisters"], f"region {shown_plan_text(identity)}'s registers"),
            block_x=r.nat(f["nvidiaDeviceRegionBlockX"], f"region {shown_plan_text(identity)}'s block width"),
            shared_bytes=r.nat(f["nvidiaDeviceRegionSharedBytes"], f"region {shown_plan_text(identity)}'s shared bytes"),
            place=place, at=at))
        place = _align(place + len(code), alignment)
    return tuple(regions)


def _templates(r: _Reader, value) -> list:
    """The launch schedule's templates, left to right (iteratively: schedules nest deeply), each
    with where its schedule node was written (a launch definition, or the call that made it)."""
    out, stack = [], [value]
    while stack:
        node = stack.pop()
        v = r.con(node, "NvidiaLaunchSchedule", "the launch schedule")
        if v.constructor == "NvidiaLaunchScheduleOne":
            out.append((v.fields[0], written(node, v.fields[0])))
        elif v.constructor == "NvidiaLaunchScheduleAppend":
            stack.append(v.fields[1])
            stack.append(v.fields[0])
    return out


def _launches(r: _Reader, value, regions, program_base: int) -> tuple[Launch, ...]:
    by_place = {region.place: index for index, region in enumerate(regions)}
    launches = []
    for i, (item, at) in enumerate(_templates(r, value)):
        t = r.fields(r.con(item, "NvidiaLaunchTemplate", f"launch {i}"))
        identity = r.text(t["nvidiaLaunchTemplateIdentity"], f"launch {i}'s identity")
        what = f"launch {i} ({shown_plan_text(identity)})"
        k, cluster = _kernel(r, t["nvidiaLaunchTemplateKernel"], what)
        address = r.word(k["nvidiaLaunchKernelProgramAddress"], "ModelWord64", f"{what}'s program address")
        place = address - program_base
        if place not in by_place:
            known = regions_near([(x.place, x.identity) for x in regions], place)
            r.fail(f"{what} runs the program address {address:#x} (place {place:#x} from the "
                   f"program base {program_base:#x}), which is no region's place ({known})", at)
        region = by_place[place]
        if regions[region].identity != identity and all(x.identity != identity for x in regions):
            # no region has the launch's identity: "point it at that region's place" could not be done
            # (probe s41 messages6: a launch's b"linreg-sdg" was told to run region linreg-sdg)
            names = [shown_plan_text(x.identity) for x in regions]
            listed = ", ".join(names[:8]) + (f", ... {len(names) - 8} more" if len(names) > 8 else "")
            r.fail(f"{what} names identity {shown_plan_text(identity)}, which no region has (the regions: "
                   f"{listed}); it runs region "
                   f"{shown_plan_text(regions[region].identity)}'s code (its program address {address:#x} is that "
                   f"region's place): give it the identity {shown_plan_text(regions[region].identity)}",
                   written(t["nvidiaLaunchTemplateIdentity"], at))
        if regions[region].identity != identity:
            r.fail(f"{what} runs region {shown_plan_text(regions[region].identity)}'s code (its program address {address:#x} is "
                   f"that region's place): a launch is checked against its identity's kernel contract and "
                   f"phase, so it must run the region of that identity; point it at region {shown_plan_text(identity)}'s place "
                   f"or give it the identity {shown_plan_text(regions[region].identity)}", at)
        block = r.fields(r.con(t["nvidiaLaunchTemplateBlock"], "NvidiaParameterBlock", f"{what}'s parameter block"))
        patches = []
        for j, (p, cell) in enumerate(r.placed_items(block["nvidiaParameterBlockPatches"], "NvidiaParameterPatches",
                                                     "NvidiaParameterPatchesNext", f"{what}'s patches")):
            pf = r.fields(r.con(p, "NvidiaParameterPatch", f"{what}'s patch {j}"))
            patches.append(ParameterPatch(
                word=r.nat(pf["nvidiaParameterPatchWord"], f"{what}'s patch {j} word"),
                value=r.word(pf["nvidiaParameterPatchContent"], "ModelWord64", f"{what}'s patch {j} value"),
                at=cell or at))
        words = [p.word for p in patches]
        if len(set(words)) != len(words):
            twice = next(p for k, p in enumerate(patches) if p.word in words[:k])
            r.fail(f"{what} patches a parameter word twice: words {words}", twice.at or at)
        parameter_bytes = r.nat(k["nvidiaLaunchKernelParameterBytes"], f"{what}'s parameter bytes")
        for p in patches:
            if (p.word + 1) * 8 > parameter_bytes:
                needed = max((q.word + 1) * 8 for q in patches)
                r.fail(f"{what} patches word {p.word} ({_argument_of(p.word)}bytes {p.word * 8}..{p.word * 8 + 7}), "
                       f"past its {parameter_bytes}-byte parameter block; its patches need a block of at least "
                       f"{needed} bytes (the kernel's parameter bytes, NvidiaLaunchKernelValue's last field)"
                       f"{_blocks_too_big(needed)}", p.at or at)
        launches.append(Launch(
            identity=identity, region=region, program_address=address,
            grid=(r.nat(k["nvidiaLaunchKernelGridX"], f"{what}'s grid x"),
                  r.nat(k["nvidiaLaunchKernelGridY"], f"{what}'s grid y"),
                  r.nat(k["nvidiaLaunchKernelGridZ"], f"{what}'s grid z")),
            block=(regions[region].block_x,
                   r.nat(k["nvidiaLaunchKernelBlockY"], f"{what}'s block y"),
                   r.nat(k["nvidiaLaunchKernelBlockZ"], f"{what}'s block z")),
            parameter_bytes=parameter_bytes,
            patches=tuple(patches),
            cluster=cluster,
            at=at))
    return tuple(launches)


def _kernel(r: _Reader, value, what: str) -> tuple[dict, tuple[int, int, int]]:
    """A launch's NvidiaLaunchKernelValue fields and its cluster shape ((1, 1, 1) unless the
    value is NvidiaLaunchKernelClustered around one)."""
    v = r.con(value, "NvidiaLaunchKernel", f"{what}'s kernel")
    if v.constructor != "NvidiaLaunchKernelClustered":
        return r.fields(v), (1, 1, 1)
    c = r.fields(v)
    inner = r.con(c["nvidiaLaunchKernelClusteredKernel"], "NvidiaLaunchKernel", f"{what}'s clustered kernel",
                  constructor="NvidiaLaunchKernelValue")
    shape = tuple(r.nat(c[f"nvidiaLaunchKernelCluster{axis}"], f"{what}'s cluster {axis.lower()}")
                  for axis in "XYZ")
    return r.fields(inner), shape


def _submissions(r: _Reader, value, launch_count: int) -> tuple[Submission, ...]:
    """The schedule flattened: Append in order, Repeat expanded with its strides."""
    out = []
    # (schedule, launch shift, semaphore shift, counts, where a repeat around it was written), next on top
    stack = [(value, 0, 0, False, None)]
    while stack:
        item, launch_shift, semaphore_shift, counts, repeated = stack.pop()
        v = r.con(item, "NvidiaSubmissionSchedule", "the submission schedule")
        f = r.fields(v)
        if v.constructor == "NvidiaSubmissionScheduleOne":
            # a repeated batch is written where its repeat is (its body is written once for all)
            at = repeated or written(item, f["nvidiaSubmissionScheduleBatch"])
            b = r.fields(r.con(f["nvidiaSubmissionScheduleBatch"], "NvidiaSubmissionBatch",
                               f"submission {len(out)}"))
            identity = r.text(b["nvidiaSubmissionBatchIdentity"], f"submission {len(out)}'s identity")
            refs = r.fields(r.con(b["nvidiaSubmissionBatchLaunches"], "NvidiaLaunchReferences",
                                  f"submission {len(out)}'s launches"))
            first = r.nat(refs["nvidiaLaunchReferencesFirst"], f"submission {len(out)}'s first launch")
            count = r.nat(refs["nvidiaLaunchReferencesCount"], f"submission {len(out)}'s launch count")
            launches = tuple(range(first + launch_shift, first + launch_shift + count))
            if launches and launches[-1] >= launch_count:
                r.fail(f"submission {len(out)} ({shown_plan_text(identity)}) issues launch {launches[-1]}, "
                       f"but the schedule has {launch_count} launches", at)
            offset = r.nat(b["nvidiaSubmissionBatchSemaphoreOffset"], f"submission {len(out)}'s semaphore")
            out.append(Submission(identity=identity, launches=launches,
                                  semaphore_offset=offset + semaphore_shift, counts=counts, at=at))
        elif v.constructor == "NvidiaSubmissionScheduleAppend":
            stack.append((f["nvidiaSubmissionScheduleRight"], launch_shift, semaphore_shift, counts, repeated))
            stack.append((f["nvidiaSubmissionScheduleLeft"], launch_shift, semaphore_shift, counts, repeated))
        else:   # NvidiaSubmissionScheduleRepeat
            count = r.nat(f["nvidiaSubmissionScheduleCount"], "a repeat's count")
            launch_stride = r.nat(f["nvidiaSubmissionScheduleLaunchStride"], "a repeat's launch stride")
            semaphore_stride = r.nat(f["nvidiaSubmissionScheduleSemaphoreStride"], "a repeat's semaphore stride")
            here = repeated or written(item)
            for i in reversed(range(count)):
                stack.append((f["nvidiaSubmissionScheduleBody"], launch_shift + i * launch_stride,
                              semaphore_shift + i * semaphore_stride, counts or semaphore_stride == 0, here))
    return tuple(out)


def extract_whole_program(program, value, where: str = "the whole-program plan",
                          memo: "ProgramMemo | None" = None) -> WholeProgramPlan:
    """NvidiaWholeProgramPlanValue -> WholeProgramPlan (regions encoded, schedules flattened).

    `memo`: the plans extracted before from values of the same computation but for their
    component (ProgramMemo): a plan asks for its four images as four values that differ only in
    the component, and each extraction forces and walks every launch anew (probe s29 speed,
    hot spot 3).  A value whose other fields are those of a value extracted before is that
    plan, with this value's component and places."""
    r = _Reader(program, where, written(value))
    v = r.con(value, "NvidiaWholeProgramPlan", "the plan")
    if memo is None:
        return _whole_program(r, value, v)
    key = memo.key(v)
    known = memo.plans.get(key)
    if known is None:
        known = _whole_program(r, value, v)
        memo.keep(key, known)
        return known
    f = r.fields(v)
    component = r.con(f["nvidiaWholeProgramComponent"], "NvidiaWholeProgramComponent", "the component")
    return dataclasses.replace(known, component=COMPONENTS[component.constructor], at=_program_places(value, f))


def _whole_program(r: _Reader, value, v) -> WholeProgramPlan:
    f = r.fields(v)
    component = r.con(f["nvidiaWholeProgramComponent"], "NvidiaWholeProgramComponent", "the component")
    program_base = r.word(f["nvidiaWholeProgramProgramBase"], "ModelWord64", "the program base")
    alignment = r.nat(f["nvidiaWholeProgramRegionAlignment"], "the region alignment")
    regions = _regions(r, f["nvidiaWholeProgramRegions"], alignment)
    launches = _launches(r, f["nvidiaWholeProgramLaunches"], regions, program_base)
    launch_count = r.nat(f["nvidiaWholeProgramLaunchCount"], "the launch count")
    if launch_count != len(launches):
        r.fail(f"the plan declares {launch_count} launches, but its launch schedule has {len(launches)}",
               f["nvidiaWholeProgramLaunchCount"])
    submissions = _submissions(r, f["nvidiaWholeProgramSubmissions"], len(launches))
    submission_count = r.nat(f["nvidiaWholeProgramSubmissionCount"], "the submission count")
    if submission_count != len(submissions):
        r.fail(f"the plan declares {submission_count} submissions, but its submission schedule "
               f"has {len(submissions)}", f["nvidiaWholeProgramSubmissionCount"])
    return WholeProgramPlan(
        component=COMPONENTS[component.constructor],
        architecture=r.word(f["nvidiaWholeProgramArchitecture"], "ModelWord32", "the architecture"),
        compute_class=r.word(f["nvidiaWholeProgramComputeClass"], "ModelWord32", "the compute class"),
        spa_version=r.word(f["nvidiaWholeProgramSPAVersion"], "ModelWord32", "the SPA version"),
        program_base=program_base,
        qmd_base=r.word(f["nvidiaWholeProgramQMDBase"], "ModelWord64", "the QMD base"),
        pushbuffer_base=r.word(f["nvidiaWholeProgramPushbufferBase"], "ModelWord64", "the pushbuffer base"),
        semaphore_base=r.word(f["nvidiaWholeProgramSemaphoreBase"], "ModelWord64", "the semaphore base"),
        region_alignment=alignment,
        program_bytes=r.nat(f["nvidiaWholeProgramProgramBytes"], "the program bytes"),
        regions=regions,
        launches=launches,
        launch_count=launch_count,
        qmd_table_bytes=r.nat(f["nvidiaWholeProgramQMDTableBytes"], "the QMD table bytes"),
        submissions=submissions,
        submission_count=submission_count,
        gpfifo_entries=r.nat(f["nvidiaWholeProgramGPFIFOEntries"], "the GPFIFO entries"),
        at=_program_places(value, f))


def _program_places(value, f) -> dict:
    return _places(value, **{name: f["nvidiaWholeProgram" + spec] for name, spec in _PROGRAM_FIELDS})


# WholeProgramPlan attribute -> its NvidiaWholeProgramPlanValue field (after nvidiaWholeProgram)
_PROGRAM_FIELDS = (
    ("architecture", "Architecture"), ("compute_class", "ComputeClass"), ("spa_version", "SPAVersion"),
    ("program_base", "ProgramBase"), ("qmd_base", "QMDBase"), ("pushbuffer_base", "PushbufferBase"),
    ("semaphore_base", "SemaphoreBase"), ("region_alignment", "RegionAlignment"),
    ("program_bytes", "ProgramBytes"), ("regions", "Regions"), ("launches", "Launches"),
    ("launch_count", "LaunchCount"), ("qmd_table_bytes", "QMDTableBytes"), ("submissions", "Submissions"),
    ("submission_count", "SubmissionCount"), ("gpfifo_entries", "GPFIFOEntries"))


class ProgramMemo:
    """Whole-program plans already extracted (extract_whole_program's `memo`), by a key of their
    value's fields but the component, taken before anything is forced: two values of equal key
    are the same computation, so they give the same plan, written at the same places.

    A field's key (`_key`): a delayed value not yet forced is its expression and the keys of
    the variables of its environment that the expression uses (two applications of one
    function that differ only in the component make such fields); a closure or a constructor
    value likewise; a natural or a byte string with no delay around it (no place) is its
    value; anything else (a definition's shared value, a value already forced) is itself.
    Computing a key is bounded (_KEY_NODES values, _KEY_DEPTH deep): past it, a value is itself."""

    KEPT = 8            # the plans kept, the latest

    def __init__(self):
        self.plans: dict = {}
        self.keys: dict = {}            # id(value) -> (value, its key): a value asked for again, once forced
        self.free: dict = {}            # term -> the de Bruijn indices it uses (None: a term not known here)

    def keep(self, key, plan) -> None:
        if len(self.plans) >= self.KEPT:
            del self.plans[next(iter(self.plans))]
        self.plans[key] = plan

    def key(self, vcon) -> tuple:
        kept = self.keys.get(id(vcon))
        if kept is not None and kept[0] is vcon:
            return kept[1]
        budget = [_KEY_NODES]
        key = (vcon.declaration, vcon.ctor, tuple(self._key(p, budget, 0) for p in vcon.params),
               tuple(self._key(f, budget, 0) for name, f in zip(vcon.field_names, vcon.fields)
                     if name != "nvidiaWholeProgramComponent"))
        if len(self.keys) >= self.KEPT:
            del self.keys[next(iter(self.keys))]
        self.keys[id(vcon)] = (vcon, key)
        return key

    def _key(self, value, budget, depth: int):
        from ..language.values import Thunk, VBytes, VCon, VLam, VNat

        kind = type(value)
        if kind is VNat:
            return ("nat", value.value)
        if kind is VBytes:
            return ("bytes", value.value)
        budget[0] -= 1
        if budget[0] > 0 and depth < _KEY_DEPTH:
            if kind is Thunk and value.value is None and value.term is not None:
                return self._closure("thunk", value.term, value.env, value, budget, depth)
            if kind is VLam:
                return self._closure("lambda", value.term, value.env, value, budget, depth)
            if kind is VCon:
                return ("con", value.declaration, value.ctor,
                        tuple(self._key(p, budget, depth + 1) for p in value.params),
                        tuple(self._key(f, budget, depth + 1) for f in value.fields))
        return ("same", id(value), value)

    def _closure(self, kind: str, term, env, value, budget, depth: int):
        """A term in an environment, by the term and the keys of the variables it uses."""
        free = self.free.get(term, False)
        if free is False:
            free = self.free[term] = _free_locals(term, self.free)
        if free is None:
            return ("same", id(value), value)
        used = []
        for index in free:
            here = env
            for _ in range(index):
                here = here[1] if here is not None else None
            if here is None:
                return ("same", id(value), value)
            used.append(self._key(here[0], budget, depth + 1))
        return (kind, term, tuple(used))


_KEY_NODES = 20_000
_KEY_DEPTH = 100        # values nested deeper are keyed as themselves (no deep recursion)


def _children(term):
    """[(subterm, binders it is under)] of a core term; None for a term not known here (its
    value is then keyed as itself)."""
    from ..language import core

    kind = type(term)
    if kind in (core.Global, core.Prim, core.Constant):
        return []
    if kind in (core.Lam, core.Pi):
        return [(term.domain, 0), (term.body, 1)]
    if kind is core.Let:
        return [(term.type, 0), (term.value, 0), (term.body, 1)]
    if kind is core.App:
        return [(term.function, 0), *((a, 0) for a in term.arguments)]
    if kind in (core.PrimCall, core.PrimCall1, core.PrimCall2, core.FamilyT):
        return [(a, 0) for a in term.arguments]
    if kind in (core.Con, core.Record):
        return [(p, 0) for p in (*term.params, *term.fields)]
    if kind is core.Elim:
        out = [(term.motive, 0), (term.scrutinee, 0)]
        for branch in term.branches:
            # eliminate binds the constructor's fields, then one induction hypothesis per recursive field
            bound = len(branch.ctor.fields) + len(branch.ctor.recursive)
            if len(branch.binders) != bound:
                return None
            out.append((branch.body, bound))
        return out
    if kind is core.NatElim:
        return [(term.motive, 0), (term.base, 0), (term.step, 0), (term.target, 0)]
    if kind is core.Succ:
        return [(term.predecessor, 0)]
    if kind is core.EqualT:
        return [(term.type, 0), (term.left, 0), (term.right, 0)]
    if kind is core.ReflT:
        return [(term.type, 0), (term.value, 0)]
    if kind is core.Encode:
        return [(term.type, 0), (term.value, 0)]
    if kind is core.The:
        return [(term.type, 0), (term.expression, 0)]
    return None


def _free_locals(term, known: dict):
    """The de Bruijn indices `term` uses of its environment, sorted (a tuple), or None when it
    holds a term not known here; `known` (term -> the same) is filled for its subterms.
    Iterative: terms nest deeply."""
    from ..language import core

    stack = [(term, False)]
    while stack:
        node, expanded = stack.pop()
        if node in known:
            continue
        if type(node) is core.Local:
            known[node] = (node.index,)
            continue
        children = _children(node)
        if children is None or any(child is not None and not isinstance(child, core.Term)
                                   for child, _ in children):
            known[node] = None
            continue
        children = [(child, bound) for child, bound in children if child is not None]
        if not expanded:
            stack.append((node, True))
            stack.extend((child, False) for child, _ in children if child not in known)
            continue
        used: set = set()
        for child, bound in children:
            inner = known.get(child)
            if inner is None:
                used = None
                break
            used.update(index - bound for index in inner if index >= bound)
        known[node] = None if used is None else tuple(sorted(used))
    return known[term]


# ---- the arena ----

def _residents(r: _Reader, value, what: str) -> tuple[Resident, ...]:
    out = []
    for i, (item, cell) in enumerate(r.placed_items(value, "ArenaResidents", "ArenaResidentsNext", what)):
        f = r.fields(r.con(item, "ArenaResident", f"{what} {i}"))
        name = r.text(f["arenaResidentName"], f"{what} {i}'s name")
        out.append(Resident(
            name=name,
            address=r.nat(f["arenaResidentAddress"], f"{what} {name}'s address"),
            size=r.nat(f["arenaResidentBytes"], f"{what} {name}'s bytes"),
            alignment=r.nat(f["arenaResidentAlignment"], f"{what} {name}'s alignment"),
            at=_places(cell, name=f["arenaResidentName"], address=f["arenaResidentAddress"],
                       size=f["arenaResidentBytes"], alignment=f["arenaResidentAlignment"])))
    return tuple(out)


def extract_residents(program, value, where: str = "the residents") -> tuple[Resident, ...]:
    """An ArenaResidents value -> its residents, each at the place the plan wrote it."""
    return _residents(_Reader(program, where), value, "resident")


def extract_arena(program, windows, globals_, phases, where: str = "the device arena") -> DeviceArena:
    """ArenaResidents (windows, globals) and DeviceArenaPhases -> DeviceArena."""
    r = _Reader(program, where)
    out = []
    for i, item in enumerate(r.items(phases, "DeviceArenaPhases", "DeviceArenaPhasesNext", "phases")):
        f = r.fields(r.con(item, "DeviceArenaPhase", f"phase {i}"))
        identity = r.text(f["deviceArenaPhaseIdentity"], f"phase {i}'s identity")
        out.append(Phase(identity=identity,
                         reads=_residents(r, f["deviceArenaPhaseReads"], f"phase {shown_plan_text(identity)}'s reads"),
                         writes=_residents(r, f["deviceArenaPhaseWrites"], f"phase {shown_plan_text(identity)}'s writes")))
    return DeviceArena(windows=_residents(r, windows, "window"),
                       globals=_residents(r, globals_, "global resident"),
                       phases=tuple(out))


def extract_contract(program, value, where: str = "the checkpoint contract") -> CheckpointContract:
    """CheckpointEnvelopeContractValue -> CheckpointContract."""
    r = _Reader(program, where, written(value))
    f = r.fields(r.con(value, "CheckpointEnvelopeContract", "the contract"))
    contract = CheckpointContract(
        schema=r.c_bytes(f["checkpointEnvelopeSchema"], "the schema identity"),
        learner=r.c_bytes(f["checkpointEnvelopeLearner"], "the learner identity"),
        data=r.c_bytes(f["checkpointEnvelopeData"], "the data identity"),
        seed=r.c_bytes(f["checkpointEnvelopeSeed"], "the seed identity"),
        payload_bytes=r.nat(f["checkpointEnvelopePayloadBytes"], "the payload bytes"),
        chunk_bytes=r.nat(f["checkpointEnvelopeChunkBytes"], "the chunk bytes"),
        updates_per_invocation=r.nat(f["checkpointEnvelopeUpdatesPerInvocation"], "the updates per invocation"))
    if contract.chunk_bytes == 0 or contract.payload_bytes % contract.chunk_bytes:
        # a plan host initializes, reads and writes whole chunks (one initializer a chunk); the tail
        # docs/formats.md describes is a request host's.  The message said only the two
        # numbers; it now says what to give (probe s44 newuser9)
        from ..resources import doc
        r.fail(f"the payload ({contract.payload_bytes} bytes) is not a whole number of "
               f"{contract.chunk_bytes}-byte chunks: a plan host's checkpoint is whole chunks, one "
               f"initializer each; give chunk bytes that divide the payload (the payload's own "
               f"{contract.payload_bytes} bytes, one chunk, always do; {doc('host-steps.md')})")
    return contract


# ---- the host ----

def extract_steps(program, value, where: str = "the host schedule", depth: int = 0,
                  top: str | None = None) -> tuple[Step, ...]:
    """NvidiaPlanHostSteps -> the step dataclasses of bobc.plan.host, in order.

    Each constructor's fields are read by its row of STEP_KINDS (the meaning of
    each kind: docs/host-steps.md and its constructor in PlanHost.bob).  `depth`: how many
    repeats' bodies enclose these steps; a repeat nested past HOST_REPEAT_NESTING is refused
    here, at it, in the certifier's words (this reading recurses a level a repeat, so ~20,000
    levels ended in a RecursionError before the certifier could say so; probe s43 smallfix),
    named by `top`, the schedule's own name.
    """
    r = _Reader(program, where, written(value))
    out = []
    cell = value
    v = r.con(value, "NvidiaPlanHostSteps", "the schedule")
    while v.constructor != "NvidiaPlanHostStepsEnd":
        at = written(cell)
        kind = STEP_BY_CONSTRUCTOR.get(v.constructor)
        if kind is None:
            r.fail(f"step {len(out)} is {v.constructor}, which this compiler's hosts do not carry out", at)
        f = r.fields(v)
        values = {}
        for field in kind.fields:
            what = f"step {len(out)} ({kind.name})'s {field.name}"
            if field.kind == "file":
                values[field.name] = FILE_NAMES[r.con(f[field.spec], "NvidiaPlanHostFile", what).constructor]
            elif field.kind == "steps":
                from ..certify.limits import HOST_REPEAT_NESTING
                from ..resources import doc

                if depth + 1 > HOST_REPEAT_NESTING:
                    _Reader(program, top or where, at).fail(
                        f"the host's schedule nests repeats more than {HOST_REPEAT_NESTING} deep (one in another's "
                        f"body): nest fewer, or unroll the inner ones ({doc('limits.md')})", at)
                values[field.name] = extract_steps(program, f[field.spec], f"{where}, step {len(out)} ({kind.name})",
                                                   depth + 1, top or where)
            elif field.kind == "bytes":
                values[field.name] = r.bytes(f[field.spec], what)
            elif field.kind == "commands":
                from .commands import program_bytes
                values[field.name] = program_bytes(program, f[field.spec], f"{where}, step {len(out)} ({kind.name})")
            else:
                values[field.name] = r.nat(f[field.spec], what)
        out.append(STEP_CLASSES[kind.name](**values, at=at))
        cell = v.fields[-1]
        v = r.con(cell, "NvidiaPlanHostSteps", "the schedule")
    return tuple(out)


def _constant(r: _Reader, value, what: str) -> Constant:
    v = r.con(value, "NvidiaPlanHostConstant", what)
    if v.constructor == "NvidiaPlanHostFloat32":
        bits = r.nat(v.fields[0], what)
        if bits >= 1 << 32:
            r.fail(f"{what} is the binary32 pattern {bits:#x}, wider than 32 bits: give the 32-bit pattern of "
                   f"the value (or a ratio, NvidiaPlanHostRatio)", value)
        if (bits >> 23) & 0xFF == 0xFF:
            r.fail(f"{what} is the binary32 pattern {bits:#010x}, {'a NaN' if bits & 0x7FFFFF else 'an infinity'}: "
                   f"the host computes with finite constants; give a finite value's pattern", value)
        return Constant(float32_bits=bits)
    numerator, denominator = r.nat(v.fields[0], what), r.nat(v.fields[1], what)
    # a natural as a plan error shows one (docs/limits.md: its first digits and how many it has)
    if denominator == 0:
        r.fail(f"{what} is the ratio {show_natural(numerator)}/0", value)
    try:
        float(Fraction(numerator, denominator))
    except OverflowError:
        r.fail(f"{what} is the ratio {show_natural(numerator)}/{show_natural(denominator)}, past binary64's largest "
               f"finite value (about 1.8e308): the host computes its scalars in binary64; give a smaller ratio", value)
    return Constant(numerator=numerator, denominator=denominator)


def _buffers(r: _Reader, value) -> tuple[PlanBuffer, ...]:
    buffers = []
    for i, (item, cell) in enumerate(r.placed_items(value, "NvidiaPlanHostBuffers", "NvidiaPlanHostBuffersNext",
                                                    "the buffers")):
        b = r.fields(r.con(item, "NvidiaPlanHostBuffer", f"buffer {i}"))
        name = r.c_text(b["nvidiaPlanHostBufferIdentity"], f"buffer {i}'s identity")
        buffers.append(PlanBuffer(
            name=name,
            gpu=r.nat(b["nvidiaPlanHostBufferGPU"], f"buffer {name}'s GPU address"),
            host=r.nat(b["nvidiaPlanHostBufferHost"], f"buffer {name}'s host address"),
            extent=r.nat(b["nvidiaPlanHostBufferExtent"], f"buffer {name}'s extent"),
            memory=MEMORIES[r.con(b["nvidiaPlanHostBufferMemory"], "NvidiaPlanHostMemory",
                                  f"buffer {name}'s memory").constructor],
            at=_places(cell, gpu=b["nvidiaPlanHostBufferGPU"], host=b["nvidiaPlanHostBufferHost"],
                       extent=b["nvidiaPlanHostBufferExtent"])))
    return tuple(buffers)


_CHECK_KINDS = dict(RECORD_CHECKS)
_WORD_FORMATS = {constructor: (name, widths) for constructor, name, widths in WORD_FORMATS}
# each check constructor's fields after `what`, in order, as RecordCheck attributes
_CHECK_FIELDS = {
    "bytes": ("offset", "data"),
    "word": ("offset", "width", "value"),
    "below": ("offset", "width", "stride", "count", "value"),
    "index": ("offset", "width", "stride", "count"),
    "same": ("offset", "width", "stride", "count", "other", "other_width", "other_stride"),
}


def _check_format(r: _Reader, check: RecordCheck, widths, at) -> None:
    """A format the check's words can have: a word, below or same check (bytes read no word; an
    index check's words are positions, unsigned naturals), each word it reads as wide as the
    format's (binary32 4 bytes, binary64 8: IEEE 754-2008 3.6)."""
    what, name = check.what, check.format
    if check.kind == "bytes":
        r.fail(f"input check {what} compares bytes, which have no word format; give {name} to a word, below or "
               f"same check, or write the bytes check without {RECORD_CHECK_READ_AS}", at)
    if check.kind == "index" and name != "unsigned":
        r.fail(f"input check {what} is an index check, whose words are positions 0, 1, 2, ... (unsigned "
               f"naturals), so reads no {name} word; read them unsigned, or bound a {name} word with a below "
               f"check", at)
    for width in (check.width, check.other_width) if check.kind == "same" else (check.width,):
        if widths is not None and width not in widths:
            r.fail(f"input check {what} reads {width}-byte words as {name}, which is "
                   f"{' or '.join(str(w) for w in widths)} bytes wide: give a width of "
                   f"{' or '.join(str(w) for w in widths)}, or the format of a {width}-byte word", at)


def _check_signed_bound(r: _Reader, check: RecordCheck, at) -> None:
    """A below check's bound read as a signed or binary format is the bits of a word of the
    check's width (as a word check's value is), and some word is below it: not the most negative
    signed word, not -inf, not a NaN (which nothing is below: IEEE 754-2008 5.11)."""
    what, width, bound, name = check.what, check.width, check.value, check.format
    words = 1 << (8 * width)
    if bound >= words:
        r.fail(f"input check {what} bounds {width}-byte {name} words by the bits {bound:#x}, which no {width}-byte "
               f"word holds: give the bound's {width}-byte {name} pattern", at)
    if not check.count:
        return
    value = word_value(bound, width, name)
    if name == "signed" and bound == words >> 1:
        least = f"{value}, the least {width}-byte signed word"
    elif value != value:
        least = f"a NaN ({bound:#0{2 + 2 * width}x}), which no {name} word is below"
    elif value == float("-inf"):
        least = f"-inf, which no {name} word is below"
    else:
        return
    r.fail(f"input check {what} requires {name} words below {least}: every input record would be refused; "
           f"give a greater bound", at)


def _record_checks(r: _Reader, value, record_bytes: int) -> tuple[RecordCheck, ...]:
    out = []
    # each check's faults are located where the check was written (its head's own place, else its
    # list cell's), not at the host definition (probe s32 errors finding 10)
    for i, (item, cell) in enumerate(r.placed_items(value, "NvidiaPlanHostRecordChecks",
                                                     "NvidiaPlanHostRecordChecksNext", "the input checks")):
        at = written(item, cell)
        v = r.con(item, "NvidiaPlanHostRecordCheck", f"input check {i}")
        word_format, widths, format_at = "unsigned", None, None
        if v.constructor == RECORD_CHECK_READ_AS:   # a check with its words' format (else unsigned)
            format_at = at
            word_format, widths = _WORD_FORMATS[r.con(v.fields[0], "NvidiaPlanHostWordFormat",
                                                      f"input check {i}'s format").constructor]
            item = v.fields[1]
            at = written(item, format_at)
            v = r.con(item, "NvidiaPlanHostRecordCheck", f"input check {i}")
            if v.constructor == RECORD_CHECK_READ_AS:
                r.fail(f"input check {i} says its words' format twice ({RECORD_CHECK_READ_AS} of a "
                       f"{RECORD_CHECK_READ_AS}): give one format, around a word or same check", at)
        kind = _CHECK_KINDS[v.constructor]
        what = r.c_text(v.fields[0], f"input check {i}'s name", at)
        values = {}
        for attribute, field in zip(_CHECK_FIELDS[kind], v.fields[1:]):
            values[attribute] = (r.bytes(field, f"input check {what}'s bytes") if attribute == "data"
                                 else r.nat(field, f"input check {what}'s {attribute}"))
        check = RecordCheck(kind=kind, what=what, format=word_format, **values)
        if format_at is not None:
            _check_format(r, check, widths, format_at)
        for width in (check.width, check.other_width) if kind != "bytes" else ():
            if width and width not in (1, 2, 4, 8):
                r.fail(f"input check {what} reads {width}-byte words; a word is 1, 2, 4 or 8 bytes", at)
        if kind != "bytes" and not check.width:
            r.fail(f"input check {what} reads 0-byte words; a word is 1, 2, 4 or 8 bytes", at)
        # a word of `width` bytes holds 0 .. 2^(8 width) - 1: a value no such word holds, or a bound
        # of 0, would refuse every input record at run time; a bound of 2^64 or more fits no uint64_t
        # of the host's table (runtime_c/host_runtime.h rt_record_check)
        words = 1 << (8 * check.width)
        if kind == "word" and check.value >= words:
            r.fail(f"input check {what} compares a {check.width}-byte word to {check.value}, which no "
                   f"{check.width}-byte word holds (at most {words - 1}): every input record would be refused; "
                   f"give a value below {words} or a wider word", at)
        if kind == "below" and check.format != "unsigned":
            _check_signed_bound(r, check, at)
        if kind == "below" and check.format == "unsigned" and check.count and check.value == 0:
            r.fail(f"input check {what} requires {check.width}-byte words below 0, which no word is: every input "
                   f"record would be refused; give a bound of 1 or more", at)
        if kind == "below" and check.value >= 1 << 64:
            r.fail(f"input check {what} bounds {check.width}-byte words by {check.value}, which the host's 64-bit "
                   f"bound cannot hold (it would keep {check.value % (1 << 64)}); give a bound of at most "
                   f"{min(words, (1 << 64) - 1)}", at)
        # a run is `count` words of the record, one every `stride` bytes: a stride below the width
        # (0 included) reads one word, or overlapping bytes, where the plan names `count` words -- an
        # index run so placed refuses every record (word 0 is 0, word 1 starts inside it and is 1),
        # a below or same run checks the same bytes again and leaves the words meant unchecked
        if kind in ("below", "index", "same") and check.count > 1 and check.stride < check.width:
            r.fail(f"input check {what} reads {check.count} {check.width}-byte words one every {check.stride} "
                   f"byte{'' if check.stride == 1 else 's'}, so they overlap"
                   f"{' (each is the same word)' if check.stride == 0 else ''}: give a stride of at least "
                   f"{check.width}, the width, or a count of 1 for one word", at)
        if check.end() > record_bytes:
            r.fail(f"input check {what} reads up to byte {check.end()}, past the {record_bytes}-byte record", at)
        out.append(check)
    return tuple(out)


def _request(r: _Reader, value) -> RecordLayout:
    q = r.fields(r.con(value, "NvidiaPlanHostRequestLayout", "the request layout"))
    prefix = "nvidiaPlanHostRequest"
    values = {}
    for name, field in q.items():
        key = "".join("_" + ch.lower() if ch.isupper() else ch for ch in name[len(prefix):]).lstrip("_")
        if key == "input_checks":
            continue
        values[key] = (r.bytes(field, f"the request's {key}") if key == "input_magic"
                       else r.nat(field, f"the request's {key}"))
    values["input_checks"] = _record_checks(r, q["nvidiaPlanHostRequestInputChecks"], values["input_record_bytes"])
    return RecordLayout(**values)


def _initializers(r: _Reader, value, contract: CheckpointContract) -> tuple[Initializer, ...]:
    out = []
    whole = written(value)
    for i, (item, cell) in enumerate(r.placed_items(value, "NvidiaPlanHostInitializers",
                                                    "NvidiaPlanHostInitializersNext", "the initializers")):
        v = r.con(item, "NvidiaPlanHostInitializer", f"initializer {i}")
        if v.constructor == "NvidiaPlanHostInitZero":
            out.append(Initializer("zero", at=_places(cell or whole)))
            continue
        f = r.fields(v)
        init = Initializer(
            at=_places(cell or whole, seed=f["nvidiaPlanHostInitSplitMix64Seed"],
                       shift=f["nvidiaPlanHostInitSplitMix64Shift"], center=f["nvidiaPlanHostInitSplitMix64Center"],
                       denominator=f["nvidiaPlanHostInitSplitMix64Denominator"]),
            kind=
"splitmix64", seed=r.c_bytes(f["nvidiaPlanHostInitSplitMix64Seed"], f"initializer {i}'s seed"),
            shift=r.nat(f["nvidiaPlanHostInitSplitMix64Shift"], f"initializer {i}'s shift"),
            center=r.nat(f["nvidiaPlanHostInitSplitMix64Center"], f"initializer {i}'s center"),
            denominator=r.nat(f["nvidiaPlanHostInitSplitMix64Denominator"], f"initializer {i}'s denominator"))
        from ..resources import doc

        # each field refused by its own value and place, saying what to give (a message naming both,
        # "shifts by 0 and divides by 2^63; a shift is 1..63 and a denominator nonzero", was given
        # for a shift of 0 alone, at the list; probe s40 newuser4 finding 3); docs/limits.md's row
        if not 0 < init.shift < 64:
            r.fail(f"initializer {i} (checkpoint chunk {i}) shifts its 64-bit draws by {init.shift}; give a "
                   f"shift of 1..63 ({doc('limits.md')}; 40 keeps 24-bit draws)",
                   init.at.get("shift") or cell or whole)
        if init.denominator == 0:
            r.fail(f"initializer {i} (checkpoint chunk {i}) divides its draws by 0; give a denominator of "
                   f"1..2^64 - 1 ({doc('limits.md')})", init.at.get("denominator") or cell or whole)
        out.append(init)
    chunks = contract.payload_bytes // contract.chunk_bytes
    if len(out) != chunks:
        r.fail(f"the plan gives {len(out)} initializer{'' if len(out) == 1 else 's'} for a checkpoint of {chunks} "
               f"chunk{'' if chunks == 1 else 's'}: give one initializer per chunk", whole)
    if contract.chunk_bytes % 4 and any(i.kind != "zero" for i in out):
        r.fail(f"the checkpoint's {contract.chunk_bytes}-byte chunks are no whole number of binary32 elements, "
               f"which its SplitMix64 initializers make")
    return tuple(out)


_SCALARS = {constructor: (name, arity) for constructor, name, arity in SCALAR_OPS}


def _scalar(r: _Reader, value, what: str, depth: int = 0, walk: list | None = None) -> Scalar:
    """The Scalar tree of `value`.  `walk`: [the fill's whole value, terms built so far]: a value the
    language shares (`def twice = (lambda s . Add s s)` applied n times: n lines) is a tree of 2^n
    terms in the host's postfix program, which this walk builds one by one, so it stops past
    SCALAR_TERMS (the walk took minutes, then hours, as n grew; probe s44 numpyfree finding 3)."""
    walk = walk or [value, 0]
    walk[1] += 1
    if walk[1] > SCALAR_TERMS:
        from ..resources import doc

        r.fail(f"{what} is a program of more than {SCALAR_TERMS:,} terms as the host computes it (an operand "
               f"used twice is computed twice: Add s s is s's terms twice, and n such doublings 2^n), past the "
               f"{SCALAR_TERMS:,} a fill's scalar may have ({doc('limits.md')}): write the value with fewer operations, or compute "
               f"it once on the device or in a constant", walk[0])
    if depth > SCALAR_NESTING:
        from ..resources import doc

        # at the fill's value, as its other limits are: the native host's definition said nothing of
        # which fill, nor what to do (probe s44 docs13 finding 2)
        r.fail(f"{what} nests more than {SCALAR_NESTING} operations one in another's operand, past the "
               f"{SCALAR_NESTING} a fill's scalar may nest ({doc('limits.md')}): nest fewer (a part that does not "
               f"depend on t as one constant, NvidiaPlanHostRatio or NvidiaPlanHostFloat32), or compute it "
               f"on the device", walk[0])
    v = r.con(value, "NvidiaPlanHostScalar", what)
    name, arity = _SCALARS[v.constructor]
    if name == "constant":
        return Scalar("constant", value=_constant(r, v.fields[0], what).binary64())
    return Scalar(name, tuple(_scalar(r, f, what, depth + 1, walk) for f in v.fields[:arity]))


def _fills(r: _Reader, value, launch_count: int) -> tuple[Fill, ...]:
    out = []
    whole = written(value)
    for i, (item, cell) in enumerate(r.placed_items(value, "NvidiaPlanHostFills", "NvidiaPlanHostFillsNext",
                                                    "the fills")):
        f = r.fields(r.con(item, "NvidiaPlanHostFill", f"fill {i}"))
        fill = Fill(
            at=_places(cell or whole, launch=f["nvidiaPlanHostFillLaunch"], offset=f["nvidiaPlanHostFillOffset"],
                       step=f["nvidiaPlanHostFillStep"], value=f["nvidiaPlanHostFillValueOf"]),
            launch=r.nat(f["nvidiaPlanHostFillLaunch"], f"fill {i}'s launch"),
            offset=r.nat(f["nvidiaPlanHostFillOffset"], f"fill {i}'s offset"),
            step=r.nat(f["nvidiaPlanHostFillStep"], f"fill {i}'s step"),
            encoding=ENCODINGS[r.con(f["nvidiaPlanHostFillEncoding"], "NvidiaPlanHostEncoding",
                                     f"fill {i}'s encoding").constructor],
            value=_scalar(r, f["nvidiaPlanHostFillValueOf"], f"fill {i}'s value"))
        if fill.launch >= launch_count:
            r.fail(f"fill {i} writes into launch {fill.launch}, but the plan has {launch_count} launches",
                   place(fill, "launch"))
        depth = fill.value.stack_depth()
        if depth > SCALAR_STACK:
            # the C host's eval_at refuses it at every run, where `bobc run --reference` and `bobc sim`
            # computed it (probe s44 numpyfree finding 1)
            from ..resources import doc

            r.fail(f"fill {i}'s value holds {depth} values at once as the host computes it (operands first, each "
                   f"right operand above its left one's value), past the host's {SCALAR_STACK} ({doc('limits.md')}): "
                   f"nest the deep side on the left, (((a + b) + c) + d) for a + (b + (c + d)), or use fewer terms",
                   place(fill, "value"))
        out.append(fill)
    return tuple(out)


HOST_FAMILY = "NvidiaPlanHost"


def host_entries(program) -> list[str]:
    """The plan module's definitions declared of type (family NvidiaPlanHost), in source order."""
    scope = program.scopes[program.plan_name]
    out = []
    for name, definition in scope.definitions.items():
        declared = definition.type
        family = getattr(declared, "declaration", None)
        if (type(declared).__name__ == "FamilyT" and getattr(family, "name", None) == HOST_FAMILY
                and is_library_family(family)):     # the library's family, not one named like it
            out.append(name)
    return out


def extract_plan(program, entry: str) -> Plan:
    """The build's Plan from its NvidiaPlanHost definition `entry`.

    Plan.host holds the typed host plan (bobc.plan.host.HostPlan), its
    device_hazard the language's own arena certificate (0 when sound);
    bobc.pipeline refuses a nonzero one after the certifier has had the
    chance to name the fault precisely.
    """
    definition = program.definition(entry)
    r = _Reader(program, entry, definition.span)
    host = r.fields(r.con(program.value(entry), "NvidiaPlanHost", entry))
    hazard = r.nat(host["nvidiaPlanHostDeviceHazard"], "the device hazard")
    whole = extract_whole_program(program, host["nvidiaPlanHostProgram"], f"{entry}'s program")
    arena = extract_arena(program, host["nvidiaPlanHostWindows"], host["nvidiaPlanHostGlobals"],
                          host["nvidiaPlanHostPhases"], f"{entry}'s device arena")
    contract = extract_contract(program, host["nvidiaPlanHostCheckpoint"], f"{entry}'s checkpoint")
    buffers = _buffers(r, host["nvidiaPlanHostBuffers"])
    typed = HostPlan(
        identity=r.c_text(host["nvidiaPlanHostIdentity"], "the host's identity"),
        device_hazard=hazard,
        buffers=buffers,
        request=_request(r, host["nvidiaPlanHostRequest"]),
        initializers=_initializers(r, host["nvidiaPlanHostInitializers"], contract),
        fills=_fills(r, host["nvidiaPlanHostFills"], len(whole.launches)),
        forward_launches=r.nat(host["nvidiaPlanHostForwardLaunches"], "the forward launches"),
        semaphore_stride=r.nat(host["nvidiaPlanHostSemaphoreStride"], "the semaphore stride"),
        steps=extract_steps(program, host["nvidiaPlanHostSteps"], f"{entry}'s schedule"))
    return Plan(program=whole, arena=arena, checkpoint=contract,
                host_buffers=tuple(HostBuffer(b.name, b.gpu, b.extent) for b in buffers),
                host=typed, entry=(entry, definition.span))
