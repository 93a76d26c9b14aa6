"""Probe s35 nativeloc finding 1: `bobc build` refused a native physical program (a Fail status
of 0, a WriteMapped width of 3, a state range past the state, ...) naming the command's number
alone -- `error: the native physical program is refused: command 1 (Fail): status 0 is not
1-255` -- with no place in the plan: the program is a value, evaluated before it is checked.  The
constructor fields a command was built from still say where they were written (the delayed
values' terms), so the writer walks the program value in the hosts' numbering (a command, then
its fields of the family: a Repeat's body before its tail) and names the place of the field
refused, else of the command, else of the program (bobc.native.writer.command_written).  A plan
host's Commands step is refused the same way."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENVIRONMENT = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}

HEADER = '''module Native.Places

import Runtime.NativePhysicalProgram
import Runtime.NativePhysicalNativeELF

'''

PLAN = HEADER + '''def failZero : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"places" 1 264
  (constructor NativePhysicalCommands NativePhysicalAddNatural 256 (phImm 40) (phImm 2)
    (constructor NativePhysicalCommands NativePhysicalFail 0 b"never")))

def widthTail : (family NativePhysicalCommands) =
  (phStore 256 (phImm 1)
    (constructor NativePhysicalCommands NativePhysicalWriteMapped 0 3 (phImm 1) phEnd))

def badWidth : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"places" 1 264 (phStore 256 (phImm 2) widthTail))

def pastState : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"places" 1 264
  (constructor NativePhysicalCommands NativePhysicalRepeat (phImm 2)
    (phStore 256 (phImm 2) phEnd)
    (phStore 256 (phImm 2)
      (constructor NativePhysicalCommands NativePhysicalReadFile 0 256 (nat-add 1 70) phEnd))))

def spliced : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue
  b"places" 1 264
  (nativePhysicalSplice (phStore 256 (phImm 2) phEnd)
     (phStore (nat-add 290 10) (phImm 2) phEnd)))

def failZeroHost : Bytes = (nativePhysicalNativeELF failZero)
def badWidthHost : Bytes = (nativePhysicalNativeELF badWidth)
def pastStateHost : Bytes = (nativePhysicalNativeELF pastState)
def splicedHost : Bytes = (nativePhysicalNativeELF spliced)
'''


def place_of(text: str, written: str, nth: int = 1) -> tuple[int, int]:
    """(line, column), from 1, of the nth occurrence of `written` in the plan's text."""
    at = -1
    for _ in range(nth):
        at = text.index(written, at + 1)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("places")
    path = folder / "Native" / "Places.bob"
    path.parent.mkdir()
    path.write_text(PLAN)
    return path


def build(plan: Path, entry: str, tmp_path: Path):
    return subprocess.run([sys.executable, "-m", "bobc", "build", str(plan), "--entry", entry, "-o",
                           str(tmp_path / "host")], capture_output=True, text=True, env=ENVIRONMENT, timeout=600)


@pytest.mark.parametrize("entry, written, nth, message", [
    # the Fail constructor itself (its status a literal, which carries no place of its own)
    ("failZeroHost", "(constructor NativePhysicalCommands NativePhysicalFail 0", 1,
     "command 1 (Fail): status 0 is not 1-255"),
    # a command in another definition's commands, reached through a helper (phStore)
    ("badWidthHost", "(constructor NativePhysicalCommands NativePhysicalWriteMapped 0 3", 1,
     "command 2 (WriteMapped): width 3 is not 1, 2, 4 or 8"),
    # numbered as the hosts number them: Repeat 0, its body 1-2, its tail 3-4; the field refused is
    # computed, so its own place is named
    ("pastStateHost", "(nat-add 1 70)", 1,
     "command 4 (ReadFile): the state range [256, +71) is outside the 264-byte state"),
    # a command nativePhysicalSplice rebuilt in the library: its field's place
    ("splicedHost", "(nat-add 290 10)", 1,
     "command 1 (Store): the destination word [300, +8) is outside the 264-byte state"),
])
def test_a_refused_command_is_named_by_where_the_plan_wrote_it(plan, tmp_path, entry, written, nth, message):
    done = build(plan, entry, tmp_path)
    assert done.returncode == 1
    line, column = place_of(PLAN, written, nth)
    first = done.stderr.splitlines()[0]
    assert first == (f"bobc build: {plan}:{line}:{column}: error: the native physical program is refused: "
                     f"{message}"), done.stderr
    assert not (tmp_path / "host").exists()


def test_a_command_written_by_no_plan_text_falls_back_to_the_program(plan, tmp_path):
    """A header's refusal is the program's as a whole: its place is the program's definition."""
    text = PLAN.replace('b"places" 1 264 (phStore 256 (phImm 2) widthTail))',
                        'b"places" 1048577 264 (phStore 256 (phImm 2) widthTail))')
    path = tmp_path / "Native" / "Places.bob"
    path.parent.mkdir()
    path.write_text(text)
    done = build(path, "badWidthHost", tmp_path)
    assert done.returncode == 1
    line, column = place_of(text, "badWidth :")
    assert done.stderr.splitlines()[0] == (
        f"bobc build: {path}:{line}:{column}: error: the native physical program is refused: 1048577 slots, more "
        f"than the 1048576 a host keeps"), done.stderr


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_plan_hosts_commands_step_is_refused_where_the_command_was_written(tmp_path):
    synthetic = REPO / "tests" / "platform" / "Synthetic"
    copy = tmp_path / "Synthetic"
    shutil.copytree(synthetic, copy)
    source = (copy / "Commands.bob").read_text()
    written = "(constructor NativePhysicalCommands NativePhysicalWriteMapped (synAt 72) 4 "
    assert source.count(written) == 1
    source = source.replace(written, written.replace(" 4 ", " 3 "))
    (copy / "Commands.bob").write_text(source)
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(copy / "Commands.bob"), "-I",
                           str(REPO / "examples" / "bob"), "--entry", "synCommandsHost", "-o", str(tmp_path / "host")],
                          capture_output=True, text=True, env=ENVIRONMENT, timeout=600)
    assert done.returncode == 1
    line, column = place_of(source, "(constructor NativePhysicalCommands NativePhysicalWriteMapped (synAt 72)")
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"bobc build: {copy / 'Commands.bob'}:{line}:{column}: error: "), done.stderr
    assert re.search(r"the native commands are refused: command \d+ \(WriteMapped\): width 3 is not 1, 2, 4 or 8$",
                     first), first


def test_the_reference_run_of_a_refused_program_names_its_place_not_a_damaged_host(plan, tmp_path):
    """Probe s35 nativeloc finding 5: `bobc run PLAN native --reference --entry DEF` of a
    NativePhysicalProgram the hosts refuse said `native: DEF: damaged host file: its program: ...;
    rebuild it` -- there is no host file, and a rebuild is refused too.  It is refused as `bobc
    build` refuses it, where the plan wrote the command, with the host's status (9)."""
    done = subprocess.run([sys.executable, "-m", "bobc", "run", str(plan), "native", "--reference", "--entry",
                           "failZero"], capture_output=True, text=True, env=ENVIRONMENT, timeout=600, cwd=tmp_path)
    assert done.returncode == 9
    line, column = place_of(PLAN, "(constructor NativePhysicalCommands NativePhysicalFail 0")
    assert done.stderr.splitlines()[0] == (f"bobc run: {plan}:{line}:{column}: error: the native physical program "
                                           f"failZero is refused: command 1 (Fail): status 0 is not 1-255")
    assert "damaged" not in done.stderr and "rebuild" not in done.stderr
