"""An instruction the simulator does not model is refused by its nvdisasm name, never guessed."""
from __future__ import annotations

import pytest

from bobc.sass.assembler import assemble
from bobc.sim import sass_frontend
from bobc.sim.executor import Launch, LaunchGeometry
from bobc.sim.faults import SimulationFault, Unmodeled
from bobc.sim.memory import Memory
from bobc.targets import SM86, SM90


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
# (RET.REL.NODEC, ptxas's return from a called slow path, runs since probe s42 ptxcover: tests/sass/test_division_paths_s42.py;
# MUFU.RCP64H, ptxas's start of binary64 division, since probe s43 f64div: tests/sass/test_f64_division_s43.py)
@pytest.mark.parametrize("text, name", [("VOTEU.ANY UR4, UPT, PT", "VOTEU.ANY"),
                                        ("LDL R2, [R1]", "LDL")])
def test_an_unmodeled_instruction_is_refused_by_name(target, text, name):
    code = assemble(f"{text}\nEXIT", target).code
    instructions = sass_frontend.decode(code, target.nvdisasm_arch)
    geometry = LaunchGeometry("launch 0 (test)", (1, 1, 1), (32, 1, 1), 8, bytes(1024), target.nvdisasm_arch)
    with pytest.raises(Unmodeled) as caught:
        Launch(geometry, instructions, Memory([], []), check_hazards=False).run()
    message = caught.value.message
    assert message.startswith("launch 0 (test): instruction at 0x0000") and f"{name}" in message
    assert "not model" in message


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_shared_memory_past_the_launch_s_size_is_a_fault(target):
    base = target.sm_resources.shared_base      # sm_90's first KiB is the system's: the block's bytes start past it
    code = assemble(f"MOV R0, {base:#x}\nMOV R1, RZ\nSTS [R0+0x40], R1\nEXIT", target).code
    instructions = sass_frontend.decode(code, target.nvdisasm_arch)
    geometry = LaunchGeometry("launch 0 (test)", (1, 1, 1), (32, 1, 1), 8, bytes(1024), target.nvdisasm_arch,
                              shared_bytes=base + 64)
    with pytest.raises(SimulationFault) as caught:
        Launch(geometry, instructions, Memory([], []), check_hazards=False).run()
    assert (f"shared-memory access at {base + 0x40:#x} (4 bytes) lies outside the block's {base + 64} bytes"
            in caught.value.message), caught.value.message


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_a_barrier_too_few_threads_reach_is_a_deadlock(target):
    code = assemble("BAR.SYNC.DEFER_BLOCKING 0x1, 0x40\nEXIT", target).code      # 64 threads, block of 32
    instructions = sass_frontend.decode(code, target.nvdisasm_arch)
    geometry = LaunchGeometry("launch 0 (test)", (1, 1, 1), (32, 1, 1), 8, bytes(1024), target.nvdisasm_arch)
    with pytest.raises(SimulationFault) as caught:
        Launch(geometry, instructions, Memory([], []), check_hazards=False).run()
    assert "every live thread waits at a barrier that too few threads reach" in caught.value.message
