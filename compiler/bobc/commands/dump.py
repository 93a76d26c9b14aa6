"""`bobc dump IMAGES|HOST`: every fact of the device images as one self-describing line each.

`launch[5].qmd.CTA_THREAD_DIMENSION0 = 0x40`, `launch[5].bank0[0x210] = ...  # argument 0: ...`,
`submission[3].push[0].SEND_PCAS_A = ...`, `gpfifo[3] = ...`, `region[2].code[0x0040] = [lo, hi]
# [control] instruction`: two dumps diff line by line, and every line can be grepped alone.

A native physical program host (`bobc build --entry`, docs/native-host.md) carries its device
images without a manifest: its dump is the program, `command[i] = Name fields...`, and each
embedded image's identity, size and sha256 (bobc.host.native).
"""
from __future__ import annotations

import json
import sys


def add_arguments(p):
    p.add_argument("images", help="folder written by `bobc build --emit-images`, or a host built by `bobc build` "
                   "(a native physical program host: its commands and embedded images' sizes and sha256)")
    p.add_argument("--nonzero", action="store_true",
                   help="list only the QMD fields and bank 0 words that are not zero")
    p.add_argument("--no-code", action="store_true", help="skip the instructions of the regions")
    p.add_argument("--json", action="store_true", help="print the lines as a JSON list of {key, kind, value, note}")


def run(args):
    from ..host import native
    from ..nvidia.decode import lines, load_images

    if native.is_native_host(args.images):
        facts = native.lines(args.images)
    else:
        images = load_images(args.images)
        facts = lines(images, nonzero_only=args.nonzero, with_code=not args.no_code)
    if args.json:
        sys.stdout.write(json.dumps([line.as_json() for line in facts], indent=1) + "\n")
    else:
        sys.stdout.write("".join(line.text() + "\n" for line in facts))
    return 0
