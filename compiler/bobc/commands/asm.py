"""bobc asm: assemble a SASS source (nvdisasm syntax, see bobc.sass.syntax) into a raw stream or a cubin.

The source may be a hand-written kernel or nvdisasm's listing of a cubin as printed
(`nvdisasm -hex k.cubin > k.sass`; --kernel picks one of several kernels).
"""
from pathlib import Path

from ..cli import _positive, _whole
from ..errors import BobcError
from ..targets import target_named
from ._common import add_target, existing_file


def add_arguments(p):
    p.add_argument("source", help="SASS assembly source, or an nvdisasm listing of a cubin")
    p.add_argument("-o", "--output", required=True, help="file to write (raw instruction stream, or a cubin with --cubin)")
    p.add_argument("--cubin", action="store_true",
                   help="write a cubin (ELF) that NVIDIA's tools and the CUDA driver load, not a raw stream")
    p.add_argument("--kernel", default=None, help="which kernel of a listing that holds several")
    p.add_argument("--parameter-bytes", type=_whole, default=None,
                   help="size of the kernel parameters in the cubin, described as one 8-byte parameter per "
                        "word and a 4-byte one for a last half word (default: a listing's own records, else up "
                        "to the highest parameter the code reads, in 8-byte words; with --cubin only)")
    p.add_argument("--parameter-sizes", default=None, metavar="SIZE[@OFFSET],...",
                   help="the kernel's parameters in order, each's size in bytes and, where it does not follow "
                        "the one before at its natural alignment (1, 2, 4 and 8 their size, other sizes up to 4), "
                        "@its offset: 8,4,4 for (pointer, int, float), 1,2,8 for (u8, u16 at 2, pointer at 8); "
                        "one KPARAM_INFO record each, as ptxas writes them (with --cubin only; default: a "
                        "listing's own records, else one per 8-byte word)")
    p.add_argument("--block-size", type=_whole, default=None,
                   help="the most threads per block the cubin declares (default: a listing's MAX_THREADS, a "
                        "source's //@ block, else 1024 or fewer, as many as its registers allow; with --cubin only)")
    p.add_argument("--register-count", type=_positive, default=None, metavar="N",
                   help="the register count the cubin declares (REGCOUNT), for code that resizes its registers "
                        "(USETMAXREG: PTX's .maxnreg); default: a listing's REGCOUNT, else the code's count "
                        "(with --cubin only)")
    p.add_argument("--register-budget", type=_positive, default=None, metavar="N",
                   help="refuse the kernel if it needs more registers than this (at least 1)")
    p.add_argument("--listing", action="store_true",
                   help="print each instruction with its address, control code and words (before -o is written: "
                        "a stdout that cannot take it writes no output, exit 8)")
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


def parameter_reads(assembled, target, base: int | None = None) -> list:
    """(end byte of the parameter block it reads, instruction) for every read of constant bank 0
    at or past the parameter block's `base` (default: the target's parameter base), from the
    encoded bank and offset fields (so that `c[0x0][param+N]` counts like `c[0x0][0x16N]`) and
    the bytes the operand covers."""
    base = target.parameter_base if base is None else base
    reads = []
    for inst in assembled.instructions:
        if inst.constant is None:
            continue
        bank, offset, size = inst.constant
        if bank == 0 and offset >= base:
            reads.append((offset - base + size, inst))
    return reads


def parameter_bytes_read(assembled, target) -> int:
    """The parameter block up to the highest byte the code reads from constant bank 0, in 8-byte
    words.  On a target that keeps a block of more than 4352 bytes elsewhere (sm_86: 0x1a80,
    sass/cubin.py cubin_parameter_base), reads past a 4352-byte block at the parameter base are
    read from there, when that gives such a block."""
    from ..sass.cubin import KPARAM_INFO_BLOCK_MAX

    def words(base=None):
        top = max((end for end, _ in parameter_reads(assembled, target, base)), default=0)
        return (top + 7) // 8 * 8

    block = words()
    large = target.cubin.large_parameter_base
    if large is not None and block > KPARAM_INFO_BLOCK_MAX and words(large) > KPARAM_INFO_BLOCK_MAX:
        return words(large)
    return block


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
    if args.register_count is not None:
        most = target_named(args.arch).limits.registers_per_thread
        if args.register_count > most:      # an option's value: exit 2 before any work, as --block-size's
            raise UsageError(f"--register-count {args.register_count}: a thread has at most {most} registers "
                             f"on {args.arch}", hint=f"give 1 to {most}")
    if args.parameter_sizes is not None and parameters is not None:
        raise UsageError("--parameter-sizes and --parameter-bytes are both given: the sizes set the parameter bytes "
                         "(where the last parameter ends)", hint="leave out --parameter-bytes")
    if args.parameter_sizes is not None:
        parameter_layout(args.parameter_sizes)      # refused here, before the work


