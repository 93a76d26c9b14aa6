"""Coppelius's token stream (docs/formats.md, "Token stream"): what the host reads a
context from at its cursor.

    python -m coppelius_model.stream TEXT -o STREAM     # any file's bytes, one token each

A 64-byte header, then the tokens as u32 little-endian (the kernels read u32
tokens straight from the staging buffer):

    0  8  magic b"COPSTRM1"          24  8  token count n (u64)
    8  4  version 1                  32 32  sha256 of the n * 4 token bytes
    12 4  bytes per token (4)        64     the tokens
    16 4  vocabulary (256)
    20 4  header bytes (64)

Update k (from 0) of a run reads the context at the cursor 64 + 4 T k (inputs:
tokens T k .. T k + T - 1; targets: the same window one token on), so a run of s
updates needs n >= T s + 1.
"""
from __future__ import annotations

import argparse
import hashlib
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"COPSTRM1"
VERSION = 1
TOKEN_BYTES = 4
VOCABULARY = 256
HEADER_BYTES = 64
_HEADER = struct.Struct("<8sIIII Q 32s")


class StreamError(ValueError):
    """A stream that is not a Coppelius token stream, naming the part that differs."""

    def __init__(self, path, part: str, detail: str):
        super().__init__(f"{path}: {part}: {detail}")
        self.part = part


@dataclass(frozen=True)
class TokenStream:
    tokens: np.ndarray    # u32

    def encode(self) -> bytes:
        body = self.tokens.astype("<u4").tobytes()
        header = _HEADER.pack(MAGIC, VERSION, TOKEN_BYTES, VOCABULARY, HEADER_BYTES, len(self.tokens),
                              hashlib.sha256(body).digest())
        return header + body

    def context(self, step: int, context: int):
        """Update `step`'s inputs and targets (what the host stages at its cursor)."""
        start = step * context
        if start + context + 1 > len(self.tokens):
            raise IndexError(f"the stream's {len(self.tokens)} tokens end before update {step}'s context "
                             f"(tokens {start} .. {start + context})")
        return self.tokens[start:start + context], self.tokens[start + 1:start + context + 1]

    def steps_available(self, context: int) -> int:
        return max(0, (len(self.tokens) - 1) // context)


def from_bytes(data: bytes) -> TokenStream:
    """One token per byte of any file."""
    return TokenStream(np.frombuffer(data, dtype=np.uint8).astype(np.uint32))


def decode(data: bytes, path="stream") -> TokenStream:
    if len(data) < HEADER_BYTES:
        raise StreamError(path, "header", f"{len(data)} bytes, shorter than the {HEADER_BYTES}-byte header")
    magic, version, token_bytes, vocabulary, header_bytes, count, digest = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise StreamError(path, "magic", f"{magic!r} is not {MAGIC!r} (not a Coppelius token stream)")
    for part, value, expected in (("version", version, VERSION), ("token bytes", token_bytes, TOKEN_BYTES),
                                  ("vocabulary", vocabulary, VOCABULARY), ("header bytes", header_bytes, HEADER_BYTES)):
        if value != expected:
            raise StreamError(path, part, f"{value}, this model reads {expected}")
    if len(data) != HEADER_BYTES + TOKEN_BYTES * count:
        raise StreamError(path, "token count", f"the header says {count} tokens ({HEADER_BYTES + 4 * count} bytes), "
                                               f"the file has {len(data)} bytes")
    body = data[HEADER_BYTES:]
    if hashlib.sha256(body).digest() != digest:
        raise StreamError(path, "sha256", "the tokens do not match the header's digest (corrupted)")
    tokens = np.frombuffer(body, dtype="<u4").astype(np.uint32)
    if len(tokens) and int(tokens.max()) >= VOCABULARY:
        raise StreamError(path, "token", f"token {int(tokens.max())} at index {int(tokens.argmax())} "
                                         f"is outside the vocabulary of {VOCABULARY}")
    return TokenStream(tokens)


def read(path) -> TokenStream:
    return decode(Path(path).read_bytes(), path)


# the host reads no input larger than 1 GiB (runtime_c/host_io.h RT_IO_INPUT_LIMIT_BYTES): the most
# tokens a stream it can read holds, and so the largest text worth reading
HOST_INPUT_LIMIT_BYTES = 1 << 30
MAX_TOKENS = (HOST_INPUT_LIMIT_BYTES - HEADER_BYTES) // TOKEN_BYTES


def main(argv=None, prog: str = "python -m coppelius_model.stream") -> int:
    """Write TEXT's bytes as a stream: the text is read bounded (a regular file of at most
    MAX_TOKENS bytes), the stream is published as every output of the project is (a
    synced temporary renamed into place: never through a symlink, never over the text)."""
    parser = argparse.ArgumentParser(prog=prog, description="Write a Coppelius token stream from any file's bytes.")
    parser.add_argument("text", help="the file whose bytes become the tokens")
    parser.add_argument("-o", "--output", required=True, help="the stream to write")
    args = parser.parse_args(argv)
    from bobc.reference import safe_io
    from bobc.reference.errors import FileRefused

    def refuse(path, part, detail):
        if part == "size":
            detail = (f"{detail}: a stream of more than {MAX_TOKENS:,} tokens is more than the host "
                      f"reads (1 GiB); use a shorter text")
        return FileRefused(path, part, detail)
    if not args.output:
        print(f"{prog}: error: option -o has an empty value", file=sys.stderr)
        return 2
    try:
        text = safe_io.read_input(args.text, refuse, MAX_TOKENS)
        outputs = safe_io.OutputSet(inputs=[text])
        outputs.add(args.output, "-o")
        outputs.stage("-o", from_bytes(text.data).encode())
        outputs.publish()
    except FileRefused as error:
        if error.exit_code == 8:        # an output refused: the file there is unchanged
            print(f"{prog}: {error.render()}", file=sys.stderr)
            return 8
        print(f"{prog}: error: cannot read {error.path}: {error.detail}", file=sys.stderr)
        return 2
    count = len(text.data)
    print(f"wrote {args.output}: {count} token{'' if count == 1 else 's'}")
    if count == 0:
        print(f"{prog}: note: the stream holds no tokens; every train or predict request refuses it",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
