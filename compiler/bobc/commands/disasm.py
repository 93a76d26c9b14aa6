"""bobc disasm: a raw stream through NVIDIA's nvdisasm, with our decoded control codes beside it."""
from ..errors import BobcError
from ..targets import target_named
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("binary", help="raw instruction stream")
    add_target(p, flag="--arch")


def run(args):
    from ..sass.oracle import disassemble
    from ..sass.syntax import Control
    path = existing_file(args.binary)
    code = path.read_bytes()
    if len(code) % 16:
        raise BobcError(f"{path}: {len(code)} bytes is not a whole number of 16-byte instructions")
    target = target_named(args.arch)
    decoded = disassemble(code, target.nvdisasm_arch)
    for line in decoded.lines:
        print(f"/*{line.offset:04x}*/ {Control.from_word(line.hi).text()} {line.text} ;")
    for problem in decoded.errors:
        print(f"nvdisasm: {problem}")
    return 1 if decoded.errors else 0
