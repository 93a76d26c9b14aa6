"""Probe s35 nativeloc finding 2: a native program's own bytes that a host prints on a message line
-- a Fail's message, a Telemetry label, the program's identity in `--version` -- were written raw
by both hosts, so a newline in a Fail's message split the host's one-line refusal in two (and a
NUL or an escape sequence reached the terminal as it was); inside a plan host's Commands step the
C host stopped a Fail's message at its first NUL while the reference printed the NUL.  Now a
control character (below 0x20, and DEL) is shown as '?', as a path's is in a host message
(runtime_c/host_io.c rt_io_shown; docs/native-host.md), the same bytes from the C host and the
reference interpreter."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from test_native_bounds_s34 import field, host_and_reference, nat, program

FAIL, TELEMETRY, END = 2, 22, 0
CONTROLS = b"a\nb\tc\x00d\x1b[31me\x7ff\r"
SHOWN = b"a?b?c?d?[31me?f?"           # each control character one '?', every other byte as it was


def test_a_fail_message_with_control_characters_is_one_line_on_both_hosts(tmp_path):
    code = program(bytes([FAIL]) + nat(17) + field(CONTROLS))
    status, stderr = host_and_reference(tmp_path, code)
    assert status == 17
    assert stderr == b"native: command 0 (Fail): " + SHOWN + b"; nothing was published\n"


def test_a_fail_message_keeps_its_utf8_text(tmp_path):
    message = "la cl\u00e9 \u2014 fin".encode()
    status, stderr = host_and_reference(tmp_path, program(bytes([FAIL]) + nat(3) + field(message)))
    assert (status, stderr) == (3, b"native: command 0 (Fail): " + message + b"; nothing was published\n")


def test_a_telemetry_label_with_control_characters_is_one_line_on_both_hosts(tmp_path):
    code = program(bytes([TELEMETRY]) + nat(0) + field(b"step\ndone\x00padding") + bytes([END]))
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes
    from bobc.reference.native_program import run_program

    host = tmp_path / "host"
    host.write_bytes(interpreter_bytes() + trailer(code, "sm_90"))
    host.chmod(0o755)
    environ = {"NATIVE_DEVICE": "memory", "NATIVE_TELEMETRY": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(host)], capture_output=True, timeout=60, env=environ)
    stderr = io.BytesIO()
    status = run_program(code, [], name=str(host), stderr=stderr, environ=environ)
    for said in (done.stderr, stderr.getvalue()):
        assert said.startswith(b"native: telemetry step?done +") and said.endswith(b" us\n"), said
        assert said.count(b"\n") == 1
    assert done.returncode == status == 0


ENVIRONMENT = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "compiler")}

PLAN = '''module Native.Shown

import Runtime.NativePhysicalProgram
import Runtime.NativePhysicalNativeELF

def shownProgram : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"two\\nlines\\x1b" 1 264 phEnd)

def shownHost : Bytes = (nativePhysicalNativeELF shownProgram)
'''


def test_the_identity_in_version_is_one_line_on_both_hosts(tmp_path):
    plan = tmp_path / "Native" / "Shown.bob"
    plan.parent.mkdir()
    plan.write_text(PLAN)

    def bobc(*words):
        return subprocess.run([sys.executable, "-m", "bobc", *words], capture_output=True, cwd=tmp_path,
                              env=ENVIRONMENT, timeout=600)

    built = bobc("build", str(plan), "--entry", "shownHost", "-o", str(tmp_path / "host"))
    assert built.returncode == 0, built.stderr
    c = subprocess.run([str(tmp_path / "host"), "--version"], capture_output=True, timeout=60)
    reference = bobc("run", str(plan), "native", "--version", "--reference", "--entry", "shownHost")
    assert (c.returncode, c.stderr) == (reference.returncode, reference.stderr) == (0, b"")
    assert c.stdout == reference.stdout
    assert b"program: two?lines? (1 command, 1 slot, 264 state bytes, 0 arguments)\n" in c.stdout


def test_the_hosts_own_name_in_a_refusal_is_one_line(tmp_path):
    """Probe s35 nativeloc finding 6: the usage refusal and the damaged-program refusal wrote the
    host's name (argv[0]) raw, so a host started through a name with a newline split them; the name
    is shown as a path is now (control characters as '?'), on both hosts."""
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes
    from bobc.reference.native_program import run_program

    read = bytes([14]) + nat(0) + nat(0) + nat(8) + bytes([END])            # ReadFile argument 0
    for code, words in ((program(read), b" ARG0 (read): the program names 1 file argument, 0 given (it carries no "
                                        b"names for them: the plan that built it says what each is)\n"),
                        (program(bytes([FAIL]) + nat(0) + field(b"x")), None)):
        host = tmp_path / "host"
        host.write_bytes(interpreter_bytes() + trailer(code, "sm_90"))
        host.chmod(0o755)
        (tmp_path / "r\nw").unlink(missing_ok=True)
        (tmp_path / "r\nw").symlink_to(host)
        environ = {"NATIVE_DEVICE": "memory", "PATH": "/usr/bin:/bin"}
        done = subprocess.run(["./r\nw"], capture_output=True, timeout=60, env=environ, cwd=tmp_path)
        said = io.BytesIO()
        status = run_program(code, [], name="./r\nw", stderr=said, environ=environ)
        assert (done.returncode, done.stderr) == (status, said.getvalue())
        if words:
            assert (status, done.stderr) == (2, b"native: usage: ./r?w" + words)
        else:
            assert (status, done.stderr) == (9, b"native: ./r?w: damaged host file: its program: command 0 (Fail): "
                                                b"status 0 is not 1-255; rebuild it\n")
