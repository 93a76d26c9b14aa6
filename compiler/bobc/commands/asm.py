"""bobc asm: assemble a SASS source (nvdisasm syntax, see bobc.sass.syntax) into a raw stream or a cubin.

The source may be a hand-written kernel or nvdisasm's listing of a cubin as printed
(`nvdisasm -hex k.cubin > k.sass`; --kernel picks one of several kernels).
"""
from pathlib import Path

from ..errors import BobcError
from ..targets import target_named
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("source", help="SASS assembly source, or an nvdisasm listing of a cubin")
    p.add_argument("-o", "--output", required=True, help="file to write (raw instruction stream, or a cubin with --cubin)")
    p.add_argument("--cubin", action="store_true",
                   help="write a cubin (ELF) that NVIDIA's tools and the CUDA driver load, not a raw stream")
    p.add_argument("--kernel", default=None, help="which kernel of a listing that holds several")
    p.add_argument("--parameter-bytes", type=int, default=None,
                   help="size of the kernel parameters in the cubin (default: up to the highest "
                        "parameter the code reads, in 8-byte words)")
    p.add_argument("--block-size", type=int, default=1024,
                   help="the most threads per block the cubin declares (default 1024)")
    p.add_argument("--register-budget", type=int, default=None,
                   help="refuse the kernel if it needs more registers than this")
    p.add_argument("--listing", action="store_true",
                   help="print each instruction with its address, control code and words")
    add_target(p, flag="--arch")


def parameter_bytes_read(assembled, target) -> int:
    """The parameter block up to the highest byte the code reads from constant bank 0, in 8-byte words."""
    import re
    top = 0
    for inst in assembled.instructions:
        for m in re.finditer(r"c\[0x0\]\[(?:RZ\+)?(0x[0-9a-f]+)\]", inst.text):
            offset = int(m.group(1), 16)
            if offset >= target.parameter_base:
                width = 8 if re.search(r"\.64\b", inst.text) else 16 if ".128" in inst.text else 4
                top = max(top, offset - target.parameter_base + width)
    return (top + 7) // 8 * 8


def run(args):
    from ..sass import assemble_kernel
    source = existing_file(args.source)
    target = target_named(args.arch)
    assembled = assemble_kernel(source, target, register_budget=args.register_budget, kernel=args.kernel)
    data = assembled.code
    if args.cubin:
        from ..sass.cubin import write_cubin
        parameters = args.parameter_bytes
        if parameters is None:
            parameters = parameter_bytes_read(assembled, target)
        if parameters % 4 or parameters < 0:
            raise BobcError(f"--parameter-bytes {parameters}: a multiple of 4 is needed")
        data = write_cubin(assembled, assembled.kernel_name, target, parameters, args.block_size)
    try:
        Path(args.output).write_bytes(data)
    except OSError as e:
        raise BobcError(f"cannot write {args.output}: {e.strerror}") from None
    if args.listing:
        for inst in assembled.instructions:
            print(f"/*{inst.address:04x}*/ {inst.control.text()} {inst.text:<56} "
                  f"/* {inst.lo:#018x} {inst.hi:#018x} */")
    what = f"cubin of kernel {assembled.kernel_name}" if args.cubin else "raw stream"
    print(f"{args.output}: {what}, {len(assembled.code) // 16} instructions, {assembled.registers} registers "
          f"({args.arch})")
    return 0
