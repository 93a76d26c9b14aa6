"""`bobc run`: the plan's invocation on the NumPy reference host (no GPU).

Carries out the plan's own step list (bobc.reference.host) with the model's
registered NumPy kernels, and writes the same three files as the native host,
with the same refusals and exit codes, so the two can be compared file for
file.  The kernels come from `--kernels FILE`, else from the file named
REFERENCE_KERNELS_FILE in the plan's root folder (the folder its module path
is relative to: for a module Model.Build.NativeHost, the folder holding
Model/); this command knows no model.
"""
import contextlib
import os
from pathlib import Path

from ..targets import target_named
from ..resources import doc
from ._common import DEFAULT_TARGET, add_target, existing_file, existing_plan, read_files

# the convention `bobc run --reference` follows when --kernels is not given (docs/host-steps.md)
REFERENCE_KERNELS_FILE = "reference_kernels.py"


def add_arguments(p):
    p.add_argument("plan", help="the plan module (.bob)")
    p.add_argument("operation", nargs="?", metavar="{train,predict,native}",
                   help="train or predict (a host plan), or native: run the native physical program "
                        f"--entry names, with ARGUMENTS as its file arguments ({doc('native-host.md', in_help=True)})")
    p.add_argument("--reference", action="store_true", required=True,
                   help="use the NumPy reference runner (the only runner `bobc run` has)")
    for option, text in HOST_OPTIONS:
        p.add_argument(option, metavar=option.lstrip("-").replace("-", "_").upper(), help=text)
    p.add_argument("-I", "--include", action="append", default=[], metavar="DIR",
                   help="extra module search folder (after the plan's own, before specs/)")
    p.add_argument("--entry", default=None,
                   help="the definition describing the native host (default: the plan module's one "
                        "definition of type (family NvidiaPlanHost))")
    p.add_argument("--kernels", metavar="FILE",
                   help="a Python file whose KERNELS maps each kernel (region identity) to its NumPy "
                        "implementation, with which the plan's own schedule is carried out step by "
                        f"step (default: {REFERENCE_KERNELS_FILE} in the plan's root folder); for native, "
                        "a file defining SUBMIT(machine, entry), which carries out each submission (no "
                        f"default: without it a submission is refused; {doc('native-host.md', in_help=True)})")
    p.add_argument("arguments", nargs="*", metavar="ARGUMENT",
                   help="native: the program's arguments (argument 0 first), as the host takes them; "
                        "train, predict: the host's options.  " + HOST_PART_RULE + " (`bobc run PLAN native "
                        "--help --reference --entry DEF`: the host's --help); --version alone: the host's version text, "
                        "as the host bobc build PLAN builds prints it")
    add_target(p)
    take_host_words(p, OPERATIONS, host_help=True)


def take_host_words(p, operations, host_help: bool = False) -> None:
    """The words of sub-parser `p` that stand for the host's command line are the host's parser's
    to judge, as given (probe s31 hostexe findings 1, 2, 5): argparse neither expands a shortened
    option (`--inp`, which the host refuses) nor splits `--input=-x` into two words nor words a
    refusal its own way.  `operations`: the words `p` takes as its operation (split_host_words);
    the host options must be `p`'s options too (HOST_OPTIONS: for --help), with no default and not
    required.  `bobc run` and `bobc sim` (probe s31 today finding 10); judge_host_words reads them.
    `host_help`: -h and --help after the operation, and every word after `--`, are the host's
    (`bobc run`: HOST_PART_RULE)."""
    p.allow_abbrev = False
    p.__class__ = _host_words_parser(type(p))
    p.host_operations = tuple(operations)
    p.host_help = host_help


# where the host's part of `bobc run`'s command line begins (docs/native-host.md, "The reference
# interpreter"; probe s32 leftovers finding 2)
HOST_PART_RULE = ("bobc's own options may stand anywhere; from the operation (train, predict or native) on, "
                  "every other word is the host's, -h and --help included, and after `--` every word is")


# the host's own options (runtime_c/host_runtime.c rt_parse_args), parsed by its rules
HOST_OPTIONS = (("--input", "input record"),
                ("--checkpoint", "checkpoint to resume from (fresh run when absent)"),
                ("--checkpoint-out", "checkpoint to publish"),
                ("--predictions", "predictions file to write"),
                ("--result", "result record to write"))
OPERATIONS = ("train", "predict", "native")
_HOST_PARSERS: dict = {}


def _host_words_parser(kind):
    """`kind` (the run sub-parser's class) with a parse_known_args that hands argparse only
    bobc's own words (the plan, the operation, --reference, --kernels, --entry, -I, --target,
    --help ...) and keeps every other word, in its order, as `host_words`: the command line the
    host would be given, which its own parser (reference/native_request.parse_args, or the
    native program's) judges."""
    if kind not in _HOST_PARSERS:
        def parse_known_args(self, args=None, namespace=None):
            own, host = split_host_words(self, list(args or []))
            namespace, extra = kind.parse_known_args(self, own, namespace)
            namespace.host_words = host + list(extra)
            return namespace, []
        _HOST_PARSERS[kind] = type(f"HostWords{kind.__name__}", (kind,), {"parse_known_args": parse_known_args})
    return _HOST_PARSERS[kind]


