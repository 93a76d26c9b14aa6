"""A native request program's files (docs/native-host.md, "Requests"): the reference twin of
runtime_c/native_request.c, with its exit statuses and messages.

RequestOpen takes the plan host's command line (`train|predict --input STREAM [--checkpoint IN]
--checkpoint-out OUT --predictions FILE --result FILE`), completes a journal a kill left,
reads and checks the input (a token stream's header, digest and tokens; the bytes the run
reaches), the checkpoint (its envelope: runtime_c/host_runtime.c rt_envelope_check's order
and messages) or the fresh state, the cursor, and the outputs' paths -- everything before the
program's next command, so a refusal never follows a device command.  The request's outputs
are collected in memory and published together at the program's end (predictions, result,
then the checkpoint: safe_io's journalled rule); a checkpoint publication that is not the
request's last is published atomically at once.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ..native.request import (FILE_CHECKPOINT_OUT, FILE_INPUT, FILE_PREDICTIONS, FILE_RESULT, OUTPUT_LIMIT,
                              FRESH_SPLITMIX64, Request)
from ..native.words import count as _count
from . import envelope, safe_io
from .host import splitmix64_chunk
from ..errors import printable
from .errors import FileRefused, OutputWriteFailure

EXIT_INTERNAL, EXIT_USAGE, EXIT_INPUT, EXIT_CHECKPOINT, EXIT_FOREIGN, EXIT_WRITE = 1, 2, 3, 4, 5, 8
USAGE = ("usage: {program} train|predict --input {input} [--checkpoint IN] --checkpoint-out OUT "
         "--predictions FILE --result FILE\n")
OUTPUTS = ((FILE_PREDICTIONS, "--predictions"), (FILE_RESULT, "--result"), (FILE_CHECKPOINT_OUT, "--checkpoint-out"))


class Refused(Exception):
    """A request refused: the status and the message (after "command N (Name): ")."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class Help(Exception):
    """--help: the usage printed, nothing published, status 0."""


def _le(data: bytes, at: int, width: int) -> int:
    return int.from_bytes(data[at:at + width], "little")


# ---- the command line (runtime_c/host_runtime.c rt_parse_args) ----

_OPTIONS = ("--input", "--checkpoint", "--checkpoint-out", "--predictions", "--result")


def parse_args(argv, input_name: str = "RECORD", plan_host: bool = True) -> dict:
    """{"op": "train"|"predict", "--input": path, ...}, or Refused (exit 2) / Help.  `input_name`:
    the input's name in the usage (a request host's STREAM where it reads a token stream).  A plan
    host's refusal ends with where the whole usage is, " (see --help)", as runtime_c/plan_host.c's
    main adds it (`bobc run`); a native request host's (native_request.c) is rt_parse_args' alone."""
    try:
        return _parse_args(argv, input_name)
    except Refused as refused:
        if plan_host and "--help" not in refused.message:
            refused.message += " (see --help)"
            refused.args = (refused.message,)
        raise


def _parse_args(argv, input_name: str) -> dict:
    found: dict = {}
    op = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--help", "-h"):
            raise Help()
        if arg == "--version":
            raise Refused(EXIT_USAGE, "--version is given alone, as the only argument")
        if arg.startswith("--version="):        # a known option, not an unknown one (probe s31 hostexe 11)
            raise Refused(EXIT_USAGE, "--version takes no value")
        word = printable(arg)       # a control character as '?': one line (host_runtime.c shown_text)
        if arg.startswith("-") and not arg.startswith("--"):
            raise Refused(EXIT_USAGE, f"unknown option '{word}' (see --help)")
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name not in _OPTIONS:
                raise Refused(EXIT_USAGE, f"unknown option '{printable(name)}' (see --help)")
            if not eq:
                if i + 1 >= len(argv):
                    raise Refused(EXIT_USAGE, f"option {name} needs a value")
                following = argv[i + 1]
                if following.startswith("-") and following != "-":
                    raise Refused(EXIT_USAGE, f"option {name} needs a value; the next word, '{printable(following)}', is an "
                                              f"option (write {name}=VALUE for a value starting with '-')")
                i += 1
                value = argv[i]
            if not value:
                raise Refused(EXIT_USAGE, f"option {name} has an empty value")
            if name in found:
                raise Refused(EXIT_USAGE, f"option {name} given twice")
            found[name] = value
        else:
            if op is not None:
                raise Refused(EXIT_USAGE, f"unexpected argument '{word}' (the operation is already given)")
            if arg not in ("train", "predict"):
                raise Refused(EXIT_USAGE, f"unknown operation '{word}' (expected train or predict)")
            op = arg
        i += 1
    if op is None:
        raise Refused(EXIT_USAGE, "missing the operation: train or predict (see --help)")
    for name, text in (("--input", f"missing --input {input_name}"),
                       ("--checkpoint-out", "missing --checkpoint-out OUT"),
                       ("--predictions", "missing --predictions FILE"), ("--result", "missing --result FILE")):
        if name not in found:
            raise Refused(EXIT_USAGE, text)
    if len({found["--checkpoint-out"], found["--predictions"], found["--result"]}) != 3:
        raise Refused(EXIT_USAGE, "--checkpoint-out, --predictions and --result must be three different files")
    found["op"] = op
    return found