def natural_alignment(size: int) -> int:
    """Where `--parameter-sizes` starts a parameter given without @OFFSET: at the end of the one before,
    rounded up to a multiple of this.  A size of 1, 2, 4 or 8 is a PTX scalar's (.u8, .u16 / .f16,
    .u32 / .f32, .u64 / a pointer), aligned to its size as ptxas lays them out (a .u8 then a .u64:
    1 byte at 0, 8 at 8); any other size is a `.b8 p[N]` array aligned to the largest of 1, 2 and 4
    that divides it (an `.align 4` array of 12 or 4344 bytes follows a .u32 at once).
    Another alignment is written with @OFFSET."""
    if size in (1, 2, 4, 8):
        return size
    return min(4, size & -size)


def parameter_layout(text: str) -> list[tuple[int, int]]:
    """`--parameter-sizes 8,4,4` (or `1,2,4,8`, `4,8@4`): each parameter's (offset, size), in order; a
    parameter without `@OFFSET` starts where the one before it ends, rounded up to its
    natural_alignment (ptxas's offsets: `1,4` is a .u8 at 0 and a .u32 at 4).  Sizes are at least 1
    byte (ptxas writes 1 for a .u8, 2 for a .u16, any size for a `.b8 p[N]` array) and offsets any
    byte; refused, as nothing ptxas writes (sass/cubin.py check_parameters): a size of 0, a parameter
    that starts before the one before it ends, an end past MAX_PARAMETER_BYTES (one parameter may
    take it all: a block of more than 4352 bytes is described by KPARAM_INFO_V2 records, whose size
    is a 32-bit word, as ptxas writes them; sass/cubin.py KPARAM_INFO_BLOCK_MAX)."""
    from ..errors import UsageError

    layout, end = [], 0
    for ordinal, item in enumerate(text.split(",")):
        size_text, _, offset_text = item.strip().partition("@")
        try:
            size = int(size_text, 0)
            offset = int(offset_text, 0) if offset_text else None
        except ValueError:
            raise UsageError(f"--parameter-sizes {text}: parameter {ordinal} is written '{item.strip()}', not "
                             f"SIZE or SIZE@OFFSET (numbers)", hint="write --parameter-sizes 8,4,4") from None
        if size <= 0:
            raise UsageError(f"--parameter-sizes {text}: parameter {ordinal} ({item.strip()}) has no bytes; a kernel "
                             f"parameter has at least one (a .u8 is 1, a .u16 2)")
        if offset is None:
            offset = end + -end % natural_alignment(size)
        if offset < 0:
            raise UsageError(f"--parameter-sizes {text}: parameter {ordinal} is at offset {offset}, before the "
                             f"parameter block's first byte (offsets count from 0)",
                             hint="write --parameter-sizes 8,4@8 (SIZE@OFFSET, OFFSET at least 0)")
        if offset < end:
            raise UsageError(f"--parameter-sizes {text}: parameter {ordinal} at offset {offset} overlaps the one "
                             f"before it, which ends at {end} (ptxas lays parameters out in order, apart)")
        end = offset + size
        if end > MAX_PARAMETER_BYTES:
            raise UsageError(f"--parameter-sizes {text}: the parameters end at byte {end}, past the "
                             f"{MAX_PARAMETER_BYTES} a kernel takes")
        layout.append((offset, size))
    return layout


