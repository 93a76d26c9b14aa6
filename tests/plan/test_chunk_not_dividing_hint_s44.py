"""A plan host's checkpoint contract whose chunk bytes do not divide its payload is refused saying
what to give (probe s44 newuser9, finding 2).

Before, the refusal was "the payload (32 bytes) is not a whole number of 12-byte chunks" and nothing
more, while docs/formats.md describes a payload that ends in a tail shorter than a chunk (a request
host's, Coppelius's) as readable: a user of the guide's plan host could not tell that a plan host's
checkpoint has no tail.  LinReg's payload is 8 binary32 (32 bytes: LinReg.Model); 12 does not divide 32
(hand arithmetic), and 32 itself always does."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc.errors import BobcError

REPO = Path(__file__).resolve().parents[2]


def _linreg_with_chunk(tmp_path: Path, chunk: str) -> Path:
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    module = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    text = module.read_text()
    old = "linRegCheckpointPayloadBytes linRegCheckpointPayloadBytes linRegUpdatesPerInvocation)"
    assert old in text
    module.write_text(text.replace(old, f"linRegCheckpointPayloadBytes {chunk} linRegUpdatesPerInvocation)"))
    return module


def _extract(module: Path):
    from bobc import pipeline
    from bobc.targets import SM86

    return pipeline.extract(pipeline.load(module, SM86), None)


def test_a_chunk_that_does_not_divide_the_payload_says_what_to_give(tmp_path):
    module = _linreg_with_chunk(tmp_path, "12")
    with pytest.raises(BobcError) as refused:
        _extract(module)
    message = refused.value.message
    assert "the payload (32 bytes) is not a whole number of 12-byte chunks" in message
    assert "a plan host's checkpoint is whole chunks" in message and "give chunk bytes that divide the payload" in message
    assert "the payload's own 32 bytes" in message and "host-steps.md" in message
    # at the contract, where the chunk bytes are written
    line = next(k for k, row in enumerate(module.read_text().splitlines(), 1) if "def lrCheckpointContract" in row)
    assert refused.value.span is not None and refused.value.span.line == line, refused.value.span


def test_the_chunk_the_hint_names_is_accepted(tmp_path):
    assert _extract(_linreg_with_chunk(tmp_path, "32")).checkpoint.chunk_bytes == 32
