"""Probe s43 nativemsgs: a native host's run-time refusal of a mapped range said `mapped [A, +N) is
in no host-mapped buffer (Map one there with a nonzero host address first)` whatever the cause --
wrong advice for a range that starts in a buffer and runs past its end (a buffer mapped again
smaller after a Release), and for a Submit whose ring slot n mod entries lies past the ring's
buffer (the slot's index is the issue counter, a state word, so the build cannot refuse it).  Both
hosts (runtime_c/native_machine.c np_mapped / np_ring_slot, bobc.reference.native_program) now name
the buffer the range starts in and how far past its end it runs, and a ring too long for its
buffer, with what to do.

Expected numbers by hand from the plan's constants: "narrow" is [0x210000000, +16); 200 bytes at
+8 end at 208, 192 past its end.  "channel" is [0x210000000, +4096); a 1024-entry ring needs
8 x 1024 = 8,192 bytes; submission 600 is slot 600, at 0x210000000 + 8 x 600 = 0x2100012c0."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENVIRONMENT = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "NATIVE_DEVICE": "memory"}

PLAN = '''module Native.Named

import Runtime.NativePhysicalProgram
import Runtime.NativePhysicalNativeELF
import Native.Short

def uuid : Bytes = b"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
def ring : (family NativePhysicalProgram) = (program b"ring" 1 1024 (openDevice uuid
  (map b"channel" 0x210000000 0x210000000 4096 0
  (phStore 512 (phImm 600)
  (submit 0x210000000 1024 0x210000f00 (phImm 0x2222) 0x210000f08 512 phEnd)))))
def remapped : (family NativePhysicalProgram) = (program b"remap" 1 1024 (openDevice uuid
  (map b"wide" 0x210000000 0x210000000 4096 0 (phRelease (openDevice uuid
  (map b"narrow" 0x210000000 0x210000000 16 0
  (phCopyStateToMapped 256 0x210000008 200 phEnd)))))))
def ringHost : Bytes = (nativePhysicalNativeELF ring)
def remappedHost : Bytes = (nativePhysicalNativeELF remapped)
'''

EXPECTED = {
    "ring": ("native: command 3 (Submit): ring slot 600 of 1024 (submission 600) at mapped [0x2100012c0, +8) is in "
             "no host-mapped buffer; the ring's 1024 entries at 0x210000000 need 8,192 bytes, past the end of buffer "
             "\"channel\" [0x210000000, +0x1000): map a buffer that holds them all, or give the ring fewer entries; "
             "nothing was published\n"),
    "remapped": ("native: command 5 (CopyStateToMapped): mapped [0x210000008, +200) is in no host-mapped buffer: it "
                 "starts 8 bytes into buffer \"narrow\" [0x210000000, +0x10) and runs 192 bytes past its end (a range "
                 "lies in one buffer); nothing was published\n"),
}


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("named") / "Native" / "Named.bob"
    path.parent.mkdir()
    path.write_text(PLAN)
    return path


def bobc(*arguments, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *arguments, "-I", str(REPO / "tests" / "native" / "plans")],
                          capture_output=True, text=True, env=ENVIRONMENT, timeout=600, cwd=cwd)


@pytest.mark.parametrize("entry", sorted(EXPECTED))
def test_both_hosts_name_the_buffer_a_range_outgrows(plan, tmp_path, entry):
    host = tmp_path / "host"
    built = bobc("build", str(plan), "--entry", f"{entry}Host", "-o", str(host), cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(host)], capture_output=True, text=True, env=ENVIRONMENT, cwd=tmp_path, timeout=60)
    assert (ran.returncode, ran.stderr) == (10, EXPECTED[entry])
    reference = bobc("run", str(plan), "native", "--reference", "--entry", entry, cwd=tmp_path)
    assert (reference.returncode, reference.stderr) == (10, EXPECTED[entry])
