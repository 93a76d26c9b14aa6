"""The assembler: source text -> 128-bit words, with labels, parameters and control codes.

Source files (`assemble_kernel`) may start with directives:

    .kernel scale_rows          // the kernel's name (the cubin symbol)
    .registers 24               // a register budget the kernel must fit
    .shared 39936               // the shared memory a block needs (what a plan may ask for it)

`assemble` takes the text alone.  Registers are reported as ptxas reports
REGCOUNT: the highest vector register used + 1 + RESERVED_REGISTERS (ptxas
13 reports 2 more than the highest register it allocates, on sm_86 and sm_90).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import BobcError, Span
from ..targets import Target, target_named
from .encoder import EncodeProblem, Encoder
from .schedule import (Item, expand, schedule, ScheduleShortfall, ShortWrittenStall, UnscoredResult,
                       UnwaitedScoreboard)
from .tables.layouts import (ALIGNED_UNIFORM_TUPLES, CONST_BANK, CONST_OFFSET, DOUBLE_IMMEDIATE,
                             EXPLICIT_CONTROL, LAYOUTS)
from .source import read_source
from .defined import Step, expand as expand_registers
from .syntax import Const, Control, Imm, Instruction, Label, Reg, SourceLine, Unread, _quoted, parse_source

RESERVED_REGISTERS = 2


@dataclass
class AssembledInstruction:
    address: int
    text: str
    word: int
    control: Control
    span: Span | None
    constant: tuple[int, int, int] | None = None   # (bank, byte offset, bytes) of a constant-bank read

    @property
    def lo(self) -> int:
        return self.word & (1 << 64) - 1

    @property
    def hi(self) -> int:
        return self.word >> 64


@dataclass
class Assembled:
    code: bytes
    registers: int
    instructions: list[AssembledInstruction]
    kernel_name: str | None = None
    register_budget: int | None = None
    labels: dict[str, int] = field(default_factory=dict)
    highest_register_span: Span | None = None   # the first instruction using the highest register
    shared_bytes: int | None = None             # `.shared N`: the shared memory a block of it needs
    required_block: tuple[int, int, int] | None = None   # a listing's EIATTR_REQNTID: the only block its code runs in
    kernel_name_span: Span | None = None        # where a `.kernel` line wrote kernel_name (None: the file's stem)
    arch: str | None = None                     # the target it was assembled for ("sm_86"): its encoding
    # each instruction's registers read and written and its control flow (bobc.sass.defined)
    flow: list = field(default_factory=list, repr=False, compare=False)


def _arch_of(target) -> str:
    return target.name if isinstance(target, Target) else str(target)


def assemble(text: str, target, source_name: str = "<input>") -> Assembled:
    """Assemble SASS text for `target` (a Target or "sm_86"/"sm_90")."""
    lines = parse_source(text, source_name)
    return _assemble_lines(lines, _arch_of(target))


LISTING_DIRECTIVES = (".section", ".align", ".global", ".weak", ".type", ".size", ".other", ".sectionflags",
                      ".sectioninfo", ".sectionentsize", ".target", ".elftype", ".headerflags", ".byte",
                      ".short", ".word", ".dword", ".zero", ".tkinfo", ".nv_debug", ".text")


def split_listing(lines: list[SourceLine]) -> dict[str, list[SourceLine]]:
    """The kernels of a whole nvdisasm listing: the labels and instructions of each
    `.section .text.<kernel>` (every other section is data nvdisasm prints and we ignore)."""
    kernels: dict[str, list[SourceLine]] = {}
    current = None
    for line in lines:
        if line.directive is not None:
            key, value = line.directive
            if key == ".section":
                name = value.split(",")[0].strip()
                current = name[len(".text."):] if name.startswith(".text.") else None
                if current is not None:
                    kernels[current] = []
            continue
        if current is not None:
            kernels[current].append(line)
    return kernels


def listing_shared_bytes(lines: list[SourceLine]) -> dict[str, int]:
    """The static shared memory of each kernel of a listing: the size of its `.nv.shared.<kernel>`
    section (NOBITS; nvdisasm prints it as `.zero N`), which ptxas writes for `.shared` variables."""
    sizes: dict[str, int] = {}
    current = None
    for line in lines:
        if line.directive is None:
            continue
        key, value = line.directive
        if key == ".section":
            name = value.split(",")[0].strip().strip('"')
            current = name[len(".nv.shared."):] if name.startswith(".nv.shared.") else None
            if current is not None:
                sizes.setdefault(current, 0)
        elif key == ".zero" and current is not None:
            try:
                sizes[current] += int(value.split()[0], 0)
            except (ValueError, IndexError):
                raise BobcError(f".zero needs a number of bytes, found '{_quoted(value)}'", line.span) from None
    return sizes


def is_listing(lines: list[SourceLine]) -> bool:
    return any(l.directive is not None and l.directive[0] == ".section" for l in lines)


def check_listing_target(lines: list[SourceLine], arch: str, path: Path | None = None) -> None:
    """Refuse a listing whose `.target` names another target than the one assembled for: its
    parameter offsets, control codes and forms are that target's.  `path`: the kernel source a
    plan (or `bobc asm`) names, whose hint then also says how a plan gives the other target its own
    listing -- a per-target variant beside it (docs/kernel-contracts.md, "Per-target sources");
    `--arch`, the only way out the hint named, is no option of a plan's build (probe s44 newuser9)."""
    for line in lines:
        if line.directive is not None and line.directive[0] == ".target":
            written = line.directive[1].split()[0] if line.directive[1].split() else ""
            if written.rstrip("af") != arch:
                hint = f"assemble it with --arch {written.rstrip('af')}, or list a cubin made for {arch}"
                if path is not None:
                    from ..resources import doc
                    stem = path.name.split(".")[0]
                    hint += (f"; in a plan, build it with --target {written.rstrip('af')}, or put {arch}'s listing "
                             f"beside it as {stem}.{arch}.sass, the kernel's variant for {arch} "
                             f"({doc('kernel-contracts.md')}, \"Per-target sources\")")
                raise BobcError(f"this listing is for {written} (.target {written}), not {arch}", line.span, hint=hint)
            return