def split_host_words(parser, words: list[str]) -> tuple[list[str], list[str]]:
    """(bobc's words, the host's words) of `bobc run`'s words after `run`.  bobc's: the plan (the
    first word that is no option nor an option's value) and the operation (the second), then its own
    options (exactly as spelt, or `--option=VALUE`) with their values, wherever they were given: the
    positionals first, so that argparse, which takes every positional of one run of words at once,
    reads the plan and the operation as such whatever options stood between them (probe s31 today
    finding 1).  For train and predict the operation is the host's first word too.  Every other word
    is the host's, in order: a host option's value is the word after it unless that starts with '-'
    (the host's rule), so a value never passes for one of bobc's words."""
    host_options = {option for option, _ in HOST_OPTIONS}
    operations = getattr(parser, "host_operations", OPERATIONS)
    host_help = getattr(parser, "host_help", False)
    own_options = {name: action for name, action in parser._option_string_actions.items()
                   if name not in host_options}
    own: list[str] = []
    named: list[str] = []       # the plan and the operation
    host: list[str] = []
    positionals = 0
    ended = False               # past `--`: no word is one of bobc's options
    i = 0
    while i < len(words):
        word = words[i]
        name = word.partition("=")[0] if word.startswith("--") else word
        if host_help and word == "--" and not ended:
            ended = True        # HOST_PART_RULE: the words after it are the plan, the operation, the host's
        elif ended and positionals == 0:
            positionals += 1
            named.append(word)
        elif ended and positionals == 1 and word in operations:
            positionals += 1
            named.append(word)
            if word != "native":
                host.append(word)
        elif ended:
            positionals = max(positionals, 2)
            host.append(word)
        elif host_help and positionals >= 2 and word in ("-h", "--help"):
            host.append(word)   # HOST_PART_RULE: after the operation, the host's help, not bobc's
        elif not word.startswith("--") and word[:2] in own_options and own_options[word[:2]].nargs != 0:
            own.append(word)        # -IDIR
            if len(word) == 2 and i + 1 < len(words):
                i += 1
                own.append(words[i])
        elif name in own_options:
            own.append(word)
            if own_options[name].nargs != 0 and "=" not in word and i + 1 < len(words):
                i += 1
                own.append(words[i])
        elif word.startswith("-") and word != "-":
            host.append(word)
            following = words[i + 1] if i + 1 < len(words) else None
            if word in host_options and following is not None and (not following.startswith("-") or following == "-"):
                i += 1
                host.append(following)
        elif positionals == 0:
            positionals += 1
            named.append(word)
        elif positionals == 1 and word in operations:
            positionals += 1
            named.append(word)
            if word != "native":
                host.append(word)
        else:
            positionals = max(positionals, 2)
            host.append(word)       # a plan host's parser names a wrong operation; a native program's argument
        i += 1
    if any(word.startswith("-") and word != "-" for word in named):
        # a plan given after `--` may begin with '-' (`-lead/P.bob`): argparse takes it for the plan
        # only after a `--` of its own, or it would read it as an option and the operation as the
        # plan (probe s34 paths finding 4)
        return own + ["--"] + named, host
    return named + own, host


def host_arguments(args) -> list[str]:
    """The host's words of the command line, as given (split_host_words)."""
    return list(getattr(args, "host_words", None) or [])


def judge_host_words(args, help_ok: bool = False) -> bool:
    """The host's words (host_arguments) judged by the host's own parser (reference/native_request
    .parse_args: the same refusals, word for word, exit 2 -- missing, empty, repeated, shortened, the
    same output twice); what it found is set on `args`: the operation and each host option
    (`args.checkpoint_out` ...; None when not given).  True when the words ask for the host's
    --help (`help_ok`: the caller prints it; else refused: -h and --help are bobc's own there)."""
    from ..errors import UsageError
    from ..reference.native_request import Help, Refused, parse_args
    try:
        found = parse_args(host_arguments(args))
    except Refused as refused:
        raise UsageError(refused.message) from None
    except Help:
        if help_ok:
            return True
        raise UsageError("--help is bobc's own option here") from None
    args.operation = found["op"]
    for option, _ in HOST_OPTIONS:
        setattr(args, option[2:].replace("-", "_"), found.get(option))
    return False


