"""A user's own native physical programs, run by the C host (NATIVE_DEVICE=memory) and the
reference interpreter side by side (probe s34 nativeauthor): what the two said or wrote
differently, each now the same, and what the writer refuses at build.

The programs are put together by hand (docs/platform.md's encoding), and the C host is the
interpreter with the program appended past bobc's writer."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from test_native_bounds_s34 import field, immediate, nat, program   # the program-file builders

ROOT = Path(__file__).resolve().parents[2]


END, CONVERT, WRITE_FILE, OPEN_DEVICE, MAP = 0, 7, 15, 16, 17
WIDEN_BINARY32 = 3      # Convert's Binary32ToBinary64


def write_file(argument: int, state: int, count: int) -> bytes:
    return bytes([WRITE_FILE]) + nat(argument) + nat(state) + nat(count)


def c_host(tmp_path: Path, code: bytes) -> Path:
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes

    host = tmp_path / "host"
    host.write_bytes(interpreter_bytes() + trailer(code, "sm_90"))
    host.chmod(0o755)
    return host


def folders(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "c").mkdir()
    (tmp_path / "r").mkdir()
    return tmp_path / "c", tmp_path / "r"


# ---- finding 3: a binary32 NaN widened, no NumPy warning on the reference's stderr ----

def test_a_binary32_signalling_nan_widened_alike_and_without_a_warning(tmp_path):
    """Convert Binary32ToBinary64 of 0x7f800001 (a signalling NaN): IEEE 754 delivers a quiet NaN
    (the quiet bit set, the payload kept: the 23-bit fraction moved up 29 bits).  Both hosts write
    it, and neither says anything: the reference printed NumPy's "invalid value encountered in
    cast" RuntimeWarning and its source line on stderr."""
    from bobc.reference.native_program import run_program

    code = program(bytes([CONVERT, WIDEN_BINARY32]) + nat(0) + immediate(0x7F800001) + write_file(0, 0, 8)
                   + bytes([END]))
    c_folder, r_folder = folders(tmp_path)
    environ = {"NATIVE_DEVICE": "memory", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(c_host(tmp_path, code)), "out"], cwd=c_folder, capture_output=True, timeout=60,
                          env=environ)
    stderr = io.BytesIO()
    before = os.getcwd()
    os.chdir(r_folder)
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            status = run_program(code, ["out"], name="host", stderr=stderr, environ=environ)
    finally:
        os.chdir(before)
    assert [str(w.message) for w in said] == []
    assert (status, stderr.getvalue()) == (done.returncode, done.stderr) == (0, b"")
    quiet = 0x7FF0000000000000 | (1 << 51) | (0x000001 << 29)
    assert (c_folder / "out").read_bytes() == (r_folder / "out").read_bytes() == quiet.to_bytes(8, "little")


# ---- finding 2: the memory session out of memory at a Map: the same refusal ----

LIMIT = 6 << 30         # the address space both runs get (RLIMIT_AS): a 1 TiB buffer cannot fit it
TiB = 1 << 40           # the largest buffer a Map takes (docs/native-host.md, "Limits")

REFERENCE = """
import io, sys
from bobc.reference.native_program import run_program
err = io.BytesIO()
status = run_program(bytes.fromhex(sys.argv[1]), [], name="host", stderr=err)
sys.stderr.buffer.write(err.getvalue())
sys.exit(status)
"""