def assemble_listing(text: str, target, source_name: str = "<listing>") -> dict[str, Assembled]:
    """Assemble every kernel of an `nvdisasm -hex` listing of a cubin, as printed."""
    lines = parse_source(text, source_name)
    check_listing_target(lines, _arch_of(target))
    kernels = split_listing(lines)
    if not kernels:
        raise BobcError("no .text section in this listing", hint="give nvdisasm's listing of a cubin")
    shared = listing_shared_bytes(lines)
    out = {}
    for name, body in kernels.items():
        result = _assemble_lines(body, _arch_of(target))
        result.kernel_name = name
        result.shared_bytes = shared.get(name)
        out[name] = result
    return out


def assemble_kernel(source_path, target, register_budget: int | None = None,
                    kernel: str | None = None, launched: bool = False) -> Assembled:
    """Assemble a .sass kernel source; refuse it by name if it needs more registers than allowed.
    `launched`: the kernel is a plan's, and opens with the target's launch prologue
    (Target.launch_prologue: on sm_90 ACQBULK, so its grid may be started before the grid it
    depends on has ended); a listing is assembled as printed."""
    path = Path(source_path)
    text = read_source(path)      # bounded: a FIFO, a device or a file past 4 MiB is refused unread
    lines = parse_source(text, str(path))
    name = None
    declared = None
    shared = None
    required = None
    listing = is_listing(lines)
    if listing:
        kernels = split_listing(lines)
        if kernel is None and len(kernels) == 1:
            kernel = next(iter(kernels))
        if kernel not in kernels:
            raise BobcError(f"the listing holds {len(kernels)} kernels ({', '.join(kernels) or 'none'}); "
                            f"{'kernel ' + repr(kernel) + ' is not one of them' if kernel else 'name one'}",
                            Span(str(path), 1, 1),
                            hint="bobc asm --kernel NAME picks one; a plan's kernel source is one kernel: list "
                                 "a cubin of that kernel alone (its own .entry in a PTX file of its own), one "
                                 "source file a kernel")
        check_listing_target(lines, _arch_of(target), path)
        shared = listing_shared_bytes(lines).get(kernel)    # None: the kernel declares none
        # ptxas's record of PTX `.reqntid X, Y, Z` (EIATTR_REQNTID): the code is compiled for blocks of
        # exactly that shape (it drops a `tid.x < X` test it then knows holds)
        from .listing_info import listing_info

        required = listing_info(lines, kernel).required_block
        lines = [l for l in kernels[kernel] if l.directive is None]
        name = kernel
    directives = source_directives(lines, None if listing else target_named(_arch_of(target)))
    name = directives.name or name
    declared = directives.registers
    shared = directives.shared if directives.shared is not None else shared
    if kernel is not None and not listing and kernel != (name or path.stem):
        # `bobc asm --kernel` picks a kernel of a listing; a source is one kernel, named by .kernel or its file
        raise BobcError(f"{path.name} is the source of one kernel, '{name or path.stem}' (its "
                        f"{'.kernel directive' if name else 'file name'}), not '{kernel}'",
                        Span(str(path), 1, 1), hint="--kernel picks one kernel of an nvdisasm listing; "
                                                     "leave it out for a source")
    prologue = target_named(_arch_of(target)).launch_prologue if launched and not listing else ()
    if prologue:
        lines = [*parse_source("\n".join(prologue), f"<{_arch_of(target)} launch prologue>"), *lines]
    try:
        if launched:
            _check_bank_zero(lines)
        _check_kernel_end(lines, path)
    except BobcError as refusal:
        _check_opcodes_up_to(lines, refusal.span)     # the first error in source order is said
        raise
    result = _assemble_lines(lines, _arch_of(target))
    result.kernel_name = name or path.stem
    result.kernel_name_span = directives.name_span if directives.name else None
    result.shared_bytes = shared
    result.required_block = required
    budgets = [b for b in (register_budget, declared) if b is not None]
    if budgets:
        result.register_budget = min(budgets)
        check_register_budget(result, result.register_budget, result.kernel_name, str(path),
                              declared=declared is not None and declared == result.register_budget)
    return result


@dataclass
class SourceDirectives:
    """A kernel source's `.kernel NAME`, `.registers N` and `.shared BYTES` lines (None: absent)."""
    name: str | None = None
    registers: int | None = None
    shared: int | None = None
    name_span: Span | None = None   # where `.kernel`'s name is written


def shared_bytes_limit(target: Target) -> int:
    """The most shared memory one block may declare on `target` (bobc.targets
    SMResources.block_shared_bytes): CUDA's opt-in maximum per block (99 KiB on 8.6, 227 KiB on
    9.0) and, where the system's bytes lie below the block's own (sm_90's first 0x400), those."""
    return target.sm_resources.block_shared_bytes


