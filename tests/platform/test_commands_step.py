"""The 28th step kind, Commands (Synthetic/Commands.bob): native commands carried out by
the plan host itself, on its buffers, with one state arena and slot set per invocation
(docs/host-steps.md, "Commands inside a plan host").

The reference host's outputs are checked against values worked out here with NumPy
binary64 arithmetic from the plan's commands; the C side (runtime_c/plan_commands.c, the
code the built host links, through runtime_c/tests/commands_tool.c built in the run's folder) is compared with the
reference byte for byte: memory, exit status and stderr."""
from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import synthetic_support
from tests.conftest import make_runtime
from test_reference_steps import Stubs, record_bytes

REPO = Path(__file__).resolve().parents[2]
FILL = struct.pack("<2d", 1.5, 2.25)          # the plan's Fill at the scratch bytes


@pytest.fixture(scope="module")
def plans():
    return {entry: synthetic_support.load("Commands", entry)[1] for entry in ("synCommandsHost", "synCommandsFailHost")}


@pytest.fixture(scope="module")
def tool(runtime_build):
    run = make_runtime(runtime_build, f"{runtime_build}/commands_tool")
    assert run.returncode == 0, run.stdout + run.stderr
    return runtime_build / "commands_tool"


def reference(plan):
    from bobc.reference.host import ReferenceHost
    published = {}
    host = ReferenceHost(plan, Stubs(plan), publish_output=lambda name, data: published.__setitem__(name, data))
    host.run("train", record_bytes(), None)
    return published


def expected_result() -> bytes:
    a, b = np.float64(1.5), np.float64(2.25)
    total = a + b                                   # Float add of the two mapped words
    doubled = total * np.float64(2.0)
    count = 3 * 5                                   # a repeat of 3 (slot 0) adding 5
    ratio = doubled / np.float64(count)
    narrow = np.array([ratio], dtype=np.float64).astype(np.float32).view(np.uint32)[0]
    first = (struct.pack("<2d", total, doubled) + struct.pack("<Q", count) + struct.pack("<d", float(count))
             + struct.pack("<d", ratio) + struct.pack("<Q", int(narrow)) + struct.pack("<Q", 1)   # the zero branch
             + struct.pack("<II", 0xDEADBEEF, 0))
    second = struct.pack("<Q", 1) + struct.pack("<d", a) + struct.pack("<d", a - total)
    return first + second


def test_the_commands_plan_uses_the_28th_kind(plans):
    kinds = [s.kind.name for s in plans["synCommandsHost"].host.steps]
    assert kinds.count("commands") == 2
    assert [s.kind.name for s in plans["synCommandsFailHost"].host.steps].count("commands") == 3


def test_the_reference_host_runs_the_commands(plans):
    published = reference(plans["synCommandsHost"])
    assert published["result"] == expected_result()
    assert published["predictions"] == b""


def test_a_fail_ends_the_invocation_with_its_status_and_publishes_nothing(plans):
    from bobc.reference.host import CommandsFailed
    published = {}
    from bobc.reference.host import ReferenceHost
    plan = plans["synCommandsFailHost"]
    host = ReferenceHost(plan, Stubs(plan), publish_output=lambda name, data: published.__setitem__(name, data))
    with pytest.raises(CommandsFailed) as stopped:
        host.run("train", record_bytes(), None)
    assert stopped.value.exit_code == 42
    assert stopped.value.message == ("step 5 (commands): command 0 (Fail): synthetic failure after two steps; "
                                     "nothing was published")
    assert published == {}


def scratch(plan) -> int:
    return plan.host.steps[0].host        # the Fill's address: the scratch bytes past the predictions


