"""`bobc disasm`: instructions through NVIDIA's nvdisasm, with our decoded control codes beside them.

Given a raw instruction stream, the whole stream (--arch says whose).  Given an
image folder or a built host, only its code regions (never the parameter
blocks that share program.bin), or just the one `--region NAME|N` names.
"""
from pathlib import Path

from ..errors import BobcError, UsageError
from ..targets import TARGETS, target_named
from ._common import DEFAULT_TARGET, add_target


def add_arguments(p):
    p.add_argument("binary", help="raw instruction stream, image folder (`bobc build --emit-images`) or host")
    p.add_argument("--region", metavar="NAME|N",
                   help="only this region of an image folder or host (its identity or index)")
    add_target(p, default=None, flag="--arch",
               help=f"the GPU architecture of a raw instruction stream (default {DEFAULT_TARGET}); an image "
                    "folder or host says its own, and another --arch is refused")


def _header(path: Path) -> bytes:
    """The first 20 bytes of `path`, a file decode.check_input let through (a regular file of at
    most decode.READ_LIMIT_BYTES: the open cannot block)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(20)
    except OSError as error:
        raise BobcError(f"cannot read {path}: {error.strerror or error}") from None


def _is_cubin(header: bytes) -> bool:
    """An ELF whose machine is EM_CUDA (190): a cubin, not a host."""
    return header[:4] == b"\x7fELF" and len(header) == 20 and int.from_bytes(header[18:20], "little") == 190


def run(args):
    from ..nvidia.decode import check_input

    from ..errors import printable
    from ._common import existing_path

    from ._refusals import refused_files

    path = Path(args.binary)
    kind = existing_path(args.binary, f"no such file or folder: {printable(args.binary)}")
    if kind == "folder":
        return _regions(path, args.region, args.arch)
    if kind == "other":
        check_input(path)   # a FIFO, a device: refused unread (exit 2, as any path naming no file)
    with refused_files():   # docs/limits.md: a file past 1 GiB is refused unread (exit 1, a file refused)
        check_input(path)
        header = _header(path)
    if _is_cubin(header):
        raise UsageError(f"{path} is a cubin (a GPU ELF, such as `bobc asm --cubin` writes), not bobc images",
                         hint=f"read it with nvdisasm -hex {path}, or disassemble the raw stream `bobc asm` "
                              f"writes without --cubin")
    if header[:4] == b"\x7fELF":
        return _regions(path, args.region, args.arch)
    if args.region is not None:
        raise UsageError(f"--region needs an image folder or a host; {path} is a raw instruction stream")
    if args.arch is None:
        # a raw stream carries no target, and sm_86 words decode as sm_90 ones with other branch
        # targets (BRA -0xef0): the default is said, on stderr, beside the listing on stdout
        import sys

        others = ", ".join(f"--arch {name}" for name in sorted(TARGETS) if name != DEFAULT_TARGET)
        print(f"bobc disasm: {path} is a raw stream, which names no target: decoded for {DEFAULT_TARGET} (the "
              f"default); {others} for code of another", file=sys.stderr)
    return _raw(path, target_named(args.arch or DEFAULT_TARGET))


def _raw(path: Path, target) -> int:
    from ..nvidia.decode import read_bounded
    from ..sass.oracle import disassemble
    from ..sass.syntax import Control
    from ._refusals import refused_files

    with refused_files():
        code = read_bounded(path)
    if not code:
        raise BobcError(f"{path} is empty: no instruction to disassemble",
                        hint="pass a raw instruction stream (`bobc asm -o`), an image folder or a host")
    if len(code) % 16:
        raise BobcError(f"{path}: {len(code)} bytes is not a whole number of 16-byte instructions",
                        hint="pass a raw instruction stream (`bobc asm -o`), an image folder or a host")
    import sys

    decoded = disassemble(code, target.nvdisasm_arch)
    for line in decoded.lines:
        print(f"/*{line.offset:04x}*/ {Control.from_word(line.hi).text()} {line.text} ;")
    sys.stdout.flush()
    for problem in decoded.errors:     # the listing on stdout stays a listing: what nvdisasm refused, on stderr
        print(f"bobc disasm: {path}: nvdisasm: {problem}", file=sys.stderr)
    return 1 if decoded.errors else 0


def select_regions(manifest: dict, wanted: str | None) -> list[dict]:
    regions = manifest["regions"]
    if wanted is None:
        return regions
    chosen = [r for r in regions if r["identity"] == wanted or str(r["index"]) == wanted]
    if not chosen:
        known = ", ".join(f"{r['index']} {r['identity']}" for r in regions)
        raise UsageError(f"no region {wanted!r} here", hint=f"the regions are: {known}")
    return chosen


def _regions(path: Path, wanted: str | None, arch_given: str | None = None) -> int:
    import sys

    from ..nvidia.decode import load_images, nvdisasm_arch, region_code
    from ..sass.oracle import disassemble
    from ..sass.syntax import Control

    from ._refusals import refused_files

    with refused_files():   # not bobc's, damaged: a file refused (exit 1)
        images = load_images(path)
    theirs = images.manifest.get("target")
    if arch_given is not None and arch_given != theirs:     # as `bobc sim --images` refuses another --target
        raise UsageError(f"the images in {path} are for {theirs}, not --arch {arch_given}",
                         hint="leave --arch out: an image folder or host says its own target")
    arch = nvdisasm_arch(images.manifest)
    problems = 0
    for region in select_regions(images.manifest, wanted):
        print(f"region {region['index']} {region['identity']} at {region['address']:#x} ({region['size']} bytes)")
        decoded = disassemble(region_code(images, region), arch)
        for line in decoded.lines:
            print(f"/*{line.offset:04x}*/ {Control.from_word(line.hi).text()} {line.text} ;"
                  f"  /* {line.lo:#018x} {line.hi:#018x} */")
        sys.stdout.flush()
        for problem in decoded.errors:
            print(f"bobc disasm: {path}: region {region['index']}: nvdisasm: {problem}", file=sys.stderr)
        problems += len(decoded.errors)
    return 1 if problems else 0
