from pathlib import Path

from ..errors import NotYetAvailable, UsageError


def add_arguments(p):
    p.add_argument("images", help="folder written by `bobc build --emit-images`")


def run(args):
    if not Path(args.images).is_dir():
        raise UsageError(f"no such folder: {args.images}")
    raise NotYetAvailable("the image decoders are not part of this build yet")
