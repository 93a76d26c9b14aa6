from pathlib import Path

from ..errors import BobcError
from ..targets import target_named
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob) that defines the native host")
    p.add_argument("-o", "--output", help="host executable to write (default ./bob-host "
                   "unless --emit-images is given alone)")
    p.add_argument("--emit-images", metavar="DIR",
                   help="write program.bin, qmd.bin, push.bin, gpfifo.bin and manifest.json to DIR")
    p.add_argument("--entry", default=None,
                   help="the definition describing the native host (default: the plan module's one "
                        "definition of type (family NvidiaPlanHost))")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    add_target(p)


def run(args):
    from .. import pipeline

    plan_path = existing_file(args.plan)
    target = target_named(args.target)
    built = pipeline.compile_plan(plan_path, target, include=args.include, entry=args.entry)
    if args.emit_images:
        from ..nvidia.encode import write_images

        try:
            write_images(built.images, Path(args.emit_images))
        except OSError as error:
            raise BobcError(f"cannot write images to {args.emit_images}: {error.strerror}") from None
        print(f"wrote {target.name} images to {args.emit_images}")
    if args.output or not args.emit_images:
        from ..host import generate

        output = Path(args.output or "bob-host")
        generate.build_host(built, target, output)
        print(f"wrote {output} ({target.name})")
    return 0
