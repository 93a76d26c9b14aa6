"""Probe s40 tripleexec2 (left) / leftovers5 (a): a plan host's Commands step that stops with bytes
that are not UTF-8 -- a Fail's own message bytes, or a character cut at the 511-byte bound -- was
decoded with "replace" by the reference host and the simulator, so `bobc sim` printed U+FFFD
(ef bf bd) where the C host (runtime_c/plan_commands.c) prints the bytes as they are.

The expected lines are worked out here from docs/host-steps.md ("Commands inside a plan host"):
`step N (commands): command K (Fail): MESSAGE; nothing was published`, cut at 511 bytes, only a
control character shown as '?'; every other byte is the plan's own, as the C machine copies it."""
from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from test_reference_steps import Stubs, record_bytes

REPO = Path(__file__).resolve().parents[2]
SYNTHETIC = REPO / "tests/platform/Synthetic"
PREFIX = b"step 5 (commands): command 0 (Fail): "
SUFFIX = b"; nothing was published"
CUT = "x" + "\u00e9" * 300         # 1 + 600 bytes: the 511-byte bound falls inside an e-acute


def expected(message: bytes) -> bytes:
    return (PREFIX + message + SUFFIX)[:511]


CASES = {
    "bad \\xff\\xfe name": expected(b"bad \xff\xfe name"),
    CUT: expected(CUT.encode()),
}


def built_with_fail(tmp_path, text: str):
    from bobc import pipeline
    from bobc.targets import SM86

    folder = tmp_path / "Synthetic"
    shutil.copytree(SYNTHETIC, folder)
    module = folder / "Commands.bob"
    source = module.read_text(encoding="utf-8")
    assert 'b"synthetic failure after two steps"' in source
    module.write_text(source.replace('b"synthetic failure after two steps"', f'b"{text}"'), encoding="utf-8")
    return pipeline.compile_plan(module, SM86, [REPO / "examples/bob"], "synCommandsFailHost")


def printed(message: str) -> bytes:
    """The line as bobc prints a refusal (errors.stderr_line), less its newline."""
    from bobc.errors import stderr_line

    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    stderr_line(message, stream)
    return stream.buffer.getvalue()[:-1]


@pytest.mark.parametrize("text", list(CASES))
def test_a_commands_refusal_keeps_its_bytes_on_the_reference_host_and_the_simulator(tmp_path, text):
    from bobc.reference.host import CommandsFailed, ReferenceHost
    from bobc.sim.host_adapter import host_plan
    from bobc.sim.invocation import CommandsFault, simulate
    from bobc.targets import SM86

    built = built_with_fail(tmp_path, text)
    with pytest.raises(CommandsFailed) as reference:
        ReferenceHost(built.plan, Stubs(built.plan), publish_output=lambda name, data: None).run(
            "train", record_bytes(), None)
    host = host_plan(built.plan, built.images, SM86, built.program.search_path)
    with pytest.raises(CommandsFault) as simulated:
        simulate(host, built.images, "train", record_bytes())
    for stopped in (reference.value, simulated.value):
        assert stopped.exit_code == 42
        assert os.fsencode(stopped.message) == CASES[text]
        assert printed(stopped.message) == CASES[text]