def _value_span(line: SourceLine, value: str, offset: int = 0, length: int | None = None) -> Span | None:
    """Where a directive's value (from `offset` in it) is written: its line's span ends where the
    value does (parse_source strips the line's comment and trailing space)."""
    span = line.span
    if span is None or span.end_column is None or not value:
        return span
    column = span.end_column - len(value) + offset
    return Span(span.path, span.line, column, span.line, column + (len(value) - offset if length is None else length))


def source_directives(lines: list[SourceLine], target: Target | None = None) -> SourceDirectives:
    """The directives of a source's lines (a listing's kernels have none of these), each value
    refused by name at its line when it is no number; an unknown directive likewise.  What
    assemble_kernel honours in a plan, and bobc.sim.kernel.run_kernel for a source it runs.
    Each is given once, `.kernel` with one name, `.shared` at most what a block of `target` may
    use and `.registers` at most the registers a thread of it may have (without a target: of any
    target): a second line, an extra word or an impossible size would otherwise be taken
    silently (probe s32 contracts finding 9; a budget past the target's registers, which never
    binds: probe s32 paths finding 5)."""
    from ..targets import TARGETS

    found = SourceDirectives()
    seen: dict[str, int] = {}
    for line in lines:
        if line.directive is None:
            continue
        key, value = line.directive
        if key in (".kernel", ".registers", ".shared") and key in seen:
            raise BobcError(f"{key} is given twice (first at line {seen[key]}): a source declares it once",
                            line.span, hint=f"keep one {key} line")
        seen[key] = line.span.line if line.span is not None else 0
        if key == ".kernel":
            words = value.split()
            if not words:
                raise BobcError(".kernel needs the kernel's name (.kernel scale_rows)", line.span,
                                hint="name the kernel, or leave out the line: the kernel is then named by its file")
            if len(words) > 1:
                at = value.index(words[1], len(words[0]))
                raise BobcError(f".kernel takes one name, found {len(words)} words ('{_quoted(value)}')",
                                _value_span(line, value, at), hint="a kernel has one name (its cubin symbol); "
                                                                   "write a remark as a // comment")
            found.name = words[0]
            found.name_span = _value_span(line, value, value.index(words[0]), len(words[0]))
        elif key in (".registers", ".shared"):
            what = "a number" if key == ".registers" else "a number of bytes"
            try:
                number = int(value, 0)
            except ValueError:
                raise BobcError(f"{key} needs {what}, found '{_quoted(value)}'", line.span) from None
            if number < 0:
                raise BobcError(f"{key} needs {what}, found '{_quoted(value)}'", line.span)
            if key == ".registers":
                limits = [target] if target is not None else list(TARGETS.values())
                most = max(limits, key=lambda t: t.limits.registers_per_thread)
                if number > most.limits.registers_per_thread:
                    on = most.name if target is not None else f"any target ({most.name}: the most)"
                    raise BobcError(f".registers {value}: a thread on {on} may use at most "
                                    f"{most.limits.registers_per_thread} registers, so this budget "
                                    f"would never bind", _value_span(line, value),
                                    hint=f"declare the registers the kernel may use (at most "
                                         f"{most.limits.registers_per_thread}), or leave out the line: "
                                         f"the assembler counts them")
            if key == ".shared":
                limits = [target] if target is not None else list(TARGETS.values())
                most = max(limits, key=shared_bytes_limit)
                if number > shared_bytes_limit(most):
                    sm = most.sm_resources
                    on = most.name if target is not None else f"any target ({most.name}: the most)"
                    raise BobcError(f".shared {value}: a block on {on} may use at most {shared_bytes_limit(most)} "
                                    f"bytes of shared memory ({sm.block_shared_why})", _value_span(line, value),
                                    hint=f"declare the bytes a block of the kernel uses: at most "
                                         f"{shared_bytes_limit(most):#x} ({shared_bytes_limit(most)})")
                base = target.sm_resources.shared_base if target is not None else 0
                if 0 < number <= base:
                    raise BobcError(f".shared {value} on {target.name} leaves a block no shared memory of its own: "
                                    f"the first {base} bytes of its shared window (0x0..{base - 1:#x}) are the "
                                    f"system's, so the kernel's own bytes start at {base:#x}",
                                    _value_span(line, value),
                                    hint=f"address the block's shared memory from {base:#x} and declare .shared "
                                         f"{base:#x} more than the kernel uses (.shared {number + base:#x} for "
                                         f"{number} bytes)")
            setattr(found, key[1:], number)
        else:
            raise BobcError(f"unknown directive '{_quoted(key)}' (known: .kernel, .registers, .shared)", line.span)
    return found


def check_register_budget(assembled: Assembled, budget: int, name: str, source: str, declared: bool = True) -> None:
    """Refuse, by name, a kernel whose code needs more registers than `budget`: the source's
    `.registers` line when `declared`, else the caller's (`bobc asm --register-budget`)."""
    if assembled.registers > budget:
        where = (f"its `.registers {budget}` line (and the registers of the plan's region that runs it, which "
                 f"must cover them)" if declared else "--register-budget")
        raise BobcError(f"kernel '{name}' needs {assembled.registers} registers "
                        f"(highest R{assembled.registers - 1 - RESERVED_REGISTERS} + 1 + "
                        f"{RESERVED_REGISTERS} reserved), over its budget of {budget}",
                        assembled.highest_register_span or Span(source, 1, 1),
                        hint=f"use fewer registers, or raise the budget: {where}")


