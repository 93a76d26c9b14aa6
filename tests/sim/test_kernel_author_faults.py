"""What the simulator tells a new kernel's author (probe s31 kernel): a misaligned 8-byte constant
read faults (finding 3); a misaligned global access gets its own hint, not the extents' (finding 4);
a kernel falling off its end is placed at its last instruction with a hint (finding 5); run_kernel
refuses a read past the parameter bytes it was given (finding 9); a short stall names the
producer, "an ALU result", and a hint that does not blame the scheduler alone (finding 10)."""
import numpy as np
import pytest

from bobc.sass.assembler import assemble
from bobc.sim.faults import Hazard, Misaligned, OutOfBounds, SimulationFault
from bobc.sim.kernel import Pointer, run_kernel

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
CONST_OFFSET_LSB = 38       # bits 38..53 of an instruction word: a constant operand's byte offset


def _store_one(load: str) -> str:
    """A kernel storing the low word a constant load gives, to buffer 'out' (parameter word 0)."""
    return (".kernel k\n    ULDC.64 UR4, c[0x0][memory_descriptor]\n    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
            f"{load}\n    STG.E [R2.64], R6\n    EXIT\n")


@TARGETS
def test_a_misaligned_ldc64_in_raw_words_faults(target):
    assembled = assemble(_store_one("    LDC.64 R6, c[0x0][RZ+param+0x8]"), target)
    code = bytearray(assembled.code)
    index = next(i for i, inst in enumerate(assembled.instructions) if "param+0x8" in inst.text or
                 inst.text.startswith("LDC.64 R6"))
    word = int.from_bytes(code[16 * index:16 * index + 16], "little")
    offset = word >> CONST_OFFSET_LSB & 0xFFFF
    word = word & ~(0xFFFF << CONST_OFFSET_LSB) | (offset + 4) << CONST_OFFSET_LSB
    code[16 * index:16 * index + 16] = word.to_bytes(16, "little")
    params = [Pointer("out"), np.uint32(1), np.uint32(2), np.uint32(3), np.uint32(4)]
    with pytest.raises(SimulationFault) as caught:
        run_kernel(bytes(code), target, grid=1, block=32, params=params, buffers={"out": np.zeros(32, np.uint32)})
    assert f"reads 8 bytes of constant bank 0 at {offset + 4:#x}, not a multiple of 8: an 8-byte constant read" \
        in caught.value.message
    assert caught.value.pc == 16 * index
    assert caught.value.hint == "align the offset to 8, or read the 2 words apart, with one LDC (no .64) each"
    # the same words with the aligned offset run
    out = run_kernel(assembled.code, target, grid=1, block=32, params=params,
                     buffers={"out": np.zeros(32, np.uint32)})
    assert out["out"][0] == 1


@TARGETS
def test_a_misaligned_indexed_ldc64_faults_at_its_line(target):
    source = _store_one("    MOV R4, 0x4\n    LDC.64 R6, c[0x0][R4+param+0x8]")
    with pytest.raises(SimulationFault) as caught:
        run_kernel(source, target, grid=1, block=32, params=[Pointer("out"), np.uint64(7), np.uint64(9)],
                   buffers={"out": np.zeros(32, np.uint32)})
    assert "not a multiple of 8: an 8-byte constant read is naturally aligned" in caught.value.message
    assert caught.value.span.line == 5
    # probe-today minor wording: the fault says what to do
    assert caught.value.hint == "align the offset to 8 (the index register included), or read the 2 words apart, " \
                                "with one LDC (no .64) each"


@TARGETS
def test_a_misaligned_global_load_gets_an_alignment_hint(target):
    source = (".kernel k\n    ULDC.64 UR4, c[0x0][memory_descriptor]\n    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
              "    LDG.E R8, [R2.64+0x2]\n    EXIT\n")
    with pytest.raises(OutOfBounds) as caught:
        run_kernel(source, target, grid=1, block=32, params=[Pointer("x")], buffers={"x": np.zeros(64, np.uint32)})
    fault = caught.value
    assert isinstance(fault, Misaligned)
    assert "is misaligned for a 4-byte access" in fault.message
    assert "extents" not in fault.hint and "contract" not in fault.hint
    assert "a 4-byte access needs an address that is a multiple of 4" in fault.hint and " is 2 past one" in fault.hint
    assert fault.span.line == 4


@TARGETS
def test_a_kernel_falling_off_its_end_is_placed_at_its_last_instruction(target):
    # `assemble` (run_kernel's, of text) leaves the ending to the simulator; `bobc asm` refuses it
    source = ".kernel k\n    S2R R0, SR_TID.X\n    IADD3 R1, R0, 0x1, RZ\n"
    with pytest.raises(SimulationFault) as caught:
        run_kernel(source, target, grid=1, block=32, params=[])
    fault = caught.value
    assert "instruction at 0x0010 (IADD3 R1, R0, 0x1, RZ) is the kernel's last and execution fell through it " \
           "to 0x0020, past the launch's code" in fault.message
    assert fault.span is not None and (fault.span.line, fault.span.column) == (3, 5)
    assert fault.hint.startswith("end the kernel with EXIT")