def judge_plan_host_words(args, plan_path, target_of, command: str) -> bool:
    """judge_host_words (help_ok) for `bobc run PLAN train|predict` and `bobc sim`: when the words
    are refused and --entry names a native host's Bytes, that is said instead -- no words make a
    native host a plan host, so asking for them one by one first sends the user the wrong way (probe
    s41 peerfaults finding 3: four missing options before "a native host").  Words that pass, and
    an entry that is no native host (or a plan or --target that does not load: the words' refusal
    stands), keep the order of the checks as it was (`target_of`: the target, read only here)."""
    from ..errors import BobcError, UsageError
    try:
        return judge_host_words(args, help_ok=True)
    except UsageError:
        if args.entry:
            from .. import pipeline
            try:
                program = pipeline.load(plan_path, target_of(), args.include)
                pipeline.require_entry(program, args.entry, command)
                pipeline.refuse_not_plan_host(program, args.entry, command)
                refusal = None
            except BobcError as error:
                # an entry of another type than a plan host's (a native host's Bytes or program, a
                # Nat): said by its declared type (probe s42 cli3 finding 1); any other refusal of
                # the plan here (a missing entry, a plan that does not load) leaves the words' own
                refusal = error if "native_entry" in vars(error) else None
            if refusal is not None:
                raise refusal from None     # native_entry_hinted adds the hint
        raise


def host_version_asked(args) -> bool:
    """The host's words are `--version` alone: the host prints its .bobc.version section, exit 0
    (runtime_c/host_version.c rt_host_version_asked, before its parser sees the line)."""
    return host_arguments(args) == ["--version"]


def print_host_version(plan_path, target, args, command: str) -> int:
    """`HOST --version` of the host `bobc build PLAN --target TARGET` builds: its .bobc.version
    section (host/version.py text, as host/generate.py writes it), on stdout, exit 0; a stdout that
    cannot take it: one line, exit 8, as the host says it (probe s40 tripleexec: `bobc run PLAN
    --version --reference` and `bobc sim PLAN --version` said "--version is given alone" and exit 2)."""
    from .. import pipeline
    from ..host import version

    built = pipeline.compile_plan(plan_path, target, args.include, args.entry, command=command)
    return print_host_help(version.text(built, target, built.program.plan_name).decode())


def plan_host_usage(program: str, identity: str, record_bytes: int, checkpoint: int = 0) -> str:
    """`HOST --help` of a plan host (runtime_c/host_runtime.c rt_print_usage), `program` in place
    of the host's name; `checkpoint`: how the plan takes --checkpoint (bobc.plan.schedule
    checkpoint_needed)."""
    from ..errors import printable
    from ..plan.schedule import CHECKPOINT_NEEDED, CHECKPOINT_TRAIN_NEEDS

    option = "--checkpoint IN" if checkpoint == CHECKPOINT_NEEDED else "[--checkpoint IN]"
    given = ("required: this plan starts no request from its fresh state" if checkpoint == CHECKPOINT_NEEDED
             else "required by train; a predict without one: fresh initialization"
             if checkpoint == CHECKPOINT_TRAIN_NEEDS else "default: fresh initialization")
    return (f"usage: {program} train|predict --input RECORD {option} --checkpoint-out OUT\n"
            f"       {'':{len(program)}} --predictions FILE --result FILE\n"
            "\n"
            f"The native host of {printable(identity)}.\n"   # one line, as rt_print_usage shows it
            "  train     the plan's whole schedule\n"
            "  predict   the schedule up to its operation step (no training, the checkpoint handed on)\n"
            f"  --input RECORD        the {record_bytes}-byte input record\n"
            f"  --checkpoint IN       resume from this checkpoint ({given})\n"
            "  --checkpoint-out OUT  where the new checkpoint is published (atomically)\n"
            "  --predictions FILE    the predictions (published atomically)\n"
            "  --result FILE         the result record (published atomically)\n"
            "  --version             (alone) the target, driver branch, bobc and plan identity this host was built "
            "for\n"
            "\n"
            "exit codes: 0 ok, 1 internal error (out of memory, a bug), 2 usage, 3 bad input record,\n"
            "            4 bad checkpoint, 5 foreign checkpoint, 6 no GPU / driver refused,\n"
            "            7 GPU fault or timeout, 8 output write failed,\n"
            "            9 host file damaged (copy it again or rebuild it)\n")


def print_host_help(text: str) -> int:
    """The host's --help on stdout, exit 0; a stdout that cannot take it: one line, exit 8, as the
    host says it (runtime_c/plan_host.c)."""
    import sys

    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as failure:
        raise HostRefusal(f"cannot write to stdout: {failure.strerror or failure}", 8) from None
    return 0


