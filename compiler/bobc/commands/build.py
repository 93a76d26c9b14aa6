from pathlib import Path

from ..targets import target_named
from ._common import (KERNEL_SOURCE, add_target, existing_file, kernel_files, module_files, read_files,
                      refuse_output_over, refuse_stdout_name)

# what an output naming one of the plan's module files is told (exit 8: the build's inputs)
MODULE = "a module the build read"
# the host's path without -o, and how a message names it (the user gave no -o to blame)
DEFAULT_OUTPUT = "bob-host"
DEFAULT_OPTION = "no -o given: the default ./bob-host"


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob) that defines the native host")
    p.add_argument("-o", "--output", help="host executable to write (default ./bob-host "
                   "unless --emit-images is given alone)")
    p.add_argument("--emit-images", metavar="DIR",
                   help="write program.bin, qmd.bin, push.bin, gpfifo.bin and manifest.json to DIR (for a "
                        "native host, --entry DEF, the images it embeds and its native program, native-program.bin)")
    p.add_argument("--emit-c", metavar="FILE",
                   help="also write the host's generated C (the plan's data, which gcc compiles with "
                        "runtime_c/ into the host) to FILE, byte for byte what gcc compiled; the host is "
                        "built as without it (-o, default ./bob-host)")
    p.add_argument("--entry", default=None,
                   help="the definition describing the native host (default: the plan module's one "
                        "definition of type (family NvidiaPlanHost))")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    add_target(p)  # sm_90: the same target as `make build` (README, quick start)


def run(args):
    from .. import pipeline

    from ..errors import UsageError

    pipeline.refuse_blank_entry(args.entry, "build")
    for option, value in (("-o", args.output), ("--emit-images", args.emit_images), ("--emit-c", args.emit_c)):
        if value is not None and not value:     # the host's rule: an empty value is a usage error
            raise UsageError(f"option {option} has an empty value",
                             hint="name the host file to write (-o HOST), the image folder (--emit-images DIR) "
                                  "or the generated C's file (--emit-c FILE)")
    refuse_stdout_name(args.output, "-o", "the host file")
    refuse_stdout_name(args.emit_images, "--emit-images", "a folder")
    refuse_stdout_name(args.emit_c, "--emit-c", "the C file")
    plan_path = existing_file(args.plan)
    target = target_named(args.target)
    # the generated C is the host's source: with --emit-c the host is built (gcc compiles that C)
    output = Path(args.output if args.output is not None else DEFAULT_OUTPUT) \
        if (args.output is not None or args.emit_images is None or args.emit_c is not None) else None
    option = "-o" if args.output is not None else DEFAULT_OPTION     # what a refusal names
    if output is not None:
        # checked before the (long) build: never through a symlink, never over a non-file
        from ..reference.errors import OutputWriteFailure
        from ..reference.safe_io import OutputSet

        outputs = OutputSet()
        try:
            outputs.add(args.output if args.output is not None else DEFAULT_OUTPUT, option)   # "host/" is refused
        except OutputWriteFailure as refused:
            if args.output is None:
                refused.hint = f"{refused.hint}; name another path with -o HOST"
            raise
        if args.emit_c is not None:     # the same checks as -o's, and never the host's own path
            outputs.add(args.emit_c, "--emit-c")
        if args.emit_images is not None:
            refuse_overlap(output, Path(args.emit_images))
            if args.emit_c is not None:
                refuse_overlap(Path(args.emit_c), Path(args.emit_images), "--emit-c")
    if args.emit_images is not None:
        # checked before the (long) build, as -o is: the same refusals write_images makes after it
        from ..nvidia.encode import check_image_folder

        check_image_folder(args.emit_images, "--emit-images")
    with runtime_compiled_early(output, args.entry) as early:
        return _build(args, plan_path, target, output, option, early)