def run(args):
    from ..sass import assemble_kernel
    from ._refusals import refused_files

    if not args.cubin:
        # a raw stream has no parameter block nor block size: an option that would be dropped is refused
        given = [flag for flag, value in (("--parameter-bytes", args.parameter_bytes),
                                          ("--parameter-sizes", args.parameter_sizes),
                                          ("--block-size", args.block_size),
                                          ("--register-count", args.register_count)) if value is not None]
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
    registers = assembled.registers
    if args.cubin:
        data, registers = _cubin(args, source, target, assembled)
    output.stage("-o", data)
    if args.listing:
        # the listing is an output too: printed (and flushed) before -o is published, so a stdout that
        # cannot take it (a full disk, `> /dev/full`) leaves -o as it was, exit 8 -- never a new file
        # beside an exit code that says "not written"
        _print_listing(assembled, args.output)
    output.publish()        # a synced temporary beside it, renamed over it (exit 8 naming it on failure)
    what = f"cubin of kernel {assembled.kernel_name}" if args.cubin else "raw stream"
    from ..cli import say
    from ..errors import shown

    # the success line, after the output is published: stdout that cannot take it is one line on
    # stderr and exit 0, as build's (the file was written)
    say(f"{shown(args.output)}: {what}, {len(assembled.code) // 16} instructions, {registers} registers "
        f"({args.arch})", "asm")
    return 0


def _print_listing(assembled, output: str) -> None:
    """Print `--listing` on stdout and flush it.  A stdout that cannot take it is a refusal, exit 8
    (README: an output not written), before -o is published; a reader that went away (`| head`)
    read what it wanted: the rest is dropped, and -o is still written (exit 0)."""
    import sys

    from ..cli import StdoutFailed, _quiet_stdout, _stdout_reason
    from ..errors import BobcError, shown

    try:
        for inst in assembled.instructions:
            print(f"/*{inst.address:04x}*/ {inst.control.text()} {inst.text:<56} "
                  f"/* {inst.lo:#018x} {inst.hi:#018x} */")
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    except StdoutFailed as failure:
        _quiet_stdout()         # what is left in stdout's buffer goes nowhere, not to a second message
        error = BobcError(f"cannot write the listing (--listing) to stdout: {_stdout_reason(failure)}",
                          hint=f"nothing was written to {shown(output)} (-o); send the listing to a file "
                               f"(> FILE), or leave out --listing")
        error.exit_code = 8
        raise error from None


def _declared(source: Path, target, kernel: str):
    """What the source declares of the launch: a listing's .nv.info records (sass.listing_info), or
    a kernel source's contract lines (docs/kernel-contracts.md: `//@ block`, the `//@ param` words).
    Returns (ListingInfo, the contract's highest declared word + 1 or None)."""
    from ..certify.kernels import ContractError, parse_contract
    from ..sass.assembler import is_listing
    from ..sass.listing_info import ListingInfo, listing_info
    from ..sass.source import read_source
    from ..sass.syntax import parse_source

    lines = parse_source(read_source(source), str(source))
    if is_listing(lines):
        return listing_info(lines, kernel), None
    try:
        contract = parse_contract(source)
    except ContractError as problem:
        raise BobcError(*problem.placed()) from None
    words = max((a.index for a in contract.arguments), default=None)
    return ListingInfo(required_block=contract.block), None if words is None else words + 1


def _check_register_count(count: int, assembled) -> None:
    """--register-count below the registers the code names (R0..R{count-1} are a thread's): refused
    at the first instruction naming the highest register (exit 1), as ptxas never declares fewer
    than its code uses -- unless the code resizes its registers (USETMAXREG), whose count at entry
    is what the option gives (sass/README.md, "Registers")."""
    from ..errors import BobcError
    from ..sass.assembler import RESERVED_REGISTERS
    from ..sass.syntax import parse_instruction

    highest = assembled.registers - 1 - RESERVED_REGISTERS        # -1: the code names no register
    if highest < count:
        return
    if any(parse_instruction(i.text).opcode == "USETMAXREG" for i in assembled.instructions):
        return
    raise BobcError(f"the code uses R{highest}, but --register-count {count} declares R0..R{count - 1}: a thread "
                    f"would be given fewer registers than its code names", assembled.highest_register_span,
                    hint=f"leave out --register-count (the code's count is {assembled.registers}), or give at "
                         f"least {highest + 1}; it is for code that resizes its registers (USETMAXREG)")


