"""The synthetic request host (tests/native/plans/Native/Request.bob: a plan host's schedule in
seed 004's shape lowered by nvidiaPlanHostRequestCommands) on the GPU: the host opens the first
GPU (OpenDevice of 16 zero bytes), maps its layout in system memory, loads the four embedded
images, reads the token stream at its cursor and the checkpoint chunk by chunk, and publishes
-- and its files are the reference interpreter's, byte for byte, fresh, resumed and predict.
A stream of another format is refused before the GPU is touched (no bring-up step traced) with
nothing written.  tests/native/test_native_request.py holds the same host to the reference
without a GPU (NATIVE_DEVICE=memory) and computes the expected files independently.

The programs come from the plan language when lark is here; on a node without it, from
NATIVE_REQUEST_PROGRAMS (tests/gpu/build_native_request.py).
"""
from __future__ import annotations

import hashlib
import io
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))
sys.path.insert(0, str(REPO / "tests" / "native"))
sys.path.insert(0, str(REPO / "tests" / "gpu"))

pytestmark = pytest.mark.gpu

ARGS = ["--input", "s.bin", "--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]
TOKENS = [(i * 37 + 11) % 256 for i in range(60)]


def stream(tokens, magic=b"COPSTRM1"):
    body = b"".join(struct.pack("<I", t) for t in tokens)
    return struct.pack("<8sIIIIQ32s", magic, 1, 4, 256, 64, len(tokens), hashlib.sha256(body).digest()) + body


def program(name: str) -> bytes:
    try:
        import lark  # noqa: F401
    except ImportError:
        folder = os.environ.get("NATIVE_REQUEST_PROGRAMS")
        assert folder, ("no lark here: build the programs where bobc is installed "
                        "(python tests/gpu/build_native_request.py .device/native-request) and carry them")
        return (Path(folder) / f"{name}.bin").read_bytes()
    from build_native_request import build
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        return (build(Path(scratch)) / f"{name}.bin").read_bytes()


def host_for(code: bytes, path: Path, images=None) -> Path:
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes

    data = interpreter_bytes() + trailer(code, "sm_90")
    if images:
        parts = [kind.to_bytes(4, "little") + name.ljust(64, b"\0") + len(body).to_bytes(8, "little") + body
                 for kind, (name, body) in enumerate(images, start=1)]
        data += b"".join(parts) + (0).to_bytes(4, "little") + b"host".ljust(64, b"\0") \
            + len(data).to_bytes(8, "little") + b"NPEMBED1" + len(data).to_bytes(8, "little")
    path.write_bytes(data)
    path.chmod(0o755)
    return path


def run_gpu(host: Path, folder: Path, arguments, env=None):
    environ = {k: v for k, v in os.environ.items() if k != "NATIVE_DEVICE"}
    done = subprocess.run([str(host), *arguments], cwd=folder, capture_output=True, timeout=120,
                          env={**environ, **(env or {})})
    return done.returncode, done.stderr, {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def run_reference(code: bytes, folder: Path, arguments, components=None, env=None):
    from bobc.reference.native_program import run_program
    stderr, before = io.BytesIO(), os.getcwd()
    os.chdir(folder)
    try:
        status = run_program(code, list(arguments), stderr=stderr, components=components,
                             environ={**os.environ, **(env or {})})
    finally:
        os.chdir(before)
    return status, stderr.getvalue(), {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def both(tmp_path, code, host, inputs, arguments, name, components=None, env=None):
    outcomes = []
    for side in ("gpu", "reference"):
        folder = tmp_path / f"{name}-{side}"
        folder.mkdir()
        for file_name, data in inputs.items():
            (folder / file_name).write_bytes(data)
        outcomes.append(run_gpu(host, folder, arguments, env) if side == "gpu"
                        else run_reference(code, folder, arguments, components, env))
    gpu, reference = outcomes
    assert gpu[0] == 0, gpu[1]
    assert gpu == reference
    return gpu[2]


def test_the_request_host_on_the_gpu_publishes_the_references_files(tmp_path):
    code = program("requestProgram")
    host = host_for(code, tmp_path / "request-host")
    # NATIVE_TRACE's lines are files too: the same on the GPU as on the reference
    fresh = both(tmp_path, code, host, {"s.bin": stream(TOKENS)}, ["train", *ARGS], "fresh",
                 env={"NATIVE_TRACE": "trace.txt"})
    assert [line for line in fresh["trace.txt"].decode().splitlines() if line.startswith("publish")] == \
        ["publish 3", "publish 6"]
    resumed = both(tmp_path, code, host, {"s.bin": stream(TOKENS), "in.bin": fresh["ck.bin"]},
                   ["train", "--checkpoint", "in.bin", *ARGS], "resumed")
    assert resumed["ck.bin"] != fresh["ck.bin"]
    predicted = both(tmp_path, code, host, {"s.bin": stream(TOKENS), "in.bin": resumed["ck.bin"]},
                     ["predict", "--checkpoint", "in.bin", *ARGS], "predict")
    assert predicted["ck.bin"] == resumed["ck.bin"]           # predict hands the checkpoint on unchanged


def test_the_embedded_images_reach_their_buffers_on_the_gpu(tmp_path):
    code = program("requestLoads")
    images = [(name, bytes((i * 13 + k) % 256 for i in range(16 + 8 * k)))
              for k, name in enumerate((b"program", b"qmd", b"push", b"ring"))]
    host = host_for(code, tmp_path / "loads-host", images)
    files = both(tmp_path, code, host, {"s.bin": stream(TOKENS)}, ["predict", *ARGS], "loads",
                 components={k: body for k, (_, body) in enumerate(images, start=1)})
    assert files["r.bin"] == b"".join(body[:16] for _, body in images)


def test_a_bad_stream_is_refused_before_the_gpu_is_touched(tmp_path):
    code = program("requestProgram")
    host = host_for(code, tmp_path / "request-host")
    (tmp_path / "s.bin").write_bytes(stream(TOKENS, magic=b"BOBINPUT"))
    status, stderr, files = run_gpu(host, tmp_path, ["train", *ARGS], env={"BOBC_GPU_TRACE": "1"})
    assert status == 3, stderr
    # one line: the refusal; no bring-up step was traced
    assert stderr.decode().splitlines() == [
        "native: input s.bin: token stream magic: 'BOBINPUT' is not 'COPSTRM1' "
        "(not a token stream this host reads); nothing was published"]
    assert sorted(files) == ["request-host", "s.bin"]
