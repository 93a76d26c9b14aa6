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


def _ended_early(number, frame) -> None:
    """SIGINT, SIGTERM or SIGHUP while bobc starts (its imports, before cli.main installs its
    handlers): nothing is written yet, so nothing to clean up -- the line cli.main says, and
    128 + the signal's number, never a traceback (probe s31 signals finding 6)."""
    import os

    words = {2: "interrupted", 15: "terminated", 1: "hung up"}.get(number, "interrupted")
    try:
        os.write(2, f"bobc: {words}\n".encode())
    except OSError:
        pass
    os._exit(128 + number)


def _take_signals_early() -> None:
    import signal

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) not in (signal.SIG_IGN, None):
            signal.signal(number, _ended_early)


# set when this process is the bobc command: cli.main then keeps its result settled through the
# interpreter's exit instead of putting the signal handlers back
PROGRAM = _started_as_program()
if PROGRAM:
    _take_signals_early()