def runtime_compiled_early(output, entry):
    """The C runtime's objects, looked up in the cache and on a miss compiled (gcc), from now on
    while the plan is evaluated (host/gcc.py compiled_early): they depend on no plan.  Only when
    a host is linked (`output`), and, with `--entry` (perhaps a native physical program, whose
    interpreter takes the runtime's objects from the cache: native/interpreter.py), only with a
    cache to keep them in.  A plan's error, a signal or any failure before the link stops that
    compile and removes what it wrote (docs/cache.md)."""
    from contextlib import nullcontext

    from .. import cache
    from ..host import gcc
    from ..native.interpreter import sources as listed     # not host.generate: jinja2 and the encoders
    from ..resources import shared_folder

    if output is None or (entry is not None and cache.folder() is None):
        return nullcontext()

    def sources():
        runtime = shared_folder("runtime_c")
        return listed(runtime, "LIB_SRC"), [runtime]     # as host.generate.runtime_library lists them

    return gcc.compiled_early(sources)


def _build(args, plan_path, target, output, option, early=None):
    from .. import pipeline

    from ..cli import say
    from ..errors import UsageError, shown

    if args.entry is not None and (output is not None or args.emit_images is not None):
        from ..native.build import native_artifact          # docs/native-host.md

        modules: list = []
        # --emit-images: the embedded images with the manifest their encoding made (bobc.native.build)
        embedded: list | None = [] if args.emit_images is not None else None
        artifact = native_artifact(plan_path, target, args.include, args.entry, modules, embedded)
        if artifact is not None and args.emit_c is not None:
            raise UsageError(f"--emit-c writes the C that bobc generates for a plan host; {args.entry} is a native "
                             f"physical program host ({len(artifact)} bytes), which bobc builds from no generated C",
                             hint="build it with -o HOST alone; `bobc dump HOST` shows its program and images")
        if artifact is not None:
            if early is not None:
                # a native artifact links no runtime objects of its own: when its interpreter came
                # whole from the cache, the early compile is stopped now, not run on beside the
                # publication (whose renames hold the signals)
                early.cancel()
            # its modules and the kernel sources evaluating it assembled are the build's inputs
            if output is not None:
                refuse_output_over(output, option, [*read_files(modules, MODULE),
                                                    *read_files(kernel_files(None, None, target), KERNEL_SOURCE)])
            # the images and the host: one publication, all or nothing (publish_build)
            if output is not None or embedded:
                publish_build(output, option, artifact, images=embedded[0] if embedded else None,
                              images_folder=args.emit_images if embedded else None)
            if embedded:
                say(f"wrote {target.name} images and native program to {shown(args.emit_images)}", "build")
            if output is not None:
                say(f"wrote {shown(args.output if args.output is not None else output)} ({target.name}; "
                    f"native physical program host, {len(artifact)} bytes)",
                    "build")
            return 0
    built = pipeline.compile_plan(plan_path, target, include=args.include, entry=args.entry, recalled=True)
    if output is not None:       # the plan's own modules and kernel sources are the build's inputs: never replaced
        inputs = [*read_files(module_files(built.program), MODULE),
                  *read_files(kernel_files(built.program, built.plan, target), KERNEL_SOURCE)]
        refuse_output_over(output, option, inputs)
        if args.emit_c is not None:
            refuse_output_over(args.emit_c, "--emit-c", inputs)
    # the host is linked before any output is published: a link that fails (a gcc or ld error, no
    # room in TMPDIR) publishes nothing, the images included ("outputs are all or nothing")
    linked = link_host(built, target) if output is not None else None
    if output is None:       # the images alone
        publish_build(None, option, None, images=built.images, images_folder=args.emit_images)
    else:
        write_host(built, target, output, option, args.emit_c, linked,
                   images=built.images if args.emit_images is not None else None, images_folder=args.emit_images)
    if args.emit_images is not None:
        say(f"wrote {target.name} images to {shown(args.emit_images)}", "build")
    if output is not None:
        if args.emit_c is not None:
            say(f"wrote {shown(args.emit_c)} (the host's generated C)", "build")
        # the path as given: Path('./-') is '-', which would read as stdout (leftovers finding 1)
        say(f"wrote {shown(args.output)} ({target.name})" if args.output is not None else
            f"wrote {shown(output)} ({target.name}; no -o given, so ./bob-host)", "build")
    return 0