def _cubin(args, source: Path, target, assembled) -> tuple[bytes, int]:
    """The cubin of an assembled kernel, its launch facts taken from the options, else from what the
    source declares (_declared), else the defaults sass/README.md names; and the REGCOUNT it declares."""
    from ..sass.cubin import (PARAMETER_UNIT, WORD_BYTES, check_kernel_name, cubin_parameter_base,
                              default_parameters, register_thread_bound, write_cubin)

    name = assembled.kernel_name
    check_kernel_name(name, assembled.kernel_name_span)
    declared, contract_words = _declared(source, target, name)
    if args.parameter_sizes is not None:
        layout = parameter_layout(args.parameter_sizes)
        parameters = layout[-1][0] + layout[-1][1]
        given = f"--parameter-sizes {args.parameter_sizes}"
    elif args.parameter_bytes is not None:
        parameters, layout, given = args.parameter_bytes, None, f"--parameter-bytes {args.parameter_bytes}"
    elif declared.parameters is not None:
        layout = declared.parameters
        parameters = declared.parameter_bytes if declared.parameter_bytes is not None else \
            layout[-1][0] + layout[-1][1]
        given = "the listing's KPARAM_INFO records"
    else:
        parameters, layout, given = parameter_bytes_read(assembled, target), None, None
        if contract_words is not None:      # the contract's `//@ param` words are the kernel's parameters
            parameters = max(parameters, WORD_BYTES * contract_words)
    if parameters > MAX_PARAMETER_BYTES:
        raise BobcError(f"the code reads {parameters} bytes of parameters, more than a kernel takes "
                        f"({MAX_PARAMETER_BYTES})")
    if layout is None:
        layout = default_parameters(parameters)
    base = cubin_parameter_base(target, parameters)     # sm_86 keeps a block past 4352 bytes at 0x1a80
    reads = parameter_reads(assembled, target, base)
    # The code reads the bank in 32-bit words: a parameter smaller than a word (a .u8, a .u16) is read
    # with the bytes beside it, which belong to the next parameter, to alignment padding or, for
    # the block's last word, lie past its end (ptxas reads a last .f16 at offset 12 of a 14-byte
    # block as the word 12..15).  So a read is checked word by word: each word it covers must hold
    # a byte of some parameter, and none may lie wholly past the block.
    last_word = -(-parameters // PARAMETER_UNIT) * PARAMETER_UNIT
    for end, inst in sorted(reads, key=lambda pair: -pair[0]):
        bank, offset, size = inst.constant
        first = offset - base
        if given is not None and end > last_word:
            raise BobcError(f"{given}: the code reads parameter bytes up to {end} ({inst.text})", inst.span)
        words = range(first - first % PARAMETER_UNIT, first + size, PARAMETER_UNIT)
        empty = [w for w in words if not any(o < w + PARAMETER_UNIT and w < o + s for o, s in layout)]
        if empty:
            raise BobcError(f"{inst.text} reads parameter bytes {first}..{first + size - 1}, and bytes "
                            f"{max(first, empty[0])}..{min(first + size, empty[-1] + PARAMETER_UNIT) - 1} belong "
                            f"to no parameter of {given or 'the cubin'}", inst.span,
                            hint="declare a parameter over them")
    registers = args.register_count if args.register_count is not None else declared.registers
    if args.register_count is not None:
        _check_register_count(args.register_count, assembled)
    count = registers if registers is not None else assembled.registers
    bound = register_thread_bound(count, target)
    if args.block_size is not None:
        max_block, required = (args.block_size, 1, 1), None
    elif declared.required_block is not None:
        max_block, required = None, declared.required_block
    elif declared.max_block is not None:
        max_block, required = declared.max_block, None
    else:           # no bound declared: as many threads as its registers allow
        max_block, required = (bound, 1, 1), None
    cluster = declared.cluster
    if cluster is not None and not target.clusters:
        raise BobcError(f"kernel '{name}' is launched in clusters of {' x '.join(map(str, cluster))} blocks "
                        f"(its CTA_PER_CLUSTER), and {target.name} has no thread-block clusters")
    # the source's `.shared N` (a listing's .nv.shared.<kernel> size) is the kernel's static shared memory
    return write_cubin(assembled, name, target, parameters, (max_block or required)[0],
                       static_shared=assembled.shared_bytes or 0, registers=registers, parameters=layout,
                       max_block=max_block, required_block=required, cluster=cluster), count
