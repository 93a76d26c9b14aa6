"""A request's bytes: what a native request program checks before its first device command.

RequestOpen (Runtime.NativePhysicalProgram, docs/native-host.md "Requests") carries one
bytes field, `nativePhysicalRequestBytes request`: the checkpoint envelope's contract, the
input (a record or a token stream and its header), the fresh state, the cursor, and what
a train and a predict request reach and publish.  The twin of runtime_c/native_request.c's
np_request_parse: the same layout, the same refusals.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..plan.model import CheckpointContract
from .words import count

# the input's kinds and the fresh state's initializer kinds, as encoded
INPUT_RECORD, INPUT_TOKEN_STREAM = 0, 1
FRESH_END, FRESH_ZERO, FRESH_SPLITMIX64 = 0, 1, 2
# runtime_c/native_request.c: rt_init_chunk takes (z >> shift) - center as an int64_t
MAX_CENTER = (1 << 63) - 1
# a request's own files (Platform.Linux.Nvidia.PlanHost nvidiaPlanHostFileCode)
FILE_INPUT, FILE_CHECKPOINT_IN, FILE_CHECKPOINT_OUT, FILE_PREDICTIONS, FILE_RESULT = 1, 2, 3, 4, 5
MAX_INITIALIZERS = 1 << 16
# a token stream header's magic: its first bytes, before the version word at byte 8
MAX_MAGIC = 8
# a token stream header's version and vocabulary words are 32 bits (runtime_c/native_request.c)
MAX_HEADER_WORD = (1 << 32) - 1
# the checkpoint's chunk count, payload // chunk bytes: the envelope's 32-bit field
# (runtime_c/native_request.h NP_REQUEST_MAX_CHUNKS)
MAX_CHUNKS = (1 << 32) - 1
# the most bytes a request's predictions or result output holds (runtime_c/native_request.h
# NP_REQUEST_OUTPUT_LIMIT, an input's limit): a write past it is refused, nothing written
OUTPUT_LIMIT = 1 << 30


class RequestError(ValueError):
    """Request bytes a host refuses (the message says which part)."""


@dataclass(frozen=True)
class TokenStream:
    magic: bytes
    version: int
    token_bytes: int
    vocabulary: int
    header_bytes: int


@dataclass(frozen=True)
class Initializer:
    kind: int                 # FRESH_ZERO or FRESH_SPLITMIX64
    seed: bytes = b""
    shift: int = 0
    center: int = 0
    denominator: int = 1


@dataclass(frozen=True)
class Reach:
    """What one operation's request reads and publishes."""

    records: int              # input bytes from its start
    cursor: int               # input bytes from the cursor's start
    publications: int


@dataclass(frozen=True)
class Request:
    contract: CheckpointContract        # the checkpoint envelope's (bobc.plan.model, declared there)
    stream: TokenStream | None          # None: a record
    fresh: tuple
    cursor_base: int
    cursor_scale: int
    train: Reach
    predict: Reach


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def natural(self, what: str) -> int:
        if len(self.data) - self.at < 8:
            raise RequestError(f"cut short at byte {self.at} ({what})")
        value = int.from_bytes(self.data[self.at:self.at + 8], "little")
        self.at += 8
        return value

    def bytes(self, what: str) -> bytes:
        length = self.natural(what)
        if length > len(self.data) - self.at:
            raise RequestError(f"cut short at byte {self.at} ({what})")
        value = self.data[self.at:self.at + length]
        self.at += length
        return bytes(value)


