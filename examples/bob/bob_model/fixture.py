"""Input records from a text corpus (docs/formats.md, "Input record").

target(b) is the byte that most often follows b in the corpus, ties going to
the smallest byte; a byte never followed by anything targets itself.  Each
prompt contributes its last byte.

    python -m bob_model.fixture examples/bob/corpus.txt \\
        --prompts-file examples/bob/prompts.txt -o record.bin
    python -m bob_model.fixture CORPUS --prompt "... w" --prompt "... t" \\
        --prompt "... " -o record.bin

A prompts file holds one prompt per line (the newline is not part of it).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .formats import PROMPTS, VOCABULARY, InputRecord, encode_input_record

DEFAULT_PROMPTS = ("and he w", "what comes next", "Once upon a time ")   # 'w', 't', ' '


def read_prompts_file(path) -> list[bytes]:
    """One prompt per line; the line's newline is not part of the prompt."""
    return [line for line in Path(path).read_bytes().split(b"\n") if line]


def bigram_targets(corpus: bytes) -> np.ndarray:
    """target(b) for every byte b, as uint32[256]."""
    data = np.frombuffer(corpus, dtype=np.uint8).astype(np.int64)
    counts = np.zeros((VOCABULARY, VOCABULARY), dtype=np.int64)
    if data.size > 1:
        np.add.at(counts, (data[:-1], data[1:]), 1)
    # argmax takes the first (smallest) byte among ties
    targets = np.argmax(counts, axis=1)
    unseen = counts.sum(axis=1) == 0
    targets[unseen] = np.arange(VOCABULARY)[unseen]
    return targets.astype(np.uint32)


def build_record(corpus: bytes, prompts) -> InputRecord:
    """The record for `corpus` and three prompts (str or bytes; the last byte counts)."""
    prompts = [p.encode("utf-8") if isinstance(p, str) else bytes(p) for p in prompts]
    if len(prompts) != PROMPTS:
        raise ValueError(f"need exactly {PROMPTS} prompts, got {len(prompts)}")
    if any(not p for p in prompts):
        raise ValueError("a prompt must not be empty (its last byte is the input)")
    return InputRecord(bigram_targets(corpus), np.array([p[-1] for p in prompts]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="build_fixture", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", help="text corpus (read as bytes)")
    parser.add_argument("--prompt", action="append", dest="prompts", metavar="TEXT",
                        help=f"a prompt; give it {PROMPTS} times (default {DEFAULT_PROMPTS})")
    parser.add_argument("--prompts-file", metavar="FILE",
                        help=f"{PROMPTS} prompts, one per line (instead of --prompt)")
    parser.add_argument("-o", "--output", required=True, help="input record to write")
    args = parser.parse_args(argv)
    if args.prompts and args.prompts_file:
        parser.error("give --prompt or --prompts-file, not both")
    prompts = args.prompts or list(DEFAULT_PROMPTS)
    if args.prompts_file:
        try:
            prompts = read_prompts_file(args.prompts_file)
        except OSError as error:
            parser.error(f"cannot read {args.prompts_file}: {error.strerror}")
    if len(prompts) != PROMPTS:
        parser.error(f"need exactly {PROMPTS} prompts, got {len(prompts)}")
    try:
        corpus = Path(args.corpus).read_bytes()
    except OSError as error:
        parser.error(f"cannot read {args.corpus}: {error.strerror}")
    try:
        record = build_record(corpus, prompts)
    except ValueError as error:
        parser.error(str(error))
    from bobc.reference.errors import OutputWriteFailure
    from bobc.reference.publish import publish
    try:
        publish(args.output, encode_input_record(record))
    except OutputWriteFailure as error:
        print(f"build_fixture: {error.render()}", file=sys.stderr)
        return error.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