def refuse_overlap(output: Path, images: Path, option: str = "-o") -> None:
    """Refuse (exit 8, before the build, nothing written) a host path that is the image folder,
    lies inside it, or contains it: the images are written first, so either would leave one
    output half-replaced by the other ("outputs are all or nothing")."""
    import os

    from ..reference.errors import OutputWriteFailure
    from ..errors import shown

    host, folder = (os.path.realpath(os.path.abspath(p)) for p in (output, images))
    if host == folder:
        detail = f"is also the --emit-images folder ({shown(images)})"
    elif os.path.commonpath([host, folder]) == folder:
        detail = f"lies inside the --emit-images folder {shown(images)}, which the images replace"
    elif os.path.commonpath([host, folder]) == host:
        detail = f"contains the --emit-images folder {shown(images)}"
    else:
        return
    raise OutputWriteFailure(shown(output), option, f"{detail}: no output may be another output",
                             hint=f"nothing was written; give {'the host' if option == '-o' else 'the generated C'} "
                                  "and the images separate paths")


def link_host(built, target) -> tuple[bytes, bytes]:
    """Link the host in a scratch folder: its executable's bytes and the generated C gcc compiled.
    Nothing is published: a failure here leaves every output as it was."""
    from ..host import generate

    from ..errors import temporary_folder

    with temporary_folder(prefix="bobc-build-") as scratch:     # a full disk: one message, exit 8
        linked = Path(scratch) / "bob-host"
        source = generate.build_host(built, target, linked)
        return linked.read_bytes(), source


def write_host(built, target, output: Path, option: str = "-o", emit_c: str | None = None,
               linked: tuple[bytes, bytes] | None = None, images=None, images_folder=None) -> None:
    """Link the host in a scratch folder (link_host; `linked`: what it gave, when the caller linked
    first), then publish it atomically at `output`.

    The executable goes to a temporary file beside `output`, is fsynced and
    renamed over it (reference/safe_io.py): a full disk or a failed link
    leaves the previous host intact, and a symlink, folder or device at
    `output` is refused, never written through.  `emit_c` (--emit-c): the
    generated C that gcc compiled, its very bytes; `images` (--emit-images
    `images_folder`): the device images.  All are one publication
    (publish_build): all or nothing.
    """
    data, source = linked if linked is not None else link_host(built, target)
    publish_build(output, option, data, emit_c, source, images, images_folder)


def publish_build(output, option: str, data: bytes | None, emit_c: str | None = None, source: bytes | None = None,
                  images=None, images_folder=None) -> None:
    """Publish a build's outputs as ONE publication (reference/safe_io.py OutputSet: every file
    written to a synced temporary first, then renamed under one journal, with SIGINT, SIGTERM and
    SIGHUP held from the journal to the last rename): the images in `images_folder` (--emit-images;
    manifest.json last of them), then the generated C (`emit_c`, --emit-c: `source`, the very
    bytes gcc compiled), then the host (`output`, -o: `data`, mode 0755 & ~umask).  A failure or
    a signal before the renames leaves none of them, and every file at those paths as it was (an
    image folder it made is removed again); published one after another, a SIGINT between the
    images' publication and the host's left the images new and no host (probe s42 cli3 finding 3).
    At most safe_io.JOURNAL_PAIRS files: 5 images (6 with a native program) + the C + the host."""
    from contextlib import nullcontext

    import os

    from ..reference.safe_io import JOURNAL_SUFFIX, OutputSet, folder_of, name_leftovers, recover

    from ._common import folder_made_for

    outputs = OutputSet()
    tail = [p for p in (emit_c, output) if p is not None]
    with folder_made_for(images_folder) if images is not None else nullcontext():   # a failure: no new empty folder
        if images is not None:
            from ..nvidia.encode import stage_images

            stage_images(images, Path(images_folder), outputs, recovering=tail)
        elif len(tail) > 1 or (tail and os.path.lexists(os.path.join(folder_of(output), f".{Path(output).name}"
                                                                        f"{JOURNAL_SUFFIX}"))):
            # a kill between two renames of an earlier build (its journal is beside its host).  The
            # host alone looks only for that journal: recover() waits for the folder's lock before
            # any temporary is written, and a lone host had no recovery before either
            recover(tail)
        if emit_c is not None:
            outputs.add(emit_c, "--emit-c")
            outputs.outputs[-1].data = bytes(source)
        if output is not None:
            outputs.add(output, option, mode=0o755)
            outputs.outputs[-1].data = bytes(data)
        outputs.publish()
    if output is not None:
        name_leftovers(outputs.outputs[-1])