def parse_request(data: bytes) -> Request:
    r = _Reader(data)
    identities = []
    for name in ("schema", "learner", "data", "seed"):
        # each identity checked as it is read, before the next is (np_request_parse's order: bytes with
        # a zero byte in one identity and a later one cut short are refused for the zero byte)
        value = r.bytes(name)
        if 0 in value:
            raise RequestError(f"the {name} identity holds a zero byte")
        identities.append(value)
    schema, learner, identity, seed = identities
    payload, chunk, updates = r.natural("payload bytes"), r.natural("chunk bytes"), r.natural("updates")
    if payload == 0 or chunk == 0 or chunk > payload:
        raise RequestError(f"a {payload}-byte payload in chunks of {count(chunk, 'byte')} (a chunk is 1 byte to the "
                           "payload)")
    if payload // chunk > MAX_CHUNKS:
        raise RequestError(f"a {payload}-byte payload in chunks of {count(chunk, 'byte')} is {payload // chunk} "
                           f"chunks, more than the {MAX_CHUNKS} a checkpoint's 32-bit chunk count holds (make the "
                           "chunks larger)")
    kind = r.natural("input")
    if kind == INPUT_RECORD:
        stream = None
    elif kind == INPUT_TOKEN_STREAM:
        magic = r.bytes("stream magic")
        version, token_bytes, vocabulary, header = (r.natural(w) for w in ("version", "token bytes", "vocabulary",
                                                                             "header bytes"))
        # the magic is the header's first bytes: its version word starts at byte 8 (docs/formats.md,
        # "Token stream"), so a longer magic would be compared over the header's own words
        if len(magic) > MAX_MAGIC or token_bytes not in (1, 2, 4) or header < 64 or header > 1 << 20:
            raise RequestError(f"a token stream of {token_bytes}-byte tokens, a {header}-byte header and a "
                               f"{len(magic)}-byte magic (tokens of 1, 2 or 4 bytes, a header of 64 bytes to "
                               f"1 MiB, a magic of at most {MAX_MAGIC}: the header's version starts at byte {MAX_MAGIC})")
        # the stream header's version and vocabulary are 32-bit words (docs/formats.md, "Token stream"):
        # a wider value no header holds, so every stream would be refused
        if version > MAX_HEADER_WORD or vocabulary > MAX_HEADER_WORD:
            raise RequestError(f"a token stream of version {version} and vocabulary {vocabulary} (a stream header's "
                               f"version and vocabulary are 32-bit words, at most {MAX_HEADER_WORD}: no stream "
                               "would match)")
        stream = TokenStream(magic, version, token_bytes, vocabulary, header)
    else:
        raise RequestError(f"input kind {kind} (0 a record, 1 a token stream)")
    fresh = []
    while True:
        kind = r.natural("fresh state")
        if kind == FRESH_END:
            break
        if len(fresh) == MAX_INITIALIZERS:
            raise RequestError(f"more than {MAX_INITIALIZERS} initializers")
        if kind == FRESH_ZERO:
            fresh.append(Initializer(FRESH_ZERO))
        elif kind == FRESH_SPLITMIX64:
            init = Initializer(FRESH_SPLITMIX64, r.bytes("seed"), r.natural("shift"), r.natural("center"),
                               r.natural("denominator"))
            if not 0 < init.shift <= 63 or init.denominator == 0:
                raise RequestError(f"an initializer with shift {init.shift} and denominator {init.denominator}")
            if init.center > MAX_CENTER:
                raise RequestError(f"an initializer with center {init.center} (at most 2^63 - 1: the draw less the "
                                   "center is a signed 64-bit integer)")
            if 0 in init.seed:
                raise RequestError("an initializer's seed holds a zero byte")
            fresh.append(init)
        else:
            raise RequestError(f"initializer kind {kind} (1 zero, 2 SplitMix64)")
    base, scale = r.natural("cursor base"), r.natural("cursor scale")
    train = Reach(r.natural("train reach"), r.natural("train cursor"), r.natural("train publications"))
    predict = Reach(r.natural("predict reach"), r.natural("predict cursor"), r.natural("predict publications"))
    if r.at != len(data):
        raise RequestError(f"{count(len(data) - r.at, 'byte')} after its last field")
    return Request(CheckpointContract(schema, learner, identity, seed, payload, chunk, updates), stream, tuple(fresh),
                   base, scale, train, predict)
