"""The `bobc` command line: a thin table of subcommands.

Each subcommand lives in bobc.commands.<name> with `add_arguments(parser)` and
`run(args) -> int`.  Every user-caused failure is a BobcError, printed as one
message with a non-zero exit code; a traceback means a bug in bobc.
"""
from __future__ import annotations

import _thread
import argparse
import importlib
import sys

from . import __version__
from .children import descendants   # now, not in the signal handler that reads it
from .errors import BobcError, stderr_line   # now, not when a stop is said: see stderr_line
from .resources import doc

SUBCOMMANDS = {
    "check": "parse, type check and certify a plan and everything it imports",
    "eval": "evaluate a definition of a plan and print its value",
    "build": "compile a plan into a native host executable (or its device images)",
    "asm": "assemble a SASS source into a raw instruction stream",
    "disasm": "disassemble a raw instruction stream, or an image set's code regions, with control codes",
    "dump": "decode device images (folder or host): every QMD field, method, ring entry, word, instruction",
    "diff": "name every difference between two image folders or hosts (exit 1 when they differ)",
    "inspect": "list the images embedded in a built host and their identities",
    "run": "run a plan's host schedule with the NumPy reference runner (no GPU)",
    "sim": "run a plan's host schedule with its device images on the functional GPU simulator",
    "cache": "show bobc's user cache (where, size by folder) or prune the entries not used lately",
}


# the subcommands that evaluate plan modules: they take --max-evaluation-steps
EVALUATING = ("check", "eval", "build", "run", "sim")


class _Parser(argparse.ArgumentParser):
    json_wanted = False             # main(): the command line asks for --json

    def print_help(self, file=None):
        """`bobc --help`, `bobc CMD --help`: as `--version`, a stdout that cannot take the text (a
        full disk, `> /dev/full`, closed) is one line on stderr and exit 8 (README), never a
        silent 0; a reader that went away is quiet, as for every command."""
        if file is not None:
            return super().print_help(file)
        text = self.format_help()
        out = sys.stdout
        try:
            if out is None:
                import errno

                raise OSError(errno.EBADF, "it is closed")
            out.write(text)
            out.flush()
        except BrokenPipeError:
            _quiet_stdout()
        except OSError as failure:
            if out is not None:
                _quiet_stdout()
            try:
                print(f"{self.prog} --help: error: cannot write to stdout: {failure.strerror or failure}",
                      file=sys.stderr)
            except (OSError, ValueError, AttributeError):
                pass
            self.exit(STDOUT_NOT_WRITTEN)

    def error(self, message: str):  # one line, exit 2, like every usage error
        said = f"{message}{did_you_mean(message)}{self._dash_path(message)}"
        if self.json_wanted and "--json" in self._option_string_actions:
            _json_usage_refusal(self.prog, said)
        self.exit(2, f"{self.prog}: error: {said}\n(see '{self.prog} --help')\n")


    argv: list = []                 # main(): the command line's words

    def _dash_path(self, message: str) -> str:
        """For "the following arguments are required: plan" when a word of the command line that
        begins with '-' is none of this parser's options (`bobc check -runs/P.bob`): argparse read
        that path as an option, so say which word and how to give it (probe s34 paths finding 5)."""
        if not message.startswith("the following arguments are required"):
            return ""
        words = list(self.argv)
        if "--" in words:
            words = words[:words.index("--")]
        for word in words:
            name = word.partition("=")[0]
            if word.startswith("-") and word != "-" and name not in self._option_string_actions \
                    and not (len(word) > 2 and word[:2] in self._option_string_actions):
                from .errors import printable

                return (f"; '{printable(word)}' was read as an option: give a path that begins with '-' "
                        f"after `--` or as ./{printable(word)}")
        return ""


def _json_usage_refusal(prog: str, message: str) -> None:
    """A usage error of a --json command is one JSON object on stdout too, with the keys of every
    refusal (_json_refusal; check's own are null: nothing was read)."""
    import json

    command = prog.split()[-1]
    refusal = {"ok": False, "command": command, "error": message, "where": None,
               "hint": f"see '{prog} --help'", "exit_code": 2}
    if command == "check":
        refusal.update(plan=None, module=None, target=None, warnings=[])
    try:
        print(json.dumps(refusal, indent=1, sort_keys=True))
        sys.stdout.flush()
    except OSError:
        pass


