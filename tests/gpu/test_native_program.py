"""A native physical program on the GPU (tests/native/plans/Native/Device.bob): the host
opens the GPU by the UUID the driver reports on this machine, maps seven buffers (video
and system memory, one never host-mapped), loads a kernel's program, QMD and pushbuffer
images, submits twice through its channel, waits, reads back both ways and writes files
-- checked against NumPy (out = in & 0xff).  A host built for a UUID this machine lacks
is refused by name (status 3).

The program comes from the plan language when lark is here; on a node without it, from
NATIVE_PROGRAM_TEMPLATE (tests/gpu/build_native_program.py), the UUID put in its slot.
"""
from __future__ import annotations

import glob
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "compiler"))
sys.path.insert(0, str(REPO / "tests" / "native"))
sys.path.insert(0, str(REPO / "tests" / "gpu"))

pytestmark = pytest.mark.gpu

UUID_TEXT = re.compile(r"GPU-([0-9a-fA-F]{8})-([0-9a-fA-F]{4})-([0-9a-fA-F]{4})-([0-9a-fA-F]{4})-([0-9a-fA-F]{12})")


def machine_uuids() -> list[str]:
    """The GPUs' UUIDs as the driver prints them (/proc/driver/nvidia/gpus/*/information, else nvidia-smi -L)."""
    found = []
    for path in sorted(glob.glob("/proc/driver/nvidia/gpus/*/information")):
        found += [m.group(0) for m in UUID_TEXT.finditer(Path(path).read_text(errors="replace"))]
    if not found:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
        found = [m.group(0) for m in UUID_TEXT.finditer(listed)]
    assert found, "no GPU UUID in /proc/driver/nvidia/gpus/*/information or nvidia-smi -L"
    return found


def uuid_bytes(text: str) -> bytes:
    return bytes.fromhex("".join(UUID_TEXT.fullmatch(text).groups()))


def program_for(uuid: bytes) -> bytes:
    try:
        import lark  # noqa: F401
    except ImportError:
        from build_native_program import PLACEHOLDER

        template = os.environ.get("NATIVE_PROGRAM_TEMPLATE")
        assert template, ("no lark here: build the template where bobc is installed "
                          "(python tests/gpu/build_native_program.py .device/native-program) and carry it")
        code = Path(template).read_bytes()
        assert code.count(PLACEHOLDER) == 1
        return code.replace(PLACEHOLDER, uuid)
    from bobc.targets import SM90
    from native_device_program import program_bytes

    with tempfile.TemporaryDirectory() as scratch:
        return program_bytes(uuid, SM90, Path(scratch))[0]


def build_host(code: bytes, path: Path) -> Path:
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes

    path.write_bytes(interpreter_bytes() + trailer(code, "sm_90"))
    path.chmod(0o755)
    return path


def test_program_opens_the_gpu_by_uuid_and_runs_a_kernel(tmp_path):
    uuid = machine_uuids()[0]
    host = build_host(program_for(uuid_bytes(uuid)), tmp_path / "device-host")
    words = np.random.default_rng(11).integers(0, 2 ** 32, size=64, dtype=np.uint32)
    (tmp_path / "in.bin").write_bytes(words.astype("<u4").tobytes())
    done = subprocess.run([str(host), "in.bin", "out1.bin", "out2.bin", "count.bin"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NATIVE_TELEMETRY": "1"})
    print(done.stderr)
    assert done.returncode == 0, done.stderr
    expected = (words & 0xFF).astype("<u4").tobytes()
    assert (tmp_path / "out1.bin").read_bytes() == expected
    assert (tmp_path / "out2.bin").read_bytes() == expected
    # two submissions counted, the semaphore at 2, the plan's GPPut word at 2 (of a 4-entry ring)
    assert (tmp_path / "count.bin").read_bytes() == struct.pack("<3Q", 2, 2, 2)
    labels = re.findall(r"native: telemetry (\w+) \+\d+ us", done.stderr)
    assert labels == ["open", "mapped", "submitted"]


def test_a_uuid_this_machine_lacks_is_refused_by_name(tmp_path):
    real = machine_uuids()
    wrong = bytearray(uuid_bytes(real[0]))
    wrong[0] ^= 0xFF
    host = build_host(program_for(bytes(wrong)), tmp_path / "wrong-host")
    (tmp_path / "in.bin").write_bytes(bytes(256))
    done = subprocess.run([str(host), "in.bin", "a.bin", "b.bin", "c.bin"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "command 1 (OpenDevice): no GPU with UUID GPU-" in done.stderr
    assert real[0].lower() in done.stderr.lower()
    assert not (tmp_path / "a.bin").exists()