@TARGETS
@pytest.mark.parametrize("body,line,branch,target_pc", [
    ("    S2R R0, SR_TID.X\n    BRA end\n    EXIT\nend:\n", 3, "0x0010 (BRA 0x30)", "0x0030"),
    ("    S2R R0, SR_TID.X\n    BRA end\nend:\n", 3, "0x0010 (BRA 0x20)", "0x0020"),
    # a guarded branch some threads take, the others exiting: the branch is blamed, for its first thread
    ("    S2R R0, SR_TID.X\n    ISETP.GE.U32.AND P0, PT, R0, 0x10, PT\n    @P0 BRA end\n    EXIT\nend:\n", 4,
     "0x0020 (@P0 BRA 0x40)", "0x0040"),
])
def test_a_branch_past_the_code_is_placed_at_the_branch_not_the_last_instruction(target, body, line, branch, target_pc):
    # probe-today finding 2: a branch to the code's end was reported as its last instruction (even an
    # EXIT) falling through, with a hint to end the kernel with EXIT
    with pytest.raises(SimulationFault) as caught:
        run_kernel(".kernel k\n" + body, target, grid=1, block=32, params=[])
    fault = caught.value
    assert f"instruction at {branch} branches to {target_pc}, past the kernel's code" in fault.message
    assert "fell through" not in fault.message
    assert fault.span is not None and (fault.span.line, fault.span.column) == (line, 5)
    assert fault.hint.startswith("a branch must land on an instruction") and "EXIT" in fault.hint


@TARGETS
def test_threads_falling_through_after_a_branch_are_still_placed_at_the_last_instruction(target):
    source = (".kernel k\n    S2R R0, SR_TID.X\n    ISETP.GE.U32.AND P0, PT, R0, 0x10, PT\n    @P0 BRA tail\n"
              "    EXIT\ntail:\n    IADD3 R1, R0, 0x1, RZ\n")
    with pytest.raises(SimulationFault) as caught:
        run_kernel(source, target, grid=1, block=32, params=[])
    fault = caught.value
    assert "instruction at 0x0040 (IADD3 R1, R0, 0x1, RZ) is the kernel's last and execution fell through it " \
           "to 0x0050" in fault.message
    assert (fault.span.line, fault.span.column) == (7, 5) and fault.hint.startswith("end the kernel with EXIT")


AXPY_PART = (".kernel k\n    ULDC.64 UR4, c[0x0][memory_descriptor]\n    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
             "    LDC R6, c[0x0][RZ+param+0x{}]\n    STG.E [R2.64], R6\n    EXIT\n")


@TARGETS
def test_a_read_past_the_given_parameters_is_refused_with_its_line(target):
    with pytest.raises(SimulationFault) as caught:
        run_kernel(AXPY_PART.format("8"), target, grid=1, block=32, params=[Pointer("out")],
                   buffers={"out": np.zeros(32, np.uint32)})
    fault = caught.value
    assert "parameter bytes 8 to 11, past the 8 parameter bytes the launch was given" in fault.message
    assert fault.span.line == 4 and "params=" in fault.hint
    out = run_kernel(AXPY_PART.format("8"), target, grid=1, block=32, params=[Pointer("out"), np.uint32(5)],
                     buffers={"out": np.zeros(32, np.uint32)})
    assert out["out"][0] == 5


@TARGETS
def test_a_read_past_the_given_parameters_through_a_register_is_refused(target):
    source = (".kernel k\n    ULDC.64 UR4, c[0x0][memory_descriptor]\n    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
              "    MOV R4, 0x8\n    LDC R6, c[0x0][R4+param+0x0]\n    STG.E [R2.64], R6\n    EXIT\n")
    with pytest.raises(SimulationFault) as caught:
        run_kernel(source, target, grid=1, block=32, params=[Pointer("out")], buffers={"out": np.zeros(32, np.uint32)})
    assert "past the 8 parameter bytes the launch was given" in caught.value.message and caught.value.span.line == 5


@TARGETS
def test_a_short_written_stall_names_its_producer_and_an_alu_result(target):
    source = ("[B------:R-:W-:-:S01] IADD3 R1, RZ, 0x1, RZ\n"
              "[B------:R-:W-:-:S01] IADD3 R2, R1, 0x1, RZ\n[B------:R-:W-:-:S05] EXIT\n")
    with pytest.raises(Hazard) as caught:
        run_kernel(source, target, grid=1, block=32, params=[])
    fault = caught.value
    assert "reads R1 1 cycles after its producer at 0x0000 issued; an ALU result needs" in fault.reason
    assert "a alu" not in fault.message
    # the hint says what to change in the written control code (probe s45 hazards4: it was the same sentence for
    # every hazard): an ALU result is read 4 cycles on (NAK's CoupledAlu -> ALU reader)
    assert fault.hint.startswith("issue it 3 cycles later: raise the stall of the instruction issued before it "
                                 "(0x0000) from S01 to S04") and "written control codes" in fault.hint
