from ..errors import NotYetAvailable
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("binary", help="raw instruction stream")
    add_target(p, flag="--arch")


def run(args):
    existing_file(args.binary)
    raise NotYetAvailable("the disassembler front end is not part of this build yet")
