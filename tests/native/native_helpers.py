"""Helpers for the native physical program tests (tests/native): the synthetic modules in
plans/Native, their programs' canonical bytes (through the plan language's own
nativePhysicalProgramBytes), a built C host per program, and a runner that carries a
program out both ways -- the C host (NATIVE_DEVICE=memory, no GPU) and the reference
interpreter -- in two folders with the same relative file names, so their files,
statuses and messages can be compared as they are."""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

PLANS = Path(__file__).resolve().parent / "plans"
BYTES_DEFINITION = "Runtime.NativePhysicalProgram.nativePhysicalProgramBytes"


def load_module(path: Path):
    from bobc.language import load_program
    from bobc.targets import SM86
    from bobc.plan.intrinsics import default_intrinsics

    program = load_program(path, intrinsics=default_intrinsics(), target=SM86)
    program.check()
    return program


def program_bytes(program, name: str) -> bytes:
    encoder = program.definition(BYTES_DEFINITION)
    return bytes(program.apply(encoder.thunk, program.definition(name).thunk).value)


def write_host(folder: Path, name: str, code: bytes, target: str = "sm_90") -> Path:
    from bobc.native.writer import native_host

    path = folder / name
    path.write_bytes(native_host(code, target))
    path.chmod(0o755)
    return path


@dataclass
class Outcome:
    status: int
    stderr: bytes
    files: dict        # relative name -> bytes (every file the run left in its folder)


