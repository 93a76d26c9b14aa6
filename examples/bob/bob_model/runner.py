"""Bob's NumPy model at the level of files (the independent reference the C
agreement tests and the fuzzers compare with; `bobc run --reference` itself
carries out the plan's steps with reference_kernels.py).

Reads the input record and (optionally) the checkpoint, refusing them with
the native host's exit codes, runs one invocation, and publishes the
predictions, the result record and the checkpoint together
(bobc.reference.safe_io): all written and synced first, then renamed in that
order (the checkpoint last).
"""
from __future__ import annotations

from bobc.reference import safe_io
from bobc.reference.errors import BadCheckpoint, BadInputRecord
from bobc.reference.runner import OutputPaths

from .formats import checkpoint_bytes, decode_checkpoint, decode_input_record
from .model import BobConfig, InvocationOutputs, run_invocation

STEP_LIMIT = safe_io.STEP_LIMIT
RECORD_LIMIT_BYTES = 1 << 20          # as runtime_c: an input record is read up to 1 MiB
CHECKPOINT_SLACK_BYTES = 1 << 20      # a checkpoint up to its contract's size + 1 MiB


def invoke_files(config: BobConfig, operation: str, record_path, checkpoint_path,
                 outputs: OutputPaths) -> InvocationOutputs:
    """Run one invocation from files to files; returns the outputs for inspection."""
    # Every file is read once and checked, every output path checked, before any work.
    safe_io.recover([outputs.predictions, outputs.result, outputs.checkpoint])
    files = safe_io.OutputSet()
    record_file = safe_io.read_input(record_path, BadInputRecord, RECORD_LIMIT_BYTES)
    files.inputs.append(record_file)
    record = decode_input_record(record_file.data, record_path)
    state = checkpoint_file = None
    if checkpoint_path is not None:
        checkpoint_file = safe_io.read_input(checkpoint_path, BadCheckpoint,
                                             checkpoint_bytes(config.contract) + CHECKPOINT_SLACK_BYTES)
        files.inputs.append(checkpoint_file)
        state = decode_checkpoint(checkpoint_file.data, config.contract, checkpoint_path)
        if operation == "train":
            safe_io.check_step_room(state.step, config.updates_per_invocation, checkpoint_path)
    for option, name in OutputPaths.ORDER:
        files.add(getattr(outputs, name), option,
                  replaces=checkpoint_file if option == "--checkpoint-out" else None)
    result = run_invocation(config, operation, record, state)
    files.stage("--predictions", result.predictions_bytes())
    files.stage("--result", result.result_bytes())
    files.stage("--checkpoint-out", result.checkpoint_bytes(config))
    files.publish()
    return result