def run_both(tool, tmp_path, base: int, memory: bytes, programs: list[tuple[int, bytes]]):
    """(status, stderr, memory) from the C machine and from the reference machine."""
    from bobc.reference.host import Memory
    from bobc.reference.plan_commands import CommandsStopped, PlanCommandsMachine

    (tmp_path / "memory").write_bytes(memory)
    args = []
    for k, (step, data) in enumerate(programs):
        (tmp_path / f"p{k}").write_bytes(data)
        args.append(f"{step}:{tmp_path / f'p{k}'}")
    done = subprocess.run([str(tool), f"{base:x}", str(tmp_path / "memory"), str(tmp_path / "out"), *args],
                          capture_output=True)
    c = (done.returncode, done.stderr, (tmp_path / "out").read_bytes())
    buffer = bytearray(memory)
    machine = PlanCommandsMachine(Memory([(base, buffer)]))
    status, stderr = 0, b""
    try:
        for step, data in programs:
            machine.run_step(data, step)
    except CommandsStopped as stop:
        status, stderr = stop.status, b"commands_tool: error: " + stop.message + b"\n"
    return c, (status, stderr, bytes(buffer))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("entry", ["synCommandsHost", "synCommandsFailHost"])
def test_the_c_machine_matches_the_reference_byte_for_byte(plans, tool, tmp_path, entry):
    from bobc.plan.schedule import lower
    plan = plans[entry]
    programs = [(i, s.values["commands"]) for i, s in enumerate(lower(plan)) if s.name == "commands"]
    memory = FILL + bytes(112)
    c, py = run_both(tool, tmp_path, scratch(plan), memory, programs)
    assert c == py
    if entry == "synCommandsHost":
        assert c[2][16:104] == expected_result()
    else:
        assert c[0] == 42


def program(*commands: bytes) -> bytes:
    from bobc.plan.commands import frame
    return frame(b"".join(commands))


def n(value: int) -> bytes:
    return struct.pack("<Q", value)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("case,status,what", [
    # CopyStateToMapped 8 bytes to an address past the buffer, then End
    ("outside", 10, b"command 0 (CopyStateToMapped): mapped [0x7000003c, +8) is in no host-mapped buffer"),
    # ReadFile (the plan host's files are its own), then End
    ("read-file", 1, b"command 0 (ReadFile): ReadFile is not carried out inside a plan host"),
    # Submit (the plan host's ring is its own)
    ("submit", 1, b"command 0 (Submit): Submit is not carried out inside a plan host"),
    # WaitMapped for a word already reached (7), then Fail 9 "done"
    ("wait-then-fail", 9, b"command 1 (Fail): done; nothing was published\n"),
])
def test_faults_and_refusals_match(tool, tmp_path, case, status, what):
    base = 0x7000_0000
    data = {
        "outside": program(bytes([8]) + n(0) + n(base + 60) + n(8), bytes([0])),
        "read-file": program(bytes([14]) + n(0) + n(0) + n(8), bytes([0])),
        "submit": program(bytes([24]) + n(base) + n(4) + n(base + 32) + bytes([0]) + n(1) + n(base + 40) + n(0),
                          bytes([0])),
        "wait-then-fail": program(bytes([11]) + n(base) + bytes([0]) + n(7) + n(100),
                                  bytes([2]) + n(9) + n(4) + b"done"),
    }[case]
    memory = struct.pack("<Q", 7) + bytes(56)
    c, py = run_both(tool, tmp_path, base, memory, [(3, data)])
    assert c == py
    assert c[0] == status
    assert c[1].startswith(b"commands_tool: error: step 3 (commands): " + what)


def test_the_compiler_refuses_what_a_plan_host_owns_by_name():
    from bobc.native.program import decode
    from bobc.plan.commands import refusal
    why = refusal(decode(program(bytes([14]) + n(0) + n(0) + n(8), bytes([0]))))
    assert why == ("command 0 (ReadFile) is not carried out inside a plan host: the plan host owns its files "
                   "(use Read steps)")
    assert refusal(decode(program(bytes([0])))) is None


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_native_host_of_the_commands_plan_builds(tmp_path):
    from bobc import pipeline
    from bobc.host import generate
    from bobc.targets import SM90
    built = pipeline.compile_plan(synthetic_support.SYNTHETIC / "Commands.bob", SM90,
                                  include=[synthetic_support.plan_support.BOB.parent], entry="synCommandsHost")
    host = tmp_path / "commands"
    generate.build_host(built, SM90, host)
    (tmp_path / "record.bin").write_bytes(record_bytes())
    done = subprocess.run([str(host), "train", "--input", "record.bin", "--checkpoint-out", "c", "--predictions", "p",
                           "--result", "r"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode in (0, 6), done.stderr        # 6: no GPU here
