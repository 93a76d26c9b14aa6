from pathlib import Path

from ._common import existing_file


def add_arguments(p):
    p.add_argument("host", help="a host executable built by `bobc build`")
    p.add_argument("--extract", metavar="DIR",
                   help="also write each image to DIR/<name>.bin (manifest as manifest.json)")


def run(args):
    from ..host import sections

    path = existing_file(args.host)
    print(sections.describe(path))
    if args.extract:
        out = Path(args.extract)
        out.mkdir(parents=True, exist_ok=True)
        for name, content in sections.read(path).items():
            (out / (f"{name}.json" if name == "manifest" else f"{name}.bin")).write_bytes(content)
    return 0