# The instructions after which no thread goes on to the next address: ptxas ends every kernel with
# one (EXIT, then its `BRA` to itself as padding), unguarded
NO_FALL_THROUGH = ("EXIT", "BRA", "RET", "JMP", "BRX", "JMX", "KILL")


def _check_kernel_end(lines: list[SourceLine], path: Path) -> None:
    """Refuse a kernel source with no instruction, and one whose last instruction can fall through
    (no unconditional EXIT, BRA or RET): on the GPU its threads would run on into whatever follows
    the code (another region, the padding), and the simulator faults past the code's end."""
    instructions = [line.instruction for line in lines if line.instruction is not None]
    if not instructions:
        raise BobcError(f"{path.name} holds no instructions: a kernel is at least its EXIT", Span(str(path), 1, 1),
                        hint="write the kernel's instructions, ending with EXIT")
    while len(instructions) > 1 and instructions[-1].opcode == "NOP":
        instructions.pop()          # a listing's padding after the final BRA to itself
    _check_branch_targets(lines, 16 * len(instructions))
    last = instructions[-1]
    guarded = last.guard is not None and (last.guard.index != 7 or last.guard.neg)
    if last.opcode in NO_FALL_THROUGH and not guarded and "DIV" not in last.modifiers:
        return
    why = (f"is guarded ({last.source.strip().split()[0]})" if last.opcode in NO_FALL_THROUGH and guarded
           else "branches only where the warp diverged" if last.opcode in NO_FALL_THROUGH
           else "is no EXIT or branch")
    raise BobcError(f"the kernel's last instruction, {_display(last)}, {why}: threads would run past the end "
                    f"of the code", last.span,
                    hint="end every path with EXIT (ptxas ends a kernel with EXIT, then BRA to itself)")


def _check_branch_targets(lines: list[SourceLine], code_end: int) -> None:
    """Refuse a branch (or BSSY, CALL: any instruction naming a label or an address) whose target is
    `code_end` or past it -- a label with no instruction after it, or only the NOP padding: its
    threads would run past the end of the code as surely as a last instruction that falls through.
    Placed at the branch; an undefined label is left to the assembler's own refusal."""
    labels: dict[str, int] = {}
    count = 0
    for line in lines:
        if line.label is not None:
            labels.setdefault(line.label, 16 * count)
        elif line.instruction is not None:
            count += 1
    for line in lines:
        inst = line.instruction
        if inst is None:
            continue
        for operand in inst.operands:
            if not isinstance(operand, Label):
                continue
            target = operand.address if operand.address is not None else labels.get(operand.name)
            if target is None or target < code_end:
                continue
            verb = "targets" if inst.opcode in ("BSSY", "SSY", "PBK", "PCNT", "WARPSYNC") else "branches to"
            padding = target < 16 * count
            if operand.address is None:
                where = f"label '{operand.name}', which {'only NOP padding' if padding else 'no instruction'} follows"
                fix = (f"put the instruction it should reach after '{operand.name}:' (EXIT, to end the kernel)"
                       + (", before the padding" if padding else ""))
            else:
                where = f"{target:#x}, past the kernel's last instruction (at {code_end - 16:#x})"
                fix = "branch to an instruction of the kernel"
            raise BobcError(f"{_display(inst)} {verb} {where}: threads would run past the end of the code",
                            inst.span, hint=fix)


def _check_opcodes_up_to(lines: list[SourceLine], place: Span | None) -> None:
    """Refuse the first unknown opcode of an instruction at or before `place` (where a whole-kernel
    check -- its end, its branch targets, its constant banks -- refused it): the source's first
    error is the one said (probe s37 leftovers finding 2: a last line `FROB R0, R1` was refused as
    "no EXIT" before its opcode was named)."""
    for line in lines:
        inst = line.instruction
        if inst is None:
            continue
        if place is not None and inst.span.path == place.path and \
                (inst.span.line, inst.span.column) > (place.line, place.column):
            return
        _check_opcode(inst)


def _check_bank_zero(lines: list[SourceLine]) -> None:
    """A plan's kernel reads constant bank 0 alone: its QMD binds bank 0 to the launch's parameter
    block and nothing else a kernel may rely on (sm_90's QMDs put the next launch's bank 0 in slot 5
    to prefetch it: bobc.nvidia.encode.DependentPrefetch), so c[0x5][...] would read the next
    launch's words and any other bank memory no QMD names."""
    for line in lines:
        inst = line.instruction
        if inst is None:
            continue
        for operand in inst.operands:
            if isinstance(operand, Const) and operand.bank != 0:
                raise BobcError(f"{inst.mnemonic} reads constant bank {operand.bank:#x}: a plan's kernel reads only "
                                f"c[0x0][...] (its launch's parameter block)", inst.span,
                                hint="pass the value as a parameter word (c[0x0][param+...])")


