"""A Coppelius request's predictions and result files, read as docs/coppelius-host.md gives them.

    python -m coppelius_host.outputs show [--predictions FILE] [--result FILE] [--top K]

The predictions: the last position's 256 logits, binary32 (1024 bytes): the next byte's scores.
`show` prints the most likely next bytes with their logits and softmax probabilities (or says
how many logits are not finite: a run whose state went non-finite predicts NaN).

The result: its first 32 bytes are the forward record -- the marker `COPPELIUS-RESULT`, then
the 16-byte summary: mean loss binary32, skipped this update, updates issued, updates skipped
(u32 each; docs/coppelius.md, the staging buffer).  `show` prints that record and how many
bytes follow it (a train's loss records, stat words, final forward and status: docs/
coppelius-host.md, "The result file").

A file that is not what it should be is refused naming it, exit 3, as the host refuses an input.
"""
from __future__ import annotations

import argparse
import struct
import sys

import numpy as np

VOCABULARY = 256
PREDICTIONS_BYTES = 4 * VOCABULARY
MARKER = b"COPPELIUS-RESULT"
RECORD_BYTES = 32
EXIT_BAD_FILE = 3


class Refused(Exception):
    """A file this tool cannot read as the output it is named as (the message names it)."""


def byte_text(value: int) -> str:
    """A byte as a reader recognises it: 'e', ' ', '\\n', or \\xNN."""
    return repr(chr(value)) if 32 <= value < 127 or value in (9, 10, 13) else f"'\\x{value:02x}'"


def read_predictions(data: bytes, path: str = "predictions") -> np.ndarray:
    """The 256 logits of a predictions file."""
    if len(data) != PREDICTIONS_BYTES:
        raise Refused(f"predictions {path}: {len(data)} bytes, not {PREDICTIONS_BYTES} (the last position's "
                      f"{VOCABULARY} logits, binary32: docs/coppelius-host.md)")
    return np.frombuffer(data, "<f4").astype(np.float64)


def describe_predictions(logits: np.ndarray, top: int = 5) -> str:
    """One line: the `top` most likely next bytes, their logits and probabilities."""
    finite = np.isfinite(logits)
    if not finite.all():
        return f"{int((~finite).sum())} of {len(logits)} logits are not finite (NaN or Inf): no prediction"
    shifted = np.exp(logits - logits.max())
    probability = shifted / shifted.sum()
    order = sorted(range(len(logits)), key=lambda b: (-logits[b], b))[:top]
    return "next byte " + ", ".join(f"{byte_text(b)} (logit {logits[b]:.6g}, p {probability[b]:.4f})" for b in order)


def read_record(data: bytes, path: str = "result") -> dict:
    """The result's forward record: {mean_loss, skipped, updates_issued, updates_skipped, following}."""
    if len(data) < RECORD_BYTES or data[:len(MARKER)] != MARKER:
        raise Refused(f"result {path}: does not start with the {RECORD_BYTES}-byte forward record (the marker "
                      f"{MARKER.decode()}, then the summary: docs/coppelius-host.md, \"The result file\")")
    mean_loss, skipped, issued, updates_skipped = struct.unpack_from("<fIII", data, len(MARKER))
    return {"mean_loss": mean_loss, "skipped": skipped, "updates_issued": issued,
            "updates_skipped": updates_skipped, "following": len(data) - RECORD_BYTES}


def describe_record(record: dict) -> str:
    return (f"forward record: mean loss {record['mean_loss']:.6g}, skipped {record['skipped']}, updates issued "
            f"{record['updates_issued']}, updates skipped {record['updates_skipped']}; {record['following']} bytes "
            f"follow it (docs/coppelius-host.md, \"The result file\")")


def _top(text: str) -> int:
    """--top's value, 1 to VOCABULARY: a usage error naming the range (argparse's `choices` listed all
    256 valid values on one line)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r} (1 to {VOCABULARY})") from None
    if not 1 <= value <= VOCABULARY:
        raise argparse.ArgumentTypeError(f"{value} is outside 1..{VOCABULARY}")
    return value


def main(argv=None) -> int:
    prog = "python -m coppelius_host.outputs"
    parser = argparse.ArgumentParser(prog=prog, description="Show a Coppelius request's predictions and result.")
    sub = parser.add_subparsers(dest="command", required=True)
    shown = sub.add_parser("show", help="print the most likely next bytes and the result's forward record")
    shown.add_argument("--predictions", metavar="FILE", help="a predictions file (256 binary32 logits)")
    shown.add_argument("--result", metavar="FILE", help="a result file (its forward record first)")
    shown.add_argument("--top", type=_top, default=5, metavar="K",
                       help=f"how many next bytes to list, 1 to {VOCABULARY} (default 5)")
    args = parser.parse_args(argv)
    if args.predictions is None and args.result is None:
        parser.error("show needs --predictions FILE, --result FILE or both")
    from bobc.reference import safe_io
    from bobc.reference.errors import FileRefused

    def read(path: str) -> bytes:
        return safe_io.read_input(path, lambda p, part, detail: FileRefused(p, part, detail), 1 << 30).data

    try:
        if args.predictions is not None:
            logits = read_predictions(read(args.predictions), args.predictions)
            print(f"{args.predictions}: {describe_predictions(logits, args.top)}")
        if args.result is not None:
            print(f"{args.result}: {describe_record(read_record(read(args.result), args.result))}")
    except FileRefused as error:
        print(f"{prog}: error: cannot read {error.path}: {error.detail}", file=sys.stderr)
        return 2
    except Refused as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return EXIT_BAD_FILE
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
