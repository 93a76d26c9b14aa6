"""`bobc diff A B`: every difference between two image folders or two built hosts, by meaning.

Exit 0 when they hold the same images, 1 when they differ, 2 on a usage error
(like diff(1)).  A and B are folders written by `bobc build --emit-images` or
hosts built by `bobc build` (their .bobc.* sections), in any mix.
"""
from __future__ import annotations

import json


def add_arguments(p):
    p.add_argument("a", help="image folder or host executable (the 'before')")
    p.add_argument("b", help="image folder or host executable (the 'after')")
    p.add_argument("--json", action="store_true", help="print the differences as a JSON list")


def run(args):
    from ..nvidia.decode import load_images
    from ..nvidia.golden import differences

    a, b = load_images(args.a), load_images(args.b)
    found = differences(a, b)
    if args.json:
        print(json.dumps([d.as_json() for d in found], indent=1))
    else:
        for difference in found:
            print(difference.text())
        print(f"{len(found)} difference(s) between {args.a} and {args.b}" if found
              else f"{args.a} and {args.b} hold the same images")
    return 1 if found else 0
