"""`bobc inspect HOST`: the images a built host carries, and what it needs (its --version text:
target, compute class, driver branch, the bobc and commit that built it, the plan's identity).

Two identities: the plan identity (in the --version text, checked by the host at start) is the
sha256 of the four device images only; the host identity (computed here, bobc.host.sections.
host_identity) is the sha256 of the host's own sections and its ELF, program and section headers
(an entry point, a .bss size) -- the runtime and the host plan: buffers, semaphores, record checks,
checkpoint contract, initializers, fills, steps.  --json gives both: `plan_identity` as the version
text records it, `images_identity` as computed from the images carried (the same unless damaged).
A host whose manifest section is not the one it was built with (its sha256 against the manifest identity
its version text records) is damaged: the host refuses to run (exit 9) and inspect, dump and diff refuse
it (exit 1; diff's 2), naming the section (version.check_images).  Two hosts that run
differently differ in one of them."""
import hashlib
import json
from pathlib import Path

from ._common import existing_file
from ..resources import doc


def add_arguments(p):
    p.add_argument("host", help="a host executable built by `bobc build` (a plan host, or a native physical "
                   "program host built with --entry)")
    p.add_argument("--extract", metavar="DIR",
                   help="also write each image to DIR/<name>.bin (manifest as manifest.json)")
    p.add_argument("--json", action="store_true", help="print the same as one JSON object")


def run(args):
    from ..errors import UsageError
    from ._common import path_kind

    given = Path(args.host)
    if path_kind(args.host) == "folder":
        from ..errors import printable

        raise UsageError(f"{printable(given)} is a folder, not a host executable",
                         hint=f"for an image folder written by `bobc build --emit-images`, use `bobc dump {printable(given)}`")
    path = existing_file(args.host)
    if args.extract == "":      # as --emit-images '' and -o '' are refused: not "extract nothing"
        raise UsageError("--extract '': an empty folder name", hint="name the folder to write the images into")
    from ._common import refuse_stdout_name

    refuse_stdout_name(args.extract, "--extract", "a folder")
    if args.extract:            # the folder is judged before the report, as --emit-images before a build
        from ..nvidia.encode import check_image_folder
        check_image_folder(args.extract, "--extract")
    from ._refusals import refused_files

    with refused_files():   # not bobc's, damaged, unreadable: a file refused, exit 1 (as dump says it)
        return _inspect(path, args)


def _inspect(path: Path, args) -> int:
    from ..host import native, sections, version

    if native.is_native_host(path):
        return _inspect_native(path, args)
    found = sections.read(path)
    data = path.read_bytes()
    host_identity = sections.host_identity(data, path)
    needs = version.parse(found[version.SECTION]) if version.SECTION in found else {}
    recorded = version.recorded_identity(found.get(version.SECTION))
    carried = version.carried_identity(found)
    damaged = recorded is not None and recorded != carried
    from ..errors import BobcError

    try:
        version.check_images(path, found)       # the images and the manifest, as the host checks them
        refused = None
    except BobcError as error:
        refused = error
    manifest = {}
    if "manifest" in found and refused is None:
        # images its version text vouches for: the manifest is read as dump and diff read it (a
        # damaged one refused, exit 1); a host without that is listed, then refused below
        from ..nvidia.decode import host_manifest

        manifest = host_manifest(path, found["manifest"],
                                 version.recorded_identity(found.get(version.SECTION), version.MANIFEST_KEY) is not None)
    elif "manifest" in found:
        try:
            manifest = json.loads(found["manifest"])
        except ValueError:
            pass
        manifest = manifest if isinstance(manifest, dict) else {}
    refusal = None
    if args.json:       # a damaged host's refusal is in its one JSON object (ok false), not a second one
        if refused is not None:
            from ._refusals import FILE_REFUSED

            refusal = refused
            refusal.exit_code = FILE_REFUSED        # a file refused (_refusals.refused_files)
        report = {
            "ok": refusal is None,
            "host": str(path),
            "version": needs or None,
            "target": manifest.get("target"), "compute_class": manifest.get("compute_class"),
            "sections": {sections.PREFIX + name: {"bytes": len(content),
                                                  "sha256": hashlib.sha256(content).hexdigest()}
                         for name, content in found.items()},
            # images_identity: the sha256 of the images carried, which is the plan identity (the text's
            # "plan identity", recorded in the version text) unless the host is damaged
            "images_identity": carried, "plan_identity": recorded,
            "images_match_plan_identity": None if recorded is None else not damaged,
            "host_identity": host_identity,
        }
        if refusal is not None:
            report.update(error=refusal.message, hint=refusal.hint, exit_code=refusal.exit_code)
            args.json_printed = True
        print(json.dumps(report, indent=1, sort_keys=True))
    else:
        print(sections.describe(path))
        if needs:
            print(f"  needs and provenance ({path.name} --version):")
            for key, value in needs.items():
                print(f"    {key}: {value}")
        else:
            print(f"  (no {sections.PREFIX}{version.SECTION} section: the host cannot check its images and refuses "
                  f"to run, exit 9)")
        print(f"  host identity: sha256 {host_identity} (the host's own sections: the runtime and the host "
              "plan -- buffers, record checks, checkpoint contract, initializers, steps; the plan identity "
              "covers the device images only)")
    if args.extract:
        _extract(Path(args.extract), {(f"{name}.json" if name == "manifest" else f"{name}.bin"):
                                      (_manifest_file(content) if name == "manifest" else content)
                                      for name, content in found.items() if name != version.SECTION}, path, args)
    if refusal is not None:
        raise refusal
    if refused is not None:     # the host's own start-up check, as diff and dump make it
        raise refused
    return 0


