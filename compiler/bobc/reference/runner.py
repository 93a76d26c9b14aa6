"""The three output paths of an invocation, as `bobc run --reference`, `bobc sim`
and the native host take them: three different files, published predictions,
result, then the checkpoint last (safe_io.py), so that a new checkpoint always
stands beside its own predictions and result.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError


@dataclass(frozen=True)
class OutputPaths:
    checkpoint: Path
    predictions: Path
    result: Path

    def __post_init__(self):
        # the same text twice is a usage error (exit 2), as in runtime_c's rt_parse_args;
        # two spellings of one file are found by safe_io (exit 8)
        paths = [os.fspath(p) for p in (self.checkpoint, self.predictions, self.result)]
        if len(set(paths)) != 3:
            raise UsageError("--checkpoint-out, --predictions and --result must be three "
                             "different files")

    # publication order (reference/safe_io.py): the checkpoint last
    ORDER = (("--predictions", "predictions"), ("--result", "result"),
             ("--checkpoint-out", "checkpoint"))
