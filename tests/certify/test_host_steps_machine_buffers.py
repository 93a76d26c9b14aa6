"""Host steps write only the plan's data, and a Reissue issues only an entry the plan's own
submissions produced (probe s33 soundness, findings 1 and 4; docs/host-steps.md, "What a step
may write" and Reissue).

- finding 1: a Fill before LinReg's first Submit wrote 8 bytes over launch 1's predictions
  pointer in the program table (or a Read copied them there from the user's input record).  The
  plan was certified and built, and the predict kernel wrote its predictions over the machine
  code: the certifier had checked the patched word, the GPU read the filled one.
- finding 4: a Reissue after LinReg's forward Submit handed the GPU a GPFIFO entry whose segment
  was the input record in the arena (the user's bytes run as GPU commands).  `bobc check`,
  `bobc build` and `bobc run --reference` all exited 0.

Both are refused by the certifier now, at the step's file:line:column, by `bobc check`, `bobc
build` and `bobc run --reference` alike (the reference runner certifies the plan it runs)."""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc import pipeline
from bobc.certify import CertificationError, certify
from bobc.certify.buffers import COMMAND_BUFFERS
from bobc.certify.host_steps import MACHINE_BUFFERS, check_host_steps
from bobc.plan.commands import frame
from bobc.plan.host import make_step
from bobc.targets import SM86, SM90

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression"
HOST = "LinReg/Build/NativeHost.bob"
FORWARD = """      (constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit lrForwardLaunches 0
        (lrWrite lrPredictionsFile lrPredictionsAddress linRegPredictionsBytes"""
CLOSE = "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepOperation lrTrainSteps)))))))"
# launch 1's argument 2 (its predictions pointer) in the program table, as the probe wrote it
POINTER_WORD = ("(naturalAdd lrProgramBase (naturalAdd lrCodeExtent (naturalAdd lrParameterBytes "
                "(naturalAdd qmdKernelParameterBase 16))))")
FILL = f"""      (constructor NvidiaPlanHostSteps NvidiaPlanHostStepFill
        {POINTER_WORD}
        (bytes-from-nat-le lrProgramBase 8)
"""
READ = f"""      (constructor NvidiaPlanHostSteps NvidiaPlanHostStepRead (constructor NvidiaPlanHostFile NvidiaPlanHostInput)
        {POINTER_WORD}
        8 linRegFeaturesOffset 0 0
"""
# the probe's Reissue: an entry whose segment is the input record (16 dwords) in the arena
# (after the training Submit, the last: a Submit after a Reissue is refused, docs/host-steps.md)
REISSUE_AFTER = """    (lrWriteAt lrPredictionsFile lrPredictionsAddress linRegPredictionsBytes 0
      (lrWriteAt lrResultFile lrTrainingLossAddress"""
REISSUE_CLOSE = "linRegUpdatesPerInvocation 1 lrEnd))))))"
REISSUE = """      (constructor NvidiaPlanHostSteps NvidiaPlanHostStepReissue (succ lrSubmissionCount) 0 0 0
        (nat-add (nat-bit-and lrInputAddress 0xFFFFFFFC)
                 (nat-shift-left (nat-add (nat-bit-and (nat-shift-right lrInputAddress 32) 0xFF) (nat-shift-left 16 10)) 32)) 0
"""


def variant(tmp_path: Path, before: str, inserted: str, close: str = CLOSE) -> Path:
    """LinReg with `inserted` (one step, its tail the rest) put in front of `before`, in the steps
    whose last line is `close`."""
    for name in ("LinReg", "reference_kernels.py", "make_record.py"):
        source = LINREG / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    path = tmp_path / HOST
    text = path.read_text()
    assert text.count(before) == 1 and text.count(close) == 1
    path.write_text(text.replace(before, inserted + before).replace(close, close + ")"))
    return path


def bobc(*arguments, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "compiler"), BOBC_CACHE_DIR="off")
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, arguments)], capture_output=True, text=True,
                          cwd=cwd, env=env)


def where(plan: Path, text: str) -> str:
    """`HOST:line:column` of the last line holding `text` (the step inserted after LinReg's own
    reads), at `text`'s column."""
    lines = plan.read_text().splitlines()
    line = [n for n, line in enumerate(lines, 1) if text in line][-1]
    return f"{HOST}:{line}:{lines[line - 1].index(text) + 1}"


