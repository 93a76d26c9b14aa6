from ..errors import NotYetAvailable
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob)")
    p.add_argument("name", help="the definition to evaluate")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    p.add_argument("--hex", action="store_true", help="print byte strings as hex")
    add_target(p)


def run(args):
    existing_file(args.plan)
    raise NotYetAvailable("the evaluator is not part of this build yet")