def limited():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def test_a_map_the_memory_session_cannot_hold_is_its_refusal_on_both_hosts(tmp_path):
    """The buffer is the program's device memory: the memory session refuses it, status 3 naming
    the command and the buffer, as the C host does -- the reference stopped with bobc's own
    `bobc run: error: out of memory ... this is not a fault in the plan or in bobc`, exit 1."""
    code = program(bytes([OPEN_DEVICE]) + field(bytes(16))
                   + bytes([MAP]) + field(b"huge") + nat(1 << 40) + nat(1 << 41) + nat(TiB) + nat(0)
                   + bytes([END]))
    environ = {"NATIVE_DEVICE": "memory", "PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1",
               "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "compiler")}
    c_folder, r_folder = folders(tmp_path)
    host = c_host(tmp_path, code)
    done_c = subprocess.run([str(host)], cwd=c_folder, capture_output=True, timeout=60, env=environ,
                            preexec_fn=limited)
    done_r = subprocess.run([sys.executable, "-c", REFERENCE, code.hex()], cwd=r_folder, capture_output=True,
                            timeout=120, env=environ, preexec_fn=limited)
    said = f'native: command 1 (Map): buffer "huge": out of memory ({TiB} bytes); nothing was published\n'.encode()
    assert (done_c.returncode, done_c.stderr) == (3, said)
    assert (done_r.returncode, done_r.stderr) == (3, said)


# ---- findings 1 and 5: what no run could carry out is refused before the first command ----

READ_FILE, WRITE_MAPPED_FILE, REQUEST_OPEN = 14, 25, 26
OUTPUT_FILES = 8            # docs/native-host.md, "Limits": at most 8 output files
INPUT_LIMIT = 1 << 30       # docs/native-host.md, "Files": ReadFile reads a file of at most 1 GiB


def both(tmp_path: Path, code: bytes, arguments) -> tuple[int, bytes, int, bytes, dict, dict]:
    """The C host's and the reference's status and stderr, each in a folder of its own, and the
    files each left there."""
    from bobc.reference.native_program import run_program

    c_folder, r_folder = folders(tmp_path)
    host = c_host(tmp_path, code)
    environ = {"NATIVE_DEVICE": "memory", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(host), *arguments], cwd=c_folder, capture_output=True, timeout=60, env=environ)
    stderr = io.BytesIO()
    before = os.getcwd()
    os.chdir(r_folder)
    try:
        status = run_program(code, list(arguments), name=str(host), stderr=stderr, environ=environ)
    finally:
        os.chdir(before)
    files = [sorted(p.name for p in folder.iterdir()) for folder in (c_folder, r_folder)]
    return done.returncode, done.stderr, status, stderr.getvalue(), *files


def damaged(tmp_path: Path, message: str) -> bytes:
    return f"native: {tmp_path / 'host'}: damaged host file: its program: {message}; rebuild it\n".encode()


def writer_refusal(code: bytes) -> str:
    from bobc.errors import BobcError
    from bobc.native.writer import native_host

    with pytest.raises(BobcError) as refused:
        native_host(code, "sm_90")
    return str(refused.value)


def writing(arguments: list[int]) -> bytes:
    """WriteFile of the first state word to each argument in turn."""
    return program(b"".join(write_file(a, 0, 8) for a in arguments) + bytes([END]))


def test_eight_output_files_are_published_alike(tmp_path):
    """The bound: 8 outputs (one written twice, still one file) run on both hosts."""
    code = writing([0, 1, 2, 3, 3, 4, 5, 6, 7])
    names = [f"o{k}" for k in range(OUTPUT_FILES)]
    assert both(tmp_path, code, names) == (0, b"", 0, b"", names, names)


def test_a_ninth_output_file_is_refused_alike_before_the_first_command(tmp_path):
    """9 distinct output arguments: the C host refused the program before its first command
    naming no command ("the program writes more than 8 files", exit 8) while the reference
    published all nine, exit 0; now both hosts and the writer refuse it, naming the command."""
    code = writing([0, 1, 2, 2, 3, 4, 5, 6, 7, 8])
    names = [f"o{k}" for k in range(9)]
    message = ("command 9 (WriteFile): argument 8 is output file 9, more than the 8 a host publishes; write fewer "
               "files (an argument written twice is one file)")
    assert both(tmp_path, code, names) == (9, damaged(tmp_path, message), 9, damaged(tmp_path, message), [], [])
    assert writer_refusal(code).startswith(f"the native physical program is refused: {message}")