class _Version(argparse.Action):
    """`bobc --version`: the version and the commit of bobc's sources, read only when asked (git
    runs for a checkout), so that every other command line starts without it."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from .host.version import source_commit

        text = f"bobc {__version__}\ncommit {source_commit()}\n"
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_stdout()
        except OSError as failure:      # a full disk, a closed stdout: as a command's stdout (README)
            _quiet_stdout()
            try:
                print(f"bobc --version: error: cannot write to stdout: {failure.strerror or failure}",
                      file=sys.stderr)
            except (OSError, ValueError):
                pass
            parser.exit(STDOUT_NOT_WRITTEN)
        parser.exit()


def did_you_mean(message: str) -> str:
    """'; did you mean 'dump'?' for argparse's "invalid choice: 'dunp' (choose from ...)", else ''."""
    import difflib
    import re

    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not found:
        return ""
    choices = re.findall(r"'?([\w.-]+)'?", found.group(2))
    architecture = re.fullmatch(r"(?i)sm_?(\d+)[a-z]?", found.group(1))
    numbered = {int(choice[3:]): choice for choice in choices if re.fullmatch(r"sm_\d+", choice)}
    if architecture and numbered:
        # SM86, sm86, sm_90a: the same target spelt otherwise; another architecture (sm_80, an
        # A100) is none of bobc's, and naming the nearest would send its user to the wrong images
        wanted = int(architecture.group(1))
        return f"; did you mean '{numbered[wanted]}'?" if wanted in numbered else ""
    close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.5)
    return f"; did you mean '{close[0]}'?" if close else ""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `only` (the subcommand about to run), the other
    subcommands are listed by name and summary without importing their modules (a warm
    `bobc check` is mostly start-up: bench/results/build.md)."""
    parser = _Parser(
        prog="bobc",
        description="bobc compiles declarative plan modules into a standalone native host "
        "that trains a model on an NVIDIA GPU through the kernel driver alone.",
    )
    parser.add_argument("--version", action=_Version,
                        help="show bobc's version and the commit of its sources (as every host it builds records them), and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    parser.subcommand_parsers = {}
    for name, summary in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".")
        parser.subcommand_parsers[name] = p
        if only is None or name == only:
            if name in EVALUATING:
                p.add_argument("--max-evaluation-steps", type=_positive, metavar="N",
                               help="evaluate at most N steps of the plan's modules (default 32,000,000; "
                                    f"{doc('limits.md', in_help=True)}): for a plan meant to take more")
            module = importlib.import_module(f"bobc.commands.{name}")
            module.add_arguments(p)
            p.set_defaults(_module=module)
            _options_once(p)
    return parser


# the argparse actions that keep one value: given twice, the first would be lost without a word
_SINGLE = (argparse._StoreAction, argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction)
_ONCE: dict = {}


def _options_once(parser) -> None:
    """Every option of `parser` that keeps one value refuses to be given twice (`option --input
    given twice`, exit 2), as `bobc run` and the host refuse their host options (which keep their
    own action, reference/native_request.parse_args): one rule for every subcommand, where argparse
    would keep the last silently (probe s30 cli finding 7).  -I and the like (append) repeat."""
    for action in parser._actions:
        if action.option_strings and type(action) in _SINGLE:
            action.__class__ = _once(type(action))


def _once(kind):
    if kind not in _ONCE:
        def __call__(self, parser, namespace, values, option_string=None):
            given = namespace.__dict__.setdefault("_options_given", set())
            if self.dest in given:
                parser.error(f"option {option_string} given twice")
            given.add(self.dest)
            kind.__call__(self, parser, namespace, values, option_string)
        _ONCE[kind] = type(f"Once{kind.__name__}", (kind,), {"__call__": __call__})
    return _ONCE[kind]


def _whole(text: str) -> int:
    """The one reader of a numeric option's value (every subcommand's: --max-evaluation-steps, sim
    --max-steps, asm's --parameter-bytes, --block-size, --register-count, --register-budget): a
    whole number, with `_` or `,` between digits, else `not a whole number: 'abc'` (exit 2).  Its
    range is the option's own check (_positive; asm's --parameter-bytes and --block-size say theirs,
    the limit named)."""
    try:
        return int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _positive(text: str) -> int:
    value = _whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def _subcommand(argv: list[str]) -> str | None:
    """The subcommand `argv` names (its first word that is not an option), when it is one."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in SUBCOMMANDS else None


