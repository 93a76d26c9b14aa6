"""The native host's own environment settings, judged at start-up (probe s27, findings 4, 9
and 10; docs/native-host.md, "Settings"): a value outside a setting's documented set is a
usage error naming the variable and what it accepts (exit 2) before anything is read or
written -- never a silent default, a truncated number or a switch turned on by a misspelling --
and the C host and the reference interpreter say the same of every one (session 28; they
judged only the two the reference reads, NATIVE_PEER_TIMEOUT_MS and NATIVE_TELEMETRY, before).  A telemetry label padded with NULs is printed up
to its first NUL on both."""
from __future__ import annotations

import re
import shutil
import socket
import threading

import pytest

from native_helpers import PLANS, load_module, program_bytes, run_c, run_reference, write_host

TIMEOUT_EXPECTED = "expected milliseconds, a decimal number 1 to 86400000 (or leave it unset: 10000)"
TELEMETRY_EXPECTED = "expected a level, a decimal number 0 to 9223372036854775807 (or leave it unset: no telemetry)"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """name -> (canonical bytes, built host): a NUL-padded telemetry label, and a connector that
    halts once connected (to a free port)."""
    root = tmp_path_factory.mktemp("settings")
    port = free_port()
    folder = root / "plans" / "Native"
    folder.mkdir(parents=True)
    shutil.copy(PLANS / "Native" / "Short.bob", folder / "Short.bob")
    (folder / "Settings.bob").write_text(f"""module Native.Settings

import Runtime.NativePhysicalProgram
import Native.Short

def peerAddress : Bytes = (bytes-append b"\\x02\\x00" (bytes-append (bytes-from-nat-le (nat-shift-right {port} 8) 1)
  (bytes-append (bytes-from-nat-le {port} 1) b"\\x7f\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00")))

-- a label padded to 16 bytes with NULs (as seed 003's 64-byte identity is), at level 1
def padded : (family NativePhysicalProgram) = (program b"native-settings-padded-v1" 1 256
  (phTelemetry 1 b"padded-label\\x00\\x00\\x00\\x00" (phTelemetry 3 b"third" phEnd)))
-- connects and halts
def connecting : (family NativePhysicalProgram) = (program b"native-settings-connect-v1" 1 256
  (connect peerAddress 0 0 phHalt))
""")
    module = load_module(folder / "Settings.bob")
    built = {"port": port}
    for name in ("padded", "connecting"):
        code = program_bytes(module, name)
        built[name] = (code, write_host(root, name, code))
    return built