def _assemble_lines(lines: list[SourceLine], arch: str) -> Assembled:
    instructions: list[Instruction] = []
    labels: dict[str, int] = {}
    label_spans: dict[str, Span] = {}
    targets_here: set[int] = set()
    encoder = Encoder(arch)

    def check_readable(inst: Instruction) -> None:
        _check_opcode(inst)
        problem = encoder.unread_problem(inst)
        if problem:
            unread = next(i for i, op in enumerate(inst.operands) if isinstance(op, Unread))
            raise BobcError(problem, _operand_span(inst, unread))

    for line in lines:
        if line.label is not None:
            if line.label in labels:
                for inst in instructions:       # an earlier unreadable instruction is the first error
                    check_readable(inst)
                raise BobcError(f"label '{line.label}' defined twice (first at {label_spans[line.label]})",
                                line.span)
            labels[line.label] = 16 * len(instructions)
            label_spans[line.label] = line.span
        elif line.instruction is not None:
            instructions.append(line.instruction)
    # the opcode and every operand must be readable before labels are resolved: an unknown opcode or
    # an operand the parser cannot read (R3.SIGN, P7) is that, not an undefined label
    for inst in instructions:
        check_readable(inst)
    # resolve labels
    resolved: list[Instruction] = []
    for inst in instructions:
        operands = []
        for position, op in enumerate(inst.operands):
            if isinstance(op, Label) and op.address is None:
                if op.name not in labels:
                    raise BobcError(f"undefined label '{op.name}'", _operand_span(inst, position))
                op = Label(op.name, labels[op.name])
            if isinstance(op, Label):
                if op.address % 16:
                    raise BobcError(f"branch target {op.address:#x} is not at an instruction boundary (a multiple of "
                                    f"0x10): it would jump into the middle of an instruction",
                                    _operand_span(inst, position),
                                    hint=f"branch to {op.address & ~15:#x} or {(op.address | 15) + 1:#x}, or to a label")
                if op.address > 16 * len(instructions):
                    raise BobcError(f"branch target {op.address:#x} is past the end of the code "
                                    f"({16 * len(instructions):#x})", _operand_span(inst, position))
                targets_here.add(op.address)
            operands.append(op)
        resolved.append(_listed_nan_payloads(replace(inst, operands=operands)))
    placed_all = []
    fixed_all = []      # each instruction's form's fixed bits: with its operands' and its control, its word
    for address, inst in enumerate(resolved):
        try:
            inst = encoder.normalize(inst)
            form_key = encoder.key(inst)
            if form_key not in encoder.forms:
                raise encoder.unknown_form(inst, form_key)
            placed_all.append(encoder.place_operands(inst, 16 * address))
            fixed_all.append(encoder.forms[form_key].fixed)
        except EncodeProblem as problem:
            raise BobcError(str(problem), _problem_span(inst, problem), hint=problem.hint) from None
        _check_tuple_alignment(inst, placed_all[-1])
    # nvdisasm -hex prints the words after each instruction: the control code comes from there
    resolved = [replace(inst, control=Control.from_word(inst.listed[1])._replace_reuse())
                if inst.control is None and inst.listed is not None else inst for inst in resolved]
    for inst in resolved:
        if inst.opcode in EXPLICIT_CONTROL and inst.control is None:
            raise BobcError(f"{inst.opcode} needs an explicit control code: the scheduler does not model "
                            f"sm_90's asynchronous units (warpgroup MMA, TMA, mbarriers)", inst.span,
                            hint="write it before the instruction, e.g. [B------:R-:W-:-:S01] "
                                 f"{inst.mnemonic} ..., taking ptxas's choice from an nvdisasm listing")
    items = [Item(inst.opcode, expand(p.reads), expand(p.writes), inst.control,
                  label_here=16 * i in targets_here, wide="WIDE" in inst.modifiers,
                  guard=_guard(inst), target=_branch_target(inst), latency_key=latency_key(inst),
                  guard_negated=inst.guard is not None and inst.guard.neg, timed_unscored=_timed_unscored(inst))
             for i, (inst, p) in enumerate(zip(resolved, placed_all))]
    try:
        controls = schedule(items, arch)
    except UnscoredResult as unscored:
        raise _unscored_refusal(resolved, unscored) from None
    except UnwaitedScoreboard as unwaited:
        raise _unwaited_refusal(resolved, unwaited) from None
    except ShortWrittenStall as short:
        raise _short_stall_refusal(resolved, short) from None
    except ScheduleShortfall as short:
        producer = resolved[short.producer]
        raise BobcError(f"{resolved[short.consumer].opcode} at 0x{16 * short.consumer:x} reads a result of "
                        f"{producer.opcode} at 0x{16 * short.producer:x} {short.deficit} cycles too early, "
                        f"and the stalls between them are already at their maximum of 15",
                        resolved[short.consumer].span,
                        hint="put independent instructions (or NOPs) between the two") from None
    out: list[AssembledInstruction] = []
    code = bytearray()
    max_register = -1
    highest_span = None
    for i, (inst, control, placed, fixed) in enumerate(zip(resolved, controls, placed_all, fixed_all)):
        # Encoder.encode's word, from the placement above (the operands' bits do not depend on the
        # control code): placing every operand a second time was a third of a cold assembly
        word = fixed | placed.value | ((control.bits() & 0x1FFFF) << 105)
        if inst.listed is not None and word != inst.listed[0] | inst.listed[1] << 64:
            # nvdisasm printed the words it decoded this text from: any difference is a form the
            # assembler gets wrong or a text that does not say everything (edit a line: drop its words)
            listed = inst.listed[0] | inst.listed[1] << 64
            raise BobcError(f"{_display(inst)} assembles to {word:#034x}, but the listing prints {listed:#034x} "
                            f"beside it (bits {_bit_list(word ^ listed)} differ)", inst.span)
        code += word.to_bytes(16, "little")
        constant = None
        if placed.constant_bytes:   # as encoded: the bank and offset fields of the word
            constant = (word >> CONST_BANK[0] & (1 << CONST_BANK[1]) - 1,
                        word >> CONST_OFFSET[0] & (1 << CONST_OFFSET[1]) - 1, placed.constant_bytes)
        out.append(AssembledInstruction(16 * i, _display(inst), word, control, inst.span, constant))
        for bank, first, count in placed.reads + placed.writes:
            last = min(first + count - 1, 254)     # R255 is RZ: no register to allocate
            if bank == "R" and first != 255 and last > max_register:
                max_register = last
                highest_span = inst.span
    registers = max_register + 1 + RESERVED_REGISTERS if max_register >= 0 else RESERVED_REGISTERS
    most = target_named(arch).limits.registers_per_thread
    if registers > most:
        # REGCOUNT is 8 bits in the cubin and a thread has at most `most` registers: code that needs
        # more cannot be launched (probe s33 asmfuzz finding 4: R253 made a 256-register cubin)
        raise BobcError(f"this code needs {registers} registers (highest R{max_register} + 1 + {RESERVED_REGISTERS} "
                        f"reserved), more than the {most} a thread may have on {arch}", highest_span,
                        hint=f"use registers up to R{most - 1 - RESERVED_REGISTERS} at most")
    result = Assembled(bytes(code), registers, out, labels=labels, arch=arch,
                       flow=[_step(inst, placed) for inst, placed in zip(resolved, placed_all)])
    result.highest_register_span = highest_span
    return result