def load_module(path, name: str, what: str, after: str = ""):
    """A Python file loaded as module `name`, registered in sys.modules (what dataclasses and
    pickling look for, while it loads and while its kernels run): in place of the module an
    earlier command of a process that lives on loaded under that name, as a fresh process has it
    (that one was put back: a second project's kernels pickling their own class failed, probe
    s36 inprocess2 finding 6); any failure is one line naming the file (`what`, its path, then
    `after`), and leaves the earlier module registered."""
    import importlib.util
    import sys
    import traceback

    from ..errors import UsageError
    from importlib.machinery import SourceFileLoader

    # read as Python source whatever its name ends with, as `python FILE` reads it: the name alone
    # (`kernels.txt`, `SUBMIT`) was refused as "not a Python file" (probe s38 coverage finding 2)
    spec = importlib.util.spec_from_file_location(name, path, loader=SourceFileLoader(name, str(path)))
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(name)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        sys.modules.pop(name, None)
        # the line CPython names, of the file it names: a module the file imports may be the one
        # that does not parse; a NUL byte in the source has no line in CPython 3.11 (not "line None")
        from ..errors import shown_path

        other = error.filename if error.filename and error.filename != str(path) and \
            Path(error.filename).resolve() != Path(path).resolve() else None
        place = (f" at line {error.lineno}" if error.lineno is not None else "") + \
            (f" of {shown_path(error.filename)}" if other else "")
        raise UsageError(f"cannot load {what} {path}{after}: SyntaxError{place}: {error.msg}",
                         hint=f"fix {shown_path(other) if other else 'the file'} (python -m py_compile "
                              f"{shown_path(other) if other else 'FILE'} shows it)") from None
    except MemoryError:             # this process out of memory: said as that by cli, not the file's fault
        sys.modules.pop(name, None)
        raise
    except (Exception, SystemExit) as error:      # noqa: BLE001 -- the user's code: any failure is reported,
        sys.modules.pop(name, None)                  # not a traceback; a sys.exit() too, never bobc's exit
        from ..errors import descriptors_exhausted, raised_text

        if isinstance(error, OSError) and descriptors_exhausted(error) is not None:
            raise descriptors_exhausted(error, f"loading {what} {path}") from None
        here = Path(path).resolve()
        frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename).resolve() == here]
        where = f" at line {frames[-1].lineno}" if frames else ""
        kind, _, text = raised_text(error).partition(": ")
        raise UsageError(f"cannot load {what} {path}{after}: {kind}{where}" + (f": {text}" if text else ""),
                         hint="put what runs the file as a script under `if __name__ == \"__main__\":`"
                         if isinstance(error, SystemExit) else "run `python FILE` to see the whole traceback") from None
    finally:
        if previous is not None and name not in sys.modules:       # this one failed to load
            sys.modules[name] = previous
    return module


def load_kernels(path, plan=None, given: bool = True) -> dict:
    """KERNELS of a model's reference kernel file; given the `plan`, one that lacks a kernel the
    plan's launches run is refused as a file without KERNELS is (exit 2), naming the file and
    the kernel.  Not `given` (the file the plan's root folder holds, no --kernels given): a
    failure to load it names it so, not as --kernels (probe s30 cli finding 8)."""
    from ..errors import UsageError

    if given:
        module = load_module(path, "bobc_reference_kernels", "--kernels")
    else:
        module = load_module(path, "bobc_reference_kernels", "the plan's reference kernels file",
                             " (no --kernels given)")
    kernels = getattr(module, "KERNELS", None)
    if not isinstance(kernels, dict):
        raise UsageError(f"{path} defines no KERNELS dictionary (kernel identity -> function)")
    if plan is not None:
        from ..reference.host import missing_kernels

        missing = missing_kernels(plan, kernels)
        if missing:
            raise UsageError(f"{path}: KERNELS has no NumPy implementation of the plan's kernel"
                             f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                             hint="add each kernel the plan launches, by its region identity "
                                  f"({doc('host-steps.md')}, \"Reference kernels\")")
    return kernels


def read_plan_host_inputs(plan, input_path, checkpoint_path, operation):
    """(record, checkpoint or None, the checkpoint's (payload, step) or None): the record and the
    checkpoint as safe_io.InputFiles, read with the host's limits (runtime_c/host_runtime.c): the
    record's size and one byte more (a bigger file is refused unread), the checkpoint's envelope
    and 1 MiB (a bigger one whose header names another plan's identities is foreign, exit 5).
    Judged in the host's order (runtime_c/plan_host.c main), before any output is: the record
    read and checked (size, then the plan's record checks), then the checkpoint read, decoded
    and, for a train, its step's room (probe s36 simwords finding 3: a bad record beside a bad
    output path was exit 8, the host's 3).  `bobc run --reference` and `bobc sim` alike."""
    from ..reference import envelope, safe_io
    from ..reference.errors import BadCheckpoint, BadInputRecord
    from ..reference.host import check_record

    request = plan.host.request
    record_file = safe_io.read_input(input_path, BadInputRecord, request.input_record_bytes, exact=True)
    check_record(request.input_checks, request.input_record_bytes, record_file.data, input_path)
    checkpoint_file = state = None
    if checkpoint_path is not None:
        contract = plan.checkpoint
        limit = envelope.header_bytes(contract) + contract.payload_bytes + 12 + (1 << 20)
        try:
            checkpoint_file = safe_io.read_input(checkpoint_path, BadCheckpoint, limit)
        except BadCheckpoint:
            envelope.foreign_by_header(checkpoint_path, contract, limit)     # a larger plan's: exit 5
            raise
        state = envelope.decode(checkpoint_file.data, contract, checkpoint_path)
        if operation == "train":
            safe_io.check_step_room(state[1], contract.updates_per_invocation, checkpoint_path)
    return record_file, checkpoint_file, state


