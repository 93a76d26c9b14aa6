"""bobc asm: assemble a SASS source (nvdisasm syntax, see bobc.sass.syntax) into a raw stream or a cubin.

The source may be a hand-written kernel or nvdisasm's listing of a cubin as printed
(`nvdisasm -hex k.cubin > k.sass`; --kernel picks one of several kernels).
"""
from pathlib import Path

from ..cli import _positive
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
                        "parameter the code reads, in 8-byte words; with --cubin only)")
    p.add_argument("--block-size", type=int, default=None,
                   help="the most threads per block the cubin declares (default 1024; with --cubin only)")
    p.add_argument("--register-budget", type=_positive, default=None, metavar="N",
                   help="refuse the kernel if it needs more registers than this (at least 1)")
    p.add_argument("--listing", action="store_true",
                   help="print each instruction with its address, control code and words")
    add_target(p, flag="--arch")
    p.add_argument("--target", help=__import__("argparse").SUPPRESS, type=lambda v: p.error(f"unrecognized arguments: --target {v}; did you mean --arch {v}? (bobc asm names its target --arch)"))


# The most parameter bytes a kernel may take: CUDA 12.1's limit on Volta and later (4 KiB before);
# the cubin's EIATTR_CBANK_PARAM_SIZE holds 16 bits.
MAX_PARAMETER_BYTES = 32764
MAX_BLOCK_THREADS = 1024

def check_source(path) -> None:
    """Refuse (exit 2, unread, never blocking) a source that is not a regular file of at most
    SOURCE_LIMIT_BYTES: bobc.sass.source's checks, the one reader every path that opens a .sass
    source uses (the assembler, the simulator, the kernel cache and search; docs/limits.md)."""
    from ..sass.source import check_source as check

    check(path)


def __getattr__(name):
    if name == "SOURCE_LIMIT_BYTES":     # bobc.sass.source's, imported when asked (the CLI imports this module)
        from ..sass.source import SOURCE_LIMIT_BYTES

        return SOURCE_LIMIT_BYTES
    raise AttributeError(name)


def parameter_reads(assembled, target) -> list:
    """(end byte of the parameter block it reads, instruction) for every read of constant bank 0
    at or past the target's parameter base, from the encoded bank and offset fields (so that
    `c[0x0][param+N]` counts like `c[0x0][0x16N]`) and the bytes the operand covers."""
    reads = []
    for inst in assembled.instructions:
        if inst.constant is None:
            continue
        bank, offset, size = inst.constant
        if bank == 0 and offset >= target.parameter_base:
            reads.append((offset - target.parameter_base + size, inst))
    return reads


def parameter_bytes_read(assembled, target) -> int:
    """The parameter block up to the highest byte the code reads from constant bank 0, in 8-byte words."""
    top = max((end for end, _ in parameter_reads(assembled, target)), default=0)
    return (top + 7) // 8 * 8


def checked_output(path: str, source: Path):
    """The output `path` checked before the work by `bobc build -o`'s rules (reference/safe_io.py,
    exit 8, nothing written): never the source itself (nor a hard link to it), never through a
    symlink, never over a folder, a device (/dev/null included) or a FIFO, in a folder that
    exists; an empty value is a usage error (exit 2), as build's.  Returns the OutputSet that
    publishes it: a synced temporary beside it, renamed into place."""
    from ..errors import UsageError
    from ..reference.safe_io import OutputSet
    from ._common import read_files, refuse_stdout_name

    if not path:
        raise UsageError("option -o has an empty value", hint="name the file to write (-o OUT)")
    refuse_stdout_name(path, "-o")
    output = OutputSet(inputs=read_files([source], "the source assembled"))
    output.add(path, "-o")
    return output