@pytest.fixture
def listening(programs):
    """A peer at the connector's port accepting every connection (so a run the settings let through
    ends at once, whatever wait they would have set)."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", programs["port"]))
    listener.listen(8)
    listener.settimeout(0.1)
    done = threading.Event()

    def accept():
        while not done.is_set():
            try:
                listener.accept()[0].close()
            except OSError:
                pass
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield
    done.set()
    thread.join(5)
    listener.close()


def both(programs, tmp_path, name, env, arguments=()):
    code, host = programs[name]
    outcomes = []
    for side in ("c", "reference"):
        folder = tmp_path / side
        folder.mkdir(exist_ok=True)
        for leftover in folder.iterdir():
            leftover.unlink()
        outcomes.append(run_c(host, folder, list(arguments), env) if side == "c"
                        else run_reference(code, folder, list(arguments), env))
    return tuple(outcomes)


# ---- NATIVE_PEER_TIMEOUT_MS (finding 4) ----

@pytest.mark.parametrize("value", ["abc", "1e3", "", "-5", "0", "+300", " 300", "300ms", "0x100", "3000000000",
                                   "86400001", "99999999999999999999", "2147483648"])
def test_a_peer_timeout_outside_its_range_is_a_usage_error_on_both(programs, listening, tmp_path, value):
    c, reference = both(programs, tmp_path, "connecting", {"NATIVE_PEER_TIMEOUT_MS": value, "NATIVE_TRACE": "t.txt"})
    expected = f"native: NATIVE_PEER_TIMEOUT_MS={value}: {TIMEOUT_EXPECTED}\n".encode()
    for out in (c, reference):
        assert (out.status, out.stderr, out.files) == (2, expected, {}), out.stderr


@pytest.mark.parametrize("value", ["250", "0250"])
def test_a_peer_timeout_in_range_is_the_wait(programs, tmp_path, value):
    c, reference = both(programs, tmp_path, "connecting", {"NATIVE_PEER_TIMEOUT_MS": value})
    expected = (f"native: command 0 (Connect): could not connect to 127.0.0.1:{programs['port']} within 250 ms")
    for out in (c, reference):
        assert out.status == 5 and out.stderr.decode().startswith(expected), out.stderr


def test_the_longest_peer_timeout_is_accepted(programs, listening, tmp_path):
    c, reference = both(programs, tmp_path, "connecting", {"NATIVE_PEER_TIMEOUT_MS": "86400000"})
    for out in (c, reference):
        assert (out.status, out.stderr) == (0, b""), out.stderr


# ---- NATIVE_TELEMETRY (findings 9 and 10) ----

@pytest.mark.parametrize("value", ["abc", "-1", "1.5", " 1", "1 ", "+1", "9223372036854775808",
                                   "99999999999999999999"])
def test_a_telemetry_level_that_is_no_level_is_a_usage_error_on_both(programs, tmp_path, value):
    c, reference = both(programs, tmp_path, "padded", {"NATIVE_TELEMETRY": value})
    expected = f"native: NATIVE_TELEMETRY={value}: {TELEMETRY_EXPECTED}\n".encode()
    for out in (c, reference):
        assert (out.status, out.stderr) == (2, expected), out.stderr


# A number of more digits than Python's int() converts (80,000 once the plan language is imported,
# 4,300 before): the C host reads it digit by digit, so its value decides -- leading zeros are
# taken, a larger number is refused -- and the reference says the same, never a traceback.
MANY_ZEROS = "0" * 100_000


@pytest.mark.parametrize("value, labels", [(MANY_ZEROS, []), (MANY_ZEROS + "1", [b"padded-label"]),
                                           ("9" * 100_000, None)])
def test_a_telemetry_level_of_many_digits_is_judged_by_its_value_on_both(programs, tmp_path, value, labels):
    c, reference = both(programs, tmp_path, "padded", {"NATIVE_TELEMETRY": value})
    for out in (c, reference):
        if labels is None:
            expected = f"native: NATIVE_TELEMETRY={value[:64]}...: {TELEMETRY_EXPECTED}\n".encode()
            assert (out.status, out.stderr) == (2, expected), out.stderr[:300]
        else:
            assert out.status == 0, out.stderr[:300]
            assert [re.fullmatch(rb"native: telemetry ([\w-]+) \+\d+ us", line).group(1)
                    for line in out.stderr.splitlines()] == labels, out.stderr[:300]


def test_a_peer_timeout_of_many_digits_is_its_value_on_both(programs, tmp_path):
    c, reference = both(programs, tmp_path, "connecting", {"NATIVE_PEER_TIMEOUT_MS": MANY_ZEROS + "250"})
    expected = f"native: command 0 (Connect): could not connect to 127.0.0.1:{programs['port']} within 250 ms"
    for out in (c, reference):
        assert out.status == 5 and out.stderr.decode().startswith(expected), out.stderr[:300]


@pytest.mark.parametrize("value, labels", [("", []), ("0", []), ("1", [b"padded-label"]),
                                           ("9223372036854775807", [b"padded-label", b"third"])])
def test_telemetry_lines_are_text_up_to_the_labels_first_nul(programs, tmp_path, value, labels):
    c, reference = both(programs, tmp_path, "padded", {"NATIVE_TELEMETRY": value})
    for out in (c, reference):
        assert out.status == 0 and b"\0" not in out.stderr, out.stderr
        assert [re.fullmatch(rb"native: telemetry ([\w-]+) \+\d+ us", line).group(1)
                for line in out.stderr.splitlines()] == labels, out.stderr


# ---- NATIVE_DEVICE, NATIVE_PROFILE, BOBC_GPU_TRACE, BOBC_GPU_MAPPING (finding 9): the reference judges them
# too (session 28: one table a side, runtime_c/host_settings.c and bobc.reference.settings) ----

@pytest.mark.parametrize("variable, value, expected", [
    ("NATIVE_DEVICE", "Memory", "expected memory (a session without a GPU) or gpu (the default; or leave it unset)"),
    ("NATIVE_DEVICE", "MEMORY", "expected memory (a session without a GPU) or gpu (the default; or leave it unset)"),
    ("NATIVE_DEVICE", "x", "expected memory (a session without a GPU) or gpu (the default; or leave it unset)"),
    ("NATIVE_PROFILE", "off", "expected 1 (profile) or 0 (or leave it unset)"),
    ("NATIVE_PROFILE", "no", "expected 1 (profile) or 0 (or leave it unset)"),
    ("NATIVE_PROFILE", "yes", "expected 1 (profile) or 0 (or leave it unset)"),
    ("BOBC_GPU_TRACE", "yes", "expected 1 (each bring-up step), ioctl (each ioctl too) or 0 (or leave it unset)"),
    ("BOBC_GPU_TRACE", "IOCTL", "expected 1 (each bring-up step), ioctl (each ioctl too) or 0 (or leave it unset)"),
    ("BOBC_GPU_MAPPING", "RM", "expected rm or uvm (or leave it unset)"),
])
def test_a_misspelt_device_setting_is_refused_by_name_at_start_up(programs, tmp_path, variable, value, expected):
    c, reference = both(programs, tmp_path, "padded", {variable: value, "NATIVE_TELEMETRY": "1",
                                                       "NATIVE_TRACE": "t.txt"})
    for out in (c, reference):
        assert (out.status, out.stderr) == (2, f"native: {variable}={value}: {expected}\n".encode())
        assert out.files == {}                 # not even the trace


def test_a_long_setting_is_shown_cut_with_what_it_accepts_on_both(programs, tmp_path):
    value = "é" * 40                              # 80 bytes: cut at 64, never inside a character
    c, reference = both(programs, tmp_path, "padded", {"BOBC_GPU_TRACE": value})
    for out in (c, reference):
        assert (out.status, out.stderr) == (2, f"native: BOBC_GPU_TRACE={'é' * 32}...: expected 1 (each bring-up "
                                               f"step), ioctl (each ioctl too) or 0 (or leave it unset)\n".encode())


def test_a_control_character_in_a_setting_is_shown_as_one_line_on_both(programs, tmp_path):
    c, reference = both(programs, tmp_path, "padded", {"NATIVE_PROFILE": "1\nnative: all is well"})
    for out in (c, reference):
        assert (out.status, out.stderr) == (2, b"native: NATIVE_PROFILE=1?native: all is well: expected 1 (profile) "
                                               b"or 0 (or leave it unset)\n")


@pytest.mark.parametrize("variable, value", [
    ("NATIVE_DEVICE", "memory"), ("NATIVE_DEVICE", "gpu"), ("NATIVE_DEVICE", ""),
    ("NATIVE_PROFILE", "0"), ("NATIVE_PROFILE", "1"), ("NATIVE_PROFILE", ""),
    ("BOBC_GPU_TRACE", "0"), ("BOBC_GPU_TRACE", "1"), ("BOBC_GPU_TRACE", "ioctl"), ("BOBC_GPU_TRACE", ""),
])
def test_the_documented_device_settings_still_run(programs, tmp_path, variable, value):
    for out in both(programs, tmp_path, "padded", {variable: value, "NATIVE_TELEMETRY": "1"}):
        assert out.status == 0 and out.stderr.startswith(b"native: telemetry padded-label +"), out.stderr
