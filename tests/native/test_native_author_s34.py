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

ROOT = Path(__file__).resolve().parents[2]


def nat(value: int) -> bytes:
    return value.to_bytes(8, "little")


def immediate(value: int) -> bytes:
    return b"\0" + nat(value)


def field(data: bytes) -> bytes:
    return nat(len(data)) + data


def program(commands: bytes, state: int = 64, slots: int = 0) -> bytes:
    return b"NPHY" + (1).to_bytes(4, "little") + nat(slots) + nat(state) + nat(0) + commands


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
