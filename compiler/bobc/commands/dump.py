"""`bobc dump DIR`: every QMD field, pushbuffer method, ring entry, parameter word and region's code."""
from __future__ import annotations

import sys


def add_arguments(p):
    p.add_argument("images", help="folder written by `bobc build --emit-images`")
    p.add_argument("--nonzero", action="store_true", help="list only the QMD fields that are not zero")
    p.add_argument("--no-code", action="store_true", help="skip the disassembly of the regions")


def run(args):
    from ..nvidia.decode import read_images, render

    images = read_images(args.images)
    sys.stdout.write(render(images, nonzero_only=args.nonzero, with_code=not args.no_code))
    return 0