def test_a_write_mapped_file_counts_as_an_output_file(tmp_path):
    code = program(b"".join(write_file(a, 0, 8) for a in range(8))
                   + bytes([WRITE_MAPPED_FILE]) + nat(8) + nat(0x1000) + nat(8) + bytes([END]))
    assert writer_refusal(code).startswith(
        "the native physical program is refused: command 8 (WriteMappedFile): argument 8 is output file 9, more "
        "than the 8 a host publishes;")


def test_a_request_programs_own_outputs_count(tmp_path):
    """A request publishes --checkpoint-out, --predictions and --result among the host's 8 files:
    a sixth WriteFile argument would be its ninth output (the C host refused it only once the
    request was open, `too many outputs`)."""
    from bobc.native.program import ProgramError, decode

    request = request_bytes()
    opened = bytes([REQUEST_OPEN]) + field(request) + nat(0) + nat(8)
    five = program(opened + b"".join(write_file(a, 16, 8) for a in range(5)) + bytes([END]), state=64)
    decode(five)
    six = program(opened + b"".join(write_file(a, 16, 8) for a in range(6)) + bytes([END]), state=64)
    message = ("command 6 (WriteFile): argument 5 is output file 6, more than the 5 a host publishes beside a "
               "request's three (--checkpoint-out, --predictions, --result); write fewer files (an argument written "
               "twice is one file)")
    with pytest.raises(ProgramError) as refused:
        decode(six)
    assert str(refused.value) == message
    assert both(tmp_path, six, ["train"])[:4] == (9, damaged(tmp_path, message), 9, damaged(tmp_path, message))


def request_bytes() -> bytes:
    """A small well-formed request (docs/native-host.md, "Requests": nativePhysicalRequestBytes's
    layout), a record input and a zero fresh state."""
    def text(value: bytes) -> bytes:
        return nat(len(value)) + value
    return (text(b"schema") + text(b"learner") + text(b"data") + text(b"seed")
            + nat(64) + nat(64) + nat(1)        # payload bytes, chunk bytes, updates per invocation
            + nat(0)                            # the input: a record
            + nat(0)                            # the fresh state: the list's end (zeros)
            + nat(0) + nat(0)                   # the cursor's base and scale
            + nat(0) + nat(0) + nat(1)          # train: records, cursor, publications
            + nat(0) + nat(0) + nat(0))         # predict: records, cursor, publications


def test_a_read_file_of_more_than_1_gib_is_refused_before_the_first_command(tmp_path):
    """No file over 1 GiB is read, so a ReadFile of more refused every file it was given (one of
    that size "more than an argument 0 can be", any other "not the N the program reads"): now
    the program is refused, naming the command and the limit.  The state holds the read, so the
    refusal is this one, not the state range's."""
    code = program(bytes([READ_FILE]) + nat(0) + nat(0) + nat(INPUT_LIMIT + 1) + bytes([END]), state=INPUT_LIMIT + 8)
    message = (f"command 0 (ReadFile): it reads {INPUT_LIMIT + 1} bytes, more than the {INPUT_LIMIT} (1 GiB) an input "
               "file may hold; read a file of at most that")
    (tmp_path / "in").write_bytes(b"")
    assert both(tmp_path, code, ["in"])[:4] == (9, damaged(tmp_path, message), 9, damaged(tmp_path, message))
    assert writer_refusal(code).startswith(f"the native physical program is refused: {message}")


def test_a_read_file_of_1_gib_is_taken(tmp_path):
    """At the bound the program is taken: the run reads (here refuses a file of the wrong size)."""
    from bobc.native.program import decode

    decode(program(bytes([READ_FILE]) + nat(0) + nat(0) + nat(INPUT_LIMIT) + bytes([END]), state=INPUT_LIMIT))


# ---- finding 6: a native host's --version says how it refuses another driver branch ----

