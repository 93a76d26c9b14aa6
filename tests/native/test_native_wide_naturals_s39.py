"""Probe s39 stdlib finding 3: every natural of a native physical program's canonical bytes is 8
bytes little-endian (docs/platform.md), written by `bytes-from-nat-le value 8`, which keeps the low
64 bits.  A Store at 2^64 + 256 was encoded as a Store at 256 -- inside the arena, so every host
check passed and the host stored where the plan never said; a request's initializer center of
2^64 + 1 became 1 and passed the center's own bound.  Only an Immediate operand is documented as
taken mod 2^64; any other natural of 2^64 or more is now refused by `bobc build`, by `bobc run
--reference` (status 9, as a host refuses a program) and in a plan host's Commands step, naming
the command, the field and the value, where the plan wrote it (bobc.native.writer.natural_too_wide)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENVIRONMENT = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
WIDE = (1 << 64) + 256          # 18446744073709551872: its low 64 bits are 256, inside the state

PLAN = '''module Native.Wide

import Runtime.NativePhysicalProgram
import Runtime.NativePhysicalNativeELF

def wideStore : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"wide" 8 512
  (phStore 256 (phImm 1)
    (phStore (nat-add 18446744073709551616 256) (phImm 7) phEnd)))

def wideSlot : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"wide" 8 512
  (phStore 256 (phSlot (nat-add 18446744073709551616 1)) phEnd))

def wideState : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"wide" 8 (nat-add 18446744073709551616 512) (phStore 256 (phImm 1) phEnd))

def wideImmediate : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"wide" 8 512 (phStore 256 (phImm (nat-add 18446744073709551616 7)) phEnd))

def request : (family NativePhysicalRequest) = (constructor NativePhysicalRequest NativePhysicalRequestValue
  b"a" b"a" b"a" b"a" 64 64 1
  (constructor NativePhysicalRequestInput NativePhysicalRequestRecord)
  (constructor NativePhysicalRequestFresh NativePhysicalRequestFreshSplitMix64 b"s" 1
    (nat-add 18446744073709551616 1) 9223372036854775808
    (constructor NativePhysicalRequestFresh NativePhysicalRequestFreshEnd))
  0 0 0 0 1 0 0 1)

def wideCenter : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"wide" 8 512
  (constructor NativePhysicalCommands NativePhysicalRequestOpen request 256 264 phEnd))

def wideStoreHost : Bytes = (nativePhysicalNativeELF wideStore)
def wideSlotHost : Bytes = (nativePhysicalNativeELF wideSlot)
def wideStateHost : Bytes = (nativePhysicalNativeELF wideState)
def wideImmediateHost : Bytes = (nativePhysicalNativeELF wideImmediate)
def wideCenterHost : Bytes = (nativePhysicalNativeELF wideCenter)

def wideCommands : (family NativePhysicalCommands) =
  (phStore 256 (phImm 1) (phStore (nat-add 18446744073709551616 256) (phImm 7) phEnd))
'''


def place_of(written: str, last: bool = False) -> tuple[int, int]:
    at = PLAN.rindex(written) if last else PLAN.index(written)
    return PLAN.count("\n", 0, at) + 1, at - (PLAN.rfind("\n", 0, at) + 1) + 1


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("wide") / "Native" / "Wide.bob"
    path.parent.mkdir()
    path.write_text(PLAN)
    return path


def error_line(stderr: str, prefix: str) -> str:
    """The error's first line (a first build may say it compiles the C runtime before it)."""
    return next((line for line in stderr.splitlines() if line.startswith(prefix)), stderr)


def bobc(*arguments, cwd=None):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, arguments)], capture_output=True, text=True,
                          env=ENVIRONMENT, timeout=600, cwd=cwd)


@pytest.mark.parametrize("entry, written, message", [
    ("wideStoreHost", "(nat-add 18446744073709551616 256) (phImm 7)",
     f"command 1 (Store): nativePhysicalStoreAddress is {WIDE}"),
    # an operand's slot: only an Immediate's value is taken mod 2^64
    ("wideSlotHost", "(nat-add 18446744073709551616 1))",
     f"command 0 (Store): nativePhysicalStoreValue's nativePhysicalSlotIndex is {(1 << 64) + 1}"),
    # the header's own: the program's place
    ("wideStateHost", "(nat-add 18446744073709551616 512)",
     f"the program's nativePhysicalProgramStateExtent is {(1 << 64) + 512}"),
    # inside RequestOpen's request: a center of 2^64 + 1 wrapped to 1 and passed its own bound (2^63 - 1)
    ("wideCenterHost", "(nat-add 18446744073709551616 1) 9223372036854775808",
     f"command 0 (RequestOpen): nativePhysicalRequestOpenRequest's nativePhysicalRequestFreshOf's "
     f"nativePhysicalRequestFreshCenter is {(1 << 64) + 1}"),
])
def test_a_natural_past_64_bits_is_refused_where_it_was_written(plan, tmp_path, entry, written, message):
    done = bobc("build", plan, "--entry", entry, "-o", tmp_path / "host")
    assert done.returncode == 1, done.stderr
    line, column = place_of(written)
    first = error_line(done.stderr, "bobc build: ")
    assert first.startswith(f"bobc build: {plan}:{line}:{column}: error: the native physical program is refused: "
                            f"{message}, 2^64 or more"), done.stderr
    assert "below 2^64" in done.stderr
    assert not (tmp_path / "host").exists()


def test_an_immediate_is_still_taken_mod_2_to_the_64(plan, tmp_path):
    """docs/platform.md: `NativePhysicalImmediate n` (n mod 2^64) -- not refused."""
    done = bobc("build", plan, "--entry", "wideImmediateHost", "-o", tmp_path / "host")
    assert done.returncode == 0, done.stderr


def test_the_reference_run_refuses_it_as_a_host_would(plan, tmp_path):
    done = bobc("run", plan, "native", "--reference", "--entry", "wideStore", cwd=tmp_path)
    assert done.returncode == 9, done.stderr
    line, column = place_of("(nat-add 18446744073709551616 256) (phImm 7)")
    assert error_line(done.stderr, "bobc run: ").startswith(
        f"bobc run: {plan}:{line}:{column}: error: the native physical program wideStore is refused: "
        f"command 1 (Store): nativePhysicalStoreAddress is {WIDE}"), done.stderr


def test_a_plan_hosts_commands_step_refuses_it(plan):
    from bobc.errors import BobcError
    from bobc.language import load_program
    from bobc.plan.commands import program_bytes
    from bobc.plan.intrinsics import default_intrinsics
    from bobc.targets import SM90

    program = load_program(plan, intrinsics=default_intrinsics(), target=SM90)
    program.check()
    with pytest.raises(BobcError) as refused:
        program_bytes(program, program.definition("Native.Wide.wideCommands").thunk, "step 3")
    assert str(refused.value).startswith(f"step 3: the native commands are refused: command 1 (Store): "
                                         f"nativePhysicalStoreAddress is {WIDE}"), str(refused.value)
    line, column = place_of("(nat-add 18446744073709551616 256) (phImm 7)", last=True)     # wideCommands'
    assert (refused.value.span.line, refused.value.span.column) == (line, column)
