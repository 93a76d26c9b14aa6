"""Input records from a text corpus (docs/formats.md, "Input record").

target(b) is the byte that most often follows b in the corpus, ties going to
the smallest byte; a byte never followed by anything targets itself.  Each
prompt contributes its last byte.

    python -m bob_model.fixture examples/bob/corpus.txt \\
        --prompts-file examples/bob/prompts.txt -o record.bin
    python -m bob_model.fixture CORPUS --prompt "... w" --prompt "... t" \\
        --prompt "... " -o record.bin

A prompts file holds one prompt per line (the newline, and a carriage return before it, as
an editor on Windows writes them, are not part of it; the last line's newline may be left
out).  Every line is a prompt: an empty line is an empty prompt, refused naming its line, as
`--prompt ""` is (a prompt's last byte is the input).  The corpus and the prompts file are
read bounded (regular files of at most CORPUS_LIMIT_BYTES and PROMPTS_FILE_LIMIT_BYTES), the
record is published atomically (never through a symlink, never over an input; `-o -` is refused
as bobc refuses it, exit 2: `-o ./-` names a file called `-`).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from .formats import PROMPTS, VOCABULARY, InputRecord, encode_input_record

DEFAULT_PROMPTS = ("and he w", "what comes next", "Once upon a time ")   # 'w', 't', ' '
CORPUS_LIMIT_BYTES = 256 << 20         # the bigram counts of a bigger corpus take gigabytes
PROMPTS_FILE_LIMIT_BYTES = 1 << 20


def prompt_lines(data: bytes) -> list[bytes]:
    """One prompt per line, every line (an empty one too); the line's newline (LF or CRLF) is
    not part of the prompt, and the file's last newline ends its last line (no line after it)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


def empty_prompt_line(prompts: list[bytes]) -> int | None:
    """The first empty line's number (from 1), or None."""
    return next((k + 1 for k, prompt in enumerate(prompts) if not prompt), None)


def read_prompts_file(path) -> list[bytes]:
    """One prompt per line; the line's newline (LF or CRLF) is not part of the prompt."""
    return prompt_lines(Path(path).read_bytes())


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
    # a str is a command-line word: its bytes as the OS gave them (os.fsencode keeps undecodable bytes)
    prompts = [os.fsencode(p) if isinstance(p, str) else bytes(p) for p in prompts]
    if len(prompts) != PROMPTS:
        raise ValueError(f"need exactly {PROMPTS} prompts, got {len(prompts)}")
    if any(not p for p in prompts):
        raise ValueError("a prompt must not be empty (its last byte is the input)")
    return InputRecord(bigram_targets(corpus), np.array([p[-1] for p in prompts]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="build_fixture", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("corpus", help="text corpus (read as bytes)")
    parser.add_argument("--prompt", action="append", dest="prompts", metavar="TEXT",
                        help=f"a prompt; give it {PROMPTS} times (default {DEFAULT_PROMPTS})")
    parser.add_argument("--prompts-file", metavar="FILE",
                        help=f"{PROMPTS} prompts, one per line (instead of --prompt)")
    parser.add_argument("-o", "--output", required=True, help="input record to write")
    args = parser.parse_args(argv)
    if args.output == "-":      # as bobc refuses `-o -` (README): the record is a file a host reads, never stdout
        parser.error("-o -: the record is written to a file, not stdout; name the file (-o ./- for one named '-')")
    from bobc.reference import safe_io
    from bobc.reference.errors import FileRefused, OutputWriteFailure

    def limited(what: str, limit: int):
        def refuse(path, part, detail):
            if part == "size":
                detail = f"{detail}: a {what} of at most {limit:,} bytes is read"
            return FileRefused(path, part, detail)
        return refuse
    if args.prompts and args.prompts_file:
        parser.error("give --prompt or --prompts-file, not both")
    inputs = []
    prompts = args.prompts or list(DEFAULT_PROMPTS)
    try:
        if args.prompts_file:
            source = safe_io.read_input(args.prompts_file, limited("prompts file", PROMPTS_FILE_LIMIT_BYTES),
                                        PROMPTS_FILE_LIMIT_BYTES)
            inputs.append(source)
            prompts = prompt_lines(source.data)
            empty = empty_prompt_line(prompts)
            if empty is not None:
                parser.error(f"prompts file {args.prompts_file}: line {empty} is empty, and a prompt must not be "
                             "(its last byte is the input): remove the line or write its prompt")
        if len(prompts) != PROMPTS and args.prompts_file:
            # the file named, as its empty line is (probe s32 checkpoint finding 9)
            parser.error(f"prompts file {args.prompts_file}: {len(prompts)} line{'' if len(prompts) == 1 else 's'}, "
                         f"need exactly {PROMPTS} prompts, one per line: write {PROMPTS} lines")
        if len(prompts) != PROMPTS:
            parser.error(f"need exactly {PROMPTS} prompts, got {len(prompts)}")
        corpus = safe_io.read_input(args.corpus, limited("corpus", CORPUS_LIMIT_BYTES), CORPUS_LIMIT_BYTES)
        inputs.append(corpus)
    except FileRefused as error:
        parser.error(f"cannot read {error.path}: {error.detail}")
    try:
        record = build_record(corpus.data, prompts)
    except ValueError as error:
        parser.error(str(error))
    try:
        outputs = safe_io.OutputSet(inputs=inputs)
        outputs.add(args.output, "-o")
        outputs.stage("-o", encode_input_record(record))
        outputs.publish()
    except OutputWriteFailure as error:
        print(f"build_fixture: {error.render()}", file=sys.stderr)
        return error.exit_code
    if len(corpus.data) < 2:
        # a record was written, but it teaches nothing: said as write_stream.py says an empty stream
        # (probe s32 checkpoint finding 9)
        print(f"build_fixture: note: the corpus {args.corpus} holds {len(corpus.data)} byte"
              f"{'' if len(corpus.data) == 1 else 's'}, so no byte is followed by another: every byte "
              f"targets itself", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