# bobc's exit code when what a command prints cannot be written to stdout (a full disk, `> /dev/full`):
# README's 8, "an output refused or not written" -- never 1, which `bobc diff` says for "they differ"
STDOUT_NOT_WRITTEN = 8


class StdoutFailed(OSError):
    """Writing a command's stdout failed other than by the reader going away (a full disk)."""


def _path_bytes_or_escapes() -> str:
    """The name of the codec error handler _GuardedStdout writes with: a surrogate of a byte that
    is not UTF-8 (U+DC80..U+DCFF, os.fsdecode's) becomes that byte, any other character the
    encoding cannot take its backslash escape, each character by itself."""
    import codecs

    name = "bobc-path-bytes"
    try:
        codecs.lookup_error(name)
    except LookupError:
        def handler(error):
            if not isinstance(error, UnicodeEncodeError):
                raise error
            out = b""
            for character in error.object[error.start:error.end]:
                code = ord(character)
                if 0xDC80 <= code <= 0xDCFF:
                    out += bytes([code - 0xDC00])
                else:
                    out += character.encode("ascii", "backslashreplace")
            return out, error.end
        codecs.register_error(name, handler)
    return name


class _GuardedStdout:
    """sys.stdout while a command runs: the one place every subcommand's printing goes through.
    A write or flush that fails (other than a broken pipe, handled as before) raises StdoutFailed,
    which main() turns into one line on stderr and STDOUT_NOT_WRITTEN, never a traceback."""

    def __init__(self, stream):
        self._stream = stream
        self.wrote = False          # whether the command printed anything (_json_ended)

    def write(self, text):
        self.wrote = self.wrote or bool(text)
        try:
            try:
                return self._stream.write(text)
            except UnicodeEncodeError:
                return self._write_unencodable(text)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise StdoutFailed(error.errno, error.strerror or str(error)) from None

    def _write_unencodable(self, text):
        """Write `text` that stdout's encoding refuses (a strict UTF-8 stdout, as under a UTF-8
        locale such as en_US.UTF-8, and a path's byte that is not UTF-8, held as a surrogate
        since os.fsdecode): such a byte is written as itself, as stderr and the hosts write it
        (safe_io.stderr_line); a character the encoding has no room for (`é` on an ASCII
        stdout) as an escape (`\\xe9`), as cli.say writes it -- never a UnicodeEncodeError
        traceback (probe s34 paths finding 1)."""
        encoding = getattr(self._stream, "encoding", None) or "utf-8"
        data = text.encode(encoding, _path_bytes_or_escapes())
        buffer = getattr(self._stream, "buffer", None)
        if buffer is None:
            return self._stream.write(data.decode(encoding, "replace"))
        self._stream.flush()
        buffer.write(data)
        return len(text)

    def flush(self):
        try:
            return self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise StdoutFailed(error.errno, error.strerror or str(error)) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


# the signals that end a command through its cleanup (every `finally` runs: temporaries removed,
# locks released), each with its one line on stderr and its exit code, 128 + the signal's number
# (README, "Exit codes"); a signal ignored when bobc starts (nohup, a background job) stays ignored
from . import ENDING_SIGNALS  # noqa: E402 -- declared once, with take_signals


