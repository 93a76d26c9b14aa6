"""bobc asm: assemble a SASS source (nvdisasm syntax, see bobc.sass.syntax) into a raw stream."""
from pathlib import Path

from ..errors import BobcError
from ..targets import target_named
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("source", help="SASS assembly source")
    p.add_argument("-o", "--output", required=True, help="raw instruction stream to write")
    p.add_argument("--register-budget", type=int, default=None,
                   help="refuse the kernel if it needs more registers than this")
    p.add_argument("--listing", action="store_true",
                   help="print each instruction with its address, control code and words")
    add_target(p, flag="--arch")


def run(args):
    from ..sass import assemble_kernel
    source = existing_file(args.source)
    assembled = assemble_kernel(source, target_named(args.arch), register_budget=args.register_budget)
    try:
        Path(args.output).write_bytes(assembled.code)
    except OSError as e:
        raise BobcError(f"cannot write {args.output}: {e.strerror}") from None
    if args.listing:
        for inst in assembled.instructions:
            print(f"/*{inst.address:04x}*/ {inst.control.text()} {inst.text:<56} "
                  f"/* {inst.lo:#018x} {inst.hi:#018x} */")
    print(f"{args.output}: {len(assembled.code) // 16} instructions, {assembled.registers} registers "
          f"({args.arch})")
    return 0