# ---- files ----

def read_file(what: str, path: str, limit: int, code: int) -> safe_io.InputFile:
    """runtime_c/host_io.c rt_io_read's rules and messages."""
    def refuse(name, part, detail):
        if part == "size" and "this file can be" in detail:
            detail = detail.replace("this file can be", f"{'an' if what[:1] in 'aeiou' else 'a'} {what} can be")
        return Refused(code, f"{what} {name}: {detail}")
    return safe_io.read_input(path, refuse, limit)


def _printable(data: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 else "?" for b in data)


TEXT_WINDOW = 64


def starts_as_text(data: bytes) -> bool:
    """native_request.c starts_as_text: the first TEXT_WINDOW bytes (all when shorter; at least
    one) are UTF-8 (a sequence the window cuts counts) with no control byte but tab, line feed
    and carriage return.  A stream's header has zero bytes in its words, so never is."""
    window = data[:TEXT_WINDOW]
    if not window:
        return False
    i = 0
    while i < len(window):
        b = window[i]
        if b < 0x80:
            if (b < 32 and b not in (9, 10, 13)) or b == 127:
                return False
            i += 1
            continue
        more = 1 if 0xC2 <= b <= 0xDF else 2 if 0xE0 <= b <= 0xEF else 3 if 0xF0 <= b <= 0xF4 else -1
        if more < 0:
            return False
        low = 0xA0 if b == 0xE0 else 0x90 if b == 0xF0 else 0x80
        high = 0x9F if b == 0xED else 0x8F if b == 0xF4 else 0xBF
        for k in range(1, more + 1):
            if i + k >= len(window):
                break
            c = window[i + k]
            if not (low if k == 1 else 0x80) <= c <= (high if k == 1 else 0xBF):
                return False
        i += more + 1
    return True


def check_stream(request: Request, data: bytes, path: str) -> None:
    """The token stream's header, size, digest and tokens (docs/formats.md, "Token stream")."""
    s = request.stream

    def refuse(part, detail):
        raise Refused(EXIT_INPUT, f"input {path}: token stream {part}: {detail}")
    # a text given where its stream belongs: the refusal says how a text becomes one
    text = ("the file starts as text, and a text is made a token stream first: docs/formats.md, \"Token stream\""
            if starts_as_text(data) else "")
    if len(data) < s.header_bytes:
        refuse("header", f"{_count(len(data), 'byte')}, shorter than the {s.header_bytes}-byte header"
                         + (f" ({text})" if text else ""))
    magic = data[:len(s.magic)]
    if magic != s.magic:
        refuse("magic", f"'{_printable(magic)}' is not '{_printable(s.magic)}' (not a token stream this host reads"
                        + (f"; {text}" if text else "") + ")")
    for part, at, want in (("version", 8, s.version), ("token bytes", 12, s.token_bytes),
                           ("vocabulary", 16, s.vocabulary), ("header bytes", 20, s.header_bytes)):
        have = _le(data, at, 4)
        if have != want:
            refuse(part, f"{have}, this host reads {want}")
    count = _le(data, 24, 8)
    if count > (len(data) - s.header_bytes) // s.token_bytes or s.header_bytes + count * s.token_bytes != len(data):
        refuse("token count", f"the header says {_count(count, 'token')}, the file has {_count(len(data), 'byte')} "
                              f"({s.header_bytes}-byte header, {s.token_bytes}-byte tokens)")
    body = data[s.header_bytes:]
    if hashlib.sha256(body).digest() != data[32:64]:
        refuse("sha256", "the tokens do not match the header's digest (corrupted)")
    tokens = np.frombuffer(body, dtype={1: "<u1", 2: "<u2", 4: "<u4"}[s.token_bytes])
    bad = np.flatnonzero(tokens >= s.vocabulary)
    if bad.size:
        refuse("token", f"token {int(tokens[bad[0]])} at index {int(bad[0])} is outside the vocabulary of "
                        f"{s.vocabulary}")