class Ended(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP arrived while a command ran (a KeyboardInterrupt, so that every
    cleanup written for Ctrl-C runs for the other two as well)."""

    def __init__(self, number: int):
        super().__init__(number)
        self.number = number


# the signals that arrived while the command ran, the first first: a further one (a second Ctrl-C
# while the first one's cleanup runs: a temporary's removal, a lock's release) still interrupts
# what runs, but its Ended carries the first one's number, which is the command's line and exit
# code (probe s44 signals2 finding 4: a SIGHUP moments after a SIGTERM ended the command 129)
_ARRIVED: list = []
# The order they arrived in, from CPython's wakeup pipe (signal.set_wakeup_fd): its C-level handler
# writes each signal's number there as the signal arrives, while the Python handlers run later, between
# bytecodes -- and, for two that arrived during one C call (a long hash, a NumPy operation), in the
# order of their numbers: SIGTERM, then SIGINT, ran _ending for SIGINT first and the command ended
# `bobc: interrupted`, 130 (probe s46 leftovers8 finding 2).  [read end, write end, the wakeup fd it
# replaced], while a command runs in the main thread; the numbers it takes (_take_signals).
_WAKEUP: list = []
_TAKEN: set = set()


def _ending(number, frame) -> None:
    _ARRIVED.extend(arrived for arrived in _arrivals() if arrived in _TAKEN)
    if not _ARRIVED:
        _ARRIVED.append(number)
    _stop_children()
    raise Ended(_ARRIVED[0])


def _arrivals() -> list:
    """The signal numbers the wakeup pipe holds, in the order they arrived (read, so emptied)."""
    import os

    if not _WAKEUP:
        return []
    out = b""
    while len(out) < 1 << 16:
        try:
            chunk = os.read(_WAKEUP[0], 4096)
        except OSError:                 # empty (non-blocking) or closed
            break
        if not chunk:
            break
        out += chunk
    return list(out)


def _open_wakeup() -> None:
    """Point CPython's wakeup fd at a pipe of this command's (the main thread only; none elsewhere)."""
    import os
    import signal

    _close_wakeup()
    try:
        read, write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    try:
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except (ValueError, OSError):       # not the main thread
        os.close(read)
        os.close(write)
        return
    _WAKEUP[:] = [read, write, previous]


def _close_wakeup() -> None:
    """Put back the wakeup fd _open_wakeup replaced, and close its pipe."""
    import os
    import signal

    if not _WAKEUP:
        return
    read, write, previous = _WAKEUP
    _WAKEUP.clear()
    try:
        signal.set_wakeup_fd(previous)
    except (ValueError, OSError):
        pass
    for fd in (read, write):
        try:
            os.close(fd)
        except OSError:
            pass


def _stop_children() -> None:
    """SIGTERM to every process descended from this one (found in /proc; none without it).  For
    SIGINT too: Ctrl-C reaches the whole process group, but a SIGINT sent to bobc alone (`kill
    -INT`, a supervisor) does not, and a child bobc stops itself (subprocess.run's SIGKILL to a
    gcc driver) would leave the driver's own children (cc1, as) running on (probe s35 interrupt
    finding 3); a SIGTERM or SIGHUP sent to bobc alone would leave them all running into folders
    the cleanup removes."""
    import os
    import signal

    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass


def _take_signals() -> dict:
    """Install _ending for ENDING_SIGNALS (those not ignored); the handlers they replace."""
    from . import take_signals

    _ARRIVED.clear()            # this command's, not an earlier one's of the process
    _TAKEN.clear()
    _open_wakeup()              # before the handlers: a signal between the two is in its order too
    taken = take_signals(_ending)
    _TAKEN.update(taken)
    return taken


def _settle(taken: dict) -> None:
    """The command's exit code is decided: a signal from now on no longer changes it (the outputs
    were written and said, or the refusal was said; interpreter teardown takes tens of ms)."""
    import signal

    for number in taken:
        signal.signal(number, signal.SIG_IGN)


def _restore(taken: dict) -> None:
    import signal

    for number, handler in taken.items():
        signal.signal(number, handler if handler is not None else signal.SIG_DFL)
    _close_wakeup()


def _ending_words(interruption: BaseException) -> str:
    """How a command was ended: `interrupted`, `terminated`, `hung up`."""
    import signal

    number = getattr(interruption, "number", signal.SIGINT)
    return ENDING_SIGNALS.get(signal.Signals(number).name, "interrupted")


def _ended_line(interruption: BaseException) -> int:
    """Say how a command was ended (`bobc: interrupted`, `bobc: terminated`, `bobc: hung up`);
    its exit code, 128 + the signal's number."""
    import signal

    number = getattr(interruption, "number", signal.SIGINT)
    try:
        print(f"bobc: {_ending_words(interruption)}", file=sys.stderr)
    except (OSError, ValueError):
        pass
    return 128 + number