def refuse_fresh_request(plan, args) -> None:
    """A request without --checkpoint of a plan whose checkpoint Read says tolerateEmpty 0: refused
    as the C host refuses it, once the words and the settings passed and before anything is read or
    written (bobc.plan.schedule.checkpoint_refusal, runtime_c/plan_host.c checkpoint_required): exit
    2, one line.  `bobc run --reference` and `bobc sim` alike."""
    from ..errors import UsageError
    from ..plan.schedule import checkpoint_refusal, lower

    refused = None if args.checkpoint else checkpoint_refusal(lower(plan), args.operation)
    if refused:
        raise UsageError(refused)


def claim_host_outputs(files, outputs, checkpoint_file, args, plan):
    """Judge a plan host's outputs as the host does, once its inputs are read (`files.inputs`): each
    output path in the host's words and order, the checkpoint output allowed to replace the
    checkpoint read, and a BOBC_HOST_TIMING file that names an input refused (exit 8;
    runtime_c/plan_host.c, diag_file.h -- the reference and the simulator write no timing, but
    refuse what the host refuses: probe s31 hostexe finding 6, s36 simwords finding 4).  Returns
    the interval checkpoints' publisher (IntervalPublisher, `plan`'s): each is published as its
    interval ends, in the C host's words (rt_checkpoint_write); the last waits for the other
    outputs.  `bobc run --reference` and `bobc sim` both."""
    from ..reference.native_program import diagnostic_refusal
    from ..reference.runner import OutputPaths

    with host_words():
        for option, name in OutputPaths.ORDER:
            files.add(getattr(outputs, name), option,
                      replaces=checkpoint_file if option == "--checkpoint-out" else None)
    timing = os.environ.get("BOBC_HOST_TIMING")
    refused = diagnostic_refusal("BOBC_HOST_TIMING", timing, [args.input, args.checkpoint]) if timing else None
    if refused:
        raise HostRefusal(refused, 8)

    return IntervalPublisher(outputs.checkpoint, plan, args.operation)


class IntervalPublisher:
    """Publishes a plan host's interval checkpoints at `path` as each interval ends (called with
    the envelope), and remembers the last one: a failure after it says that checkpoint stays
    there (`said`), as the C host's line does (runtime_c/plan_host.c report)."""

    def __init__(self, path: str, plan, operation: str):
        self.path, self.plan, self.operation = path, plan, operation
        self.written = self.written_step = 0

    def __call__(self, data: bytes) -> None:
        from ..reference import envelope, safe_io

        with host_words():
            safe_io.publish_file(self.path, data, "--checkpoint-out")
        self.written, self.written_step = self.written + 1, envelope.step_of(data)

    def said(self, error) -> None:
        """`error` (a BobcError ending the run) with its message's end saying which interval
        checkpoint of this run stays at --checkpoint-out, once one does (safe_io.interval_note);
        changed in place, the caller raising it on."""
        from ..errors import BobcError
        from ..plan.schedule import lower, publication_count
        from ..reference import safe_io

        if self.written and isinstance(error, BobcError):
            total = publication_count(lower(self.plan), self.operation)
            error.message = safe_io.interval_note(error.message, self.written, total, self.written_step, self.path)
            error.args = (error.message,)


