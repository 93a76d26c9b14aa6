"""The backend's handlers for `(compiler-native-encode T v)`.

Five families are encoded by the compiler:
  SM86Program (Accelerator.SM86.InstructionEncoding): a kernel's assembly
    source (or its variant for the build's target, bobc.kernel_search) -> its
    machine code for that target (bobc.sass).
  NvidiaWholeProgramPlan (Hardware.Nvidia.SM86.Command.WholeProgramPlan): the
    plan -> the bytes of its component (program, QMD table, pushbuffer or
    GPFIFO image; bobc.nvidia.encode); NvidiaResidentProgram (Hardware.Nvidia.
    SM86.Command.ProgramResidence): the same, the device reading the program
    table from a residence (bobc.nvidia.residence).
  NativePhysicalProgram (Runtime.NativePhysicalProgram): a native physical program ->
    the host executable that runs it (bobc.native.writer); NvidiaResourceHost
    (Platform.Linux.Nvidia.ResourcePlan): the same, for its program.
Nothing here ever stands in for machine code or images.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import BobcError, shown_plan_text
from ..language.intrinsics import Intrinsics
from ..language.modules import specs_folder
from ..language.values import VBytes
from ..resources import doc
from .extract import ProgramMemo, _Reader, extract_whole_program, written

# the bounded look for the kernel sources a misnamed one may have meant (never a decision)
_LOOK_FOLDERS = 2_000
_LOOK_FILES = 20_000


def _sources_near(source: str, folders) -> tuple[list[str], bool]:
    """The kernel sources (`*.sass`, named as a plan names them: relative to a folder of the
    search path) in the folder `source` names under each search folder, else, when none has
    that folder, under the search folders, breadth first (bounded: _LOOK_FOLDERS folders,
    _LOOK_FILES files; a filesystem's root is not looked through); and whether they are in the
    folder named."""
    import os

    named = Path(source).parent
    near = []
    for folder in folders:
        try:
            listing = sorted(os.scandir(Path(folder) / named), key=lambda e: e.name)
        except (OSError, ValueError):
            continue
        near += [(named / e.name).as_posix() for e in listing if e.name.endswith(".sass") and e.is_file()]
    if near:
        return near, True
    found: list[str] = []
    for folder in folders:
        root = Path(folder)
        try:
            if root.resolve() == Path(root.resolve().anchor):
                continue
        except (OSError, RuntimeError):
            continue
        queue, seen = [root], 0
        while queue and seen < _LOOK_FOLDERS and len(found) < _LOOK_FILES:
            here = queue.pop(0)
            seen += 1
            try:
                entries = sorted(os.scandir(here), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        queue.append(Path(entry.path))
                    elif entry.name.endswith(".sass"):
                        found.append(Path(entry.path).relative_to(root).as_posix())
                except (OSError, ValueError):
                    continue
    return found, False


def _missing_source_hint(source: str, folders, name: str = "") -> str:
    """The refusal's hint: the source the plan may have meant (the kernel `name`'s own source,
    else the closest name), and how a source is named, by an example beside (or nearest) the
    one named."""
    import difflib

    from ..kernel_search import base_source

    near, beside = _sources_near(source, folders)
    # a plan names a base, never a variant (x.sm_90.sass): each suggested by its base's name
    near = list(dict.fromkeys((Path(path).parent / base_source(path)).as_posix() if Path(path).parent != Path(".")
                              else base_source(path) for path in near))
    rule = "a kernel source is named relative to one of these folders (the plan's own, -I folders, then specs/)"
    own = [path for path in near if Path(path).name.split(".")[0] == name]
    # beside the one named, names are compared (the folder is the same); elsewhere, whole paths
    key = (lambda path: Path(path).name) if beside else (lambda path: path)
    by_key = {}
    for path in near:
        by_key.setdefault(key(path), path)
    close = difflib.get_close_matches(key(source), list(by_key), n=1, cutoff=0.6)
    if own or close:
        return f"did you mean {own[0] if own else by_key[close[0]]}? {rule}"
    example = difflib.get_close_matches(source, near, n=1, cutoff=0) if near else []
    shown = example[0] if example else (Path(source).parent / "x.sass").as_posix()
    return f"{rule}, as {shown} is" if example else f"{rule}, e.g. {shown}"


def _not_a_source_file(source: str, folders, target):
    """(the path, what is there) for the first candidate of `source` (its variant for `target`,
    then itself, per folder) that is there but is not a regular file (a FIFO, a folder, a broken
    link), else None: such a path was said to be in none of the folders, with a did-you-mean of
    another kernel (probe s40 docs9 finding 2)."""
    from ..kernel_search import variant_path
    from ..language.modules import not_a_file

    for folder in folders:
        base = Path(folder) / source
        for candidate in (variant_path(base, target), base):
            what = not_a_file(candidate)
            if what is not None:
                return candidate, what
    return None


def _kernel_source(program, source: str, target, at=None, name: str = "") -> Path:
    """The source named relative to specs/ (or another folder of the search path), or its
    variant for `target` beside it (bobc.kernel_search.find_named).  The candidates found
    absent are recorded with the sources read (a variant added later is a cache miss).
    `at`: where the plan names the source (a refusal's place)."""
    from ..kernel_cache import note_absent
    from ..kernel_search import SourceError, find_named

    folders = list(dict.fromkeys([*getattr(program, "search_path", ()), specs_folder()]))   # specs/ once
    missing: list = []
    try:
        found = find_named(source, folders, target, missing)
    except SourceError as error:          # located at the source's name in the plan
        raise BobcError(error.message, error.span or at, hint=error.hint) from None
    note_absent(missing, target)
    if found is None:
        there = _not_a_source_file(source, folders, target)
        if there is not None:         # something is at the path, as a module's is refused (language.modules)
            from ..errors import shown_path

            raise BobcError(f"kernel source {shown_plan_text(source)}: {shown_path(there[0])} is {there[1]}, "
                            f"not a SASS source file", at,
                            hint="a kernel source is a regular file of SASS text (or a link to one); put the "
                                 "kernel there, or name the file that holds it")
        raise BobcError(f"kernel source {shown_plan_text(source)} is in none of: {', '.join(str(f) for f in folders)}", at,
                        hint=_missing_source_hint(source, folders, name))
    from ..sass.source import check_source
    try:        # too big or unreadable: refused here, at the source's name in the plan, not later by
        check_source(found)     # a reader of it, placed at the host's `def` (probe s40 docs9, left)
    except BobcError as error:
        raise BobcError(f"kernel source {shown_plan_text(source)}: {error.message}", at, hint=error.hint) from None
    return found


def _field_written(raw, vcon, index: int):
    """Where field `index` of the constructor value `vcon` (whose raw, unforced value is `raw`)
    was written: its own value's place, else the field's expression where the constructor was
    written (a literal says where it is only there), else the constructor's place."""
    from ..language.core import Con

    own = written(vcon.fields[index])
    if own is not None:
        return own
    term = getattr(raw, "term", None)
    if type(term) is Con and index < len(term.fields):
        inner = written(term.fields[index].span)
        if inner is not None:
            return inner
    return written(raw)


def _same_as_search(program, name: str, source: str, path: Path, target, at=None) -> None:
    """Refuse a kernel the plan names otherwise than its source does, and a named source that
    is not the file the kernel search finds for its name: the certifier reads the kernel's
    contract from the search's file (bobc.kernel_search), so a copy of the kernel earlier on
    the search path would be certified in place of the code."""
    from ..kernel_cache import note_search
    from ..kernel_search import find_source, kernel_name

    stem = path.name.split(".")[0]               # x.sass and its variant x.sm_90.sass: kernel x
    own = kernel_name(path, stem)
    if name not in (stem, own):
        raise BobcError(f"kernel source {shown_plan_text(source)} is kernel {own}{f' (file {stem})' if own != stem else ''}, "
                        f"but the plan's SM86Program names it {shown_plan_text(name)}", at,
                        hint=f"name it {own} (its .kernel name) or {stem} (its file name)" if own != stem
                        else f"name it {stem}, its source's name")
    folders = list(dict.fromkeys([*getattr(program, "search_path", ()), specs_folder()]))
    found = find_source(stem, folders, target)
    note_search(stem, folders, target, found)       # a file the search finds first later is a miss
    if found is not None and found.resolve() != path.resolve():
        raise BobcError(f"kernel {stem}: the plan encodes {shown_plan_text(source)} ({path}), but the kernel search finds "
                        f"{found} first, and the certifier would read that file's contract for this code", at,
                        hint=f"keep one source named {found.name} on the search path: remove or rename the "
                             f"other copy")


class _Encoders:
    """The handlers, with per-build caches (each kernel assembled once per target)."""

    def __init__(self):
        self.kernels: dict = {}      # (path, mtime, target name) -> assembled object
        # machine code -> {kernel identity (its source's name) -> (the source, its assembly)}:
        # two sources may assemble to the same bytes (a kernel under two identities), and a
        # region's source is the one of its own identity among them (_assembled_as)
        self.by_code: dict = {}
        self.images: dict = {}       # (plan without component, target name) -> images
        # every image set this build encoded, by its four images' bytes' sha256 (program, QMD,
        # pushbuffer, GPFIFO) -> its manifest: what `bobc build --entry DEF --emit-images` writes
        # beside a native host's embedded images when they are one of these sets (encoded_manifest)
        self.manifests: dict = {}
        # the same key -> each launch's (kernel, grid, where the plan wrote it): the native host's
        # launch table (bobc.native.launches), which the manifest alone cannot give
        self.launch_places: dict = {}
        # the same key -> (the whole-program plan, the kernels' contracts its launches were ordered
        # by): what a request program's staged restore is followed through (encoded_plan)
        self.plans: dict = {}
        # sha256 of a native program's bytes -> the nvidiaPlanHostRequestCommands[Fresh] arguments
        # it was written from (bobc.native.writer, certify.request_schedule.request_call)
        self.requests: dict = {}
        # the plans extracted, by their value's key: one extraction for a plan's four images
        self.programs = ProgramMemo()
        # (source, kernel name, target name) -> the file found and checked: a plan encodes each
        # program once per launch (thousands of calls), the search and the name check once
        self.found: dict = {}

    def _assembled(self, value, context, what: str):
        r = _Reader(context.program, what)
        v = r.con(value, "SM86Program", "the program")
        source = r.text(v.fields[0], "the kernel's source", _field_written(value, v, 0),
                        f"a kernel source's path is ASCII ({doc('writing-a-plan.md')}): rename the file and its "
                        "folders with ASCII names, and name it so in the plan")
        name = r.text(v.fields[1], "the kernel's name", _field_written(value, v, 1))
        named = (source, name, context.target.name)
        path = self.found.get(named)
        if path is None:
            path = _kernel_source(context.program, source, context.target, _field_written(value, v, 0), name)
            _same_as_search(context.program, name, source, path, context.target, _field_written(value, v, 1))
            self.found[named] = path
        from ..kernel_cache import assemble_kernel
        key = (str(path), path.stat().st_mtime_ns, context.target.name)
        if key not in self.kernels:
            assembled = assemble_kernel(path, context.target)
            self.kernels[key] = assembled
            identity = path.name.split(".")[0]       # x.sass and its variant x.sm_90.sass: kernel x
            self.by_code.setdefault(bytes(assembled.code), {})[identity] = (path, assembled)
        return path, self.kernels[key]

    def kernel(self, value, context):
        _, assembled = self._assembled(value, context, "compiler-native-encode (family SM86Program)")
        return VBytes(bytes(assembled.code))

    def shared_memory(self, value, context):
        """The `.shared` bytes the kernel's source for the build's target declares (4 bytes, little
        endian): a plan asks its region for what the target's kernel needs (a per-target variant
        may need more or less than the base: docs/kernel-contracts.md)."""
        what = "compiler-native-encode (family SM86ProgramSharedMemory)"
        r = _Reader(context.program, what)
        v = r.con(value, "SM86ProgramSharedMemory", "the query")
        path, assembled = self._assembled(v.fields[0], context, what)
        if assembled.shared_bytes is None:
            raise BobcError(f"{path} declares no shared memory, and a plan asks for it",
                            hint="add `.shared BYTES` to the kernel source (0 when it uses none)")
        return VBytes(assembled.shared_bytes.to_bytes(4, "little"))

    def whole_program(self, value, context, resident=None, what="NvidiaWholeProgramPlan"):
        plan = extract_whole_program(context.program, value, f"compiler-native-encode (family {what})",
                                     memo=self.programs)
        from ..targets import declared_target

        if declared_target(plan.architecture, plan.compute_class) is None:
            # a device bobc knows nothing of, which the encoder refuses without a place: said
            # where the plan declares it, as the certifier says it
            from ..certify.device import check_declared_device
            from ..plan.model import DeviceArena, Plan

            fault = check_declared_device(Plan(program=plan, arena=DeviceArena((), (), ())), context.target)[0]
            raise BobcError(fault.message, fault.at)
        from ..certify.footprints import program_conflicts
        from ..nvidia.encode import encode_images
        import dataclasses
        key = (dataclasses.replace(plan, component=""), context.target.name, resident)
        if key not in self.images:                                      # the latest plan only
            conflicts = program_conflicts(plan, context.target, getattr(context.program, "search_path", ()))
            # every launch within the shapes its kernel serves (`//@ require`): the plan's own arena
            # certificate holds its pointers, but not the values a kernel's code relies on
            from ..certify.findings import CertificationError
            from ..certify.pointers import program_requirement_findings
            faults = program_requirement_findings(plan, getattr(conflicts, "contracts", {}), context.target,
                                                  getattr(context.program, "search_path", ()))
            if faults:
                raise CertificationError(faults)
            self.images = {key: encode_images(plan, context.target, conflicts, resident=resident)}
            encoded = self.images[key]
            key_of_images = image_key(encoded.program, encoded.qmd, encoded.push, encoded.gpfifo)
            self.manifests[key_of_images] = encoded.manifest
            from ..native.launches import places

            self.launch_places[key_of_images] = places(plan, getattr(context.program, "search_path", ()))
            self.plans[key_of_images] = (key[0], getattr(conflicts, "contracts", {}))
        return VBytes(bytes(getattr(self.images[key], plan.component)))

    def resident_program(self, value, context):
        """A plan with a program residence (Hardware.Nvidia.SM86.Command.ProgramResidence):
        its images as bobc.nvidia.residence encodes them."""
        what = "NvidiaResidentProgram"
        r = _Reader(context.program, f"compiler-native-encode (family {what})")
        f = r.fields(r.con(value, what, "the resident program"))
        from ..nvidia.residence import written_at

        resident = (r.word(f["nvidiaResidentProgramBase"], "ModelWord64", "the residence's base"),
                    r.nat(f["nvidiaResidentProgramBytes"], "the residence's bytes"),
                    *written_at(f["nvidiaResidentProgramBytes"]))     # where a refusal of it is located
        return self.whole_program(f["nvidiaResidentProgramPlan"], context, resident, what)


def image_key(program: bytes, qmd: bytes, push: bytes, gpfifo: bytes) -> tuple:
    """An image set's key in _Encoders.manifests: the sha256 of each of its four images."""
    import hashlib

    return tuple(hashlib.sha256(bytes(x)).digest() for x in (program, qmd, push, gpfifo))


def encoded_manifest(registry: Intrinsics, program: bytes, qmd: bytes, push: bytes, gpfifo: bytes) -> dict | None:
    """The manifest of the image set this registry encoded whose four images are byte for byte
    these, else None (images a plan wrote some other way, or no build encoded)."""
    encoders = getattr(registry, "encoders", None)
    if encoders is None:
        return None
    return encoders.manifests.get(image_key(program, qmd, push, gpfifo))


def encoded_launch_places(registry: Intrinsics, program: bytes, qmd: bytes, push: bytes, gpfifo: bytes) -> list | None:
    """Each launch's (kernel, grid, place) of the image set encoded_manifest names, else None."""
    encoders = getattr(registry, "encoders", None)
    if encoders is None:
        return None
    return encoders.launch_places.get(image_key(program, qmd, push, gpfifo))


def encoded_plan(registry: Intrinsics, program: bytes, qmd: bytes, push: bytes, gpfifo: bytes) -> tuple | None:
    """(the whole-program plan, its kernels' contracts) of the image set encoded_manifest names,
    else None."""
    encoders = getattr(registry, "encoders", None)
    if encoders is None:
        return None
    return encoders.plans.get(image_key(program, qmd, push, gpfifo))


def encoded_request(registry: Intrinsics, code: bytes) -> dict | None:
    """The nvidiaPlanHostRequestCommands[Fresh] arguments the native program `code` (its canonical
    bytes) was written from in this build (bobc.native.writer), else None."""
    import hashlib

    encoders = getattr(registry, "encoders", None)
    if encoders is None:
        return None
    return encoders.requests.get(hashlib.sha256(bytes(code)).digest())


def default_intrinsics() -> Intrinsics:
    """A registry with the compiler's encoders (fresh caches per call)."""
    encoders = _Encoders()
    registry = Intrinsics()
    registry.encoders = encoders
    registry.register("SM86Program", _recorded(encoders.kernel))
    registry.register("SM86ProgramSharedMemory", _recorded(encoders.shared_memory))
    registry.register("NvidiaWholeProgramPlan", _recorded(encoders.whole_program))
    registry.register("NvidiaResidentProgram", _recorded(encoders.resident_program))
    from ..native.writer import encode_native_program, encode_resource_host

    registry.register("NativePhysicalProgram", _recorded(encode_native_program))   # docs/native-host.md
    registry.register("NvidiaResourceHost", _recorded(encode_resource_host))
    return registry


def _recorded(handler):
    """`handler`, the kernel sources it reads or looks for noted in the record of the program
    being evaluated (bobc.kernel_cache.program_record): what that program's stored results list,
    whatever else the process compiles before, after or between."""
    from ..kernel_cache import program_record, recording

    def encode(value, context):
        with recording(program_record(context.program)):
            return handler(value, context)

    return encode


def _assembled_as(registry: Intrinsics, plan) -> dict:
    """Region identity -> (the source, its assembly) the build assembled the region's code from,
    for the regions of `plan` whose code this registry assembled.  A region's source is found by
    its identity: the source of that name (x.sass or its variant x.<target>.sass) among those
    assembled to the region's very bytes.  Two kernels whose sources assemble to identical
    bytes are two identities of the same code, and each region is its own identity's; only
    where no source of the region's identity gave its bytes is it another kernel's (the last
    such assembled), which bobc.certify's kernel_contracts refuses."""
    encoders = getattr(registry, "encoders", None)
    if encoders is None:
        return {}
    out = {}
    for region in plan.program.regions:
        assembled = encoders.by_code.get(bytes(region.code))
        if assembled:
            out[region.identity] = assembled.get(region.identity) or list(assembled.values())[-1]
    return out


def kernel_sources(registry: Intrinsics, plan) -> dict[str, Path]:
    """Region identity -> the source its code was assembled from (bobc.certify's `encoded_from`),
    for the regions of `plan` whose code this registry assembled (_assembled_as)."""
    return {identity: path for identity, (path, _) in _assembled_as(registry, plan).items()}


def kernel_registers(registry: Intrinsics, plan) -> dict[str, int]:
    """Region identity -> the registers its assembled kernel needs (bobc.certify's `needs`),
    for the regions of `plan` (a Plan) whose code this registry assembled (_assembled_as)."""
    return {identity: assembled.registers for identity, (_, assembled) in _assembled_as(registry, plan).items()}


def kernel_assemblies(registry: Intrinsics, plan) -> dict:
    """Region identity -> the kernel as this registry assembled it for the region's code (a
    plan's kernel: with the target's launch prologue), for the regions of `plan` whose code
    this registry assembled (_assembled_as): the certifier reads the code's parameter reads off
    it rather than assembling the source again (bobc.certify's `assembled`)."""
    return {identity: assembled for identity, (_, assembled) in _assembled_as(registry, plan).items()}