def check_reach(request: Request, op: str, size: int, step: int, path: str, checkpoint: str | None = None) -> None:
    """The input holds what the operation's reads reach: from its start, and from the cursor.  A refusal
    at the cursor names the checkpoint its step came from (`checkpoint`, the path as shown; None: the
    fresh state), as native_request.c's check_reach."""
    source = f"checkpoint {checkpoint}" if checkpoint is not None else "the fresh state"
    reach = request.train if op == "train" else request.predict
    if reach.records > size:
        raise Refused(EXIT_INPUT, f"input {path}: {_count(size, 'byte')}, but a {op} request reads "
                                  f"{_count(reach.records, 'byte')} of it")
    if reach.cursor == 0:
        return
    cursor = request.cursor_base + step * request.cursor_scale
    if cursor > size:
        raise Refused(EXIT_INPUT, f"input {path}: {source}'s step {step} puts the cursor at byte {cursor}, "
                                  f"past the stream's {_count(size, 'byte')} (a checkpoint of a longer stream?)")
    if reach.cursor > size - cursor:
        tokens = ""         # a token stream's reach in tokens too, where it is whole tokens from a token's start
        s = request.stream
        if s is not None and cursor >= s.header_bytes and (cursor - s.header_bytes) % s.token_bytes == 0 \
                and reach.cursor % s.token_bytes == 0:
            tokens = (f" ({_count((size - cursor) // s.token_bytes, 'token')} from the cursor on, "
                      f"{reach.cursor // s.token_bytes} needed: give a longer stream)")
        raise Refused(EXIT_INPUT, f"input {path}: the stream is shorter than a {op} request needs: it reads "
                                  f"{_count(reach.cursor, 'byte')} from the cursor at byte {cursor}, to byte "
                                  f"{cursor + reach.cursor}; the stream has {_count(size, 'byte')}{tokens}"
                                  + (f"; the cursor is {source}'s step {step}" if checkpoint is not None else ""))


def _refused(error: FileRefused) -> Refused:
    """An envelope refusal (reference/envelope.py, host_runtime.c's words) as the request's."""
    return Refused(error.exit_code, error.message)


def oversized_foreign(request: Request, path: str, most: int, refused: Refused) -> Refused:
    """host_runtime.c oversized_foreign: a checkpoint file larger than this host's can be whose
    header names another identity is refused as foreign (exit 5), not by its size."""
    try:
        envelope.foreign_by_header(path, request.contract, most)
    except FileRefused as error:
        return _refused(error)
    return refused


def check_envelope(request: Request, e: bytes, path: str) -> tuple[bytes, int]:
    """(payload, step): runtime_c/host_runtime.c rt_envelope_check, its order and messages
    (reference/envelope.decode, the twin the plan host's reference runner uses too)."""
    try:
        return envelope.decode(e, request.contract, path)
    except FileRefused as error:
        raise _refused(error) from None


