"""Argument helpers shared by the subcommands."""
from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..targets import TARGETS


# Every subcommand's default target (--target, --arch): the one `bobc build` and `make build`
# use, so `bobc check PLAN` certifies what `bobc build PLAN` builds (README, "Targets").
DEFAULT_TARGET = "sm_90"


def existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        if path.is_dir():
            raise UsageError(f"{text} is a folder, not a file")
        if path.exists():
            raise UsageError(f"{text} is not a regular file")
        raise UsageError(f"no such file: {text}")
    return path


def add_target(parser, default: str = DEFAULT_TARGET, flag: str = "--target") -> None:
    parser.add_argument(flag, default=default, choices=sorted(TARGETS),
                        help=f"GPU architecture to build for (default {default})")