def _json_ended(command: str, interruption: BaseException, code: int, args=None) -> None:
    """A --json command ended by a signal before it printed anything: one JSON object on stdout
    too, a refusal's shape (_json_refusal) with the interruption as its error and its exit code
    (probe s32 leftovers finding 4; README, "--json").  `args`: the command's, when parsed (check's
    plan, module, target and warnings as a refusal would give them)."""
    import json

    from . import ended_json

    if args is not None and getattr(args, "json_printed", False):
        return
    out = sys.stdout
    if out is None or getattr(out, "wrote", False):     # its own output began: no second object
        return
    refusal = json.loads(ended_json(command, _ending_words(interruption), code))
    if args is not None:
        if getattr(args, "json_warnings", None) is not None:
            refusal["warnings"] = list(args.json_warnings)
        refusal.update(getattr(args, "json_refusal", None) or {})
    try:
        out.write(json.dumps(refusal, indent=1, sort_keys=True) + "\n")
        out.flush()
    except BrokenPipeError:
        _quiet_stdout()
    except OSError:         # a full disk: the line on stderr said it; the code stands
        _quiet_stdout()


def main(argv: list[str] | None = None) -> int:
    """Run one command line; its exit code.  SIGINT, SIGTERM and SIGHUP end it through its
    cleanup with one line and 128 + the signal's number, from its first line to its result;
    after the result, none changes it.  Called as the bobc program (bobc.PROGRAM), the result
    stays settled through the interpreter's exit; called from Python, the handlers it found are
    put back."""
    from . import PROGRAM

    taken: dict = {}
    stderr = sys.stderr
    stdout = sys.stdout
    waited = False
    try:
        taken = _take_signals()
        # one command at a time in a process: a command's temporaries folder (tempfile.tempdir),
        # stdout, limits and the evaluator's budget are the process's, so two commands run in two
        # threads at once broke each other ("the C compiler failed: ... No such file or
        # directory": probe s35 inprocess finding 6); the second waits for the first to end
        _COMMAND.acquire()
        waited = True
        stderr = sys.stderr
        stdout = sys.stdout
        if stderr is None:          # stderr closed (2>&-): a message goes nowhere, never to stdout
            _stderr_sink()
        if stdout is None:          # stdout closed (>&-): as a stdout that cannot be written
            sys.stdout = _ClosedStdout()
        code = _main(argv, taken)
    except KeyboardInterrupt as interruption:      # before the command started (imports, parsing)
        _settle(taken)
        code = _ended_line(interruption)
        from . import _json_command

        command = _json_command(sys.argv[1:] if argv is None else argv)
        if command is not None:
            _json_ended(command, interruption, code)
    finally:
        _settle(taken)
        if not PROGRAM:
            _restore(taken)
            if stderr is None and sys.stderr is not None:
                sink, sys.stderr = sys.stderr, None
                sink.close()
            if stdout is None:
                sys.stdout = None
        if waited:
            _COMMAND.release()
    return code


_COMMAND = _thread.RLock()      # held by the command running in this process (main)


