"""`bobc diff A B`: every difference between two image folders or two built hosts, by meaning.

Exit 0 when they hold the same images, 1 when they differ, 2 when they cannot be
compared: a usage error, a missing file, a file that is neither an image folder nor a
bobc host, a damaged one, or two different kinds of host (like diff(1), whose 2 is
"trouble").  A and B are folders written by `bobc build --emit-images` or hosts built
by `bobc build` (their .bobc.* sections), in any mix; or two native physical program
hosts (`bobc build --entry`, docs/native-host.md), compared embedded image by embedded image
(decoded by the manifest a host carries in its .bobc.manifest section, as two image folders are;
a host without one: by sha256) and command by command, their commands aligned as a sequence (host.native.aligned_commands: an
inserted command is one `command[+j]` line, each later one compared with its counterpart).  Behind the decoded lines stands a byte comparison
of every image (bobc.nvidia.golden): a differing byte no decoded line shows is a `raw`
line, so exit 0 means the images are byte for byte the same.  A host whose images do
not match its plan identity is damaged (exit 2, as `bobc inspect` says); every file is
read only when it is a regular file of at most 1 GiB.  The verdict stands when the reader of the output
goes away early (`bobc diff a b | head`).

Launches are aligned as a sequence (golden.LaunchAlignment): an inserted launch is one launch only in
b and each later one is compared with its counterpart (`launch[3->4].registers`).  So are submissions
(golden.SubmissionAlignment, on their identity, launches as aligned and method count): an inserted one
is one line (`submission[+2]`), a run of unchanged ones that moved one line, a segment's methods are
compared by their place in the segment and a ring entry by the submission naming it; an address that
differs only because what it points at moved with its launch, submission or region is no difference
(golden.relocated_facts), and the same value naming something the alignments do not pair is one.  Two plan hosts
are also compared outside their images (host_differences): the version text by key, the host
plan member by member (`host.plan.input.checks[1].value (version)`, docs/host-plan-facts.md; its steps
aligned as a sequence, golden.host_plan_differences), every other section byte for byte and the
ELF header, program headers and section headers (a NOBITS section's size), so for two hosts exit 0
means the same images, host plan and runtime ("hold the same images and host plan"; two native
hosts, which carry no host plan: "the same images and commands"; so for a native host against a
native host's image folder, host.native.host_folder_differences: each embedded image against the
folder's file by sha256 and the programs' commands aligned).  An image folder carries no
host plan: against a host, the images alone are compared, and one line says so (with --json, on
stderr: the output stays the JSON list); two folders hold images alone, and no line says it.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

CANNOT_COMPARE = 2


def add_arguments(p):
    p.add_argument("a", help="image folder or host executable (the 'before')")
    p.add_argument("b", help="image folder or host executable (the 'after')")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="a folder holding the plan's own kernel sources (searched recursively, before "
                        "specs/), for the argument names of bank 0 words (their `//@ param` lines)")
    p.add_argument("--json", action="store_true", help="print the differences as a JSON list (the note that an image folder carries no host plan goes to stderr)")
    p.epilog = ("A and B: folders written by `bobc build --emit-images` (a native host's: `--entry DEF`, its "
                "native program too), hosts built by `bobc build`, or two native physical program hosts (their "
                "embedded images decoded by the manifest a host carries, a .bobc.manifest section, else by sha256), "
                "or a native host and a native host's folder.  exit status: 0 the same "
                "images (and, for two plan hosts, the same host plan and runtime; for two native hosts, or a native "
                "host and a native host's folder, the same commands), 1 they differ, 2 they cannot be compared "
                "(usage, missing or damaged input, a native host against a plan host or a plan host's folder)")


def _checked(path: str) -> None:
    """A missing path, or one that is not a folder nor a regular file of at most
    decode.READ_LIMIT_BYTES (a FIFO would hang a read, a huge file exhaust memory), is refused
    before anything is read (exit 2, naming it and what it is)."""
    from ..nvidia.decode import check_input
    from ._common import existing_path

    from ..errors import printable

    if existing_path(path, f"no such image folder or host: {printable(path)}") != "folder":
        check_input(path)


def _differences(a_path: str, b_path: str, include=()):
    from ..errors import BobcError
    from ..host import native
    from ..nvidia.decode import load_images
    from ..nvidia.golden import differences

    try:
        from ..errors import UsageError
        for path in (a_path, b_path):       # a missing file is missing, whatever the other one is
            _checked(path)
        kinds = native.is_native_host(a_path), native.is_native_host(b_path)
        from .dump import _kernel_folders

        folders = _kernel_folders(include)
        if kinds == (True, True):
            from dataclasses import replace

            found = native.differences(a_path, b_path, folders)
            # their images carry no manifest here: say where one is written, so they are compared by meaning
            return [replace(d, meaning=native.NO_MANIFEST) if d.key.startswith("embedded[") and
                    d.key.endswith("].sha256") else d for d in found]
        if any(kinds):
            native_one, other = (a_path, b_path) if kinds[0] else (b_path, a_path)
            images = load_images(other)     # not bobc's, or damaged: that is the trouble to name
            if Path(other).is_dir() and images.native_program is not None:
                carried = native.carried_images(native_one)
                if carried is not None:
                    # the host carries its images' manifest: compared as two native hosts' folders are
                    a, b = (carried, images) if kinds[0] else (images, carried)
                    a.kernel_folders = b.kernel_folders = folders
                    return differences(a, b) + native.folder_differences(a, b, a_path, b_path)
                # a native host's image folder (`--emit-images`): its images and native program
                return native.host_folder_differences(a_path, b_path, images, kinds[0])
            raise UsageError(f"{native_one} is a native physical program host and {other} is not, nor a native "
                             "host's image folder: the two cannot be compared",
                             hint="compare two native hosts, a native host with a native host's image folder "
                                  "(`bobc build PLAN --entry DEF --emit-images DIR`), or two plan hosts / image folders")
        a, b = load_images(a_path), load_images(b_path)
        a.kernel_folders = b.kernel_folders = folders
        found = differences(a, b)
        # a native host's image folder holds its native program: its commands aligned as a sequence, each
        # mapped address read as the image place it names (bobc.host.native.folder_differences)
        found += native.folder_differences(a, b, a_path, b_path)
        if not Path(a_path).is_dir() and not Path(b_path).is_dir():
            found += host_differences(a_path, b_path, (a.manifest, b.manifest))
        return found
    except BobcError as error:
        error.exit_code = CANNOT_COMPARE      # never 1: 1 says "they differ"
        raise


def host_differences(a_path: str, b_path: str, manifests: tuple[dict, dict] | None = None) -> list:
    """What two plan hosts carry besides their images: the version text by key
    (`host.version.bobc commit`), the host plan member by member (`host.plan.contract.schema`,
    bobc.host.sections.plan_lines; steps aligned as a sequence, golden.host_plan_differences), and every other section byte for byte, one line naming each
    section that differs (`host.section[.rodata]`): a .bobc.* section that is not an image, the
    manifest or the version text, and the host's own code and data; and the layout the loader reads
    (sections.layout_lines: `host.elf.entry`, `host.segment[i]`, `host.section[.bss].header`).  The linker's build-id, a
    hash of the linked sections, is named only when no other of them differs.  With the two
    images' `manifests`, a scalar fill's address is read as the launch parameter word it writes
    (fill_places): one writing the same word of the paired launch is no difference."""
    from ..host import sections
    from ..nvidia.decode import read_bounded
    from ..nvidia.golden import Difference, _differences, host_plan_differences

    data_a, data_b = read_bounded(a_path), read_bounded(b_path)
    found_a = {name: data_a[at:at + size] for name, (at, size) in sections.spans(data_a, a_path).items()}
    found_b = {name: data_b[at:at + size] for name, (at, size) in sections.spans(data_b, b_path).items()}
    # the plan identity is the images' sha256 and the manifest identity the manifest's, each checked
    # on loading: the images' and the manifest's own lines say them
    version_a, version_b = ([line for line in sections.version_lines(found.get("version"))
                             if line.key not in ("host.version.plan identity", "host.version.manifest identity")]
                            for found in (found_a, found_b))
    found = _differences(version_a, version_b)
    plan_a, plan_b = sections.plan_lines(data_a, a_path), sections.plan_lines(data_b, b_path)
    moved: list = []
    if manifests is not None:
        plan_a, plan_b, moved = fill_places(plan_a, plan_b, *manifests)
    found += host_plan_differences(plan_a, plan_b) + moved
    shown = bool(found)
    if found_a.get("version") != found_b.get("version") and not shown and \
            sections.version_lines(found_a.get("version")) == sections.version_lines(found_b.get("version")):
        found.append(Difference(f"host.section[{sections.PREFIX}version]", "host", "",
                                sections.section_summary(found_a.get("version", b"")),
                                sections.section_summary(found_b.get("version", b"")),
                                "the version text's bytes differ where no key does"))
    extra = [name for name in list(found_a) + [n for n in found_b if n not in found_a] if name not in sections.KNOWN]
    for name in extra:
        x, y = found_a.get(name), found_b.get(name)
        if x != y:
            found.append(Difference(f"host.section[{sections.PREFIX}{name}]", "host", "",
                                    None if x is None else sections.section_summary(x),
                                    None if y is None else sections.section_summary(y),
                                    sections.section_change(name, x, y)))
    # the loader's view: the ELF header, the program headers, each own section's header (a NOBITS
    # section's size is all it has): an entry point or a .bss size is a difference
    found += _differences(sections.layout_lines(data_a, a_path), sections.layout_lines(data_b, b_path))
    own_a, own_b = sections.own_sections(data_a, a_path), sections.own_sections(data_b, b_path)
    changed = [name for name in list(own_a) + [n for n in own_b if n not in own_a] if own_a.get(name) != own_b.get(name)]
    if changed != [".note.gnu.build-id"]:
        changed = [name for name in changed if name != ".note.gnu.build-id"]
    for name in changed:
        x, y = own_a.get(name), own_b.get(name)
        found.append(Difference(f"host.section[{name}]", "host", "",
                                None if x is None else sections.section_summary(x),
                                None if y is None else sections.section_summary(y),
                                sections.section_change(name, x, y) + "; the host's own code and data (the "
                                "runtime and the host plan), compared byte for byte"))
    return found


def _parameter_word(address, manifest: dict):
    """(launch index, byte from the target's parameter base) of the parameter block holding
    `address` in the images of `manifest`, else None."""
    from ..nvidia.golden import _is_int

    size = (manifest.get("sizes") or {}).get("parameter_block")
    program = (manifest.get("bases") or {}).get("program")
    base = manifest.get("parameter_base")
    if not (_is_int(address) and _is_int(size) and _is_int(base)):
        return None
    for launch in manifest.get("launches", []):
        if not isinstance(launch, dict):
            continue
        start = launch.get("parameter_address")
        if not _is_int(start) and _is_int(program) and _is_int(launch.get("parameter_offset")):
            start = program + launch["parameter_offset"]
        if _is_int(start) and start <= address < start + size:
            return launch.get("index"), address - start - base
    return None


def fill_word(address, manifest: dict) -> str:
    """What a fill at `address` writes, in words: `launch[7] (KERNEL) param+0x20`, or that no
    launch's parameter block holds it."""
    place = _parameter_word(address, manifest)
    if place is None:
        return "no launch's parameter block"
    index, byte = place
    identity = next((x.get("identity") for x in manifest.get("launches", [])
                     if isinstance(x, dict) and x.get("index") == index), "?")
    where = f"param+{byte:#x}" if byte >= 0 else f"{-byte:#x} bytes below the parameters"
    return f"launch[{index}] ({identity}) {where}"


def _index_runs(indices) -> str:
    """Indices as runs: 0..3, 5, 7..9."""
    runs: list[list[int]] = []
    for i in sorted(indices):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(f"{x}..{y}" if x != y else f"{x}" for x, y in runs)


def fill_places(lines_a: list, lines_b: list, manifest_a: dict, manifest_b: dict) -> tuple[list, list, list]:
    """The host plans' facts with each scalar fill's address (`host.plan.fills[i].va`) read as the
    launch parameter word it writes: the launches paired as the images' diff pairs them
    (golden.LaunchAlignment) and the word counted from each target's parameter base (the
    manifest's parameter_base, bobc.targets).  A fill writing the same word of the paired launch on both sides
    differs only because the block moved (or the target keeps its parameters elsewhere): its line
    is left out of both, and one line counts those (as `launch[i].addresses` does for the images);
    any other fill address keeps its line, noted with what each side's address is (lines_a,
    lines_b, [the one line, if any])."""
    from dataclasses import replace

    from ..nvidia.golden import Difference, LaunchAlignment

    alignment = LaunchAlignment.of(manifest_a, manifest_b)

    def is_fill_address(line) -> bool:
        return line.key.startswith("host.plan.fills[") and line.key.endswith("].va")

    by_b = {line.key: line for line in lines_b if is_fill_address(line)}
    same, notes = set(), {}
    for line in lines_a:
        other = by_b.get(line.key)
        if not is_fill_address(line) or other is None or line.value == other.value:
            continue
        place_a, place_b = _parameter_word(line.value, manifest_a), _parameter_word(other.value, manifest_b)
        if place_a is not None and place_b is not None and place_a[1] == place_b[1] and \
                alignment.keys_a.get(place_a[0]) == alignment.keys_b.get(place_b[0]):
            same.add(line.key)
        elif place_a is not None or place_b is not None:
            notes[line.key] = f"writes {fill_word(line.value, manifest_a)} in a, {fill_word(other.value, manifest_b)} in b"
    lines_a = [replace(x, note=notes[x.key]) if x.key in notes else x for x in lines_a if x.key not in same]
    lines_b = [replace(x, note=notes[x.key]) if x.key in notes else x for x in lines_b if x.key not in same]
    if not same:
        return lines_a, lines_b, []
    count = len(same)
    return lines_a, lines_b, [Difference(
        "host.plan.fills.va", "host", "", f"{count} fill address{'es' if count != 1 else ''}",
        "the same parameter words, moved",
        f"host.plan.fills[{_index_runs(int(k[len('host.plan.fills['):-len('].va')]) for k in same)}].va: each writes the "
        "word of the paired launch it wrote in a (its parameter block moved, or the target's parameters start "
        "at another offset of constant bank 0), so only its value differs")]


def run(args):
    from ..nvidia.decode import new_command

    new_command()           # its own note that nvdisasm is not installed, whatever the process said before
    found = _differences(args.a, args.b, args.include)
    verdict = 1 if found else 0
    folders = [path for path in (args.a, args.b) if Path(path).is_dir()]
    # a folder against a host: the folder holds images only, so the host's plan is compared with nothing
    folder = folders[0] if len(folders) == 1 else None
    from ..host import native

    native_host = any(native.is_native_host(path) for path in (args.a, args.b))
    if folders:
        # two folders: images are all either holds (a native host's, its program too: a line of its own);
        # a native host against a native host's folder: the images and the commands
        compared = "images and commands" if native_host else "images"
    else:
        compared = "images and commands" if native_host else "images and host plan"
    from ..errors import shown

    a, b = shown(args.a), shown(args.b)     # as `wrote` lines show a path: one line whatever the name holds
    try:
        if folder is not None:      # (--json: on stderr, so the output stays a list and a script is
            # still told that no host plan was compared)
            print(f"{shown(folder)} is an image folder, which carries no interpreter or version text: the images and "
                  "the native program alone are compared" if native_host else
                  f"{shown(folder)} is an image folder, which carries no host plan: the images alone are compared",
                  file=sys.stderr if args.json else sys.stdout)
        if args.json:
            print(json.dumps([d.as_json() for d in found], indent=1))
        else:
            for difference in found:
                print(difference.text())
            print(f"{len(found)} difference(s) between {a} and {b}" if found
                  else f"{a} and {b} hold the same {compared}")
        sys.stdout.flush()
    except BrokenPipeError:      # `bobc diff a b | head`: the verdict is still the verdict
        from ..cli import _quiet_stdout

        _quiet_stdout()
    return verdict
