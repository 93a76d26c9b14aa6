"""The native host's device settings (runtime_c/native_device.h) on a built seed-003 host, without
a GPU (NATIVE_DEVICE=memory): a value the runtime does not know is refused by name with status 3
at OpenDevice, after the peer connected and the two agreed on the run, before anything is
published."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from peers import run_beside_worker0

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "examples/partitioned_regression"


@pytest.fixture(scope="module")
def worker1(tmp_path_factory, port) -> tuple[Path, int]:
    """Worker 1 built for the run's own port (conftest.py `port`), and that port."""
    folder = tmp_path_factory.mktemp("pr-settings")
    uuid = "".join(f"\\x{b:02x}" for b in bytes(range(16)))
    (folder / "Pair.bob").write_text("module Pair\n\nimport PartitionedRegression.Build.Workers\n\n"
                                     f'def worker1 : Bytes = (coordinateH200Worker b"{uuid}" 0 1 {port} 0 1 4)\n')
    built = subprocess.run([sys.executable, "-m", "bobc", "build", str(folder / "Pair.bob"), "--entry", "worker1",
                            "--target", "sm_90", "-I", str(EXAMPLE), "-o", str(folder / "worker1")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    return folder / "worker1", port


def run_against_listener(worker: tuple[Path, int], folder: Path, environment: dict) -> subprocess.CompletedProcess:
    host, port = worker
    arguments = [str(folder / name) for name in ("manifest", "w0", "a0", "w1", "a1", "readback")]
    record = folder / "record.bin"
    record.write_bytes(bytes(32 + 16 * 4096))
    return run_beside_worker0(port, [str(host), *arguments, str(record)], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "NATIVE_DEVICE": "memory", "NATIVE_PEER_TIMEOUT_MS": "5000",
                                   **environment})


@pytest.mark.parametrize("variable, value, expected", [
    ("NATIVE_GPU_SHARE_GROUP", "yes", "expected auto (the default), 0 or 1"),
    ("NATIVE_GPU_TIMESLICE_US", "fast", "expected microseconds"),
    ("NATIVE_GPU_PREEMPTION", "instant", "expected wfi, cta or cilp"),
    ("NATIVE_GPU_VIDEO_PAGES", "2m", "expected 4k or auto"),
])
def test_an_unknown_setting_is_refused_by_name(worker1, tmp_path, variable, value, expected):
    done = run_against_listener(worker1, tmp_path, {variable: value})
    assert done.returncode == 3, done.stderr
    assert f"{variable}={value}" in done.stderr and expected in done.stderr and "OpenDevice" in done.stderr
    assert not (tmp_path / "w1").exists()


@pytest.mark.parametrize("value", [" 64", "+64", "-0", "64 ", "0x40"])
def test_a_timeslice_is_decimal_digits_alone(worker1, tmp_path, value):
    """docs/native-host.md, "Settings": a number is ASCII decimal digits only, no sign or space
    (native_device.c read it with strtoul, which takes a sign and leading white space)."""
    done = run_against_listener(worker1, tmp_path, {"NATIVE_GPU_TIMESLICE_US": value})
    assert done.returncode == 3 and f"NATIVE_GPU_TIMESLICE_US={value}: expected microseconds" in done.stderr, \
        done.stderr


@pytest.mark.parametrize("variable", ["NATIVE_GPU_SHARE_GROUP", "NATIVE_GPU_TIMESLICE_US", "NATIVE_GPU_PREEMPTION",
                                      "NATIVE_GPU_VIDEO_PAGES"])
def test_a_device_setting_is_shown_as_the_start_up_settings_are(worker1, tmp_path, variable):
    """One line, a control character as '?', cut at 64 bytes never inside a character, as
    host_settings.c shows the values it judges at start-up."""
    done = run_against_listener(worker1, tmp_path, {variable: "1\nnative: all is well" + "é" * 40})
    shown = "1?native: all is well" + "é" * 21 + "..."          # 21 + 2 * 21 = 63 bytes, then "..."
    assert done.returncode == 3, done.stderr
    assert [line for line in done.stderr.splitlines() if variable in line] == \
        [line for line in done.stderr.splitlines() if f"{variable}={shown}: expected" in line], done.stderr
    assert f"{variable}={shown}: expected" in done.stderr and "all is well\n" not in done.stderr, done.stderr


def test_known_settings_pass_open_device(worker1, tmp_path):
    """With accepted settings the memory session opens and the host goes on to its first Submit,
    which a session without a GPU refuses (status 3, naming NATIVE_DEVICE=memory)."""
    done = run_against_listener(worker1, tmp_path, {"NATIVE_GPU_SHARE_GROUP": "1", "NATIVE_GPU_TIMESLICE_US": "64",
                                                    "NATIVE_GPU_PREEMPTION": "wfi", "NATIVE_GPU_VIDEO_PAGES": "4k"})
    assert done.returncode == 3 and "Submit" in done.stderr and "NATIVE_DEVICE=memory" in done.stderr, done.stderr