class _ClosedStdout:
    """sys.stdout when bobc started with descriptor 1 closed (`>&-`: cron, systemd, a daemonised
    CI step; Python then gives None): every write fails as a write to `> /dev/full` does, so each
    command says what it says then (the outputs are written, the message could not be printed;
    exit codes per README), never a traceback (probe s32 environ finding 2).  The descriptor 1
    itself is put on /dev/null, so that no file this command opens takes it and no child (gcc)
    writes into one."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self):
        import os

        try:
            os.fstat(1)
        except OSError:
            try:
                sink = os.open(os.devnull, os.O_WRONLY)
                if sink != 1:
                    os.dup2(sink, 1)
                    os.close(sink)
            except OSError:
                pass
        self.buffer = self          # bytes are refused alike

    @staticmethod
    def write(data):
        import errno

        raise OSError(errno.EBADF, "it is closed")

    def flush(self):            # nothing was taken, so nothing is left for the exit-time flush
        pass

    def isatty(self):
        return False

    def fileno(self):
        import io

        raise io.UnsupportedOperation("stdout is closed")


def _stderr_sink() -> None:
    """sys.stderr on /dev/null, and the descriptor 2 too when it is closed (so that no file this
    command opens takes it, and no child writes into one)."""
    import os

    try:
        sink = open(os.devnull, "w", encoding="utf-8", errors="backslashreplace")
    except OSError:
        return
    try:
        os.fstat(2)
    except OSError:
        try:
            os.dup2(sink.fileno(), 2)
        except OSError:
            pass
    sys.stderr = sink


def _main(argv, taken: dict) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(_subcommand(argv))
    _Parser.json_wanted = "--json" in argv
    _Parser.argv = list(argv)
    args, extra = parser.parse_known_args(argv)
    if extra:       # named by the subcommand's parser, so the pointer is to `bobc CMD --help`
        parser.subcommand_parsers[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    from .language import limits

    steps = limits.EVALUATION_STEPS     # this command's limit is its own: put back when it ends
    # so are the structure bounds a compile registers (pipeline.load): a later `bobc eval` of the
    # process was refused a schedule a fresh `bobc eval` prints (probe s36 inprocess2 finding 7)
    bounds = dict(limits.STRUCTURE_BOUNDS)
    # and none is in force as it starts, as in a fresh process: bounds a library caller's compile
    # registered (pipeline.compile_plan outside cli.main) refused the same `bobc eval` (session 36 CI)
    limits.STRUCTURE_BOUNDS.clear()
    # (the recursion limit the evaluator raises is the caller's again when the last evaluation in
    # flight ends, language/program.py _evaluation_ends: not put back here, where another thread's
    # evaluation may be deeper than the limit this command found; probe s36 inprocess2 finding 5)
    if getattr(args, "max_evaluation_steps", None) is not None:
        limits.EVALUATION_STEPS = args.max_evaluation_steps    # read when each program is loaded
    stdout = sys.stdout
    guarded = stdout is not None and not isinstance(stdout, _GuardedStdout)
    if guarded:
        sys.stdout = _GuardedStdout(stdout)
    try:
        code, failed = _run(args, taken)
        try:
            sys.stdout.flush()          # here, not at exit, where a failure would be a Python complaint
        except BrokenPipeError:
            _quiet_stdout()
        except StdoutFailed as failure:
            _stdout_failed(args, failure)
            # a refusal keeps its own code (its message is on stderr); anything else was not written
            return code if failed else STDOUT_NOT_WRITTEN
        return code
    finally:
        limits.EVALUATION_STEPS = steps
        limits.STRUCTURE_BOUNDS.clear()
        limits.STRUCTURE_BOUNDS.update(bounds)
        if guarded:
            sys.stdout = stdout


def _run(args, taken: dict) -> tuple[int, bool]:
    """The subcommand's exit code, and whether it is a refusal (BobcError)."""
    try:
        from .cache import process_temporaries
        from .kernel_cache import recording
        from .kernel_search import listed_once

        # swept by the next command if this one is killed; the kernel sources read are this command's;
        # the kernel search walks each folder once a command
        with process_temporaries(), recording(), listed_once():
            code = int(args._module.run(args) or 0)
            _settle(taken)              # the outputs are written: removing the temporaries is all that is left
            return code, False
    except BobcError as error:
        _settle(taken)
        from .errors import ResourceExhausted

        if isinstance(error, ResourceExhausted):
            return _resource_stop(args, error, taken), True
        if getattr(args, "json", False):
            _json_refusal(args, error)
        stderr_line(f"bobc {args.command}: {error.render()}")     # a path's bytes as they are, as the hosts print them
        return error.exit_code, True
    except StdoutFailed as failure:
        _stdout_failed(args, failure)
        return STDOUT_NOT_WRITTEN, True
    except KeyboardInterrupt as interruption:       # Ctrl-C, or SIGTERM or SIGHUP (Ended)
        _settle(taken)
        code = _ended_line(interruption)
        if getattr(args, "json", False):            # one JSON object on stdout too, as a refusal
            _json_ended(args.command, interruption, code, args)
        return code, True
    except BrokenPipeError:
        # the reader stopped reading (`bobc dump ... | head`): nothing more can be said, and
        # Python's exit-time flush must not complain; a command whose exit code is a verdict
        # (diff) handles this itself and returns its verdict
        _quiet_stdout()
        return 0, False
    except (OSError, MemoryError) as failure:
        # bobc itself ran out of descriptors or memory, wherever it surfaced (a subprocess's pipes,
        # a temporary's cleanup, a decode): one message with the limit and what to do, never a
        # traceback (probe s33 resources 6, 7); any other OSError is a bug's, with its traceback
        from .errors import descriptors_exhausted, memory_exhausted

        stop = memory_exhausted() if isinstance(failure, MemoryError) else descriptors_exhausted(failure)
        if stop is None:
            raise
        del failure
        return _resource_stop(args, stop, taken), True