def _problem_span(inst: Instruction, problem: EncodeProblem) -> Span | None:
    """Where to point for an encoding problem: one operand's (a value out of its field's range,
    a float where an integer goes, a register of the wrong bank) at the operand that holds it
    (its file:line:column), anything else at the instruction's line."""
    return _operand_span(inst, problem.operand)


def _operand_span(inst: Instruction, operand: int | None) -> Span | None:
    """Where operand number `operand` of `inst` is written, else (not known) the instruction's line."""
    if operand is not None and 0 <= operand < len(inst.operand_spans):
        return inst.operand_spans[operand]
    return inst.span


def _edit_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance: insertions, deletions, substitutions, adjacent swaps."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


# NVIDIA opcodes of sm_86/sm_90 that ptxas emits and this assembler does not encode (ptxas made none
# of them for tools/ptx_corpus; probe s28 asm saw most in its listings): refused as such, with no
# did-you-mean (IMMA is not a misspelt HMMA)
NVIDIA_OPCODES_NOT_ENCODED = {
    "ATOM", "ST", "I2IP", "HSET2", "IMMA",
    "BMMA", "DMMA", "QSPC", "ARRIVES", "PMTRIG",
    "BMOV", "UPOPC", "STSM", "STAS", "REDAS", "UP2UR", "UR2UP", "UBLKCP",
    "UBLKPF", "UBLKRED", "UTMAPF", "UTMAREDG", "QGMMA", "IGMMA", "TEX", "TLD", "TLD4", "TXQ", "SULD",
    "SUST", "SUATOM", "SURED", "BRX", "JMX", "JMP", "KILL", "LEPC", "UBREV", "UPRMT", "USGXT", "UBMSK",
}


def close_opcodes(opcode: str) -> list[str]:
    """Known opcodes a misspelling of `opcode` may mean: one edit away (two for 6 letters or more),
    those sharing its first two letters first, so an NVIDIA opcode this assembler lacks gets no
    far-fetched suggestion (MATCH once got "did you mean UTMASTG?")."""
    allowed = 2 if len(opcode) >= 6 else 1
    near = sorted((_edit_distance(opcode, known), known[:2] != opcode[:2], known) for known in LAYOUTS)
    return [known for distance, _, known in near if distance <= allowed][:3]


def _check_opcode(inst: Instruction) -> None:
    if inst.opcode not in LAYOUTS:
        near = [] if inst.opcode in NVIDIA_OPCODES_NOT_ENCODED else close_opcodes(inst.opcode)
        nvidia = (f"{inst.opcode} is an NVIDIA opcode this assembler does not encode; "
                  if inst.opcode in NVIDIA_OPCODES_NOT_ENCODED else "")
        raise BobcError(f"unknown or unsupported opcode {inst.opcode}", inst.mnemonic_span or inst.span,
                        hint=(f"did you mean {' or '.join(near)}?" if near else
                              f"{nvidia}the opcodes it encodes are those of LAYOUTS in bobc/sass/tables/layouts.py "
                              "(the module bobc.sass.tables.layouts)"))


def _bit_list(bits: int) -> str:
    return ", ".join(str(i) for i in range(128) if bits >> i & 1)


_NAN_WORDS = {"QNAN", "SNAN", "NAN"}


def _listed_nan_payloads(inst: Instruction) -> Instruction:
    """nvdisasm prints every binary32 NaN immediate as +QNAN / +SNAN (CUDA's 0f7FFFFFFF, ptxas's
    0x7fc00001 alike): where the listing prints the words, the payload is the listed immediate's
    (bits 32..63; a binary64 immediate's high word) when those bits are a NaN of the printed sign."""
    if inst.listed is None:
        return inst
    operands = []
    for op in inst.operands:
        if isinstance(op, Imm) and op.pair is None and op.text.upper().lstrip("+-") in _NAN_WORDS:
            bits = inst.listed[0] >> 32 & 0xFFFFFFFF
            if inst.opcode in DOUBLE_IMMEDIATE:     # the high word of a binary64
                is_nan = bits >> 20 & 0x7FF == 0x7FF and bits & 0xFFFFF != 0
            else:
                is_nan = bits >> 23 & 0xFF == 0xFF and bits & 0x7FFFFF != 0
            if is_nan and (bits >> 31) == op.text.startswith("-"):
                op = Imm(bits, False, f"{bits:#x}")
        operands.append(op)
    return replace(inst, operands=operands)


