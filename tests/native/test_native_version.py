"""Probe s32 leftovers finding 1: a native program's host answered `--version` with its program,
target and images but not which bobc built it, while a plan host prints its .bobc.version section
(runtime_c/host_version.c).  A native host now carries that section too (bobc.native.writer,
bobc.host.version.native_text) and prints it first, through host_version.c, then its program's
lines; `bobc run PLAN native --version --reference --entry DEF` prints the same bytes (it took
--version for a file argument, or refused a request's lone --version)."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from native_helpers import PLANS, load_module, program_bytes, write_host

COMMANDS = PLANS / "Native" / "Commands.bob"
REQUEST = PLANS / "Native" / "Request.bob"
ENVIRONMENT = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "compiler")}


def bobc(*words, cwd=None):
    return subprocess.run([sys.executable, "-m", "bobc", *words], capture_output=True, cwd=cwd, env=ENVIRONMENT,
                          timeout=600)


def build_facts(target: str) -> bytes:
    from bobc import __version__
    from bobc.host.version import source_commit
    from bobc.targets import target_named

    t = target_named(target)
    return (f"native host built by bobc {__version__}\nbobc commit: {source_commit()}\n"
            f"target: {t.name} (QMD {t.qmd_layout})\n").encode()


@pytest.mark.parametrize("target", ["sm_90", "sm_86"])
def test_a_built_native_host_says_which_bobc_built_it(tmp_path, target):
    from bobc.host import version

    built = bobc("build", str(COMMANDS), "--entry", "arithmeticArtifact", "--target", target, "-o",
                 str(tmp_path / "host"))
    assert built.returncode == 0, built.stderr
    done = subprocess.run([str(tmp_path / "host"), "--version"], capture_output=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.startswith(build_facts(target)), done.stdout
    facts = version.parse(done.stdout)         # the keys `bobc inspect` reads from a plan host's section
    assert facts["bobc version"] and facts["bobc commit"] == version.source_commit()
    assert facts["driver branch"].startswith(f"{version.driver_branch()} ")
    assert facts["compute class"].startswith("0x")
    assert done.stdout.endswith(b"program: native-arithmetic-v1 (15 commands, 2 slots, 1024 state bytes, "
                                b"2 arguments)\nembedded device images: 4\n")


@pytest.mark.parametrize("entry, host_entry", [("arithmetic", "arithmeticHost"),
                                               ("arithmeticHost", "arithmeticHost"),
                                               ("arithmeticArtifact", "arithmeticArtifact")])
@pytest.mark.parametrize("target", ["sm_90", "sm_86"])
def test_the_reference_says_the_hosts_version_byte_for_byte(tmp_path, entry, host_entry, target):
    """A NativePhysicalProgram DEF (the facts a build for --target writes) or the host's Bytes (its
    own section), with bobc's options before or after --version."""
    built = bobc("build", str(COMMANDS), "--entry", host_entry, "--target", target, "-o", str(tmp_path / "host"))
    assert built.returncode == 0, built.stderr
    host = subprocess.run([str(tmp_path / "host"), "--version"], capture_output=True, timeout=60)
    assert host.returncode == 0 and host.stdout.startswith(build_facts(target))
    for words in (["native", "--version", "--reference", "--entry", entry, "--target", target],
                  ["--reference", "--entry", entry, "--target", target, "native", "--version"]):
        reference = bobc("run", str(COMMANDS), *words, cwd=tmp_path)
        assert (reference.returncode, reference.stdout, reference.stderr) == (0, host.stdout, b""), words


def test_a_request_hosts_lone_version_is_its_version(tmp_path):
    """A request program takes options, but a lone --version is the host's, before the request."""
    code = program_bytes(load_module(REQUEST), "requestProgram")
    host = write_host(tmp_path, "request-host", code)
    done = subprocess.run([str(host), "--version"], capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith(build_facts("sm_90")), done.stderr
    reference = bobc("run", str(REQUEST), "native", "--version", "--reference", "--entry", "requestProgram",
                     cwd=tmp_path)
    assert (reference.returncode, reference.stdout, reference.stderr) == (0, done.stdout, b"")
    # it takes no file argument but a request's options: said so, not "0 arguments" (probe s32
    # coptools finding 8; minor finding 3), by the C host and the reference alike
    program_line = done.stdout.splitlines()[-2]
    assert program_line.startswith(b"program: ") and program_line.endswith(
        b" state bytes, 0 file arguments; a request: train|predict and its options)"), program_line


def test_a_host_without_the_section_is_refused_alike(tmp_path):
    """Made without `bobc build` (the interpreter and a trailer alone): --version is refused as a plan
    host without its section is, exit 9, nothing on stdout; run_program given no section says the same."""
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes
    from bobc.reference.native_program import run_program

    code = program_bytes(load_module(COMMANDS), "arithmetic")
    host = tmp_path / "bare"
    host.write_bytes(interpreter_bytes() + trailer(code, "sm_90"))
    host.chmod(0o755)
    done = subprocess.run([str(host), "--version"], capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (9, b"")
    assert done.stderr == (f"native: damaged host file: {host} has no section .bobc.version: it was not built by "
                           "`bobc build`, or was stripped; rebuild it (bobc build)\n").encode()
    stdout, stderr = io.BytesIO(), io.BytesIO()
    assert run_program(code, ["--version"], name=str(host), stdout=stdout, stderr=stderr) == 9
    assert (stdout.getvalue(), stderr.getvalue()) == (b"", done.stderr)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_version_to_a_full_stdout_is_one_line_exit_8(tmp_path):
    code = program_bytes(load_module(COMMANDS), "arithmetic")
    host = write_host(tmp_path, "host", code)
    with open("/dev/full", "wb") as full:
        done = subprocess.run([str(host), "--version"], stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert (done.returncode, done.stderr) == (8, b"native: cannot write to stdout: No space left on device\n")
