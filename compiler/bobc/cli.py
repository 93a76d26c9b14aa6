"""The `bobc` command line: a thin table of subcommands.

Each subcommand lives in bobc.commands.<name> with `add_arguments(parser)` and
`run(args) -> int`.  Every user-caused failure is a BobcError, printed as one
message with a non-zero exit code; a traceback means a bug in bobc.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .errors import BobcError

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
}


# the subcommands that evaluate plan modules: they take --max-evaluation-steps
EVALUATING = ("check", "eval", "build", "run", "sim")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like every usage error
        self.exit(2, f"{self.prog}: error: {message}{did_you_mean(message)}\n(see '{self.prog} --help')\n")


def did_you_mean(message: str) -> str:
    """'; did you mean 'dump'?' for argparse's "invalid choice: 'dunp' (choose from ...)", else ''."""
    import difflib
    import re

    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not found:
        return ""
    choices = re.findall(r"'?([\w.-]+)'?", found.group(2))
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
    parser.add_argument("--version", action="version", version=f"bobc {__version__}")
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
                                    "docs/limits.md): for a plan meant to take more")
            module = importlib.import_module(f"bobc.commands.{name}")
            module.add_arguments(p)
            p.set_defaults(_module=module)
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def _subcommand(argv: list[str]) -> str | None:
    """The subcommand `argv` names (its first word that is not an option), when it is one."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in SUBCOMMANDS else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(_subcommand(argv))
    args, extra = parser.parse_known_args(argv)
    if extra:       # named by the subcommand's parser, so the pointer is to `bobc CMD --help`
        parser.subcommand_parsers[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "max_evaluation_steps", None) is not None:
        from .language import limits

        limits.EVALUATION_STEPS = args.max_evaluation_steps    # read when each program is loaded
    try:
        return int(args._module.run(args) or 0)
    except BobcError as error:
        print(f"bobc {args.command}: {error.render()}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("bobc: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader stopped reading (`bobc dump ... | head`): nothing more can be said, and
        # Python's exit-time flush must not complain; a command whose exit code is a verdict
        # (diff) handles this itself and returns its verdict
        _quiet_stdout()
        return 0


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
                  f"({failure.strerror or failure}): {line}", file=sys.stderr)
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
