"""`bobc build PLAN --entry DEF`, when DEF is a native artifact rather than a host plan.

A plan whose host is a native physical program (a definition the plan names with --entry) gives
its executable as a value: Bytes that are an ELF (`nativePhysicalNativeELF program`,
possibly wrapped by Runtime.NativePhysicalEmbeddedArtifact).  The build type checks the
plan, evaluates DEF and writes those bytes; no plan host is extracted (the plan's own admission
rules are its proofs), but a request program's schedule and staged restore are held to the
host-step rules (refuse_staged_request; the writer's own refusals).  `bobc check PLAN --entry DEF`
does the same evaluation and refusals without writing (checked_artifact).  An entry of any other
type than Bytes or (family NvidiaPlanHost) is refused naming its type.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import BobcError

ELF_IDENT = b"\x7fELF\x02\x01\x01"


def entry_kind(program, entry: str, command: str = "build") -> str:
    """"native" (a Bytes entry), "host" (a NvidiaPlanHost entry), or a refusal naming the type and
    what `bobc COMMAND` (build, check) does with an --entry."""
    from ..language.quote import shown_value
    from ..language.values import VBytesType, VFamily
    from ..plan.extract import HOST_FAMILY

    declared = program.type_of(entry)
    if isinstance(declared, VBytesType):
        return "native"
    if isinstance(declared, VFamily) and declared.family == HOST_FAMILY:
        return "host"
    # the type itself, as `bobc eval --type` prints it, cut as a message cuts a term (a function's
    # (pi ...), never describe()'s "a type", which every type value is)
    shown = shown_value(declared)
    does = {"build": "builds", "check": "checks"}.get(command, "takes")
    raise BobcError(f"{entry} is of type {shown}; `bobc {command}` {does} a native artifact "
                    f"(Bytes: an ELF, e.g. nativePhysicalNativeELF program) or a host plan "
                    f"(family {HOST_FAMILY})",
                    hint="name a definition of one of those types with --entry")



def refuse_empty_host(entry: str, data: bytes) -> None:
    """A host definition that evaluated to b"": the plan refused the request (its admission), so
    there is no host to write or run (`bobc build` and `bobc run PLAN native` say the same)."""
    if not data:
        raise BobcError(f"{entry} evaluates to empty bytes: the plan built no host for this request",
                        hint="a plan whose admission refuses a request (a port, a worker, a count outside what it "
                             "serves) gives empty bytes in place of the host; evaluate the plan's refusal "
                             "(`bobc eval` of the definition that says why) or check the request's values")


def refuse_non_executable(entry: str, data: bytes) -> None:
    """A Bytes definition that is no x86-64 ELF executable: no native artifact, so nothing to build
    or run -- refused as the plan's definition of the wrong kind (exit 1; `bobc build` and `bobc run
    PLAN native` say the same), not as a damaged host file (a host's exit 9: there is no host)."""
    if data[:7] != ELF_IDENT or int.from_bytes(data[18:20], "little") != 62:
        raise BobcError(f"{entry} is Bytes but not an x86-64 ELF executable "
                        f"(it starts {data[:8].hex() or 'empty'}); a native artifact is what "
                        f"nativePhysicalNativeELF gives",
                        hint="build the definition that holds the host executable")


def native_artifact(plan_path: Path, target, include, entry: str, modules: list | None = None,
                    images: list | None = None):
    """DEF's bytes when DEF is a Bytes entry (checked to be an x86-64 ELF), else None.  A list
    given as `modules` receives every module file the program is made of (the build's inputs:
    `bobc build -o` never replaces one).

    Evaluating an artifact is a whole build's work (seconds to minutes for a large plan), and
    its bytes depend only on what a well-typed program's verdict key covers (every module's
    text, the target, bobc, the evaluation limit), the kernel sources evaluation read and the
    interpreter: a program found well typed before and unchanged is not loaded, and DEF's
    bytes stored then are written again (stored.artifact; BOBC_CACHE_DIR=off: never).

    A list given as `images` (`bobc build --entry DEF --emit-images DIR`) receives the host's
    embedded images with the manifest bobc's encoder made for them (embedded_images): the
    program is then always evaluated, since only encoding them makes their manifest."""
    from .. import pipeline, recall, stored
    from .writer import host_interpreter

    recalled = recall.recall(plan_path, target, include) if images is None else None
    if recalled is not None and entry in recalled.plan_definitions:
        # kept while it starts with the interpreter a build writes today: the same executable and
        # the same build facts (a new commit of bobc is a new .bobc.version section)
        kept = stored.artifact(recalled.bobc_verdict, entry, lambda: host_interpreter(target.name))
        if kept is not None:
            if modules is not None:
                modules.extend(recalled.module_paths)
            data, manifest, launches = kept
            return carry_manifest(data, manifest, entry, launches)
    program = pipeline.load(plan_path, target, include)
    if modules is not None:
        modules.extend(Path(module.path) for module in program.modules.values())
    pipeline.require_entry(program, entry)
    if entry_kind(program, entry) != "native":
        return None
    pipeline.check(program)
    data, manifest, launches = evaluated_artifact(program, entry)
    if images is not None:
        images.append(embedded_images(program, entry, data))
    return carry_manifest(data, manifest, entry, launches)


def evaluated_artifact(program, entry: str) -> tuple[bytes, dict | None, bytes | None]:
    """Evaluate the well-typed (pipeline.check) `program`'s native artifact `entry` and hold it to
    everything `bobc build --entry` refuses after evaluation (the writer's own refusals ran while
    evaluating: a request program's schedule, the program's checks); its bytes, its images'
    manifest and launch table (carried_manifest), kept for a later build or check
    (stored.keep_artifact).  `bobc build` writes them; `bobc check --entry` writes nothing."""
    from .. import stored
    from ..language.values import VBytes

    value = program.value(entry)
    data = bytes(value.value) if isinstance(value, VBytes) else b""
    refuse_empty_host(entry, data)
    refuse_non_executable(entry, data)
    refuse_staged_request(program, entry, data)
    manifest, launches = carried_manifest(program, entry, data)
    stored.keep_artifact(program, entry, data, manifest, launches)
    return data, manifest, launches


def checked_artifact(program, entry: str, target) -> bool:
    """`bobc check --entry DEF` of a native artifact: True once DEF's bytes are held to what
    `bobc build --entry DEF` refuses, evaluating it as the build does (evaluated_artifact), or as a
    build of the same well-typed program kept it (stored.artifact: a kept artifact passed them all);
    nothing is written.  The program is type checked first (pipeline.check)."""
    from .. import pipeline, stored
    from .writer import host_interpreter

    pipeline.check(program)
    kept = stored.artifact(getattr(program, "bobc_verdict", None), entry, lambda: host_interpreter(target.name))
    if kept is None:
        evaluated_artifact(program, entry)
    return True


def refuse_staged_request(program, entry: str, data: bytes) -> None:
    """A native host `data` whose program this build wrote from a plan host's request
    (nvidiaPlanHostRequestCommands[Fresh]: plan.intrinsics.encoded_request) and whose four embedded
    images one whole-program plan of this build encoded byte for byte (plan.intrinsics.encoded_plan):
    its schedule's staged restore is held to the plan host's rule through those launches' declared
    copies (certify.request_schedule.request_staged_findings; docs/host-steps.md, "A request
    program's schedule"), refused as a plan host is: every fault at the step the plan wrote, nothing
    written.  A host of another kind, or images no encoding of this build gave, is not held."""
    from ..certify.findings import CertificationError
    from ..certify.request_schedule import request_staged_findings
    from ..plan.intrinsics import encoded_plan, encoded_request
    from . import artifact

    registry = getattr(program, "bobc_intrinsics", None)
    try:
        host = artifact.split(data, entry)
    except artifact.DamagedHost:
        return                          # said where the host's parts are read (carried_manifest)
    call = encoded_request(registry, host.program)
    if call is None or len(host.components) != 4:
        return
    parts = {kind: content for kind, _, content in host.components}
    encoded = encoded_plan(registry, parts[1], parts[2], parts[3], parts[4])
    if encoded is None:
        return
    faults = request_staged_findings(program, call, *encoded)
    if faults:
        raise CertificationError(faults)


def carried_manifest(program, entry: str, data: bytes) -> tuple[dict | None, bytes | None]:
    """The manifest bobc's encoder made for exactly the four device images the native host `data`
    embeds (plan.intrinsics.encoded_manifest) and the launch table for its fault lines
    (bobc.native.launches: each launch's kernel, grid and place, each submission's GPFIFO entry and
    launches), else (None, None): a host that embeds none, or images no whole-program plan of this
    build encoded byte for byte."""
    from ..plan.intrinsics import encoded_launch_places, encoded_manifest
    from . import artifact, launches

    try:
        host = artifact.split(data, entry)
    except artifact.DamagedHost as error:
        raise BobcError(str(error)) from None
    if len(host.components) != 4:
        return None, None
    parts = {kind: content for kind, _, content in host.components}
    registry = getattr(program, "bobc_intrinsics", None)
    manifest = encoded_manifest(registry, parts[1], parts[2], parts[3], parts[4])
    places = encoded_launch_places(registry, parts[1], parts[2], parts[3], parts[4])
    if manifest is None or places is None:
        return manifest, None
    return manifest, launches.table(manifest, parts[4], places)


def carry_manifest(data: bytes, manifest: dict | None, entry: str, launches: bytes | None = None) -> bytes:
    """The native host `data` carrying `manifest` (its embedded images' manifest) as a .bobc.manifest
    section of its interpreter, which the host never reads (runtime_c/native_host.c finds its
    program and images from the file's end): `bobc dump`, `diff` and `inspect` decode its images by it,
    as a plan host's; and `launches` (bobc.native.launches) as a .bobc.launches section, which the
    host reads only to say a GPU fault (runtime_c/launch_rows.h).  The program, its trailer and the
    embedded images are byte for byte the same, the footer's host lengths moved by the sections'
    size; None: `data` unchanged."""
    if manifest is None:
        return data
    from ..errors import temporary_folder, write_temporary
    from ..host import sections
    from ..nvidia.encode import manifest_text
    from . import artifact
    from .launches import SECTION

    host = artifact.split(data, entry)
    carried = {"manifest": manifest_text(manifest).encode("utf-8")}
    if launches is not None:
        carried[SECTION] = launches
    with temporary_folder(prefix="bobc-native-manifest-") as folder:
        path = Path(folder) / "interpreter"
        write_temporary(path, data[:artifact.interpreter_size(host)])
        sections.embed(path, carried)
        interpreter = path.read_bytes()
    return artifact.with_interpreter(data, host, interpreter)


def embedded_images(program, entry: str, data: bytes):
    """The device images the native host `data` embeds (program table, QMD table, pushbuffer,
    GPFIFO: Runtime.NativePhysicalEmbeddedArtifact), as an Images with the manifest bobc's encoder
    made for exactly these bytes while evaluating `entry` (plan.intrinsics.encoded_manifest), so
    `bobc dump` and `bobc diff` decode them as a plan host's; with them the host's native program
    (`native_program`).  A host that embeds no images, or images no encoding of this build gave
    byte for byte (the plan wrote them some other way), has no manifest to write: refused (exit 2)."""
    from ..errors import UsageError
    from ..nvidia.encode import Images
    from ..plan.intrinsics import encoded_manifest
    from . import artifact

    try:
        host = artifact.split(data, entry)
    except artifact.DamagedHost as error:
        raise BobcError(str(error)) from None
    hint = ("build it with -o HOST: `bobc dump HOST` shows its program and its images' sizes and sha256, "
            "`bobc diff A B` compares two such hosts")
    if not host.components:
        raise UsageError(f"--emit-images writes a host's device images; {entry} is a native physical program host "
                         "that embeds none (it is no Runtime.NativePhysicalEmbeddedArtifact)", hint=hint)
    parts = {kind: content for kind, _, content in host.components}
    manifest = encoded_manifest(getattr(program, "bobc_intrinsics", None), parts[1], parts[2], parts[3], parts[4])
    if manifest is None:
        raise UsageError(f"--emit-images writes a host's device images with their manifest; the four images {entry} "
                         "embeds are no image set bobc encoded while building it (compiler-native-encode of one "
                         "whole-program plan), so there is no manifest that describes them", hint=hint)
    found = Images(program=parts[1], qmd=parts[2], push=parts[3], gpfifo=parts[4], manifest=manifest)
    found.native_program = host.program
    return found
