from ..errors import NotYetAvailable
from ._common import existing_file


def add_arguments(p):
    p.add_argument("host", help="a host executable built by `bobc build`")


def run(args):
    existing_file(args.host)
    raise NotYetAvailable("host inspection is not part of this build yet")
