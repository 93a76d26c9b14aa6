"""Probe s43 nativecert finding 1: `bobc build` wrote a host for a native physical program whose
command names mapped memory no Map of the program maps in the process -- a copy running past its
buffer's end, a WriteMappedFile of more bytes than the buffer holds, a copy spanning two adjacent
buffers, a mapped word operand of a program that maps nothing -- and every run of that host stopped
at the command, status 10 (`mapped [...] is in no host-mapped buffer`); `bobc run --reference` ran
up to it too.  A Map's host range and every mapped range are constants of the program, so such a
command faults whenever it runs: the build refuses it (exit 1, no host written) and the reference
run refuses it as the build does (exit 9), at the command's place, naming the range and the buffer
it starts in (bobc.certify.native_mapped).

The expected numbers are the plan's own constants by hand: buffer "a" is [0x210000000, +4096); a
copy of 200 bytes at 0x210000fa0 starts 0xfa0 = 4,000 bytes in and ends at 4,200, 104 past 4,096."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENVIRONMENT = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "NATIVE_DEVICE": "memory"}

PLAN = '''module Native.Ranges

import Runtime.NativePhysicalProgram
import Runtime.NativePhysicalNativeELF
import Native.Short

def uuid : Bytes = b"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
def pastEnd : (family NativePhysicalProgram) = (program b"ranges" 1 1024 (openDevice uuid
  (map b"a" 0x210000000 0x210000000 4096 0
  (phCopyStateToMapped 256 0x210000fa0 200 (writeMappedFile 0 0x210000000 16 phEnd)))))
def spanning : (family NativePhysicalProgram) = (program b"ranges" 1 1024 (openDevice uuid
  (map b"a" 0x210000000 0x210000000 4096 0 (map b"b" 0x210001000 0x210001000 4096 0
  (phCopyStateToMapped 256 0x210000fa0 200 (writeMappedFile 0 0x210000000 16 phEnd))))))
def fileTooLong : (family NativePhysicalProgram) = (program b"ranges" 1 1024 (openDevice uuid
  (map b"a" 0x210000000 0x210000000 4096 0 (writeMappedFile 0 0x210000000 8192 phEnd))))
def nothingMapped : (family NativePhysicalProgram) = (program b"ranges" 1 1024 (openDevice uuid
  (map b"hidden" 0x210000000 0 4096 1 (phStore 256 (mappedWord 0x210000000) phEnd))))
def semaphoreElsewhere : (family NativePhysicalProgram) = (program b"ranges" 1 1024 (openDevice uuid
  (map b"channel" 0x210000000 0x210000000 8192 0
  (submit 0x210000000 4 0x210001000 (phImm 0x2222) 0x210004000 512 phEnd))))
-- mapped after it is used: the order is the hosts' to check at run time (status 10), not refused here
def mappedLater : (family NativePhysicalProgram) = (program b"ranges" 1 1024 (openDevice uuid
  (writeMapped 0x210000000 8 (phImm 7) (map b"a" 0x210000000 0x210000000 4096 0
  (writeMappedFile 0 0x210000000 16 phEnd)))))
-- the whole buffer, to its last byte: inside
def wholeBuffer : (family NativePhysicalProgram) = (program b"ranges" 1 1024 (openDevice uuid
  (map b"a" 0x210000000 0x210000000 4096 0 (writeMapped 0x210000ff8 8 (phImm 7)
  (writeMappedFile 0 0x210000000 4096 phEnd)))))
def pastEndHost : Bytes = (nativePhysicalNativeELF pastEnd)
def spanningHost : Bytes = (nativePhysicalNativeELF spanning)
def fileTooLongHost : Bytes = (nativePhysicalNativeELF fileTooLong)
def nothingMappedHost : Bytes = (nativePhysicalNativeELF nothingMapped)
def semaphoreElsewhereHost : Bytes = (nativePhysicalNativeELF semaphoreElsewhere)
def mappedLaterHost : Bytes = (nativePhysicalNativeELF mappedLater)
def wholeBufferHost : Bytes = (nativePhysicalNativeELF wholeBuffer)
'''

PAST_A = ('it starts 4,000 bytes into buffer "a" [0x210000000, +0x1000) and runs 104 bytes past its end')
REFUSED = {
    "pastEnd": ("(phCopyStateToMapped 256 0x210000fa0 200", 1,
                f"command 2 (CopyStateToMapped): the range [0x210000fa0, +200) lies in no buffer the program maps: "
                f"{PAST_A}; every run would stop here, status 10"),
    "spanning": ("(phCopyStateToMapped 256 0x210000fa0 200", 2,
                 f"command 3 (CopyStateToMapped): the range [0x210000fa0, +200) lies in no buffer the program maps: "
                 f'{PAST_A} (into buffer "b": a range lies in one buffer); every run would stop here, status 10'),
    "fileTooLong": ("(writeMappedFile 0 0x210000000 8192", 1,
                    "command 2 (WriteMappedFile): the range [0x210000000, +8192) lies in no buffer the program maps: "
                    'it starts 0 bytes into buffer "a" [0x210000000, +0x1000) and runs 4,096 bytes past its end; '
                    "every run would stop here, status 10"),
    # a buffer with host address 0 is the GPU's alone: no command reaches it through the process
    "nothingMapped": ("(mappedWord 0x210000000)", 1,
                      "command 2 (Store): the mapped word operand [0x210000000, +8) lies in no buffer the program "
                      "maps: the program maps no buffer in the process (no Map with a nonzero host address); every "
                      "run would stop here, status 10"),
    # the semaphore word, 0x210004000, lies past the channel buffer's 8,192 bytes (a literal has no
    # place of its own: the command's)
    "semaphoreElsewhere": ("(submit 0x210000000", 1,
                           "command 2 (Submit): the semaphore [0x210004000, +8) lies in no buffer the program maps: "
                           "it starts in no buffer the program maps in the process; every run would stop here, "
                           "status 10"),
}


def place_of(written: str, nth: int) -> tuple[int, int]:
    at = -1
    for _ in range(nth):
        at = PLAN.index(written, at + 1)
    return PLAN.count("\n", 0, at) + 1, at - (PLAN.rfind("\n", 0, at) + 1) + 1


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ranges")
    path = folder / "Native" / "Ranges.bob"
    path.parent.mkdir()
    path.write_text(PLAN)
    return path


def bobc(*arguments, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *arguments, "-I", str(REPO / "tests" / "native" / "plans")],
                          capture_output=True, text=True, env=ENVIRONMENT, timeout=600, cwd=cwd)


@pytest.mark.parametrize("entry", sorted(REFUSED))
def test_a_range_no_map_holds_is_refused_by_the_build_at_its_place(plan, tmp_path, entry):
    written, nth, message = REFUSED[entry]
    done = bobc("build", str(plan), "--entry", f"{entry}Host", "-o", str(tmp_path / "host"), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    line, column = place_of(written, nth)
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"bobc build: {plan}:{line}:{column}: error: the native physical program is refused: "
                            f"{message}; "), first
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "host").exists()          # nothing written


def test_the_reference_run_refuses_it_as_the_build_does(plan, tmp_path):
    written, nth, message = REFUSED["pastEnd"]
    done = bobc("run", str(plan), "native", "out.bin", "--reference", "--entry", "pastEnd", cwd=tmp_path)
    assert done.returncode == 9, done.stderr
    line, column = place_of(written, nth)
    assert done.stderr.splitlines()[0].startswith(
        f"bobc run: {plan}:{line}:{column}: error: the native physical program pastEnd is refused: {message}; ")
    assert not (tmp_path / "out.bin").exists()


def test_order_is_left_to_the_hosts_and_a_whole_buffer_is_inside(plan, tmp_path):
    """A range some Map holds builds: used before its Map it is the hosts' run-time refusal (status 10,
    the message both hosts share), and a range ending at the buffer's last byte is inside."""
    later = tmp_path / "later"
    assert bobc("build", str(plan), "--entry", "mappedLaterHost", "-o", str(later), cwd=tmp_path).returncode == 0
    ran = subprocess.run([str(later), "out.bin"], capture_output=True, env=ENVIRONMENT, cwd=tmp_path, timeout=60)
    assert ran.returncode == 10
    assert b"command 1 (WriteMapped): mapped [0x210000000, +8) is in no host-mapped buffer" in ran.stderr
    whole = tmp_path / "whole"
    assert bobc("build", str(plan), "--entry", "wholeBufferHost", "-o", str(whole), cwd=tmp_path).returncode == 0
    ran = subprocess.run([str(whole), "out.bin"], capture_output=True, env=ENVIRONMENT, cwd=tmp_path, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "out.bin").read_bytes() == bytes(4088) + (7).to_bytes(8, "little")
