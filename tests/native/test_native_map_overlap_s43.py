"""Probe s43 nativemsgs: a Map whose host range overlaps an earlier Map's was refused at run time
(status 3) with `buffer "second": host range [...] overlaps an earlier buffer`, naming neither the
earlier buffer nor its range -- in a program of many Maps the user had to find it by hand.  Both
hosts (runtime_c/native_device.c np_device_map and bobc.reference.native_program) now name the
earlier buffer and its host range, and say what to do.

Expected text from the plan's own constants by hand: "first" is [0x210000000, +4096 = 0x1000),
"second" starts at 0x210000800, 2,048 bytes into it; Map is the program's command 2."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENVIRONMENT = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "NATIVE_DEVICE": "memory"}

PLAN = '''module Native.Overlap

import Runtime.NativePhysicalProgram
import Runtime.NativePhysicalNativeELF
import Native.Short

def uuid : Bytes = b"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
def overlap : (family NativePhysicalProgram) = (program b"overlap" 1 1024 (openDevice uuid
  (map b"first" 0x210000000 0x210000000 4096 0 (map b"second" 0x210001000 0x210000800 4096 0
  (writeMappedFile 0 0x210000000 16 phEnd)))))
def overlapHost : Bytes = (nativePhysicalNativeELF overlap)
'''

EXPECTED = ('native: command 2 (Map): buffer "second": host range [0x210000800, +0x1000) overlaps buffer "first" '
            '[0x210000000, +0x1000), mapped earlier (give each Map a host range of its own); nothing was published\n')


def bobc(*arguments, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *arguments, "-I", str(REPO / "tests" / "native" / "plans")],
                          capture_output=True, text=True, env=ENVIRONMENT, timeout=600, cwd=cwd)


def test_both_hosts_name_the_earlier_buffer_and_its_range(tmp_path):
    plan = tmp_path / "Native" / "Overlap.bob"
    plan.parent.mkdir()
    plan.write_text(PLAN)
    host = tmp_path / "host"
    built = bobc("build", str(plan), "--entry", "overlapHost", "-o", str(host), cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(host), "out.bin"], capture_output=True, text=True, env=ENVIRONMENT, cwd=tmp_path,
                         timeout=60)
    assert (ran.returncode, ran.stderr) == (3, EXPECTED)
    reference = bobc("run", str(plan), "native", "out.bin", "--reference", "--entry", "overlap", cwd=tmp_path)
    assert (reference.returncode, reference.stderr) == (3, EXPECTED)
    assert not (tmp_path / "out.bin").exists()