def run_plan_host(plan, kernels, args, read=()) -> int:
    """The plan's schedule on the reference host, files in and files out, with the
    native host's file rules (reference/safe_io.py): inputs read once and bounded,
    output paths checked before any work, the last outputs published together.  `read`:
    the other files the run read (_common.read_files: the plan's modules, the kernels
    file), which no output may be either."""
    from ..reference import safe_io
    from ..reference.host import ReferenceHost
    from ..reference.runner import OutputPaths

    outputs = OutputPaths(args.checkpoint_out, args.predictions, args.result)
    with host_words():
        safe_io.recover([outputs.predictions, outputs.result, outputs.checkpoint])
    files = safe_io.OutputSet()
    record_file, checkpoint_file, state = read_plan_host_inputs(plan, args.input, args.checkpoint, args.operation)
    files.inputs.append(record_file)
    if checkpoint_file is not None:
        files.inputs.append(checkpoint_file)
    # the plan's modules and kernel sources and the kernels file are inputs before any output is
    # judged: no output replaces one (tests/test_outputs_never_replace_the_plan.py)
    files.inputs.extend(read)
    publish_checkpoint = claim_host_outputs(files, outputs, checkpoint_file, args, plan)
    host = ReferenceHost(plan, kernels, publish_checkpoint=publish_checkpoint)
    try:
        result = host.run(args.operation, record_file.data, state, args.input)
        files.stage("--predictions", result.files["predictions"])
        files.stage("--result", result.files["result"])
        files.stage("--checkpoint-out", result.publications[-1][1])
        with host_words():
            files.publish()
    except Exception as error:      # an interval's checkpoint this run published stays: said
        publish_checkpoint.said(error)
        raise
    step = result.publications[-1][0]
    from ..cli import say

    # the outputs are published: a stdout that cannot take this line is said on stderr, exit 0 (cli.say)
    if args.operation == "train":
        done = f"{len(result.publications)} checkpoint publication(s)"
    else:
        # a predict hands its input checkpoint (or the fresh state) on unchanged: it was written to
        # --checkpoint-out, but it is no publication of the schedule's (as the C host and `bobc sim`
        # count them); "0 checkpoint publication(s)" read as if OUT was not written (probe s32
        # checkpoint finding 9)
        done = f"the {'fresh' if args.checkpoint is None else 'input'} checkpoint handed on unchanged"
    say(f"{args.operation}: {done}; {safe_io.shown(args.checkpoint_out)} holds step {step}", "run")
    return 0


def _host_refusal_class():
    from ..errors import BobcError

    class Refusal(BobcError):
        """A refusal worded as the C host words it: one line, its own exit code."""

        def __init__(self, message: str, exit_code: int):
            super().__init__(message)
            self.exit_code = exit_code
    return Refusal


HostRefusal = _host_refusal_class()


class host_words:
    """Within: an output's or a journal's refusal (safe_io's OutputWriteFailure) is raised as the
    plan host words it (OutputWriteFailure.host_form: one line, exit 8), not as bobc's `PATH: cannot
    write output (...)` and a hint (probe s31 hostexe finding 5)."""

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        from ..reference.errors import OutputWriteFailure

        if isinstance(error, OutputWriteFailure):
            raise HostRefusal(error.host_form(), error.exit_code) from None
        return False


def load_plan(path, include=(), entry=None, target=None, modules: list | None = None,
              kernels: list | None = None, command: str = "run"):
    """The extracted Plan of a plan module: the build's own load, check, extract and certify
    stages (a plan the build would refuse is not run either).  A list given as `modules`
    receives every module file the program is made of; one given as `kernels`, every kernel
    source (.sass) loading and certifying it read (_common.kernel_files)."""
    from .. import pipeline
    from ._common import kernel_files, module_files

    target = target or target_named(DEFAULT_TARGET)
    program = pipeline.load(path, target, include)
    if modules is not None:
        modules.extend(module_files(program))
    named = pipeline.require_entry(program, entry, command)
    if entry is not None:
        pipeline.refuse_not_plan_host(program, named, command)
    plan = pipeline.check_and_certify(program, target, named)
    if kernels is not None:
        kernels.extend(kernel_files(program, plan, target))
    return plan


def native_entry_hint(error, plan, entry) -> None:
    """A plan run (`bobc run PLAN OPERATION`, `bobc sim`) whose --entry is a native host's Bytes or
    its NativePhysicalProgram: `error` points to `bobc run PLAN native` instead of building it
    (probe s30 cli finding 8), `plan` as the user wrote it.  `error` is pipeline.refuse_not_plan_host's
    (its `native_entry` says which: probe s42 cli3 finding 1), or the extraction's, whose words
    (plan.extract.NATIVE_HOST_SAID) give the build's advice, not run's or sim's."""
    from ..plan.extract import NATIVE_HOST_SAID

    said = vars(error).pop("native_entry", None)
    if not entry or (said is None and NATIVE_HOST_SAID not in error.message):
        return
    error.message = error.message.replace(NATIVE_HOST_SAID, " (a native host, not a plan host)")
    run = (f"run it with `bobc run {plan} native ARGUMENTS... --reference --entry {entry}` "
           f"({doc('native-host.md')}, \"The reference interpreter\")")
    if said == "program":
        # a build takes the Bytes of its host, which nativePhysicalNativeELF gives (docs/native-host.md)
        hint = (f"{run}, or build its host: define `def {entry}Host : Bytes = (nativePhysicalNativeELF {entry})` "
                f"and `bobc build {plan} --entry {entry}Host -o HOST`")
    else:
        hint = f"{run}, or build it with `bobc build {plan} --entry {entry} -o HOST`"
    error.hint = f"{error.hint}; {hint}" if error.hint else hint