def test_a_native_hosts_version_names_its_own_status_for_another_driver_branch(tmp_path):
    """A native program's host meets the driver at OpenDevice and fails there with the device's
    status, 3 (6 once a request is open: docs/native-host.md, "Exit codes"); its --version said
    the plan host's "another branch is refused, exit 6"."""
    from bobc.native.writer import native_host

    host = tmp_path / "host"
    host.write_bytes(native_host(program(bytes([END])), "sm_90"))
    host.chmod(0o755)
    done = subprocess.run([str(host), "--version"], capture_output=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    line = next(t for t in done.stdout.decode().splitlines() if t.startswith("driver branch: "))
    assert line.endswith("another branch is refused at OpenDevice, exit 3 (6 once a request is open))"), line


# ---- finding 4: a NaN operand's payload, the same on both hosts ----

FLOAT = 6
QUIET = 1 << 51
NEGATIVE_QUIET_NAN = 0xFFF8000000000000      # x86's default NaN
SIGNALLING_NAN = 0x7FF0000000000001
QUIET_NAN_WITH_PAYLOAD = 0x7FF8000000000123


def test_a_nan_operand_gives_that_nan_quieted_the_left_one_of_two_on_both_hosts(tmp_path):
    """docs/native-host.md, "Arithmetic": an Add of a quiet NaN (left) and a signalling NaN
    (right) gave the left NaN on the C host and the right one, quieted, on the reference (NumPy
    swapped the commutative operands).  Each of the four operations on each pair of operands
    gives the left NaN quieted when both are NaN, else the NaN one quieted."""
    pairs = [(NEGATIVE_QUIET_NAN, SIGNALLING_NAN), (SIGNALLING_NAN, NEGATIVE_QUIET_NAN),
             (QUIET_NAN_WITH_PAYLOAD, SIGNALLING_NAN), (0x3FF0000000000000, SIGNALLING_NAN),
             (SIGNALLING_NAN, 0x4000000000000000), (0x3FF0000000000000, QUIET_NAN_WITH_PAYLOAD)]
    commands, expected = b"", b""
    for left, right in pairs:
        for operation in range(4):
            destination = len(expected)
            commands += bytes([FLOAT, operation]) + nat(destination) + immediate(left) + immediate(right)
            nan_left = (left >> 52) & 0x7FF == 0x7FF and left & ((1 << 52) - 1)
            expected += ((left if nan_left else right) | QUIET).to_bytes(8, "little")
    code = program(commands + write_file(0, 0, len(expected)) + bytes([END]), state=len(expected))
    assert both(tmp_path, code, ["out"]) == (0, b"", 0, b"", ["out"], ["out"])
    assert (tmp_path / "c" / "out").read_bytes() == (tmp_path / "r" / "out").read_bytes() == expected


# ---- a program identity holding control bytes: one dump line, one inspect line ----

def test_an_identity_with_a_newline_and_a_nul_is_one_line_in_dump_and_inspect(tmp_path):
    """`bobc dump` is one `key = value` line per fact (`bobc diff` compares them by key): a
    program identity holding a newline wrote a line of its own, and its NUL a raw zero byte."""
    from bobc.native.writer import native_host

    identity = b"id\nnext\x00z"
    code = b"NPHY" + (1).to_bytes(4, "little") + nat(0) + nat(64) + field(identity) + bytes([END])
    host = tmp_path / "host"
    host.write_bytes(native_host(code, "sm_90"))
    environ = {**os.environ, "PYTHONPATH": str(ROOT / "compiler")}
    dump = subprocess.run([sys.executable, "-m", "bobc", "dump", str(host)], capture_output=True, timeout=120,
                          env=environ)
    assert dump.returncode == 0, dump.stderr
    lines = dump.stdout.split(b"\n")[:-1]
    assert all(b" = " in line and all(b >= 0x20 for b in line) for line in lines), lines
    assert b"program.identity = id\\x0anext\\x00z" in lines
    inspect = subprocess.run([sys.executable, "-m", "bobc", "inspect", str(host)], capture_output=True, timeout=120,
                             env=environ)
    assert inspect.returncode == 0, inspect.stderr
    assert b"  identity id\\x0anext\\x00z\n" in inspect.stdout