def refused_everywhere(tmp_path: Path, plan: Path, said: str) -> None:
    """check, build and run --reference each refuse the plan, located at the step, writing nothing."""
    for command in (("check", HOST), ("build", HOST, "-o", "host")):
        result = bobc(*command, "--target", "sm_86", cwd=tmp_path)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert "the plan is not certified (1 fault)" in result.stderr and said in result.stderr, result.stderr
    assert not (tmp_path / "host").exists()
    subprocess.run([sys.executable, "make_record.py", "-o", "record.bin"], cwd=tmp_path, check=True)
    result = bobc("run", HOST, "predict", "--reference", "--target", "sm_86", "--input", "record.bin", "--checkpoint-out", "c.bin",
                  "--predictions", "p.bin", "--result", "r.bin", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "the plan is not certified (1 fault)" in result.stderr and said.split(": ", 1)[1] in result.stderr
    assert not any((tmp_path / name).exists() for name in ("c.bin", "p.bin", "r.bin"))


# ---- the probe's plans ----

@pytest.mark.parametrize("step,kind", [(FILL, "fill"), (READ, "read")], ids=["fill", "read-of-the-input"])
def test_a_step_writing_the_program_table_is_refused_at_the_step(tmp_path, step, kind):
    plan = variant(tmp_path, FORWARD, step)
    at = where(plan, step.strip().splitlines()[0])
    said = (f"{at}: the host's step 2 ({kind}) writes [0x1000000a70, 0x1000000a78) (8 bytes) into host buffer "
            f"program [0x1000000000, 0x1000006000), which holds the kernels' machine code and the launches' "
            f"parameter blocks")
    refused_everywhere(tmp_path, plan, said)


def test_a_reissue_of_an_entry_no_submission_produced_is_refused_at_the_step(tmp_path):
    plan = variant(tmp_path, REISSUE_AFTER, REISSUE, REISSUE_CLOSE)
    at = where(plan, REISSUE.strip().splitlines()[0])
    refused_everywhere(tmp_path, plan, f"{at}: the host's step 8 (reissue) hands the GPU GPFIFO entry "
                                       f"0x0000401100002000 (segment at 0x1100002000, 16 dwords), but submission "
                                       f"0's ring entry, which it waits for, is ")


# ---- the rules, on LinReg's plan ----

@pytest.fixture(scope="module")
def linreg():
    program = pipeline.load(LINREG / HOST, SM86)
    return pipeline.extract(program, None), getattr(program, "search_path", ())


# LinReg's steps: its forward Submit is step 2, its training Submit step 7 (the last), issuing the ring up
# to entry 43; a Reissue goes after it (step 8), the ring's put position one further
AFTER_SUBMITS = 44


def test_linreg_steps_as_these_tests_read_them(linreg):
    """The Reissues below go after LinReg's last Submit, step 7, which issues the ring up to entry 43."""
    plan, _ = linreg
    kinds = [step.kind.name for step in plan.host.steps]
    assert [i for i, kind in enumerate(kinds) if kind == "submit"][-1] == 7
    assert plan.host.steps[7].gp_put == AFTER_SUBMITS - 1 == len(plan.program.submissions)


def with_steps(plan, steps):
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=tuple(steps)))


def buffer(plan, name):
    return next(b for b in plan.host.buffers if b.name == name)


def host_faults(plan, target=None, folders=()):
    return [f for f in check_host_steps(plan, target, folders)]


def test_the_machine_buffers_are_the_certifiers_command_buffers():
    assert set(MACHINE_BUFFERS) == set(COMMAND_BUFFERS)


def test_linreg_writes_only_its_arena(linreg):
    plan, folders = linreg
    writes = [s for s in plan.host.steps if s.kind.name in ("read", "fill")]
    arena = buffer(plan, "arena")
    assert writes and all(arena.gpu <= s.host and s.host + s.extent <= arena.gpu + arena.extent for s in writes)
    assert host_faults(plan, SM86, folders) == []
    certify(plan, SM86, folders=folders)


@pytest.mark.parametrize("name", sorted(MACHINE_BUFFERS))
def test_every_write_into_a_machine_buffer_is_refused_naming_it(linreg, name):
    plan, _ = linreg
    target = buffer(plan, name)
    last = target.gpu + target.extent - 4            # its last word: the whole buffer is the machine's
    steps = [make_step("fill", host=last, payload=bytes(4), at=None),
             make_step("read", file="input", host=target.gpu, extent=4, offset=0, stride=0, tolerate_empty=0,
                       at=None),
             make_step("read_cyclic", host=target.gpu, extent=4, offset=0, record_bytes=4, count=1, index=0,
                       index_stride=0, at=None),
             make_step("read_at_cursor", file="input", host=target.gpu, extent=4, delta=0, at=None)]
    faults = host_faults(with_steps(plan, steps))
    assert [f.message.split(" writes ")[0] for f in faults] == [
        "the host's step 0 (fill)", "the host's step 1 (read)", "the host's step 2 (read_cyclic)",
        "the host's step 3 (read_at_cursor)"]
    assert all(f" into host buffer {name} " in f.message and MACHINE_BUFFERS[name] in f.message for f in faults)
    # one byte over the data's edge is refused too: a step that straddles the arena and a machine buffer
    arena = buffer(plan, "arena")
    assert host_faults(with_steps(plan, [make_step("fill", host=arena.gpu, payload=bytes(4), at=None)])) == []


def _write_mapped(address: int, count: int) -> bytes:
    """A Commands step's program: WriteMapped address count (immediate 0xdeadbeef), End."""
    return frame(bytes([10]) + address.to_bytes(8, "little") + count.to_bytes(8, "little") + bytes([0])
                 + (0xdeadbeef).to_bytes(8, "little") + bytes([0]))