def kernels_file(plan_path, given) -> Path:
    """--kernels, else REFERENCE_KERNELS_FILE in the plan's root folder; a clear refusal
    when neither is there (the reference host has no kernels of its own)."""
    from ..errors import UsageError
    from ..language.modules import parse_cached, plan_root

    if given:
        return existing_file(given, "--kernels ")
    root = plan_root(parse_cached(plan_path))
    found = root / REFERENCE_KERNELS_FILE
    if found.is_file():
        return found
    raise UsageError(f"{plan_path}: no reference kernels: give --kernels FILE, or add {found} "
                     "defining KERNELS, a dictionary from each kernel's name (its region identity) "
                     f"to its NumPy implementation ({doc('host-steps.md')}, \"Reference kernels\")")


def run(args):
    from .. import pipeline

    # before the plan is read, as check and build do
    pipeline.refuse_blank_entry(args.entry, "run", hint=NATIVE_NEEDS if args.operation == "native" else None)
    plan_path = existing_plan(args.plan, "run", ("train", "predict", "native"))
    if args.operation == "native":
        return run_native(plan_path, args)
    with native_entry_hinted(args):
        return _run_plan_host(plan_path, args)


@contextlib.contextmanager
def native_entry_hinted(args):
    """`bobc run PLAN train|predict` and `bobc sim` whose --entry turns out a native host's Bytes or
    program, wherever that is found (the words' refusal, --help, --version, the run itself): the
    refusal points to `bobc run PLAN native` (native_entry_hint)."""
    from ..errors import BobcError

    try:
        yield
    except BobcError as error:
        native_entry_hint(error, args.plan, args.entry)
        raise


def _run_plan_host(plan_path, args):
    from ..errors import UsageError
    from ..reference import settings
    from ..plan.schedule import checkpoint_needed, lower
    if host_version_asked(args):
        return print_host_version(plan_path, target_named(args.target), args, "run")
    # the host's parser: the same refusals (missing, empty, repeated, same output twice); its --help
    # (after the operation: HOST_PART_RULE) is the host's usage, the plan's identity and record size in it
    if judge_plan_host_words(args, plan_path, lambda: target_named(args.target), "run"):
        plan = load_plan(plan_path, args.include, args.entry, target_named(args.target))
        return print_host_help(plan_host_usage(f"bobc run {args.plan} --reference", plan.host.identity,
                                               plan.host.request.input_record_bytes, checkpoint_needed(lower(plan))))
    # then the environment's settings, as the C host judges them (host_settings.h)
    refused = settings.refusal(os.environ, settings.PLAN_HOST)
    if refused:
        raise UsageError(refused)
    modules: list = []
    sources: list = []
    # the plan first: a module with no native host is told so, not asked for reference kernels
    plan = load_plan(plan_path, args.include, args.entry, target_named(args.target), modules=modules,
                     kernels=sources)
    refuse_fresh_request(plan, args)
    kernels = kernels_file(plan_path, args.kernels)
    # the plan's modules and kernel sources, and the kernels it imports, are this run's inputs
    # too: no output replaces one
    read = [*read_files(modules, "a module of the plan"),
            *read_files(sources, "a kernel source of the plan"),
            *read_files([kernels], "the reference kernels this run imports")]
    return run_plan_host(plan, load_kernels(kernels, plan, given=bool(args.kernels)), args, read=read)


# what `bobc run PLAN native` needs --entry for (it has no default)
NATIVE_NEEDS = "native needs --entry DEF: the native physical program (or its host) to run"


def _refuse_program_as_built(program, entry: str, code: bytes) -> None:
    """A NativePhysicalProgram DEF whose program the hosts refuse: there is no host file to call
    damaged or to rebuild (a build refuses the program), so it is refused as `bobc build` refuses
    it -- where the plan wrote the command, what to change -- with the host's status, 9."""
    from ..errors import BobcError
    from ..language.intrinsics import IntrinsicContext
    from ..native import program as decoding
    from ..native.writer import commands_written, refuse_unmapped_ranges

    where = commands_written(IntrinsicContext(None, program), program.definition(entry).thunk)
    try:
        decoded = decoding.decode(code)
    except decoding.ProgramError as error:
        refused = BobcError(f"the native physical program {entry} is refused: {error}",
                            where(error.command, error.field),
                            hint=f"a host would refuse it too, exit 9, and `bobc build` does "
                                 f"({doc('native-host.md')}, \"Checks before the first command\"); change the value "
                                 "the plan gives it")
        refused.exit_code = 9
        raise refused from None
    refuse_unmapped_ranges(decoded, where, prefix=f"the native physical program {entry} is refused: ", exit_code=9)


