"""R2P with its mask in a register, and P2R's byte forms, in the simulator (probe s39 sassforms7).

nvdisasm is the oracle for the words: R2P's register form (opcode 0x204 where ptxas's immediate form,
`R2P PR, R2, 0x7f`, has 0x804) prints as `R2P PR, R2, R3`, and P2R's bit 76 as `P2R.B1` (the predicates
through byte 1 of the register).  Before: the register mask raised a TypeError out of the executor (a
traceback, not a refusal), and P2R.B1 ran as the plain P2R, silently.  The PTX-level meaning of R2P (Pi =
bit i of the source for each bit i of the mask, the others kept) is checked per thread here.
"""
from __future__ import annotations

import pytest

from bobc.sass.assembler import assemble
from bobc.sim import sass_frontend
from bobc.sim.executor import Launch, LaunchGeometry
from bobc.sim.faults import Unmodeled
from bobc.sim.memory import Memory
from bobc.targets import SM86, SM90

R2P_IMMEDIATE = 0x0000007F02007804 | 0x000FCA0000000000 << 64      # ptxas: R2P PR, R2, 0x7f (sm_86 and sm_90)


def _launch(target, code: bytes):
    instructions = sass_frontend.decode(code, target.nvdisasm_arch)
    geometry = LaunchGeometry("launch 0 (test)", (1, 1, 1), (32, 1, 1), 8, bytes(1024), target.nvdisasm_arch)
    return instructions, Launch(geometry, instructions, Memory([], []), check_hazards=False)


def _code(target, lines: list[str], patch: dict[int, int]) -> bytes:
    code = bytearray(assemble("\n".join(lines), target).code)
    for index, word in patch.items():
        code[16 * index:16 * index + 16] = word.to_bytes(16, "little")
    return bytes(code)


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_r2p_with_a_register_mask_sets_the_masked_predicates_per_thread(target):
    register_form = (R2P_IMMEDIATE & ~0xFFF | 0x204) & ~(0xFFFFFFFF << 32) | 3 << 32      # mask in R3
    lines = ["S2R R4, SR_TID.X", "LOP3.LUT R2, R4, 0x55, RZ, 0xc0, !PT", "IADD3 R3, R4, 0x1, RZ",
             "ISETP.GE.AND P6, PT, RZ, RZ, PT", "NOP", "EXIT"]
    instructions, launch = _launch(target, _code(target, lines, {4: register_form}))
    assert instructions[4].text == "R2P PR, R2, R3"
    launch.run()
    for lane in range(32):
        source, mask = lane & 0x55, lane + 1
        for p in range(7):
            before = p == 6                            # P6 was set true by the ISETP
            want = bool(source >> p & 1) if mask >> p & 1 else before
            assert bool(launch.preds[p][lane]) == want, (lane, p)


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_p2r_byte_form_is_refused_by_name(target):
    code = bytearray(assemble("P2R R5, PR, RZ, 0x1\nEXIT", target).code)
    word = int.from_bytes(code[:16], "little") | 1 << 76
    code[:16] = word.to_bytes(16, "little")
    instructions, launch = _launch(target, bytes(code))
    assert instructions[0].text == "P2R.B1 R5, PR, RZ, 0x1"
    with pytest.raises(Unmodeled) as caught:
        launch.run()
    assert "P2R.B1 (only the plain P2R, byte 0 of the register) is not modeled" in caught.value.message


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_r2p_of_a_byte_is_refused_by_name(target):
    b1 = R2P_IMMEDIATE | 1 << 76                      # nvdisasm: R2P PR, R2.B1, 0x7f
    instructions, launch = _launch(target, _code(target, ["NOP", "EXIT"], {0: b1}))
    assert instructions[0].text == "R2P PR, R2.B1, 0x7f"
    with pytest.raises(Unmodeled) as caught:
        launch.run()
    assert "R2.B1" in caught.value.message and "not model" in caught.value.message