def _check_cubin_options(args) -> None:
    """Refuse an out-of-range --parameter-bytes or --block-size before any work, as a usage error
    (exit 2: README's "an option's value"), naming the option and the values it takes (probe s32
    sasssyntax finding 5: they were exit 1).  That the code reads past --parameter-bytes is the
    source's matter, refused after assembling it at the instruction (exit 1)."""
    from ..errors import UsageError

    parameters = args.parameter_bytes
    if parameters is not None and not 0 <= parameters <= MAX_PARAMETER_BYTES:
        raise UsageError(f"--parameter-bytes {parameters}: a kernel takes 0 to {MAX_PARAMETER_BYTES} bytes "
                         f"of parameters")
    if parameters is not None and parameters % 4:
        raise UsageError(f"--parameter-bytes {parameters}: a multiple of 4 is needed (parameters are "
                         f"read in 32-bit words)", hint=f"write --parameter-bytes {(parameters | 3) + 1}")
    if args.block_size is not None and not 1 <= args.block_size <= MAX_BLOCK_THREADS:
        raise UsageError(f"--block-size {args.block_size}: a block has 1 to {MAX_BLOCK_THREADS} threads")


def run(args):
    from ..sass import assemble_kernel
    from ._refusals import refused_files

    if not args.cubin:
        # a raw stream has no parameter block nor block size: an option that would be dropped is refused
        given = [flag for flag, value in (("--parameter-bytes", args.parameter_bytes),
                                          ("--block-size", args.block_size)) if value is not None]
        if given:
            from ..errors import UsageError

            raise UsageError(f"{' and '.join(given)} {'describe' if len(given) > 1 else 'describes'} the cubin, "
                             f"and this writes a raw stream", hint="add --cubin, or leave "
                             + ("them" if len(given) > 1 else "it") + " out")
    _check_cubin_options(args)
    source = existing_file(args.source)
    with refused_files():       # unreadable or too big: a file refused, exit 1 (as check and disasm say)
        check_source(source)
    target = target_named(args.arch)
    output = checked_output(args.output, source)
    assembled = assemble_kernel(source, target, register_budget=args.register_budget, kernel=args.kernel)
    data = assembled.code
    if args.cubin:
        from ..sass.cubin import write_cubin
        parameters = args.parameter_bytes
        if parameters is None:
            parameters = parameter_bytes_read(assembled, target)
        else:       # its range was checked before the work (_check_cubin_options): what the code reads here
            beyond = [(end, inst) for end, inst in parameter_reads(assembled, target) if end > parameters]
            if beyond:
                end, inst = max(beyond, key=lambda pair: pair[0])
                raise BobcError(f"--parameter-bytes {parameters}: the code reads parameter bytes up to {end} "
                                f"({inst.text})", inst.span)
        if parameters > MAX_PARAMETER_BYTES:
            raise BobcError(f"the code reads {parameters} bytes of parameters, more than a kernel takes "
                            f"({MAX_PARAMETER_BYTES})")
        block_size = MAX_BLOCK_THREADS if args.block_size is None else args.block_size
        # the source's `.shared N` (a listing's .nv.shared.<kernel> size) is the kernel's static shared memory
        data = write_cubin(assembled, assembled.kernel_name, target, parameters, block_size,
                           static_shared=assembled.shared_bytes or 0)
    output.stage("-o", data)
    output.publish()        # a synced temporary beside it, renamed over it (exit 8 naming it on failure)
    if args.listing:
        for inst in assembled.instructions:
            print(f"/*{inst.address:04x}*/ {inst.control.text()} {inst.text:<56} "
                  f"/* {inst.lo:#018x} {inst.hi:#018x} */")
    what = f"cubin of kernel {assembled.kernel_name}" if args.cubin else "raw stream"
    from ..cli import say
    from ..reference.safe_io import shown

    # the success line, after the output is published: stdout that cannot take it is one line on
    # stderr and exit 0, as build's (the file was written)
    say(f"{shown(args.output)}: {what}, {len(assembled.code) // 16} instructions, {assembled.registers} registers "
        f"({args.arch})", "asm")
    return 0
