"""`bobc inspect HOST`: the images a built host carries, and what it needs (its --version text:
target, compute class, driver branch, the bobc and commit that built it, the plan's identity)."""
import hashlib
import json
from pathlib import Path

from ._common import existing_file


def add_arguments(p):
    p.add_argument("host", help="a host executable built by `bobc build`")
    p.add_argument("--extract", metavar="DIR",
                   help="also write each image to DIR/<name>.bin (manifest as manifest.json)")
    p.add_argument("--json", action="store_true", help="print the same as one JSON object")


def run(args):
    from ..host import sections, version

    path = existing_file(args.host)
    found = sections.read(path)
    needs = version.parse(found[version.SECTION]) if version.SECTION in found else {}
    if args.json:
        manifest = {}
        try:
            manifest = json.loads(found.get("manifest", b"{}"))
        except ValueError:
            pass
        print(json.dumps({
            "host": str(path),
            "version": needs or None,
            "target": manifest.get("target"), "compute_class": manifest.get("compute_class"),
            "sections": {sections.PREFIX + name: {"bytes": len(content),
                                                  "sha256": hashlib.sha256(content).hexdigest()}
                         for name, content in found.items()},
        }, indent=1, sort_keys=True))
    else:
        print(sections.describe(path))
        if needs:
            print("  needs and provenance (bob-host --version):")
            for key, value in needs.items():
                print(f"    {key}: {value}")
        else:
            print(f"  (no {sections.PREFIX}{version.SECTION} section: built by a bobc before --version)")
    if args.extract:
        out = Path(args.extract)
        out.mkdir(parents=True, exist_ok=True)
        for name, content in found.items():
            if name != version.SECTION:
                (out / (f"{name}.json" if name == "manifest" else f"{name}.bin")).write_bytes(content)
    return 0