def test_a_commands_step_writing_a_machine_buffer_is_refused(linreg):
    plan, _ = linreg
    qmd, arena = buffer(plan, "qmd"), buffer(plan, "arena")
    faults = host_faults(with_steps(plan, [make_step("repeat", count=2, body=(
        make_step("commands", commands=_write_mapped(qmd.gpu + 8, 4), at=None),), at=None)]))
    assert [f.message for f in faults] == [
        f"the host's step 0 (repeat)'s body: step 0 (commands) command 0 (WriteMapped) writes [{qmd.gpu + 8:#x}, "
        f"{qmd.gpu + 12:#x}) (4 bytes) into host buffer qmd [{qmd.gpu:#x}, {qmd.gpu + qmd.extent:#x}), which "
        f"holds the launches' QMDs: the GPU would run words the certifier never checked"]
    assert host_faults(with_steps(plan, [make_step("commands", commands=_write_mapped(arena.gpu, 4), at=None)])) \
        == []
    nowhere = host_faults(with_steps(plan, [make_step("commands", commands=_write_mapped(0x10, 4), at=None)]))
    assert [f.message.split(", which ")[1] for f in nowhere] == [
        "lies in no buffer the plan maps: every invocation would stop there (status 10)"]


def test_a_reissue_of_its_own_submissions_entry_is_certified(linreg):
    """A Reissue of submission k with the ring image's word k (the GPFIFO image the build encodes for
    the target) is certified; for each target its own image's word."""
    plan, folders = linreg
    steps = list(plan.host.steps)
    for target in (SM86, SM90):
        ring = pipeline.encode(plan, target, folders).gpfifo
        word = int.from_bytes(ring[8:16], "little")
        again = make_step("reissue", gp_put=AFTER_SUBMITS, stride=0, piece=1, piece_stride=0, entry=word,
                          entry_stride=0, at=None)
        assert host_faults(with_steps(plan, [*steps[:8], again, *steps[8:]]), target, folders) == []


def test_a_reissue_of_another_submissions_entry_is_refused(linreg):
    plan, folders = linreg
    steps = list(plan.host.steps)
    ring = pipeline.encode(plan, SM86, folders).gpfifo
    words = [int.from_bytes(ring[i:i + 8], "little") for i in range(0, len(ring), 8)]
    assert len(set(words[:2])) == 2
    wrong = make_step("reissue", gp_put=AFTER_SUBMITS, stride=0, piece=0, piece_stride=0, entry=words[1],
                      entry_stride=0, at=None)
    faults = host_faults(with_steps(plan, [*steps[:8], wrong, *steps[8:]]), SM86, folders)
    assert [f.message.split(", but ")[1] for f in faults] == [
        f"submission 0's ring entry, which it waits for, is {words[0]:#018x} (segment at "
        f"{_segment(words[0]):#x}, {_length(words[0]):,} dwords) on sm_86: a "
        f"Reissue issues again an entry the plan's own submissions produced"]
    with pytest.raises(CertificationError):
        certify(with_steps(plan, [*steps[:8], wrong, *steps[8:]]), SM86, folders=folders)


def _segment(word: int) -> int:
    return (word & 0xFFFFFFFC) | ((word >> 32) & 0xFF) << 32


def _length(word: int) -> int:
    return (word >> 42) & ((1 << 21) - 1)


def test_a_reissue_in_a_repeat_is_held_to_every_iteration(linreg):
    """Piece and entry move by their strides each iteration: piece k's entry moving by a stride
    that is not the ring's own step is refused at the first iteration it misses; a piece past the
    plan's submissions too."""
    plan, folders = linreg
    steps = list(plan.host.steps)
    ring = pipeline.encode(plan, SM86, folders).gpfifo
    first = int.from_bytes(ring[:8], "little")
    count = len(ring) // 8

    def repeat(n, piece_stride, entry_stride, piece=0, entry=first):
        again = make_step("reissue", gp_put=AFTER_SUBMITS, stride=1, piece=piece, piece_stride=piece_stride,
                          entry=entry, entry_stride=entry_stride, at=None)
        return with_steps(plan, [*steps[:8], make_step("repeat", count=n, body=(again,), at=None), *steps[8:]])

    assert host_faults(repeat(1000, 0, 0), SM86, folders) == []            # one entry, issued again and again
    moved = host_faults(repeat(3, 0, 8), SM86, folders)
    assert len(moved) == 1 and " at its repeat's iteration 1, but submission 0's ring entry" in moved[0].message
    past = host_faults(repeat(1, 0, 0, piece=count), SM86, folders)
    assert [f.message for f in past] == [
        f"the host's step 8 (repeat)'s body: step 0 (reissue) reissues submission {count}, but the plan has {count} "
        f"submissions"]
    assert host_faults(repeat(0, 0, 0, piece=count), SM86, folders) == []  # a repeat of count 0 issues nothing