def _resource_stop(args, stop, taken: dict) -> int:
    """Say the ResourceExhausted `stop` as a refusal; its exit code: 8 (an output not made), `bobc
    diff`'s 2 (it cannot compare), `bobc run --reference`'s 1 for memory (the host's "internal
    error (out of memory)": the same codes as the host)."""
    _settle(taken)
    if args.command == "diff":
        stop.exit_code = 2
    elif args.command == "run" and stop.kind == "memory":
        stop.exit_code = 1
    if getattr(args, "json", False):
        _json_refusal(args, stop)
    stderr_line(f"bobc {args.command}: {stop.render()}")
    return stop.exit_code


def _stdout_reason(failure: OSError) -> str:
    """Why stdout took no more: past `ulimit -f`, the host's words with the limit and its value
    (safe_io.write_failure, as runtime_c's rt_write_failure); else the failure's own words (a
    closed stdout's "it is closed", a full disk's)."""
    import errno

    if failure.errno == errno.EFBIG:
        from .reference.safe_io import write_failure

        return write_failure(failure)
    return f"{failure.strerror or failure}"


def _stdout_failed(args, failure: OSError) -> None:
    _quiet_stdout()         # what is left in stdout's buffer goes nowhere at exit, not to a traceback
    try:
        print(f"bobc {args.command}: error: cannot write to stdout: {_stdout_reason(failure)}",
              file=sys.stderr)
    except (OSError, ValueError, MemoryError):
        pass


def _json_refusal(args, error: BobcError) -> None:
    """With --json, a refusal is printed on stdout as one JSON object too (and on stderr as
    always): a tool reading the JSON learns why there is no result.  Its keys (README, "--json"):
    ok (false), command, error, where (file:line:column or null), hint, exit_code, and what the
    command put in args.json_refusal and args.json_warnings (check: plan, module, target, warnings)."""
    import json

    if getattr(args, "json_printed", False):     # the command's own JSON object already says it
        return
    refusal = {"ok": False, "command": args.command, "error": error.message,
               "where": str(error.span) if error.span else None, "hint": error.hint,
               "exit_code": error.exit_code}
    if getattr(args, "json_warnings", None) is not None:       # check's: the warnings said before it
        refusal["warnings"] = list(args.json_warnings)
    refusal.update(getattr(args, "json_refusal", None) or {})
    try:
        print(json.dumps(refusal, indent=1, sort_keys=True))
    except BrokenPipeError:
        _quiet_stdout()
    except StdoutFailed as failure:     # said, and the refusal's own code stands
        _stdout_failed(args, failure)


def say(line: str, command: str) -> None:
    """Print a command's success line (`wrote bob-host (sm_90)`) after its output was written.

    Its paths are shown as errors show them (the caller passes them through
    bobc.reference.safe_io.shown: a control character is '?', so the line stays one line); a
    character stdout's encoding cannot take is written as an escape (`\\xe9`), as on stderr.  When
    stdout cannot take the line at all (a full disk, `> /dev/full`, a closed pipe), the output
    is still written and the exit code stays 0 (README: 8 means "not written"): one line on stderr
    says so, never a traceback."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        try:
            print(line, file=stream)
        except UnicodeEncodeError:
            encoding = getattr(stream, "encoding", None) or "ascii"
            print(line.encode(encoding, "backslashreplace").decode(encoding), file=stream)
        stream.flush()
    except BrokenPipeError:
        _quiet_stdout()         # the reader went away: as main() treats it, nothing more to say
    except OSError as failure:
        _quiet_stdout()         # what is left in stdout's buffer goes nowhere at exit, not to a traceback
        try:
            print(f"bobc {command}: the output was written, but its message could not be printed on stdout "
                  f"({_stdout_reason(failure)}): {line}", file=sys.stderr)
        except (OSError, ValueError):
            pass


def _quiet_stdout() -> None:
    """Point stdout at /dev/null after its reader went away (no 'Exception ignored' at exit)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
