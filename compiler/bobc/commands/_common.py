"""Argument helpers shared by the subcommands."""
from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..targets import TARGETS


def existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise UsageError(f"no such file: {text}")
    return path


def add_target(parser, default: str = "sm_86", flag: str = "--target") -> None:
    parser.add_argument(flag, default=default, choices=sorted(TARGETS),
                        help=f"GPU architecture to build for (default {default})")