def _files(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def run_c(host: Path, folder: Path, arguments, env=None, timeout=60) -> Outcome:
    environ = {**os.environ, "NATIVE_DEVICE": "memory", **(env or {})}
    done = subprocess.run([str(host), *arguments], cwd=folder, env=environ, capture_output=True, timeout=timeout)
    return Outcome(done.returncode, done.stderr, _files(folder))


def run_reference(code: bytes, folder: Path, arguments, env=None, name="host", gpu=None) -> Outcome:
    from bobc.reference.native_program import run_program

    stderr = io.BytesIO()
    before = os.getcwd()
    os.chdir(folder)
    try:
        status = run_program(code, list(arguments), name=name, gpu=gpu, environ={**os.environ, **(env or {})},
                             stderr=stderr)
    finally:
        os.chdir(before)
    return Outcome(status, stderr.getvalue(), _files(folder))


def run_sides(tmp_path: Path, code: bytes, host: Path, inputs: dict, arguments, env=None,
              name="x", local_host: bool = False, reference_name: str | None = None) -> tuple[Outcome, Outcome]:
    """(C outcome, reference outcome) of the same run, each in a folder of its own holding `inputs`.
    `local_host`: the C host runs from a copy in its folder (left out of the files it leaves);
    `reference_name`: the reference's name for the program (default: the host's path)."""
    outcomes = []
    for side in ("c", "reference"):
        folder = tmp_path / f"{name}-{side}"
        folder.mkdir()
        for file_name, data in inputs.items():
            (folder / file_name).write_bytes(data)
        if side == "c" and local_host:
            shutil.copy(host, folder / "host")
            outcome = run_c(folder / "host", folder, arguments, env)
            outcome.files.pop("host", None)
            outcomes.append(outcome)
        elif side == "c":
            outcomes.append(run_c(host, folder, arguments, env))
        else:
            outcomes.append(run_reference(code, folder, arguments, env, name=reference_name or str(host)))
    return outcomes[0], outcomes[1]


def wait_for(condition, process, what: str, within_s: float = 120) -> None:
    """Poll `condition` until it holds while `process` (a Popen with stderr piped) still runs: the
    moment a test kills a run at (its first rename, its journal), failing by `what` if the run
    ends first or `within_s` passes."""
    deadline = time.monotonic() + within_s
    while not condition():
        assert process.poll() is None, f"{what}: the run ended first: {process.stderr.read()!r}"
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def request_stream(tokens) -> bytes:
    """A token stream plans/Native/Request.bob's host reads: COPSTRM1, u32 tokens of a 256-token
    vocabulary after a 64-byte header that counts them and holds their SHA-256."""
    import hashlib
    import struct

    body = b"".join(struct.pack("<I", t) for t in tokens)
    return struct.pack("<8sIIIIQ32s", b"COPSTRM1", 1, 4, 256, 64, len(tokens), hashlib.sha256(body).digest()) + body


def request_host(tmp_path_factory) -> Path:
    """The C host of plans/Native/Request.bob's requestProgram, built once in a folder of its own."""
    code = program_bytes(load_module(PLANS / "Native" / "Request.bob"), "requestProgram")
    return write_host(tmp_path_factory.mktemp("request-host"), "request-host", code)


def request_command(side: str, host: Path, *arguments) -> list[str]:
    """The command line that runs plans/Native/Request.bob's request host with `arguments`: its C
    host (side "c") or `bobc run --reference` of the same program."""
    import sys

    if side == "c":
        return [str(host), *arguments]
    return [sys.executable, "-m", "bobc", "run", str(PLANS / "Native" / "Request.bob"), "native", *arguments,
            "--reference", "--entry", "requestProgram"]


def request_environment(**extra) -> dict:
    """The request hosts' environment: the memory device (no GPU), this checkout's bobc."""
    return {**os.environ, "NATIVE_DEVICE": "memory", "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "compiler"),
            **extra}


# A native physical program's bytes written by hand (docs/platform.md, Runtime.NativePhysicalProgram):
# a natural is 8 bytes little-endian, a field its length then its bytes, the header "NPHY", version 1,
# slots, state bytes and a reserved natural before the commands.
def nat(value: int) -> bytes:
    return value.to_bytes(8, "little")


def field(data: bytes) -> bytes:
    return nat(len(data)) + data


def physical_program(commands: bytes, state: int = 64, slots: int = 0) -> bytes:
    return b"NPHY" + (1).to_bytes(4, "little") + nat(slots) + nat(state) + nat(0) + commands


def train_arguments(input_name: str) -> list[str]:
    """A host's `train` of the input file `input_name`, its outputs c, p and r beside it."""
    return ["train", "--input", input_name, "--checkpoint-out", "c", "--predictions", "p", "--result", "r"]


def c_host_and_reference(tmp_path: Path, code: bytes, arguments=(), env=None) -> tuple[int, bytes]:
    """The C host of `code` (NATIVE_DEVICE=memory, in `tmp_path`) and the reference interpreter:
    asserted to give the same status and stderr, which are returned."""
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes
    from bobc.reference.native_program import run_program

    host = tmp_path / "host"
    host.write_bytes(interpreter_bytes() + trailer(code, "sm_90"))
    host.chmod(0o755)
    environ = {"NATIVE_DEVICE": "memory", "PATH": "/usr/bin:/bin", **(env or {})}
    done = subprocess.run([str(host), *arguments], capture_output=True, timeout=60, cwd=tmp_path, env=environ)
    stderr = io.BytesIO()
    status = run_program(code, list(arguments), name=str(host), stderr=stderr, environ=environ)
    assert (status, stderr.getvalue()) == (done.returncode, done.stderr)
    return done.returncode, done.stderr


def peer_host_at_own_port(tmp_path: Path, entry: str) -> tuple[bytes, Path, int]:
    """Native.Peers' `entry` (listener or connector) built for a port of the test's own (bind(0)):
    (its program bytes, its host, the port)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path / "plans" / "Native"
    folder.mkdir(parents=True)
    for name in ("Short.bob", "Peers.bob"):
        text = (PLANS / "Native" / name).read_text()
        (folder / name).write_text(text.replace("def peerPort : Nat = 40000", f"def peerPort : Nat = {port}"))
    code = program_bytes(load_module(folder / "Peers.bob"), entry)
    return code, write_host(tmp_path, entry, code), port
