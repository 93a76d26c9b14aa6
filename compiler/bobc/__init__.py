"""bobc: compiles declarative plan modules into a native NVIDIA training host."""

# The one place bobc's version is written: pyproject.toml reads it (tool.setuptools.dynamic),
# `bobc --version`, the hosts' version text and the assembler's cubins (sass/cubin.py) use it.
__version__ = "0.1.0"


def _started_as_program() -> bool:
    """Whether this process is the bobc command (its console script, or `python -m bobc`, whose
    sys.argv[0] is '-m' while the package is imported), not a program importing bobc."""
    import os
    import sys

    first = sys.argv[0] if sys.argv else ""
    if os.path.basename(first) == "bobc":
        return True
    if first != "-m":
        return False
    given = list(getattr(sys, "orig_argv", ()))
    return "-m" in given and given[given.index("-m") + 1:given.index("-m") + 2] == ["bobc"]


# the signals that end a command, and the words its last line says for each (cli.main; the
# reference's publication holds them back while it renames: reference/safe_io.py)
ENDING_SIGNALS = {"SIGINT": "interrupted", "SIGTERM": "terminated", "SIGHUP": "hung up"}

# the subcommands that take --json: ended by a signal, they print one JSON object too, as a refusal
# (cli._json_ended; tests/test_cli_json_signals.py holds this list to the parsers')
JSON_COMMANDS = ("check", "dump", "diff", "inspect")


def ended_json(command: str, words: str, code: int) -> str:
    """The one JSON object a --json command ended by a signal prints when it has printed nothing
    (README, "--json"): a refusal's keys (cli._json_refusal), the interruption as its error, and
    check's own keys null; json.dumps(indent=1, sort_keys=True)'s text, written here without the
    json module (a signal while bobc starts may arrive while it is imported)."""
    fields = {"ok": "false", "command": f'"{command}"', "error": f'"{words}"', "where": "null", "hint": "null",
              "exit_code": str(code)}
    if command == "check":
        fields.update(plan="null", module="null", target="null", warnings="[]")
    return "{\n" + ",\n".join(f' "{key}": {fields[key]}' for key in sorted(fields)) + "\n}\n"


def _json_command(argv) -> str | None:
    """The subcommand of `argv` when it takes --json and --json is given, else None."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in JSON_COMMANDS and "--json" in argv else None


def take_signals(handler) -> dict:
    """Install `handler` for each of ENDING_SIGNALS that is not ignored (nor set outside Python);
    the handlers it replaces, by number, to put back.  Only the main thread may: elsewhere none.
    It imports nothing before the handlers are in place (`_signal` is built in and loaded by the
    interpreter's start; `signal` would load `enum` and `threading` its module): a Ctrl-C while bobc
    starts reaches bobc's handler, never a KeyboardInterrupt in an import (probe s34 ux finding 1)."""
    import _signal

    taken: dict = {}
    for name in ENDING_SIGNALS:
        number = getattr(_signal, name, None)
        if number is None:
            continue
        previous = _signal.getsignal(number)
        if previous is None or previous == _signal.SIG_IGN:
            continue
        taken[number] = previous        # first: a signal between the two lines is put back too
        try:
            _signal.signal(number, handler)
        except ValueError:              # not the main thread (of the main interpreter): none taken
            del taken[number]
            return taken
    return taken


def _ended_early(number, frame) -> None:
    """SIGINT, SIGTERM or SIGHUP while bobc starts (its imports, before cli.main installs its
    handlers): nothing is written yet, so nothing to clean up -- the line cli.main says, and
    128 + the signal's number, never a traceback (probe s31 signals finding 6).  It imports only
    modules the interpreter's start loaded: the signal may come in the middle of any other import
    (`enum`'s, which `signal` needs: probe s34 today34 finding 1)."""
    import os
    import sys

    import _signal      # never `signal`: it imports `enum`, which the signal may have interrupted mid-import

    words = next((words for name, words in ENDING_SIGNALS.items() if getattr(_signal, name, None) == number),
                 "interrupted")
    try:
        os.write(2, f"bobc: {words}\n".encode())
    except OSError:
        pass
    command = _json_command(sys.argv[1:])
    if command is not None:         # --json: the one object on stdout too
        try:
            os.write(1, ended_json(command, words, 128 + number).encode())
        except OSError:
            pass
    os._exit(128 + number)


# set when this process is the bobc command: cli.main then keeps its result settled through the
# interpreter's exit instead of putting the signal handlers back
PROGRAM = _started_as_program()
if PROGRAM:
    take_signals(_ended_early)
