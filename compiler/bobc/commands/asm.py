from ..errors import NotYetAvailable
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("source", help="SASS assembly source")
    p.add_argument("-o", "--output", required=True, help="raw instruction stream to write")
    add_target(p, flag="--arch")


def run(args):
    existing_file(args.source)
    raise NotYetAvailable("the SASS assembler is not part of this build yet")
