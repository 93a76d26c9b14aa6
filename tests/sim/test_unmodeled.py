"""An instruction the simulator does not model is refused by its nvdisasm name, never guessed."""
from __future__ import annotations

import pytest

from bobc.sass.assembler import assemble
from bobc.sim import sass_frontend
from bobc.sim.executor import Launch, LaunchGeometry
from bobc.sim.faults import Unmodeled
from bobc.sim.memory import Memory
from bobc.targets import SM86, SM90


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
@pytest.mark.parametrize("text, name", [("BAR.SYNC.DEFER_BLOCKING 0x0", "BAR.SYNC.DEFER_BLOCKING"),
                                        ("STS [R0], R1", "STS")])
def test_an_unmodeled_instruction_is_refused_by_name(target, text, name):
    code = assemble(f"{text}\nEXIT", target).code
    instructions = sass_frontend.decode(code, target.nvdisasm_arch)
    geometry = LaunchGeometry("launch 0 (test)", (1, 1, 1), (32, 1, 1), 8, bytes(1024), target.nvdisasm_arch)
    with pytest.raises(Unmodeled) as caught:
        Launch(geometry, instructions, Memory([], []), check_hazards=False).run()
    message = caught.value.message
    assert message.startswith("launch 0 (test): instruction at 0x0000") and f"{name}" in message
    assert "not model" in message
