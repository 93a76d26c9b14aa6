"""`bobc dump IMAGES|HOST`: every fact of the device images as one self-describing line each.

`launch[5].qmd.CTA_THREAD_DIMENSION0 = 0x40`, `launch[5].bank0[0x210] = ...  # argument 0: ...`,
`submission[3].push[0].SEND_PCAS_A = ...`, `gpfifo[3] = ...`, `region[2].code[0x0040] = [lo, hi]
# [control] instruction`: two dumps diff line by line, and every line can be grepped alone.

A plan host's dump goes on with what it carries besides its images (bobc.host.sections):
`host.identity`, its version text (`host.version.target = ...`), its host plan member by
member, decoded by its declared layout (`host.plan.contract.chunk_bytes = 0x40000`,
`host.plan.steps[9].offset = 0x4`: buffers, semaphores, record checks, checkpoint contract,
initializers, fills, steps; docs/host-plan-facts.md) and each of
its own sections' size and sha256 (`host.section[.rodata] = ...`; a NOBITS one's size), and the
layout the loader reads (`host.elf.entry`, `host.segment[i]`, `host.section[.bss].header`).

A native physical program host (`bobc build --entry`, docs/native-host.md) that carries its
embedded images' manifest (a .bobc.manifest section) is dumped as its image folder is: its header
facts, the images decoded and the commands, each image field noted.  One without it: its dump is the program, `command[i] = Name fields...` (a Connect's
peer as address:port, an OpenDevice's GPU UUID or `any`, as `bobc inspect` shows them; a
Repeat's and a BranchZero's note naming the command each fragment starts at, `# body: command[3],
after it: command[8]`, `# when zero: command[14], otherwise: command[264]`), and each
embedded image's identity, size and sha256 (bobc.host.native).

A host whose images do not match its plan identity is damaged: refused, exit 1 (the host
itself refuses to run it, exit 9).  Every file is read only when it is a regular file of at
most 1 GiB (docs/limits.md); a bigger, empty or foreign one is refused, exit 1, naming the file
(a FIFO, a device or nothing there: exit 2, as every subcommand says for a path naming no file).
"""
from __future__ import annotations

import json
import sys


def add_arguments(p):
    p.add_argument("images", help="folder written by `bobc build --emit-images`, or a host built by `bobc build` "
                   "(a native physical program host: its commands and embedded images' sizes and sha256)")
    p.add_argument("--nonzero", action="store_true",
                   help="list only the QMD fields and a host's host plan numbers that are not zero "
                   "(bank 0 words are listed only when not zero, with or without it)")
    p.add_argument("--no-code", action="store_true", help="skip the instructions of the regions")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="a folder holding the plan's own kernel sources (searched recursively, before "
                        "specs/), for the argument names of bank 0 words (their `//@ param` lines)")
    p.add_argument("--json", action="store_true", help="print the lines as a JSON list of {key, kind, value, note, where} "
                   "(a refusal: one JSON object, ok false)")


def run(args):
    from pathlib import Path

    from ..host import native
    from ..nvidia.decode import check_input, lines, load_images, new_command

    from ..errors import printable
    from ._common import existing_path
    from ._refusals import refused_files

    new_command()           # its own note that nvdisasm is not installed, whatever the process said before
    given = Path(args.images)
    kind = existing_path(args.images, f"no such image folder or host: {printable(args.images)}")
    folder = kind == "folder"
    if kind == "other":
        check_input(given)          # a FIFO, a device: refused unread (exit 2, as any path naming no file)
    kernel_folders = _kernel_folders(args.include)
    with refused_files():           # a file that is there but not bobc's, empty, damaged, too big: exit 1
        if not folder:
            check_input(given)      # over 1 GiB: refused unread
        if native.is_native_host(args.images):
            carried = native.carried_images(args.images)    # its .bobc.manifest section: decoded by it
            facts = native.lines(args.images, carried)
            if carried is not None:
                carried.kernel_folders = kernel_folders
                facts += lines(carried, nonzero_only=args.nonzero, with_code=not args.no_code)
                facts += native.folder_lines(carried, args.images)
        else:
            images = load_images(args.images)
            images.kernel_folders = kernel_folders
            facts = lines(images, nonzero_only=args.nonzero, with_code=not args.no_code)
            if images.native_program is not None:      # a native host's images: its commands too
                facts += native.folder_lines(images, args.images)
            if not folder:
                facts += host_lines(args.images, args.nonzero, images.manifest)
    if args.json:
        sys.stdout.write(json.dumps([line.as_json() for line in facts], indent=1) + "\n")
    else:
        sys.stdout.write("".join(line.text() + "\n" for line in facts))
    return 0


def host_lines(path, nonzero_only: bool = False, manifest: dict | None = None) -> list:
    """What a plan host carries besides its images, after the image facts: its host identity, its
    version text by key, its host plan member by member and each of its own sections' size
    and sha256 (bobc.host.sections); --nonzero leaves out the host plan's zero numbers.  With the
    images' `manifest`, a scalar fill's address says the launch parameter word it writes
    (`host.plan.fills[i].va = ADDRESS  # writes launch[L] (KERNEL) param+N`)."""
    from dataclasses import replace

    from ..host import sections
    from .diff import fill_word
    from ..nvidia.decode import Line, read_bounded

    data = read_bounded(path)
    found = {name: data[at:at + size] for name, (at, size) in sections.spans(data, path).items()}
    out = [Line("host.identity", f"sha256 {sections.host_identity(data, path)}",
                "the host's own sections: the runtime and the host plan (not the images)", "", "host")]
    out += sections.version_lines(found.get("version"))
    plan = [line for line in sections.plan_lines(data, path) if line.value or not nonzero_only]
    if manifest is not None:
        plan = [replace(line, note=f"writes {fill_word(line.value, manifest)}")
                if line.key.startswith("host.plan.fills[") and line.key.endswith("].va") and not line.note else line
                for line in plan]
    out += plan
    out += [Line(f"host.section[{sections.PREFIX}{name}]", sections.section_summary(content), "", "", "host")
            for name, content in found.items() if name not in sections.KNOWN]
    return out + sections.section_lines(data, path)


def _kernel_folders(folders) -> list[str]:
    """The -I folders, each an existing folder (else a usage error, exit 2)."""
    from ._common import existing_folder

    for folder in folders:
        existing_folder(folder, "-I", hint="name a folder holding the plan's kernel sources")
    return list(folders)
