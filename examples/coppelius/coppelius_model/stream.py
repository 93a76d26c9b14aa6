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
import os
import stat
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
        return header(len(self.tokens), hashlib.sha256(body).digest()) + body

    def context(self, step: int, context: int):
        """Update `step`'s inputs and targets (what the host stages at its cursor)."""
        start = step * context
        if start + context + 1 > len(self.tokens):
            raise IndexError(f"the stream's {len(self.tokens)} tokens end before update {step}'s context "
                             f"(tokens {start} .. {start + context})")
        return self.tokens[start:start + context], self.tokens[start + 1:start + context + 1]

    def steps_available(self, context: int) -> int:
        return max(0, (len(self.tokens) - 1) // context)


def header(count: int, digest: bytes) -> bytes:
    """The 64-byte header of a stream of `count` tokens whose token bytes hash to `digest`."""
    return _HEADER.pack(MAGIC, VERSION, TOKEN_BYTES, VOCABULARY, HEADER_BYTES, count, digest)


def widened(text: bytes) -> bytes:
    """The token bytes of `text`'s bytes: each a u32, little-endian."""
    return np.frombuffer(text, dtype=np.uint8).astype("<u4").tobytes()


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


# main reads the text and writes the stream this many text bytes at a time (4 x as many stream
# bytes): what it holds at once, whatever the text's size (probe s32 stream finding 6: the whole
# text widened, copied and joined took 13 x the text's size, 3.4 GB for the largest)
PIECE_BYTES = 1 << 20


def _pieces(fd: int, expected: int, refused):
    """The file at `fd` from its start, PIECE_BYTES at a time; `refused(part, detail)` (raised) when
    it cannot be read or does not hold `expected` bytes now."""
    os.lseek(fd, 0, os.SEEK_SET)
    got = 0
    while got <= expected:
        try:
            piece = os.read(fd, min(PIECE_BYTES, expected + 1 - got))
        except InterruptedError:
            continue
        except OSError as failure:
            raise refused("read", f"read failed: {failure.strerror or failure}") from None
        if not piece:
            break
        got += len(piece)
        if got > expected:
            break
        yield piece
    if got != expected:
        then = "more" if got > expected else got
        raise refused("changed", f"changed while being read ({expected} bytes, then {then})")


def shorter_than_a_context(count: int) -> str:
    """Which bundled shapes' every train or predict request refuses a stream of `count` tokens (one
    context and its target, T + 1 tokens, is the least any reads), as a note; '' when none does."""
    from .config import CONFIGS, shape_refusal

    short = [c for c in CONFIGS.values() if not shape_refusal(c.layers, c.width, c.context, c.chunk_bytes)
             and count < c.context + 1]
    if count == 0:
        return "the stream holds no tokens; every train or predict request refuses it"
    if not short:
        return ""
    needs = ", ".join(f"{c.name} {c.context + 1}" for c in short)
    return (f"the stream holds {count} token{'' if count == 1 else 's'}, fewer than one context and its target, which "
            f"every train or predict request reads ({needs}): a host of {' or '.join(c.name for c in short)} "
            "refuses it")


def main(argv=None, prog: str = "python -m coppelius_model.stream") -> int:
    """Write TEXT's bytes as a stream: the text is checked as the host checks an input (a regular
    file of at most MAX_TOKENS bytes), then read twice a piece at a time -- once for the digest the
    header carries, once for the tokens, hashed again (a text that changed in between is refused)
    -- and the stream published as every output of the project is (a synced temporary renamed into
    place: never through a symlink, never over the text).  The bytes are TokenStream.encode's."""
    parser = argparse.ArgumentParser(prog=prog, description="Write a Coppelius token stream from any file's bytes.")
    parser.add_argument("text", help="the file whose bytes become the tokens")
    parser.add_argument("-o", "--output", required=True, help="the stream file to write (not stdout)")
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
    if args.output == "-":          # as bobc refuses `-o -`: a stream is a file the host reads
        print(f"{prog}: error: -o -: the stream is written to a file, not stdout; name the file (-o ./- for one "
              "named '-')", file=sys.stderr)
        return 2
    if args.text == "-":            # the text is read twice (its digest, then its tokens): a file, not stdin
        print(f"{prog}: error: TEXT -: the text is read from a file, not stdin (it is read twice: once for the "
              "header's sha256, once for the tokens); name the file (./- for one named '-')", file=sys.stderr)
        return 2
    outputs = None
    fd = -1
    try:
        safe_io.check_input(args.text, refuse, MAX_TOKENS)        # the host's words for a text it would refuse
        named = safe_io.shown(args.text)

        def refused(part, detail):
            return refuse(named, part, detail)
        try:
            fd = os.open(args.text, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
            info = os.fstat(fd)
        except OSError as failure:
            raise refused("open", f"cannot open: {failure.strerror or failure}") from None
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_TOKENS:
            raise refused("changed", "changed while being checked")
        count = info.st_size
        outputs = safe_io.OutputSet(inputs=[safe_io.InputFile(args.text, b"", os.path.realpath(args.text),
                                                              info.st_dev, info.st_ino)])
        outputs.add(args.output, "-o")
        digest = hashlib.sha256()
        for piece in _pieces(fd, count, refused):
            digest.update(widened(piece))
        outputs.prepare({"-o": header(count, digest.digest())})     # the temporary beside the stream
        temporary = outputs.outputs[0].temporary
        again = hashlib.sha256()
        out = -1
        try:
            out = os.open(temporary, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW)
            for piece in _pieces(fd, count, refused):
                body = widened(piece)
                again.update(body)
                safe_io.write_all(out, body)
            os.fsync(out)
        except OSError as failure:
            print(f"{prog}: error: output {safe_io.shown(args.output)} (-o): write of the temporary file failed: "
                  f"{failure.strerror or failure}; nothing was published", file=sys.stderr)
            return 8
        finally:
            if out >= 0:
                os.close(out)
        if again.digest() != digest.digest():
            raise refused("changed", "changed while being read (its bytes differ between two reads)")
        outputs.publish()
    except safe_io.PrepareRefused as refusal:
        print(f"{prog}: error: {refusal.message}", file=sys.stderr)
        return 8
    except FileRefused as error:
        if error.exit_code == 8:        # an output refused: the file there is unchanged
            print(f"{prog}: {error.render()}", file=sys.stderr)
            return 8
        print(f"{prog}: error: cannot read {error.path}: {error.detail}", file=sys.stderr)
        return 2
    finally:
        if outputs is not None:
            outputs.discard()           # a temporary left by a refusal (none once published)
        if fd >= 0:
            os.close(fd)
    _say(prog, f"wrote {args.output}: {count} token{'' if count == 1 else 's'}")
    note = shorter_than_a_context(count)
    if note:
        try:
            print(f"{prog}: note: {note}", file=sys.stderr, flush=True)
        except (OSError, ValueError, AttributeError):
            pass
    return 0


def _say(prog: str, line: str) -> None:
    """The success line on stdout, after the stream is published.  A stdout that cannot take it (a
    full disk, `> /dev/full`, closed) changes nothing that was done: one line on stderr says the
    stream was written, and the exit code stays 0 (8 is "not written"), as bobc's own success lines
    do; a reader that went away (a broken pipe) is told nothing more.  Never a traceback."""
    def written_anyway(reason: str) -> None:
        try:
            print(f"{prog}: the stream was written, but its message could not be printed on stdout ({reason}): "
                  f"{line}", file=sys.stderr, flush=True)
        except (OSError, ValueError, AttributeError):
            pass
    if sys.stdout is None:          # descriptor 1 closed when the tool started (`>&-`)
        written_anyway("stdout is closed")
        return
    try:
        print(line, file=sys.stdout)
        sys.stdout.flush()          # here, not at exit, where a failure would be a Python complaint
    except BrokenPipeError:
        _quiet_stdout()
    except (OSError, ValueError) as error:
        _quiet_stdout()
        written_anyway(getattr(error, "strerror", None) or str(error))


def _quiet_stdout() -> None:
    """Point descriptor 1 at /dev/null, so that what is left in stdout's buffer goes nowhere at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