def _inspect_native(path: Path, args) -> int:
    """A native physical program host: its program and embedded images (bobc.host.native)."""
    from ..host import native

    text, info = native.summary(path)
    _, decoded, _ = native.read(path)
    lines, facts = _native_program_facts(decoded, path.name)
    info["program"].update(facts)
    info["ok"] = True
    text[-1:-1] = lines         # before the closing line that points at `bobc dump`
    print(json.dumps(info, indent=1, sort_keys=True) if args.json else "\n".join(text))
    if args.extract:
        _extract(Path(args.extract), native.extract(path), path, args)
    return 0


def _native_program_facts(decoded, name: str) -> tuple[list, dict]:
    """What a user needs to run a native program and tell two apart, read generically from its
    commands (bobc.native.program's command table; docs/native-host.md): its file arguments and
    whether each is read or written, its request options, its peers (Connect), the GPU it opens
    (OpenDevice), its Repeat counts and its Submit commands.  Text lines and --json's keys."""
    from ..native import program as np

    uses = np.argument_uses(decoded)
    request = np.request_uses(decoded)
    peers, devices, repeats = np.peers(decoded), np.devices(decoded), np.repeats(decoded)
    counts = np.command_counts(decoded)
    lines = []
    if uses:
        lines.append(f"  run      ./{name} {np.usage_arguments(decoded)}"
                     + ("  (unused: no command reads or writes it, but the host takes it)" if 0 in uses else ""))
    elif not request:
        lines.append("  run      no file arguments")
    if request:
        lines.append("  request  train|predict, options " + ", ".join(
            f"{option} ({np.USE_WORDS[use]})" for option, use in request.items())
            + f" ({doc('native-host.md')}, \"Requests\"; `HOST --help`)")
    for peer in peers:
        where = f"{peer['address']}:{peer['port']}"
        role = (f"listens at {where}" + (" (every interface)" if peer["address"] == "0.0.0.0" else "")
                if peer["listens"] else f"connects to {where}")
        lines.append(f"  peer     {role} (command {peer['command']}, Connect)")
    for device in devices:
        which = "any: the first GPU the driver lists" if device["any"] else device["uuid"]
        lines.append(f"  device   {which} (command {device['command']}, OpenDevice)")
    if repeats:
        lines.append("  repeats  " + ", ".join(
            f"{'a count read as it runs' if r['count'] is None else r['count']} (command {r['command']})"
            for r in repeats))
    submits = counts.get("Submit", 0)
    lines.append(f"  submits  {submits} Submit command(s) of {len(decoded.commands)} commands"
                 + (" (a Submit inside a Repeat runs once a pass)" if submits and repeats else ""))
    facts = {"argument_uses": [np.USE_WORDS[use] for use in uses],
             "request_options": {option: np.USE_WORDS[use] for option, use in request.items()},
             "peers": peers, "devices": devices, "repeats": repeats,
             "submits": submits, "command_counts": counts}
    return lines, facts


def _manifest_file(section: bytes) -> bytes:
    """manifest.json as `bobc build --emit-images` writes it (nvidia.encode.manifest_text, the one
    writer of a manifest file), from the host's compact .bobc.manifest: an image folder extracted
    from a host and one emitted by the build hold the same bytes.  A section that is not JSON (a
    damaged host) is written as it is."""
    from ..nvidia.encode import manifest_text

    try:
        return manifest_text(json.loads(section)).encode("utf-8")
    except ValueError:
        return section


def _extract(folder: Path, files: dict, host: Path, args) -> None:
    """Each file into `folder` (created when its parent exists), with the host's output rules:
    never through a symlink, never over the `host` read (an output never replaces an input),
    temporaries renamed into place together (exit 8 naming a file); then, but for --json (whose
    stdout is the one object), a line naming what was written where, as `bobc build
    --emit-images` says it (probe s36 newuser2 finding 7: the files came silently)."""
    import os

    from ..cli import say
    from ..errors import shown

    from ..nvidia.encode import check_image_folder
    from ..reference.safe_io import OutputSet, recover

    # os.lstat in a try, as --emit-images: a name too long or a parent that cannot be searched is
    # refused by name (exit 8, one line), never a traceback
    from ._common import folder_made_for, read_files

    with folder_made_for(folder):       # a failure leaves no new empty folder (probe s33 resources 11)
        check_image_folder(folder, "--extract", create=True)
        recover([os.path.join(folder, name) for name in files])    # a kill between two renames of an earlier write
        outputs = OutputSet(inputs=read_files([host], "the host inspected"))
        for name, content in files.items():
            outputs.add(os.path.join(folder, name), "--extract")
            outputs.outputs[-1].data = content
        outputs.publish()
    if not args.json:
        say(f"wrote {', '.join(files)} to {shown(os.fspath(folder))}", "inspect")
