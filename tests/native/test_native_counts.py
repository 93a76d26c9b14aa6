"""A count of 1 in a native host's message is said in the singular ("1 byte", "1 slot", "1 file
argument"), by the C host (runtime_c/host_runtime.h rt_plural) and the reference interpreter
(bobc.native.words.count) alike, byte for byte, at every count: each case is run at 1 and at 2
both ways and the two messages compared.  Programs are written here byte by byte
(docs/native-host.md's encoding); one the host refuses is wrapped as a host the way bobc's
writer would (bobc build refuses it first)."""
from __future__ import annotations

import io
import subprocess

import pytest

from native_helpers import run_sides, write_host


def n(value: int) -> bytes:
    return value.to_bytes(8, "little")


def program(*commands: bytes, slots: int = 0, state: int = 16, identity: bytes = b"counts") -> bytes:
    return b"NPHY" + (1).to_bytes(4, "little") + n(slots) + n(state) + n(len(identity)) + identity + b"".join(commands)


END = bytes([0])


def command(code: int, *fields: bytes) -> bytes:
    return bytes([code]) + b"".join(fields)


def data(value: bytes) -> bytes:
    return n(len(value)) + value


def set_slot(slot: int, then: bytes = END) -> bytes:
    return command(3, n(slot), bytes([0]) + n(7)) + then          # Set slot <- immediate 7


def request(payload: int, chunk: int, tail: bytes = b"") -> bytes:
    """A request's bytes (bobc.native.request): four identities, payload bytes and chunk bytes, and
    whatever `tail` holds (the refusals below come before the rest is read)."""
    return b"".join(data(x) for x in (b"s", b"l", b"d", b"e")) + n(payload) + n(chunk) + n(1) + tail


def valid_request() -> bytes:
    """A request parse_request accepts: a record input, no fresh state, no reach."""
    from bobc.native.request import parse_request
    body = request(8, 8, n(0) + n(0) + n(0) + n(0) + n(0) * 6)
    parse_request(body)
    return body


def refused_both(tmp_path, code: bytes, name: str) -> str:
    """The C host's refusal of `code` (a damaged host file, exit 9) and the reference's, the same."""
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes
    from bobc.native.program import ProgramError, decode
    from bobc.reference.native_program import run_program

    with pytest.raises(ProgramError):
        decode(code)
    host = tmp_path / name
    host.write_bytes(interpreter_bytes() + trailer(code, "sm_90"))
    host.chmod(0o755)
    done = subprocess.run([str(host)], capture_output=True, timeout=60)
    stderr = io.BytesIO()
    assert run_program(code, [], name=str(host), stderr=stderr) == done.returncode == 9
    assert stderr.getvalue() == done.stderr
    text = done.stderr.decode()
    prefix = f"native: {host}: damaged host file: its program: "
    assert text.startswith(prefix) and text.endswith("; rebuild it\n"), text
    return text[len(prefix):-len("; rebuild it\n")]


def open_request(body: bytes) -> bytes:
    return command(26, data(body), n(0), n(8)) + END


PROGRAMS = {
    # name: (the program at count k, its refusal at count k)
    "slots": (lambda k: program(set_slot(5), slots=k),
              lambda k: f"command 0 (Set): slot 5, but the program has {k} slot{'s' * (k != 1)}"),
    "after the last command": (lambda k: program(END) + bytes(k),
                               lambda k: f"{k} byte{'s' * (k != 1)} after the program's last command"),
    "GPU UUID": (lambda k: program(command(16, data(bytes(k))) + END),
                 lambda k: f"command 0 (OpenDevice): the GPU UUID has {k} byte{'s' * (k != 1)}, not 16 (the UUID's raw "
                           "bytes, not its text GPU-xxxxxxxx-...; 16 zero bytes for the first GPU)"),
    # a Set's one field, a Repeat's two, still to come
    "fields to come": (lambda k: program(command(3, n(0), bytes([0]) + n(7)) if k == 1
                                         else command(12, bytes([0]) + n(3)), slots=1),
                       lambda k: f"with {k} command field{'s' * (k != 1)} still to come (cut short)"),
    "request after its last field": (lambda k: program(open_request(valid_request() + bytes(k))),
                                     lambda k: f"the request's bytes: {k} byte{'s' * (k != 1)} after its last field"),
    "request chunks": (lambda k: program(open_request(request(0, k))),
                       lambda k: f"the request's bytes: a 0-byte payload in chunks of {k} byte{'s' * (k != 1)} "
                                 "(a chunk is 1 byte to the payload)"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("k", [1, 2])
def test_a_refused_program_is_counted_in_the_same_words(tmp_path, name, k):
    code, words = PROGRAMS[name]
    said = refused_both(tmp_path, code(k), f"host-{k}")
    assert said.endswith(words(k)), said


def read_file(argument: int, size: int) -> bytes:
    return command(14, n(argument), n(0), n(size)) + END         # ReadFile ARG -> state[0, size)


@pytest.mark.parametrize("k", [1, 2])
def test_a_file_of_the_wrong_size_is_counted_in_the_same_words(tmp_path, k):
    code = program(read_file(0, 4))
    host = write_host(tmp_path, "reads-4", code)
    c, reference = run_sides(tmp_path, code, host, {"in.bin": bytes(k)}, ["in.bin"], name=f"size-{k}")
    assert (c.status, c.stderr) == (reference.status, reference.stderr)
    assert f"argument 0 in.bin: {k} byte{'s' * (k != 1)}, not the 4 the program reads".encode() in c.stderr, c.stderr


@pytest.mark.parametrize("k", [1, 2])
def test_the_usage_counts_the_file_arguments_in_the_same_words(tmp_path, k):
    code = program(read_file(k - 1, 4))
    host = write_host(tmp_path, f"arguments-{k}", code)
    c, reference = run_sides(tmp_path, code, host, {}, [], name=f"usage-{k}")
    assert (c.status, c.stderr) == (reference.status, reference.stderr) and c.status == 2
    assert c.stderr.endswith(f": the program names {k} file argument{'s' * (k != 1)}, 0 given (it carries no names "
                             "for them: the plan that built program counts says what each is)\n".encode()), c.stderr


SUMMARIES = [
    # (program, --version's counts, bobc inspect's counts)
    (program(END, slots=1, state=1), "1 command, 1 slot, 1 state byte, 0 arguments",
     "1 command, 1 slot, 1-byte state, 0 file arguments"),
    (program(END, slots=2, state=2), "1 command, 2 slots, 2 state bytes, 0 arguments",
     "1 command, 2 slots, 2-byte state, 0 file arguments"),
    (program(read_file(0, 1), state=1), "2 commands, 0 slots, 1 state byte, 1 argument",
     "2 commands, 0 slots, 1-byte state, 1 file argument"),
    (program(read_file(1, 1), state=1), "2 commands, 0 slots, 1 state byte, 2 arguments",
     "2 commands, 0 slots, 1-byte state, 2 file arguments"),
]


@pytest.mark.parametrize("index", range(len(SUMMARIES)))
def test_version_and_inspect_count_the_program_in_the_singular(tmp_path, index):
    """`HOST --version` (the C host alone) and `bobc inspect` (bobc alone) say "1 command, 1 slot"."""
    from bobc.host import native

    code, version, inspected = SUMMARIES[index]
    host = write_host(tmp_path, f"version-{index}", code)
    done = subprocess.run([str(host), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"program: counts ({version})\n" in done.stdout, done.stdout
    text = "\n".join(native.summary(host)[0])
    assert f" bytes, {inspected}  sha256 " in text, text
