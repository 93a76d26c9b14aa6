from ..errors import NotYetAvailable
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob) that defines the native host")
    p.add_argument("-o", "--output", default="bob-host", help="host executable to write")
    p.add_argument("--emit-images", metavar="DIR",
                   help="write program.bin, qmd.bin, push.bin, gpfifo.bin and manifest.json to DIR")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    add_target(p)


def run(args):
    existing_file(args.plan)
    raise NotYetAvailable("the backend (images and host generator) is not part of this build yet")
