"""`bobc diff A B`: every difference between two image folders or two built hosts, by meaning.

Exit 0 when they hold the same images, 1 when they differ, 2 when they cannot be
compared: a usage error, a missing file, a file that is neither an image folder nor a
bobc host, a damaged one, or two different kinds of host (like diff(1), whose 2 is
"trouble").  A and B are folders written by `bobc build --emit-images` or hosts built
by `bobc build` (their .bobc.* sections), in any mix; or two native physical program
hosts (`bobc build --entry`, docs/native-host.md), compared command by command and
embedded image by embedded image.  Behind the decoded lines stands a byte comparison
of every image (bobc.nvidia.golden): a differing byte no decoded line shows is a `raw`
line, so exit 0 means the images are byte for byte the same.  A host whose images do
not match its plan identity is damaged (exit 2, as `bobc inspect` says); every file is
read only when it is a regular file of at most 1 GiB.  The verdict stands when the reader of the output
goes away early (`bobc diff a b | head`).
"""
from __future__ import annotations

import json
import sys

CANNOT_COMPARE = 2


def add_arguments(p):
    p.add_argument("a", help="image folder or host executable (the 'before')")
    p.add_argument("b", help="image folder or host executable (the 'after')")
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="a folder holding the plan's own kernel sources (searched recursively, before "
                        "specs/), for the argument names of bank 0 words (their `//@ param` lines)")
    p.add_argument("--json", action="store_true", help="print the differences as a JSON list")
    p.epilog = "exit status: 0 the same images, 1 they differ, 2 they cannot be compared (usage, missing or damaged input)"


def _checked(path: str) -> None:
    """A missing path, or one that is not a folder nor a regular file of at most
    decode.READ_LIMIT_BYTES (a FIFO would hang a read, a huge file exhaust memory), is refused
    before anything is read (exit 2, naming it and what it is)."""
    from pathlib import Path

    from ..errors import UsageError
    from ..nvidia.decode import check_input

    given = Path(path)
    if not given.exists():
        raise UsageError(f"no such image folder or host: {path}")
    if not given.is_dir():
        check_input(given)


def _differences(a_path: str, b_path: str, include=()):
    from ..errors import BobcError
    from ..host import native
    from ..nvidia.decode import load_images
    from ..nvidia.golden import _differences, differences

    try:
        from ..errors import UsageError
        for path in (a_path, b_path):       # a missing file is missing, whatever the other one is
            _checked(path)
        kinds = native.is_native_host(a_path), native.is_native_host(b_path)
        if kinds == (True, True):
            return _differences(native.lines(a_path), native.lines(b_path))
        if any(kinds):
            native_one, other = (a_path, b_path) if kinds[0] else (b_path, a_path)
            load_images(other)              # not bobc's, or damaged: that is the trouble to name
            raise UsageError(f"{native_one} is a native physical program host and {other} is not: "
                             "the two cannot be compared",
                             hint="compare two native hosts, or two plan hosts / image folders")
        from .dump import _kernel_folders

        folders = _kernel_folders(include)
        a, b = load_images(a_path), load_images(b_path)
        a.kernel_folders = b.kernel_folders = folders
        return differences(a, b)
    except BobcError as error:
        error.exit_code = CANNOT_COMPARE      # never 1: 1 says "they differ"
        raise


def run(args):
    found = _differences(args.a, args.b, args.include)
    verdict = 1 if found else 0
    try:
        if args.json:
            print(json.dumps([d.as_json() for d in found], indent=1))
        else:
            for difference in found:
                print(difference.text())
            print(f"{len(found)} difference(s) between {args.a} and {args.b}" if found
                  else f"{args.a} and {args.b} hold the same images")
        sys.stdout.flush()
    except BrokenPipeError:      # `bobc diff a b | head`: the verdict is still the verdict
        from ..cli import _quiet_stdout

        _quiet_stdout()
    return verdict
