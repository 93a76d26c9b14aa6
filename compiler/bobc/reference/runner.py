"""The reference runner at the level of files: what `bobc run --reference` does.

Reads the input record and (optionally) the checkpoint, refusing them with
the native host's exit codes, runs one invocation, and publishes the
predictions, the result record and the checkpoint atomically, in that order
(the checkpoint last, so a failure never leaves a new checkpoint beside stale
predictions).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from .bob import BobConfig, InvocationOutputs, run_invocation
from .errors import BadCheckpoint, BadInputRecord
from .formats import decode_checkpoint, decode_input_record
from .publish import publish

STEP_LIMIT = 2 ** 32 - 1      # the AdamW block carries the global step as u32


@dataclass(frozen=True)
class OutputPaths:
    checkpoint: Path
    predictions: Path
    result: Path

    def __post_init__(self):
        paths = [os.path.abspath(p) for p in (self.checkpoint, self.predictions, self.result)]
        if len(set(paths)) != 3:
            raise UsageError("--checkpoint-out, --predictions and --result must be three "
                             "different files")


def _read(path: Path, error) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as failure:
        raise error(path, "read", failure.strerror or str(failure)) from failure


def invoke_files(config: BobConfig, operation: str, record_path, checkpoint_path,
                 outputs: OutputPaths) -> InvocationOutputs:
    """Run one invocation from files to files; returns the outputs for inspection."""
    record = decode_input_record(_read(record_path, BadInputRecord), record_path)
    state = None
    if checkpoint_path is not None:
        state = decode_checkpoint(_read(checkpoint_path, BadCheckpoint), config.contract,
                                  checkpoint_path)
        if operation == "train" and state.step + config.updates_per_invocation > STEP_LIMIT:
            raise BadCheckpoint(checkpoint_path, "step",
                                f"step {state.step} leaves no room for "
                                f"{config.updates_per_invocation} more updates (limit {STEP_LIMIT})")
    result = run_invocation(config, operation, record, state)
    publish(outputs.predictions, result.predictions_bytes())
    publish(outputs.result, result.result_bytes())
    publish(outputs.checkpoint, result.checkpoint_bytes(config))
    return result