def fresh_payload(request: Request) -> bytes:
    """The fresh state: initializer i fills chunk i (the last may be a tail), zeros past the list
    (runtime_c/host_runtime.c rt_init_chunk)."""
    contract = request.contract
    out = bytearray(contract.payload_bytes)
    for index, init in enumerate(request.fresh):
        start = index * contract.chunk_bytes
        if start >= contract.payload_bytes:
            break
        size = min(contract.chunk_bytes, contract.payload_bytes - start)
        if init.kind != FRESH_SPLITMIX64:
            continue
        out[start:start + size // 4 * 4] = splitmix64_chunk(init.seed, init.shift, init.center, init.denominator, size)
    return bytes(out)


def _output_refused(error: OutputWriteFailure) -> Refused:
    return Refused(EXIT_WRITE, error.host_form())


class RequestSession:
    """One request: its arguments, input, checkpoint, outputs and publications."""

    def __init__(self, request: Request, argv, program: str, stdout=None, inputs=()):
        self.request = request
        self.args = parse_args_or_help(argv, program, stdout, "STREAM" if request.stream is not None else "RECORD")
        self.op = self.args["op"]
        paths = [self.args[option] for _, option in OUTPUTS]
        try:
            safe_io.recover(paths)
        except OutputWriteFailure as error:      # runtime_c/host_io.c rt_io_recover's form
            raise Refused(EXIT_WRITE, f"journal {error.path}: {error.detail}; {error.hint}") from None
        source = read_file("input", self.args["--input"], safe_io.INPUT_LIMIT_BYTES, EXIT_INPUT)
        self.input = source.data
        # `inputs`: what the command read besides the request's own files (safe_io.InputFile: `bobc run
        # PLAN native`'s plan modules and --kernels file), which no output may replace either
        self.files = safe_io.OutputSet(inputs=list(inputs))
        self.files.inputs.append(source)
        if request.stream is not None:
            check_stream(request, self.input, safe_io.shown(self.args["--input"]))
        checkpoint_file = None
        if "--checkpoint" in self.args:
            path = self.args["--checkpoint"]
            total = envelope.file_bytes(request.contract)
            try:
                checkpoint_file = read_file("checkpoint", path, total + (1 << 20), EXIT_CHECKPOINT)
            except Refused as refused:
                raise oversized_foreign(request, path, total + (1 << 20), refused) from None
            self.payload, self.step = check_envelope(request, checkpoint_file.data, path)
            self.files.inputs.append(checkpoint_file)
            if self.op == "train":
                refusal = safe_io.step_room_refusal(self.step, request.contract.updates_per_invocation)
                if refusal is not None:
                    raise Refused(EXIT_CHECKPOINT, f"checkpoint {safe_io.shown(path)}: {refusal}")
        else:
            self.payload, self.step = fresh_payload(request), 0
        check_reach(request, self.op, len(self.input), self.step, safe_io.shown(self.args["--input"]),
                    safe_io.shown(self.args["--checkpoint"]) if "--checkpoint" in self.args else None)
        for file, option in OUTPUTS:
            try:
                self.files.add(self.args[option], option,
                               replaces=checkpoint_file if file == FILE_CHECKPOINT_OUT else None)
            except OutputWriteFailure as error:
                raise _output_refused(error) from None
        self.out = {FILE_CHECKPOINT_OUT: bytearray(), FILE_PREDICTIONS: bytearray(), FILE_RESULT: bytearray()}
        self.publications = (request.train if self.op == "train" else request.predict).publications
        self.published = 0
        self.written = self.written_step = 0   # interval publications already at --checkpoint-out
        self.reached = self.step
        self.staged_checkpoint = None

    # ---- the commands ----
    def source(self, file: int) -> bytes:
        return self.input if file == FILE_INPUT else self.payload

    def read(self, file: int, offset: int, extent: int) -> bytes:
        data = self.source(file)
        if offset > len(data) or extent > len(data) - offset:
            what = "input" if file == FILE_INPUT else "checkpoint payload"
            raise Refused(EXIT_INPUT if file == FILE_INPUT else EXIT_INTERNAL,
                          f"{_count(extent, 'byte')} at {offset} of the {len(data)}-byte {what}")
        return data[offset:offset + extent]

    def write(self, file: int, data: bytes, offset: int | None = None) -> None:
        out = self.out[file]
        at = len(out) if offset is None else offset
        room = self.request.contract.payload_bytes
        if file == FILE_CHECKPOINT_OUT and self.published >= self.publications:
            # the C host stages the envelope it gathers into: a later write would change what it publishes
            raise Refused(EXIT_INTERNAL, f"the program writes {_count(len(data), 'checkpoint byte')} after the "
                                         f"request's last "
                                         f"publication ({self.published} of {self.publications})")
        if file == FILE_CHECKPOINT_OUT and (at > room or len(data) > room - at):
            # the C host gathers the payload into an envelope of the contract's size
            raise Refused(EXIT_INTERNAL, f"the program writes {_count(len(data), 'checkpoint byte')} at {at}, past the "
                                         f"contract's {room}-byte payload")
        if file != FILE_CHECKPOINT_OUT and (at > OUTPUT_LIMIT or len(data) > OUTPUT_LIMIT - at):
            # native_request.c np_request_write: refused before anything is written
            what = "predictions" if file == FILE_PREDICTIONS else "result"
            raise Refused(EXIT_INTERNAL, f"the program writes {_count(len(data), 'byte')} at {at} of the {what}, past "
                                         f"the {OUTPUT_LIMIT} bytes an output holds at most")
        if at + len(data) > len(out):
            out.extend(bytes(at + len(data) - len(out)))
        out[at:at + len(data)] = data

    def status(self, issued: int) -> bytes:
        return b"".join(w.to_bytes(8, "little") for w in (self.reached, issued, self.published))

    def checkpoint_begin(self) -> None:
        self.out[FILE_CHECKPOINT_OUT] = bytearray()

    def checkpoint_publish(self, updates: int) -> None:
        if self.published >= self.publications:
            raise Refused(EXIT_INTERNAL, f"the program publishes checkpoint {self.published + 1}; the request "
                                         f"publishes {self.publications}")
        payload = bytes(self.out[FILE_CHECKPOINT_OUT])
        if len(payload) != self.request.contract.payload_bytes:
            raise Refused(EXIT_INTERNAL, f"the program wrote {_count(len(payload), 'checkpoint byte')}, the "
                                         f"contract holds "
                                         f"{self.request.contract.payload_bytes}")
        step = self.step + updates
        data = envelope.encode(self.request.contract, step, payload)
        if self.published + 1 < self.publications:
            try:
                safe_io.publish_file(self.args["--checkpoint-out"], data, "--checkpoint-out")
            except OutputWriteFailure as error:      # in the C host's words (rt_publish_atomic_as)
                raise _output_refused(error) from None
            self.written, self.written_step = self.published + 1, step
        else:
            self.staged_checkpoint = data
        self.published += 1
        self.reached = step

    def failure_line(self, said: bytes = b"") -> bytes:
        """A failing run's message `said` and what it says it left behind, ending the line (the C
        host's np_request_failure_note): once an interval publication is at checkpoint-out,
        safe_io.interval_note's words."""
        if not self.written:
            return said + nothing_note(said)
        return (safe_io.interval_note(said.decode("utf-8", "surrogateescape"), self.written, self.publications,
                                      self.written_step, self.args["--checkpoint-out"])
                + "\n").encode("utf-8", "surrogateescape")

    def finish(self) -> None:
        """Publish predictions, result and checkpoint together (the input state handed on
        unchanged when the request published none)."""
        if self.staged_checkpoint is None:
            self.staged_checkpoint = envelope.encode(self.request.contract, self.step, self.payload)
        self.files.stage("--predictions", bytes(self.out[FILE_PREDICTIONS]))
        self.files.stage("--result", bytes(self.out[FILE_RESULT]))
        self.files.stage("--checkpoint-out", self.staged_checkpoint)
        self.files.publish()


def nothing_note(said: bytes) -> bytes:
    """The end of a failing run's line when nothing was published: "; nothing was published",
    or only the line's end when the message `said` already says so (an output's refusal ends
    "; nothing was written")."""
    told = said.endswith((b"nothing was written", b"nothing was published", b"(nothing was published)"))
    return b"\n" if told else b"; nothing was published\n"


def parse_args_or_help(argv, program: str, stdout, input_name: str = "RECORD"):
    try:
        return parse_args(argv, input_name, plan_host=False)
    except Help:
        import sys
        stream = stdout if stdout is not None else sys.stdout
        stream.write(USAGE.format(program=program, input=input_name))
        stream.flush()
        raise