def _step(inst: Instruction, placed) -> Step:
    """What bobc.sass.defined needs of an instruction: its registers and where control goes."""
    guard = inst.guard
    unguarded = guard is None or (guard.index == 7 and not guard.neg)
    target = next((op.address // 16 for op in inst.operands if isinstance(op, Label) and op.address is not None),
                  None) if inst.opcode in ("BRA", "CALL") else None
    reads = expand_registers(placed.reads) - expand_registers(placed.ignored)
    if _byte_insert(inst):
        reads = reads - {("R", inst.operands[0].index)}
    return Step(inst.opcode, tuple(inst.modifiers), None if unguarded else (guard.bank, guard.index, guard.neg),
                reads, expand_registers(placed.writes), target, placed.descriptor)


def _byte_insert(inst: Instruction) -> bool:
    """`PRMT Rd, Ra, SEL, Rd` whose selector takes each byte from Ra or leaves Rd's own byte in its
    place (0x7610: Ra's low half into Rd's): an insert into Rd, which passes Rd's other bytes on
    unread, as ptxas -O0 writes a 16-bit value into a register whose high half is never set
    (tests/sass/data corpus-sm_86.tsv forms.ptx:memory:-O0 `PRMT R7, R4, 0x7610, R7`)."""
    if inst.mnemonic != "PRMT" or len(inst.operands) != 4:
        return False
    rd, _, selector, rc = inst.operands
    if not (isinstance(rd, Reg) and isinstance(rc, Reg) and rd.bank == rc.bank == "R" and rd.index == rc.index
            and isinstance(selector, Imm) and not selector.is_float):
        return False
    nibbles = [selector.value >> 4 * k & 0xF for k in range(4)]
    return all(n < 4 or n == 4 + k for k, n in enumerate(nibbles))


def _branch_target(inst: Instruction) -> int | None:
    """The instruction index a BRA jumps to (its label's address / 16), else None."""
    if inst.opcode != "BRA":
        return None
    for op in inst.operands:
        if isinstance(op, Label) and op.address is not None:
            return op.address // 16
    return None


def _check_tuple_alignment(inst: Instruction, placed) -> None:
    """Refuse a register tuple the GPU cannot address, though the encoding takes any register.
    Vector registers: a pair (.64 accesses, binary64, IMAD.WIDE, ...) starts at an even register,
    a block of 4 or more (.128, HMMA fragments, LDSM.x4, HGMMA accumulators) at a multiple of 4 --
    every tuple in ptxas's corpus of both targets is so aligned (tests/sass/test_tuple_alignment.py),
    and a misaligned one is CUDA's misaligned-register fault.  Uniform registers: a block of
    tables.layouts.ALIGNED_UNIFORM_TUPLES starts at a multiple of its width rounded up to a power
    of two (the GPU raises an illegal instruction)."""
    for bank, first, count in placed.reads + placed.writes:
        if bank != "R" or count < 2 or first == 255:
            continue
        if first + count - 1 >= 255:
            # R255 is RZ: the block's last registers would read as zero and drop what is written
            raise BobcError(f"{inst.mnemonic}'s register block R{first}..R{first + count - 1} ({count} registers) "
                            f"runs into R255, which is RZ, the zero register", inst.span,
                            hint=f"start the block at R{255 - count - (255 - count) % min(1 << (count - 1).bit_length(), 4)} "
                                 f"or lower")
        align = min(1 << (count - 1).bit_length(), 4)
        if first % align:
            raise BobcError(f"{inst.mnemonic}'s register block R{first}..R{first + count - 1} ({count} registers) "
                            f"must start at a multiple of {align}", inst.span,
                            hint=f"use R{first - first % align} or R{first - first % align + align}")
    if inst.opcode not in ALIGNED_UNIFORM_TUPLES:
        return
    blocks = [(first, count) for bank, first, count in placed.reads if bank == "UR"]
    index = ALIGNED_UNIFORM_TUPLES[inst.opcode]
    if index >= len(blocks):
        return
    first, count = blocks[index]
    align = 1 << (count - 1).bit_length()
    if first % align:
        raise BobcError(f"{inst.mnemonic}'s operand block UR{first}..UR{first + count - 1} ({count} registers) must "
                        f"start at a multiple of {align}", inst.span,
                        hint=f"use UR{first - first % align + align} (or another multiple of {align}) for the block")


def _timed_unscored(inst: Instruction) -> bool:
    """A variable-latency form whose result is timed, not scoreboarded, where its control code sets no write
    scoreboard (schedule UNSCORED), as bobc.sim's checker times it (latencies.writer_class): the binary16
    rounding FRND.F16, which ptxas sets no scoreboard on.  The conversions the FP64 unit runs (to or from .F64, to or
    from a 64-bit integer) were timed here too before session 47 (at DEFAULT_LATENCY, where the checker wanted 10):
    they are variable latency, as ptxas treats them -- every one its -O3 code reads it scoreboards, or completes
    through a later conversion's scoreboard (latencies.fp64_conversion; probe s47 simgaps2)."""
    return inst.opcode == "FRND" and "F16" in inst.modifiers


def _unscored_refusal(resolved: list[Instruction], unscored: UnscoredResult) -> BobcError:
    """schedule UNSCORED's refusal: at the producer, whose control code is to change; naming the reader."""
    producer, consumer = resolved[unscored.producer], resolved[unscored.consumer]
    bank, number = unscored.register
    name = f"{bank}{number}"
    control = producer.control or Control()
    fixed = replace(control, write_barrier=unscored.suggest)
    does = "reads" if unscored.read else "overwrites"
    return BobcError(
        f"{_display(producer)} at 0x{16 * unscored.producer:x} is variable latency, and its control code "
        f"{control.text()} sets no write scoreboard: {_display(consumer)} at 0x{16 * unscored.consumer:x} "
        f"({consumer.span}) {does} its {name}, and no stall covers a result that lands when its unit returns it",
        producer.span,
        hint=f"set a write scoreboard on it, {fixed.text()} {_display(producer)}: the automatic control code of "
             f"{consumer.opcode} then waits on scoreboard {unscored.suggest}; or write {consumer.opcode}'s control "
             f"code yourself, waiting on that scoreboard")


def _unwaited_refusal(resolved: list[Instruction], unwaited: UnwaitedScoreboard) -> BobcError:
    """schedule UNWAITED's refusal: at the instruction whose written control code is to wait, naming the
    automatically scheduled producer, the scoreboard the scheduler gave it and the control code to write."""
    producer, consumer = resolved[unwaited.producer], resolved[unwaited.consumer]
    bank, number = unwaited.register
    name = f"{bank}{number}"
    control = consumer.control
    fixed = replace(control, wait_mask=control.wait_mask | 1 << unwaited.barrier)
    kind = "read scoreboard" if unwaited.read_barrier else "scoreboard"
    what = ("reads it on" if unwaited.read_barrier else "writes it on")
    return BobcError(
        f"{_display(consumer)} at 0x{16 * unwaited.consumer:x} {unwaited.access} {name}, which "
        f"{_display(producer)} at 0x{16 * unwaited.producer:x} ({producer.span}) {what} {kind} {unwaited.barrier} "
        f"-- the scheduler's choice, its control code being automatic -- and this control code {control.text()} "
        f"does not wait on it: the variable-latency access may not have completed",
        consumer.span,
        hint=f"wait on {kind} {unwaited.barrier}: {fixed.text()} {_display(consumer)}; or write "
             f"{producer.opcode}'s control code yourself, setting a scoreboard this one waits on")


def _short_stall_refusal(resolved: list[Instruction], short: ShortWrittenStall) -> BobcError:
    """schedule HANDSTALL's refusal: at the written instruction whose stall is to grow (the producer, mostly),
    naming the automatically scheduled reader, the cycles its fixed-latency result needs and the stall to write."""
    producer, consumer, written = resolved[short.producer], resolved[short.consumer], resolved[short.written]
    bank, number = short.register
    name = f"{bank}{number}"
    control = written.control
    does = "reads" if short.read else "overwrites"
    cycles = "cycle" if short.issued == 1 else "cycles"
    where = (f"{_display(consumer)} at 0x{16 * short.consumer:x} ({consumer.span}) {does} its {name} "
             f"{short.issued} {cycles} after {producer.opcode} issued")
    if short.written == short.producer:
        said = f"{_display(producer)} at 0x{16 * short.producer:x} is fixed latency, and its written control code {control.text()} issues"
    else:
        said = (f"{_display(written)} at 0x{16 * short.written:x}, after {_display(producer)} at "
                f"0x{16 * short.producer:x} ({producer.span}), fixed latency, has a written control code {control.text()} that issues")
    message = (f"{said} the next instruction too soon: {where}, where the result needs "
               f"{short.needed}; the reader's control code is automatic, and no control code delays its own "
               f"instruction -- only the stall before it does")
    stall = control.stall + short.deficit
    if stall <= 15:
        fixed = replace(control, stall=stall, yield_bit=0 if stall >= 12 else control.yield_bit)
        hint = (f"stall {stall}: {fixed.text()} {_display(written)}; or put an independent instruction between, "
                f"whose automatic control code the scheduler stalls")
    elif short.deficit <= short.room:
        hint = (f"{short.deficit} more cycles of stall among the written control codes from 0x{16 * short.producer:x} "
                f"to 0x{16 * short.written:x} (15 at most each); or put independent instructions between")
    else:
        hint = "put independent instructions (or NOPs) between the two"
    return BobcError(message, written.span, hint=hint)


def latency_key(inst: Instruction) -> str:
    """The scheduler's FIXED_LATENCIES key of `inst`: its opcode, HFMA2.MMA kept apart from HFMA2
    (the tensor pipe's binary16 FMA, a slower result)."""
    return f"{inst.opcode}.MMA" if inst.opcode == "HFMA2" and "MMA" in inst.modifiers else inst.opcode


def _guard(inst: Instruction) -> tuple[str, int] | None:
    """The guard predicate as the scheduler names registers (None: unguarded or PT)."""
    if inst.guard is None or inst.guard.index == 7:
        return None
    return (inst.guard.bank, inst.guard.index)


def _display(inst: Instruction) -> str:
    text = inst.source.strip()
    if text.startswith("["):
        text = text[text.index("]") + 1:].strip()
    return text.rstrip(";").strip()
