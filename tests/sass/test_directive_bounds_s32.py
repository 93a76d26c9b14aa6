"""A kernel source's `.registers` and `.shared` are bounded by the target the source is assembled
or run for (compiler/bobc/sass/README.md):

- `.registers` past the registers a thread may have (bobc.targets: 255 on sm_86 and sm_90) was
  taken without a word: a budget that never binds (probe s32 paths finding 5).  Refused at its
  value.
- the simulator's kernel API (bobc.sim.kernel.run_kernel) read a source's directives without its
  target, so a `.shared` was held to the largest target's bound (sm_90's 232448 bytes) on an sm_86
  run too (probe s32 paths finding 4).  It is held to the run's target's, as a plan's build is."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble_kernel
from bobc.targets import SM86, SM90

REPO = Path(__file__).resolve().parents[2]


def _assemble(tmp_path, head: str, target=SM86):
    path = tmp_path / "probe.sass"
    path.write_text(f"{head}\n    EXIT\n")
    return assemble_kernel(path, target)


@pytest.mark.parametrize("target", [SM86, SM90])
@pytest.mark.parametrize("value", ["256", "0x100", "99999999999"])
def test_a_register_budget_past_the_targets_registers_is_refused_at_its_value(tmp_path, target, value):
    with pytest.raises(BobcError) as caught:
        _assemble(tmp_path, f".kernel probe\n.registers {value}   // the budget", target)
    assert caught.value.message == (f".registers {value}: a thread on {target.name} may use at most 255 registers, "
                                    f"so this budget would never bind")
    assert "leave out the line" in caught.value.hint
    span = caught.value.span
    assert (span.path, span.line, span.column, span.end_column) == \
        (str(tmp_path / "probe.sass"), 2, 12, 12 + len(value))


@pytest.mark.parametrize("target", [SM86, SM90])
def test_a_budget_up_to_the_targets_registers_is_taken(tmp_path, target):
    assert target.limits.registers_per_thread == 255
    assert _assemble(tmp_path, ".kernel probe\n.registers 255", target).register_budget == 255


def test_bobc_asm_refuses_a_budget_past_the_registers(tmp_path):
    source = tmp_path / "y.sass"
    source.write_text(".registers 300\nEXIT\n")
    result = subprocess.run([sys.executable, "-m", "bobc", "asm", str(source), "--arch", "sm_90", "-o",
                             str(tmp_path / "y.bin")], capture_output=True, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("bobc asm: y.sass:1:12: error: .registers 300: a thread on sm_90 may use at "
                                    "most 255 registers"), result.stderr
    assert not (tmp_path / "y.bin").exists()


def test_the_kernel_api_holds_shared_and_registers_to_the_runs_target():
    from bobc.sim.kernel import run_kernel

    source = ".kernel probe\n.shared 200000\n    EXIT\n"
    assert run_kernel(source, "sm_90", grid=1, block=32, params=[]) == {}       # sm_90: at most 232448
    with pytest.raises(BobcError) as caught:
        run_kernel(source, "sm_86", grid=1, block=32, params=[])
    assert caught.value.message.startswith(".shared 200000: a block on sm_86 may use at most 101376 bytes")
    assert (caught.value.span.line, caught.value.span.column) == (2, 9)
    with pytest.raises(BobcError, match=r"^\.registers 256: a thread on sm_86 may use at most 255 registers"):
        run_kernel(".kernel probe\n.registers 256\n    EXIT\n", "sm_86", grid=1, block=32, params=[])