def run_native(plan_path, args) -> int:
    """`bobc run PLAN native --reference --entry DEF ARGUMENTS...`: DEF's native physical
    program (a NativePhysicalProgram, or the host artifact Bytes a build would write) on the
    reference interpreter (bobc/reference/native_program.py): same files, statuses and
    messages as the host run with NATIVE_DEVICE=memory.  --kernels FILE may define
    SUBMIT(machine, entry), which carries out each submission."""
    import sys

    from .. import pipeline
    from ..errors import UsageError
    from ..language.values import VBytes, VBytesType, VFamily
    from ..native import artifact
    from ..reference.native_program import run_program

    if not args.entry:
        raise UsageError(NATIVE_NEEDS)
    components = None
    build = None            # the host's .bobc.version section: what its --version says first
    program = pipeline.load(plan_path, target_named(args.target), args.include)
    pipeline.require_entry(program, args.entry, "run")
    declared = program.type_of(args.entry)
    pipeline.check(program)
    if isinstance(declared, VFamily) and declared.family == "NativePhysicalProgram":
        from ..native.writer import BYTES_DEFINITION, refuse_request_schedule, refuse_wide_naturals

        # a plan host's request lowered to this program: its schedule held as `bobc build` holds it
        # (no images are embedded, so not its staged restore: docs/host-steps.md)
        refuse_request_schedule(program, program.definition(args.entry).thunk)
        refuse_wide_naturals(program.force, program.definition(args.entry).thunk,
                             prefix=f"the native physical program {args.entry} is refused: ", exit_code=9)
        encoded = program.apply(program.definition(BYTES_DEFINITION).thunk, program.definition(args.entry).thunk)
        code = bytes(encoded.value)
        _refuse_program_as_built(program, args.entry, code)
        from ..host.version import native_text

        build = native_text(target_named(args.target))      # what a build for this target writes
    elif isinstance(declared, VBytesType):
        value = program.value(args.entry)
        data = bytes(value.value) if isinstance(value, VBytes) else b""
        from ..native.build import refuse_empty_host, refuse_non_executable, refuse_staged_request

        refuse_empty_host(args.entry, data)     # the plan refused the request: not a damaged host
        refuse_non_executable(args.entry, data)     # no host at all: as build refuses it (exit 1)
        refuse_staged_request(program, args.entry, data)    # as `bobc build` refuses it
        try:
            host = artifact.split(data, args.entry)
            code = host.program
            components = {kind: data for kind, _, data in host.components}
            build = _version_section(data, args.entry)
        except artifact.DamagedHost as error:
            sys.stderr.write(f"native: {error}\n")
            return artifact.DAMAGED_EXIT
    else:
        from ..errors import BobcError
        from ..language.check import show_value_type

        # a definition of the plan of the wrong type: the plan refused (exit 1), as build and check say it
        raise BobcError(f"{args.entry} is of type {show_value_type(declared)}, neither a NativePhysicalProgram "
                        "nor a native host's Bytes",
                        hint="`bobc run PLAN native --entry DEF` runs a definition of type NativePhysicalProgram "
                             "or the Bytes of its host")
    # the plan's modules, the kernel sources evaluating it assembled and the --kernels file are this
    # run's inputs: no argument the program writes replaces one (README, "Outputs are all or nothing";
    # probe s42 cli3 finding 4: `bobc run PLAN native a0 a1 PLAN o3 ...` wrote argument 2 over PLAN, exit 0)
    from ._common import kernel_files, module_files
    read = [*read_files(module_files(program), "a module of the plan"),
            *read_files(kernel_files(None, None, target_named(args.target)), "a kernel source of the plan")]
    gpu = None
    if args.kernels:
        read += read_files([existing_file(args.kernels, "--kernels ")], "the kernels file this run imports")
        module = load_module(existing_file(args.kernels, "--kernels "), "bobc_native_gpu", "--kernels")
        gpu = getattr(module, "SUBMIT", None)
        if gpu is None:
            raise UsageError(f"{args.kernels} defines no SUBMIT(machine, entry): a native run's --kernels carries its "
                             "submissions out (a plan run's KERNELS dictionary is not read here)",
                             hint=f"{doc('native-host.md')}, \"The reference interpreter\", names the bundled "
                                  "examples' SUBMIT files")
    # a request program's own options (docs/native-host.md, "Requests"), after its operation
    arguments = host_arguments(args)       # as given, in order: the program judges them
    sys.stdout.flush()
    return run_program(code, arguments, name=args.entry, gpu=gpu, components=components, say_kernels=True,
                       version=build, inputs=read)


def _version_section(data: bytes, entry: str) -> bytes | None:
    """The .bobc.version section of a native host's bytes, as the host reads its own (None
    without one: its --version is refused, as the host refuses it)."""
    from ..errors import BobcError
    from ..host import sections
    from ..host.version import SECTION

    try:
        found = sections.spans(data, entry).get(SECTION)
    except BobcError:
        return None
    return None if found is None else data[found[0]:found[0] + found[1]]
